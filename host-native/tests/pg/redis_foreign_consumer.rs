//! A consumer that is not chime, in the same consumer group, on a real
//! Redis: it reads entries (`XREADGROUP`, its own consumer name) and
//! never acknowledges them. chime's maintenance takes them back
//! (`XAUTOCLAIM`) once they have been idle for the queue's `leaseMs`,
//! counting the foreign delivery as a failed attempt (`lease_expired`):
//! a job with attempts left is handed to chime's workers as attempt 2 and
//! completed once; a job without is dead-lettered once with the seed's
//! headers; the work stream ends empty and nothing is delivered again.

use crate::redis_support::{self, Foreign};
use chime_core::{EngineConfig, FireId, Headers, JobState, Payload, QueueConfig};
use chime_native::backend::QueueBackend;
// The stream's `job` field is the transport's own number; the port's ids
// carry Redis's tag.
use chime_native::transport::ids::redis_job;
use chime_native::transport::redis::RedisTransport;
use chime_native::transport::{Message, NoSettlements, Transport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test]
async fn foreign_consumer_that_never_acks_is_reclaimed_after_the_lease() {
    let config = EngineConfig::default();
    let Some(options) = redis_support::fresh_options().await else {
        return;
    };
    let url = options.url.clone();
    let t = Arc::new(
        RedisTransport::new(options, config, Vec::new(), Arc::new(NoSettlements)).unwrap(),
    );
    let mut q = QueueConfig::new("runner");
    q.lease_ms = 400;
    q.max_attempts = 2;
    q.backoff.base_ms = 20;
    q.backoff.cap_ms = 40;
    t.declare(&q).await.unwrap();
    let names = t.names("runner");
    let keep: FireId = "keep@1700000060000".parse().unwrap();
    let last: FireId = "last@1700000060000".parse().unwrap();
    t.publish(&Message::of_fire(
        &keep,
        "runner",
        &Payload::null(),
        &Headers::new(),
        0,
        None,
    ))
    .await
    .unwrap();
    // Its own attempts override: one, so the foreign delivery was the last.
    t.publish(&Message::of_fire(
        &last,
        "runner",
        &Payload::null(),
        &Headers::new(),
        0,
        Some(1),
    ))
    .await
    .unwrap();

    // The foreign consumer takes both and never acknowledges.
    let mut foreign = Foreign::connect(&url, names.clone(), "elsewhere").await;
    let read = foreign.read(10).await;
    assert_eq!(read.len(), 2, "{read:?}");
    let read_at = Instant::now();
    let mut c = foreign.conn.clone();
    let jobs: HashMap<String, u64> = read
        .iter()
        .map(|(_, f)| (f["runId"].clone(), f["job"].parse().unwrap()))
        .collect();

    // Before the lease has run out, maintenance leaves them with it.
    t.maintain_now().await.unwrap();
    assert!(t.claim("runner", "w1", 10, None).await.unwrap().is_empty());

    let maintenance = t.spawn_maintenance(Duration::from_millis(50));
    let second = loop {
        if let Some(c) = t.claim("runner", "w1", 10, None).await.unwrap().pop() {
            break c;
        }
        assert!(
            read_at.elapsed() < Duration::from_secs(15),
            "never reclaimed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        read_at.elapsed() >= Duration::from_millis(400),
        "reclaimed before the lease ran out"
    );
    assert_eq!(second.job, redis_job(jobs["keep@1700000060000"]));
    assert_eq!(second.attempt, 2, "the foreign delivery was attempt 1");
    assert_eq!(second.fire.as_ref(), Some(&keep));
    t.complete(second.job, second.token).await.unwrap();

    // The last one is dead-lettered, never handed out; nothing comes again.
    let start = Instant::now();
    let dead = loop {
        let dead: Vec<(String, HashMap<String, String>)> = redis::cmd("XRANGE")
            .arg(&names.dead)
            .arg("-")
            .arg("+")
            .query_async(&mut c)
            .await
            .unwrap();
        if !dead.is_empty() {
            break dead;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "never dead");
        assert!(t.claim("runner", "w1", 10, None).await.unwrap().is_empty());
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(1_200) {
        assert!(
            t.claim("runner", "w1", 10, None).await.unwrap().is_empty(),
            "delivered again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    maintenance.abort();
    assert_eq!(dead.len(), 1, "{dead:?}");
    let h = &dead[0].1;
    assert_eq!(h["runId"], "last@1700000060000");
    assert_eq!(h["scheduleId"], "last");
    assert_eq!(h["attempts"], "1");
    assert_eq!(h["reason"], "lease_expired");
    let kept = t.job(second.job).await.unwrap().unwrap();
    assert_eq!(kept.state, JobState::Completed);
    let gone = t
        // The stream's `job` field is the transport's own number; the
        // port's id carries Redis's tag (transport::ids).
        .job(chime_native::transport::ids::redis_job(
            jobs["last@1700000060000"],
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((gone.state, gone.attempt), (JobState::Dead, 1));
    let work: u64 = redis::cmd("XLEN")
        .arg(&names.stream)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(work, 0, "nothing left in the work stream");
    // The foreign consumer holds nothing any more.
    let pending: redis::Value = redis::cmd("XPENDING")
        .arg(&names.stream)
        .arg(&names.group)
        .query_async(&mut c)
        .await
        .unwrap();
    let redis::Value::Array(p) = pending else {
        panic!("{pending:?}")
    };
    assert_eq!(p.first(), Some(&redis::Value::Int(0)), "{p:?}");
}
