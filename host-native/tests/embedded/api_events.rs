//! `GET /v1/events` on a real daemon: Server-Sent Events of a fire and of
//! a job's completion (with its attempt and duration), filtered by
//! queue and kind.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use common::{schedule, start_instance};
use serde_json::json;
use std::time::Duration;

/// Reads SSE frames from `resp` until `want` kinds were all seen (or 10 s).
async fn read_events(mut resp: reqwest::Response, want: &[&str]) -> Vec<serde_json::Value> {
    let mut text = String::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !want
        .iter()
        .all(|k| events.iter().any(|e: &serde_json::Value| e["kind"] == *k))
    {
        let chunk = tokio::time::timeout_at(deadline, resp.chunk())
            .await
            .expect("events within 10 s")
            .unwrap()
            .expect("stream open");
        text.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = text.find("\n\n") {
            let frame: String = text.drain(..end + 2).collect();
            if let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) {
                events.push(serde_json::from_str(data).unwrap());
            }
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fires_and_job_outcomes_stream_as_server_sent_events() {
    let inst = start_instance(Setup {
        queues: vec![QueueConfig::new("q"), QueueConfig::new("other")],
        schedules: vec![schedule(
            r#"{"name": "s", "spec": "@every 1h", "target": {"queue": "q"}}"#,
        )],
        ..Setup::default()
    })
    .await;
    let all = inst
        .client
        .get(format!("{}/v1/events?queue=q", inst.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(all.status().as_u16(), 200);
    assert_eq!(
        all.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let fires = inst
        .client
        .get(format!("{}/v1/events?kind=fire", inst.base()))
        .send()
        .await
        .unwrap();
    // Give both streams a moment to subscribe.
    tokio::time::sleep(Duration::from_millis(100)).await;

    // A job in another queue (filtered out), a fire, a completion.
    inst.api("POST", "/v1/queues/other/jobs", Some(json!({})))
        .await;
    let (status, r) = inst.api("POST", "/v1/schedules/s/trigger", None).await;
    assert_eq!(status, 200, "{r}");
    let (_, c) = inst
        .api("POST", "/v1/queues/q/claim", Some(json!({"worker": "w"})))
        .await;
    let j = &c["jobs"][0];
    tokio::time::sleep(Duration::from_millis(20)).await;
    let path = format!("/v1/jobs/{}/complete", j["job"]);
    let (status, _) = inst
        .api("POST", &path, Some(json!({"token": j["token"]})))
        .await;
    assert_eq!(status, 200);

    let events = read_events(all, &["fire", "completed"]).await;
    assert!(events.iter().all(|e| e["queue"] == "q"), "{events:?}");
    let fire = events.iter().find(|e| e["kind"] == "fire").unwrap();
    assert_eq!(fire["schedule"], "s");
    assert_eq!(fire["reason"], "manual", "{fire}");
    let done = events.iter().find(|e| e["kind"] == "completed").unwrap();
    assert_eq!(done["job"], j["job"]);
    assert_eq!(done["attempt"], 1);
    assert_eq!(done["schedule"], "s");
    assert!(done["durationMs"].as_i64().unwrap() >= 0, "{done}");

    let only = read_events(fires, &["fire"]).await;
    assert!(only.iter().all(|e| e["kind"] == "fire"), "{only:?}");
    inst.stop().await;
}
