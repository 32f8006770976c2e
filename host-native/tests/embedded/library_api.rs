//! The embedding API under tokio's paused clock: a `Builder` with a queue,
//! a schedule and an async handler; the `Handle`'s typed calls (enqueue
//! with a key, upsert, trigger, pause, resume, remove) and their typed
//! errors; the handler sees exactly the jobs the calls and fires made.

use chime_core::{EnqueueRequest, Payload, QueueConfig, Timestamp};
use chime_native::Builder;
use chime_native::driver::TokioClock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A handled job: its payload and its fire id.
type Seen = (String, Option<String>);

/// 2026-01-01T00:00Z.
const T0: i64 = 1_767_225_600_000;

#[tokio::test(start_paused = true)]
async fn a_service_embeds_chime_through_the_builder_and_typed_calls() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let def = serde_json::from_str(
        r#"{"name": "tick", "spec": "@every 10s", "target": {"queue": "q", "payload": {"from": "tick"}}}"#,
    )
    .unwrap();
    let running = Builder::new()
        .clock(Arc::new(TokioClock::new(
            Timestamp::from_millis(T0).unwrap(),
        )))
        .queue(QueueConfig::new("q"))
        .schedule(def)
        .handler("q", 2, move |job| {
            let log = log.clone();
            async move {
                let fire = job.fire.map(|f| f.to_string());
                log.lock()
                    .unwrap()
                    .push((job.payload.as_json().to_owned(), fire));
                Ok(())
            }
        })
        .start()
        .await
        .unwrap();
    let h = running.handle().clone();

    // Enqueue, and the same key again: one job.
    let mut req = EnqueueRequest::new("q", Payload::from_json(r#"{"n":1}"#).unwrap());
    req.key = Some("k1".into());
    let a = h.enqueue(req.clone()).await.unwrap();
    let b = h.enqueue(req).await.unwrap();
    assert!(!a.deduplicated && b.deduplicated && a.job == b.job);

    // 25 s: fires at 10 s and 20 s.
    tokio::time::sleep(Duration::from_millis(25_000)).await;
    // Paused across 30 s and 40 s; a manual trigger still fires.
    h.pause("tick", Some("maintenance".into())).await.unwrap();
    let manual = h.trigger("tick").await.unwrap().expect("fired");
    assert!(manual.to_string().starts_with("tick@"), "{manual}");
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    h.resume("tick").await.unwrap();
    // Resumed at 45 s: the next fire is at 50 s.
    tokio::time::sleep(Duration::from_millis(7_000)).await;

    // An upsert returns the next fire; removing makes the name unknown.
    let every_hour = serde_json::from_str(
        r#"{"name": "hourly", "spec": "@every 1h", "target": {"queue": "q"}}"#,
    )
    .unwrap();
    let next = h.upsert_schedule(every_hour).await.unwrap().unwrap();
    assert_eq!(next.as_millis(), T0 + 3_600_000);
    // Whether it existed, as the engine says (field report, issue 21:
    // this was dropped).
    assert!(h.remove_schedule("hourly").await.unwrap());
    assert!(!h.remove_schedule("hourly").await.unwrap());
    let err = h.trigger("hourly").await.unwrap_err();
    assert_eq!(err.code(), "unknown_schedule", "{err}");
    // Bad input is refused with a typed error and changes nothing.
    let err = h
        .enqueue(EnqueueRequest::new("", Payload::null()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_name", "{err}");
    tokio::time::sleep(Duration::from_millis(100)).await;

    let engine = running.shutdown().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let fires: Vec<String> = seen.iter().filter_map(|(_, f)| f.clone()).collect();
    let at = |s: i64| format!("tick@{}", T0 + s * 1_000);
    assert_eq!(
        fires,
        [at(10), at(20), manual.to_string(), at(50)],
        "{seen:?}"
    );
    assert_eq!(seen.iter().filter(|(p, _)| p == r#"{"n":1}"#).count(), 1);
    let info = engine.schedule("tick").unwrap();
    assert_eq!(info.skipped, 2, "30 s and 40 s skipped while paused");
}
