//! `GET /metrics` in a real short run: queue depth read from the engine
//! (exact values), fires and skips counted as they happen, job outcomes as
//! the engine decided them, handler durations, commits and leadership.

use crate::common;

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig};
use chime_native::Setup;
use chime_native::worker::{Handler, Job, PoolConfig};
use common::{Instance, eventually, schedule, start_instance};
use std::sync::Arc;
use std::time::Duration;

/// The value of the series written exactly as `series` (name and labels).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)
            .and_then(|rest| rest.strip_prefix(' '))
            .map(|v| v.trim().parse().unwrap())
    })
}

async fn scrape(inst: &Instance) -> String {
    let (status, text) = inst.get("/metrics").await;
    assert_eq!(status, 200, "{text}");
    text
}

/// Completes a job unless its payload is `"fail"`.
fn handler() -> Handler {
    Arc::new(|job: Job| {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if job.payload.as_json() == r#""fail""# {
                Err("asked to fail".into())
            } else {
                Ok(())
            }
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_follow_the_engine() {
    let mut w = QueueConfig::new("w");
    w.max_attempts = 2;
    w.backoff.base_ms = 0;
    w.backoff.cap_ms = 0;
    let setup = Setup {
        queues: vec![
            QueueConfig::new("q"),
            QueueConfig::new("t"),
            QueueConfig::new("m"),
            w,
        ],
        schedules: vec![
            schedule(r#"{"name": "tick", "spec": "@every 1s", "target": {"queue": "t"}}"#),
            schedule(r#"{"name": "daily", "spec": "@every 24h", "target": {"queue": "m"}}"#),
        ],
        pools: vec![(PoolConfig::new("w"), handler())],
        ..Setup::default()
    };
    let inst = start_instance(setup).await;

    // Exact depth: three jobs in a queue without a worker.
    for n in 0..3 {
        inst.enqueue("q", &n.to_string()).await;
    }
    let mut later = EnqueueRequest::new("q", Payload::null());
    later.delay_ms = Some(3_600_000);
    inst.enqueue_req(later).await;
    let text = scrape(&inst).await;
    let depth = |text: &str, state: &str| {
        value(
            text,
            &format!(r#"chime_queue_depth{{queue="q",state="{state}",transport="local"}}"#),
        )
    };
    assert_eq!(depth(&text, "available"), Some(3.0));
    assert_eq!(depth(&text, "scheduled"), Some(1.0));
    assert_eq!(depth(&text, "claimed"), Some(0.0));
    assert_eq!(depth(&text, "dead"), Some(0.0));
    assert_eq!(value(&text, "chime_leader"), Some(1.0));
    assert!(value(&text, "chime_journal_commit_seconds_count").unwrap() >= 5.0);
    assert!(text.ends_with("# EOF\n"));

    // A manual fire moves the fires counter and lands a job in `m`.
    assert_eq!(
        value(
            &text,
            r#"chime_fires_total{outcome="fired",reason="manual"}"#
        ),
        None
    );
    inst.call(Input::TriggerSchedule {
        name: "daily".into(),
        overlap: None,
    })
    .await;
    let text = scrape(&inst).await;
    assert_eq!(
        value(
            &text,
            r#"chime_fires_total{outcome="fired",reason="manual"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"chime_queue_depth{queue="m",state="available",transport="local"}"#
        ),
        Some(1.0)
    );

    // Worker outcomes: two complete; one fails twice and is dead-lettered.
    inst.enqueue("w", r#""ok""#).await;
    inst.enqueue("w", r#""ok""#).await;
    inst.enqueue("w", r#""fail""#).await;
    let done = eventually(Duration::from_secs(5), || async {
        let text = scrape(&inst).await;
        value(&text, r#"chime_jobs_total{queue="w",outcome="dead"}"#) == Some(1.0)
            && value(&text, r#"chime_jobs_total{queue="w",outcome="completed"}"#) == Some(2.0)
    })
    .await;
    assert!(done, "{}", scrape(&inst).await);
    let text = scrape(&inst).await;
    assert_eq!(
        value(&text, r#"chime_jobs_total{queue="w",outcome="retried"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&text, r#"chime_job_duration_seconds_count{queue="w"}"#),
        Some(4.0),
        "two successes and two failed attempts"
    );
    assert!(value(&text, r#"chime_job_duration_seconds_sum{queue="w"}"#).unwrap() >= 0.02);
    assert_eq!(
        value(
            &text,
            r#"chime_queue_depth{queue="w",state="dead",transport="local"}"#
        ),
        Some(1.0)
    );

    // The `@every 1s` schedule fires on the next boundary; its job is never
    // worked, so the boundary after is skipped for overlap.
    let ticked = eventually(Duration::from_secs(4), || async {
        let text = scrape(&inst).await;
        value(
            &text,
            r#"chime_fires_total{outcome="fired",reason="scheduled"}"#,
        ) == Some(1.0)
            && value(
                &text,
                r#"chime_fires_total{outcome="skipped",reason="overlap"}"#,
            )
            .is_some_and(|n| n >= 1.0)
    })
    .await;
    let text = scrape(&inst).await;
    assert!(ticked, "{text}");
    assert_eq!(
        value(&text, "chime_fire_lateness_seconds_count"),
        Some(2.0),
        "one lateness sample per fire (manual and scheduled)"
    );
    assert_eq!(
        value(
            &text,
            r#"chime_queue_depth{queue="t",state="available",transport="local"}"#
        ),
        Some(1.0)
    );
    inst.stop().await;
}
