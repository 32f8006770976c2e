//! Long-poll claims on a real daemon: a claim waiting on an empty queue
//! returns as soon as a job is enqueued on another connection (well
//! before its wait ends; the wake-up latency is measured and printed,
//! not asserted), a wait with nothing to claim ends empty, and a worker
//! that disconnects mid-poll leaves nothing claimed.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use common::{eventually, start_instance};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_claim_wakes_on_enqueue_and_a_gone_worker_claims_nothing() {
    let inst = start_instance(Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    })
    .await;
    let url = format!("{}/v1/queues/q/claim", inst.base());

    // Wake-up latency, over several rounds: the poll is waiting (on its
    // own connection) before the enqueue is sent on another.
    let mut latencies = Vec::new();
    let mut after_ack = Vec::new();
    for round in 0..50 {
        let client = inst.client.clone();
        let poll = tokio::spawn({
            let url = url.clone();
            async move {
                let r = client
                    .post(url)
                    .body(json!({"worker": "w", "waitMs": 20000}).to_string())
                    .send()
                    .await
                    .unwrap();
                let got = Instant::now();
                (
                    got,
                    serde_json::from_str::<serde_json::Value>(&r.text().await.unwrap()).unwrap(),
                )
            }
        });
        // Let the poll reach its wait (a claim that found nothing).
        tokio::time::sleep(Duration::from_millis(30)).await;
        let sent = Instant::now();
        let (status, e) = inst
            .api("POST", "/v1/queues/q/jobs", Some(json!({"payload": round})))
            .await;
        assert_eq!(status, 200, "{e}");
        let acked = Instant::now();
        let (got, body) = poll.await.unwrap();
        let jobs = body["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "round {round}: {body}");
        assert_eq!(jobs[0]["payload"], round);
        let waited = got.saturating_duration_since(sent);
        assert!(
            waited < Duration::from_secs(10),
            "returned only after {waited:?}"
        );
        latencies.push(waited);
        after_ack.push(got.saturating_duration_since(acked));
        let path = format!("/v1/jobs/{}/complete", jobs[0]["job"]);
        inst.api("POST", &path, Some(json!({"token": jobs[0]["token"]})))
            .await;
    }
    let pct = |v: &mut Vec<Duration>, p: usize| {
        v.sort();
        v[(v.len() * p / 100).min(v.len() - 1)]
    };
    eprintln!(
        "long-poll, 50 rounds: enqueue sent -> claim answered p50 {:?} p99 {:?}; \
         enqueue answered -> claim answered p50 {:?} p99 {:?} (the claim's own commit included)",
        pct(&mut latencies, 50),
        pct(&mut latencies, 99),
        pct(&mut after_ack, 50),
        pct(&mut after_ack, 99),
    );

    // Nothing to claim: the wait ends with no jobs.
    let started = Instant::now();
    let (status, body) = inst
        .api(
            "POST",
            "/v1/queues/q/claim",
            Some(json!({"worker": "w", "waitMs": 200})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["jobs"], json!([]));
    assert!(started.elapsed() >= Duration::from_millis(200));

    // A worker that gives up mid-poll (its connection closes) claims
    // nothing: the job enqueued afterwards stays available.
    let short = chime_native::worker::http::client(Duration::from_millis(150)).unwrap();
    let r = short
        .post(&url)
        .body(json!({"worker": "gone", "waitMs": 20000}).to_string())
        .send()
        .await;
    assert!(r.is_err(), "the client gave up");
    // hyper notices the closed connection and drops the request.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, e) = inst
        .api(
            "POST",
            "/v1/queues/q/jobs",
            Some(json!({"payload": "after"})),
        )
        .await;
    let id = e["id"].as_u64().unwrap();
    let stays = eventually(Duration::from_millis(500), || async {
        let (_, job) = inst.api("GET", &format!("/v1/jobs/{id}"), None).await;
        job["state"] != "available"
    })
    .await;
    assert!(!stays, "the job was claimed for a worker that had gone");
    let (_, job) = inst.api("GET", &format!("/v1/jobs/{id}"), None).await;
    assert_eq!(job["state"], "available", "{job}");
    assert_eq!(job["attempt"], 0, "{job}");
    inst.stop().await;
}
