//! A consumer that never acknowledges, on a real nats-server: its message
//! is delivered again when the lease (the consumer's `ackWait`, the
//! queue's `leaseMs`) runs out, as the next attempt, and the old token is
//! void; when the last attempt's lease runs out too, the next delivery is
//! dead-lettered by chime with reason `lease_expired` instead of being
//! handed out.

use crate::nats_support;
use chime_core::{EngineConfig, FireId, Headers, Payload, QueueConfig};
use chime_native::backend::{PortError, QueueBackend};
use chime_native::transport::{Message, Transport};
use std::time::{Duration, Instant};

#[tokio::test]
async fn unacknowledged_message_is_redelivered_then_dead_lettered() {
    let Some(url) = nats_support::url() else {
        return;
    };
    let config = EngineConfig::default();
    let ns = nats_support::namespace("never_acks");
    let t = nats_support::connect(&url, &ns, &config).await;
    let mut q = QueueConfig::new("runner");
    q.lease_ms = 400;
    q.max_attempts = 2;
    t.declare(&q).await.unwrap();
    let fire: FireId = "segments@1700000060000".parse().unwrap();
    let m = Message::of_fire(&fire, "runner", &Payload::null(), &Headers::new(), 0, None);
    t.publish(&m).await.unwrap();

    let first = t.claim("runner", "w1", 1, None).await.unwrap().remove(0);
    assert_eq!(first.attempt, 1);
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
        "redelivered before ackWait"
    );
    assert_eq!((second.job, second.attempt), (first.job, 2));
    assert_ne!(second.token, first.token);
    let stale = t.complete(first.job, first.token).await;
    assert!(
        matches!(&stale, Err(PortError::Refused(e)) if e.code() == "lease_lost"),
        "{stale:?}"
    );
    // The last attempt is not acknowledged either: its next delivery is
    // dead-lettered, never handed out.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1_500) {
        assert!(
            t.claim("runner", "w3", 1, None).await.unwrap().is_empty(),
            "a third attempt"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let names = t.names("runner");
    let mut dead = t.jetstream().get_stream(&names.dead_stream).await.unwrap();
    assert_eq!(dead.info().await.unwrap().state.messages, 1);
    let letter = dead
        .get_first_raw_message_by_subject(&names.dead_subject, 1)
        .await
        .unwrap();
    let h = |name: &str| letter.headers.get(name).map(|v| v.as_str().to_owned());
    assert_eq!(h("runId").as_deref(), Some("segments@1700000060000"));
    assert_eq!(h("scheduleId").as_deref(), Some("segments"));
    assert_eq!(h("attempts").as_deref(), Some("2"));
    assert_eq!(h("reason").as_deref(), Some("lease_expired"));
    let mut work = t.jetstream().get_stream(&names.stream).await.unwrap();
    assert_eq!(work.info().await.unwrap().state.messages, 0);
    nats_support::drop_streams(&url, &ns).await;
}
