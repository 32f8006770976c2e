//! Job events across replicas: outcomes settled through replica A's
//! `PgQueues` — completed, retried, dead, cancelled (waiting and running),
//! a lease expired and its retry — arrive on replica B's feed (its
//! `PgListener`'s broadcast, what B's `/v1/events` streams), as the same
//! `StreamEvent`s, in the same order and with the same JSON, as the
//! embedded driver publishes for the same workload. Only each backend's
//! clock differs (`at`, a retry's `runAt`, the durations' values: each
//! event has a duration exactly when the driver's has).

use crate::pg_support;
use chime_core::{EngineConfig, EnqueueRequest, Payload, QueueConfig, Timestamp};
use chime_native::backend::QueueBackend;
use chime_native::driver::{Driver, DriverConfig, StreamEvent, SystemClock};
use chime_native::pg::{PgListener, PgQueues};
use chime_native::store::MemoryStore;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

const EVENTS: usize = 7;

fn job(n: i32, priority: i32) -> EnqueueRequest {
    let mut r = EnqueueRequest::new("ev", Payload::from_json(&n.to_string()).unwrap());
    r.priority = priority;
    r
}

/// Settles jobs every way the port can.
async fn workload(b: &dyn QueueBackend) {
    let mut q = QueueConfig::new("ev");
    q.max_attempts = 2;
    b.declare(&q).await.unwrap();
    let done = b.enqueue(&job(1, 30)).await.unwrap().job;
    let flaky = b.enqueue(&job(2, 20)).await.unwrap().job;
    let waiting = b.enqueue(&job(3, 0)).await.unwrap().job;
    let running = b.enqueue(&job(4, 10)).await.unwrap().job;
    let lapsed = b.enqueue(&job(5, 5)).await.unwrap().job;
    let claim =
        |lease: Option<i64>| async move { b.claim("ev", "w", 1, lease).await.unwrap().remove(0) };
    let c = claim(None).await;
    assert_eq!(c.job, done);
    b.complete(c.job, c.token).await.unwrap();
    let c = claim(None).await;
    assert_eq!(c.job, flaky);
    let now = Timestamp::from_millis(1).unwrap(); // in the past: runs again now
    b.fail(c.job, c.token, "boom", Some(now)).await.unwrap();
    let c = claim(None).await;
    assert_eq!(c.job, flaky);
    b.fail(c.job, c.token, "boom again", None).await.unwrap();
    b.cancel(waiting).await.unwrap();
    let c = claim(None).await;
    assert_eq!(c.job, running);
    b.cancel(c.job).await.unwrap();
    let c = claim(Some(50)).await;
    assert_eq!(c.job, lapsed);
    tokio::time::sleep(Duration::from_millis(120)).await;
    b.maintain().await.unwrap();
}

/// An event without the backend's clock.
fn plain(e: &StreamEvent) -> Value {
    let mut v = serde_json::to_value(e).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("at");
    if let Some(d) = o.get_mut("durationMs") {
        *d = Value::Bool(true);
    }
    if let Some(event) = o
        .get_mut("detail")
        .and_then(|d| d.get_mut("event"))
        .and_then(Value::as_object_mut)
        && let Some(at) = event.get_mut("runAt")
    {
        *at = Value::Null;
    }
    v
}

async fn collect(rx: &mut broadcast::Receiver<Arc<StreamEvent>>) -> Vec<Value> {
    let mut out = Vec::new();
    while out.len() < EVENTS {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(e)) => out.push(plain(&e)),
            other => panic!("after {} events: {other:?}", out.len()),
        }
    }
    out
}

#[tokio::test]
async fn outcomes_on_a_reach_b_as_the_drivers_events() {
    let Some(cfg) = pg_support::config("notify_events") else {
        return;
    };
    // The embedded driver's events for the workload.
    let driver_config = DriverConfig {
        engine: EngineConfig::default(),
        ..DriverConfig::default()
    };
    let store = Box::new(MemoryStore::default());
    let driver = Driver::recover(store, Arc::new(SystemClock), driver_config).unwrap();
    let handle = driver.handle();
    tokio::spawn(driver.run());
    let mut rx = handle.events();
    workload(&handle).await;
    let embedded = collect(&mut rx).await;
    handle.stop();
    handle.closed().await;

    // Replica B listens; replica A settles.
    let (tx, mut rx) = broadcast::channel(64);
    let listener = PgListener::start(&cfg, tx).unwrap();
    listener.listening().await;
    let a = PgQueues::connect(&cfg, EngineConfig::default())
        .await
        .unwrap();
    workload(&a).await;
    let postgres = collect(&mut rx).await;
    for (i, (e, p)) in embedded.iter().zip(&postgres).enumerate() {
        assert_eq!(e, p, "event {i}");
    }
    let kinds: Vec<&str> = postgres
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "completed",
            "retried",
            "dead",
            "cancelled",
            "cancelled",
            "lease_expired",
            "retried"
        ]
    );
    // Nothing more: one event per outcome.
    let more = tokio::time::timeout(Duration::from_millis(300), rx.recv()).await;
    assert!(more.is_err(), "an extra event: {more:?}");
    pg_support::drop_schema(&cfg).await;
}
