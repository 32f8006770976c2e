//! `GET /v1/schedules/{name}` on a real daemon shows the schedule's run
//! history (`schedule.runs`, newest first), and `GET /v1/schedules` its
//! newest run (`lastRun`): a manual fire whose job was claimed, failed
//! once and completed through the API, then a fire cancelled through it.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use common::{schedule, start_instance};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_detail_lists_its_runs() {
    let inst = start_instance(Setup {
        queues: vec![QueueConfig::new("q")],
        schedules: vec![schedule(
            r#"{"name": "s", "spec": "@every 1h", "target": {"queue": "q"}}"#,
        )],
        ..Setup::default()
    })
    .await;
    let (_, before) = inst.get_json("/v1/schedules/s").await;
    assert_eq!(before["schedule"]["runs"], json!([]), "{before}");

    let (status, r) = inst.api("POST", "/v1/schedules/s/trigger", None).await;
    assert_eq!(status, 200, "{r}");
    let claim = || inst.api("POST", "/v1/queues/q/claim", Some(json!({"worker": "w"})));
    let (_, c) = claim().await;
    let j = c["jobs"][0].clone();
    let fail = json!({"token": j["token"], "error": "boom", "retryAt": 0});
    let (status, r) = inst
        .api("POST", &format!("/v1/jobs/{}/fail", j["job"]), Some(fail))
        .await;
    assert_eq!(status, 200, "{r}");
    let (_, c) = claim().await;
    let j2 = c["jobs"][0].clone();
    assert_eq!(j2["attempt"], 2, "{c}");
    let done = json!({"token": j2["token"]});
    let (status, _) = inst
        .api(
            "POST",
            &format!("/v1/jobs/{}/complete", j2["job"]),
            Some(done),
        )
        .await;
    assert_eq!(status, 200);

    // A second manual fire, cancelled before any worker took it.
    let (_, r) = inst.api("POST", "/v1/schedules/s/trigger", None).await;
    let fire = r["triggered"]["fire"].clone();
    let job = json!(j["job"].as_u64().unwrap() + 1);
    let (_, info) = inst.get_json(&format!("/v1/jobs/{job}")).await;
    assert_eq!(info["fire"], fire, "{info}");
    let (status, r) = inst
        .api("POST", &format!("/v1/jobs/{job}/cancel"), None)
        .await;
    assert_eq!(status, 200, "{r}");

    let (status, body) = inst.get_json("/v1/schedules/s").await;
    assert_eq!(status, 200);
    let runs = body["schedule"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{body}");
    let (newest, first) = (&runs[0], &runs[1]);
    assert_eq!(newest["outcome"], "cancelled", "{newest}");
    assert_eq!(newest["reason"], "manual");
    assert_eq!(newest["job"], job);
    assert_eq!(newest["fire"], fire);
    assert!(
        newest.get("durationMs").is_none(),
        "never claimed: {newest}"
    );
    assert_eq!(first["outcome"], "completed", "{first}");
    assert_eq!(first["reason"], "manual");
    assert_eq!(first["job"], j["job"]);
    assert_eq!(first["attempts"], 2);
    assert_eq!(first["error"], "boom");
    assert!(first["fire"].as_str().unwrap().starts_with("s@"), "{first}");
    let (start, end) = (first["startedAt"].as_i64(), first["finishedAt"].as_i64());
    assert_eq!(
        first["durationMs"].as_i64(),
        Some(end.unwrap() - start.unwrap())
    );

    let (_, list) = inst.get_json("/v1/schedules").await;
    assert_eq!(list["schedules"][0]["lastRun"], *newest, "{list}");
    inst.stop().await;
}
