//! The per-schedule run history (`ScheduleInfo::runs`) is the same on
//! both backends: each scenario runs on the embedded engine (its queue
//! local, virtual time) and on a replica's leader engine whose fire jobs
//! live in the Postgres tables (`FireSettled` carrying each job's detail
//! from `pg::fires::ended`), through [`on_both`], which checks that both
//! saw the same history; here it is also checked against the expected one,
//! one outcome per test. Claim and end instants are compared as "a
//! duration was measured" only (see [`comparable`]): on Postgres they are
//! the database's clock.

use crate::schedule_conformance::{Observed, on_both};
use chime_core::QueueConfig;
use serde_json::{Value, json};

/// The history of schedule `tick`.
fn history(seen: &Observed) -> Value {
    let (_, runs) = seen
        .runs
        .iter()
        .find(|(n, _)| n == "tick")
        .expect("schedule tick");
    Value::Array(runs.clone())
}

fn tick(spec_extra: Value) -> Value {
    let mut def = json!({
        "name": "tick", "spec": "@every 1s", "overlap": "skip",
        "target": {"queue": "ticks"}
    });
    for (k, v) in spec_extra.as_object().unwrap() {
        def[k] = v.clone();
    }
    def
}

#[tokio::test]
async fn completed_and_skipped_by_overlap() {
    let seen = on_both("rh_completed", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(tick(json!({}))).await;
        b.advance(1_000).await;
        let job = b.claim("ticks").await.pop().unwrap();
        b.advance(2_000).await;
        b.advance(3_000).await;
        b.finish(&job, true).await;
        b.advance(4_000).await;
        b
    })
    .await;
    assert_eq!(
        history(&seen),
        json!([
            {"fire": "tick@4000", "nominal": 4000, "reason": "scheduled", "at": 4000,
             "count": 1, "outcome": "pending"},
            {"nominal": 2000, "lastNominal": 3000, "skipReason": "overlap", "at": 3000,
             "count": 2, "outcome": "skipped"},
            {"fire": "tick@1000", "nominal": 1000, "reason": "scheduled", "at": 1000,
             "count": 1, "outcome": "completed", "job": 1, "attempts": 1, "timed": true}
        ])
    );
}

#[tokio::test]
async fn retried_then_completed() {
    let seen = on_both("rh_retried", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(tick(json!({}))).await;
        b.advance(1_000).await;
        let job = b.claim("ticks").await.pop().unwrap();
        b.fail_retry_now(&job, "boom").await;
        let again = b.claim("ticks").await.pop().expect("the retry");
        assert_eq!(again.attempt, 2);
        b.finish(&again, true).await;
        b
    })
    .await;
    assert_eq!(
        history(&seen),
        json!([
            {"fire": "tick@1000", "nominal": 1000, "reason": "scheduled", "at": 1000,
             "count": 1, "outcome": "completed", "job": 1, "attempts": 2, "timed": true,
             "error": "boom"}
        ])
    );
}

#[tokio::test]
async fn dead() {
    let seen = on_both("rh_dead", |mut b| async move {
        let mut q = QueueConfig::new("ticks");
        q.max_attempts = 1;
        b.declare(q).await;
        b.upsert(tick(json!({}))).await;
        b.advance(1_000).await;
        let job = b.claim("ticks").await.pop().unwrap();
        b.finish(&job, false).await;
        b
    })
    .await;
    assert_eq!(
        history(&seen),
        json!([
            {"fire": "tick@1000", "nominal": 1000, "reason": "scheduled", "at": 1000,
             "count": 1, "outcome": "dead", "job": 1, "attempts": 1, "timed": true,
             "error": "boom"}
        ])
    );
}

#[tokio::test]
async fn cancelled() {
    let seen = on_both("rh_cancelled", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(tick(json!({}))).await;
        b.advance(1_000).await;
        let job = b.claim("ticks").await.pop().unwrap();
        b.cancel(job.job).await;
        b
    })
    .await;
    assert_eq!(
        history(&seen),
        json!([
            {"fire": "tick@1000", "nominal": 1000, "reason": "scheduled", "at": 1000,
             "count": 1, "outcome": "cancelled", "job": 1, "attempts": 1, "timed": true}
        ])
    );
}

#[tokio::test]
async fn skipped_by_pause() {
    let seen = on_both("rh_paused", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(tick(json!({"paused": true}))).await;
        b.advance(3_000).await;
        let resume = chime_core::Input::ResumeSchedule {
            name: "tick".into(),
        };
        b.input(3_200, resume).await.unwrap();
        b.advance(4_000).await;
        b
    })
    .await;
    assert_eq!(
        history(&seen),
        json!([
            {"fire": "tick@4000", "nominal": 4000, "reason": "scheduled", "at": 4000,
             "count": 1, "outcome": "pending"},
            {"nominal": 1000, "lastNominal": 3000, "skipReason": "paused", "at": 3000,
             "count": 3, "outcome": "skipped"}
        ])
    );
}

#[tokio::test]
async fn skipped_by_catch_up() {
    let seen = on_both("rh_catchup", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(tick(json!({"catchup": {"max": 4}}))).await;
        // Ten boundaries pass at once (a leaderless gap, a restart).
        b.advance(10_500).await;
        b
    })
    .await;
    assert_eq!(
        history(&seen),
        json!([
            {"fire": "tick@10000", "nominal": 10000, "reason": "scheduled", "at": 10500,
             "count": 1, "outcome": "pending"},
            {"nominal": 7000, "lastNominal": 9000, "skipReason": "superseded", "at": 10500,
             "count": 3, "outcome": "skipped"},
            {"nominal": 1000, "lastNominal": 6000, "skipReason": "catchup_cap", "at": 10500,
             "count": 6, "outcome": "skipped"}
        ])
    );
}
