//! A consumer that never acknowledges, on a real Redis: its message is
//! handed out again once the lease (the queue's `leaseMs`) has run out
//! and the transport's maintenance has failed the attempt
//! (`lease_expired`), as the next attempt with a new token, the old one
//! void; when the last attempt's lease runs out too, the job is
//! dead-lettered with the seed's headers and reason `lease_expired`
//! instead of being handed out, and the work stream is empty.

use crate::redis_support;
use chime_core::{EngineConfig, FireId, Headers, Payload, QueueConfig};
use chime_native::backend::{PortError, QueueBackend};
use chime_native::transport::config::RedisOptions;
use chime_native::transport::redis::RedisTransport;
use chime_native::transport::{Message, NoSettlements, Transport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test]
async fn unacknowledged_message_is_redelivered_then_dead_lettered() {
    let config = EngineConfig::default();
    let Some(base) = redis_support::redis_url() else {
        return;
    };
    let url = redis_support::fresh_db(&base).await;
    let options = RedisOptions {
        url: url.clone(),
        ..RedisOptions::default()
    };
    let t = Arc::new(
        RedisTransport::new(options, config, Vec::new(), Arc::new(NoSettlements)).unwrap(),
    );
    let mut q = QueueConfig::new("runner");
    q.lease_ms = 400;
    q.max_attempts = 2;
    q.backoff.base_ms = 20;
    q.backoff.cap_ms = 40;
    t.declare(&q).await.unwrap();
    let maintenance = t.spawn_maintenance(Duration::from_millis(50));
    let fire: FireId = "segments@1700000060000".parse().unwrap();
    let m = Message::of_fire(&fire, "runner", &Payload::null(), &Headers::new(), 0, None);
    t.publish(&m).await.unwrap();

    let first = t.claim("runner", "w1", 1, None).await.unwrap().remove(0);
    assert_eq!(first.attempt, 1);
    assert_eq!(first.fire.as_ref(), Some(&fire));
    let claimed_at = Instant::now();
    // Never acknowledged: nothing to claim while the lease runs …
    assert!(t.claim("runner", "w2", 1, None).await.unwrap().is_empty());
    // … then the same job again, as attempt 2, with a new token.
    let second = loop {
        if let Some(c) = t.claim("runner", "w2", 1, None).await.unwrap().pop() {
            break c;
        }
        assert!(
            claimed_at.elapsed() < Duration::from_secs(10),
            "never redelivered"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        claimed_at.elapsed() >= Duration::from_millis(400),
        "redelivered before the lease ran out"
    );
    assert_eq!((second.job, second.attempt), (first.job, 2));
    assert_ne!(second.token, first.token);
    let stale = t.complete(first.job, first.token).await;
    assert!(
        matches!(&stale, Err(PortError::Refused(e)) if e.code() == "lease_lost"),
        "{stale:?}"
    );
    // The last attempt is not acknowledged either: dead-lettered, never
    // handed out again.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1_500) {
        assert!(
            t.claim("runner", "w3", 1, None).await.unwrap().is_empty(),
            "a third attempt"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    maintenance.abort();
    let names = t.names("runner");
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let dead: Vec<(String, HashMap<String, String>)> = redis::cmd("XRANGE")
        .arg(&names.dead)
        .arg("-")
        .arg("+")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    let h = &dead[0].1;
    assert_eq!(h["runId"], "segments@1700000060000");
    assert_eq!(h["scheduleId"], "segments");
    assert_eq!(h["attempts"], "2");
    assert_eq!(h["reason"], "lease_expired");
    let work: u64 = redis::cmd("XLEN")
        .arg(&names.stream)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(work, 0, "nothing left in the work stream");
}
