//! An idempotency key stops matching the instant its window ends, also
//! while it is still in the table: forgetting expired keys is budgeted
//! (`limits.firesPerAdvance` per advance), so after a burst of expiries
//! some expired keys wait to be forgotten, and an enqueue with one of them
//! must make a new job, not return the old one.

use chime_core::{EngineConfig, EnqueueRequest, Input, Limits, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;
use serde_json::Value;

const T: i64 = 1_000_000_000_000;
const WINDOW: i64 = 60_000;
/// When the keys of jobs finished at `T + 1000` expire.
const EXPIRY: i64 = T + 1_000 + WINDOW;

fn enqueue(h: &mut Harness, now: i64, key: &str) -> (u64, bool) {
    let mut req = EnqueueRequest::new("mail", Payload::null());
    req.key = Some(key.into());
    match h.ok(now, Input::Enqueue(req)).0 {
        Reply::Enqueued { job, deduplicated } => (job.0, deduplicated),
        other => panic!("{other:?}"),
    }
}

/// The remembered user keys of `mail` and their expiry.
fn remembered(h: &Harness) -> Vec<(String, Option<i64>)> {
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let dedup = v["queues"]["queues"]["mail"]["dedup"].as_object();
    dedup
        .into_iter()
        .flatten()
        .map(|(k, e)| (k.clone(), e["expiresAt"].as_i64()))
        .collect()
}

#[test]
fn an_expired_key_not_yet_forgotten_does_not_match() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            fires_per_advance: 1,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let mut q = QueueConfig::new("mail");
    q.dedup_window_ms = WINDOW;
    h.ok(T, Input::DeclareQueue(q));
    for k in 1..=5 {
        assert_eq!(enqueue(&mut h, T, &format!("k{k}")), (k, false));
    }
    for _ in 1..=5 {
        let c = h.claim_one(T + 1_000, "mail");
        h.ok(
            T + 1_000,
            Input::Complete {
                job: c.job,
                token: c.token,
            },
        );
    }
    // A millisecond before the window ends every key still matches.
    assert_eq!(enqueue(&mut h, EXPIRY - 1, "k1"), (1, true));
    // At the end of the window one advance forgets one key (the budget).
    h.advance(EXPIRY);
    let left: Vec<_> = (2..=5).map(|k| (format!("k{k}"), Some(EXPIRY))).collect();
    assert_eq!(remembered(&h), left, "expired keys still remembered");
    // The enqueue's own advance forgets `k2`; `k5` is still in the table,
    // expired: a new job.
    assert_eq!(enqueue(&mut h, EXPIRY, "k5"), (6, false));
    // And the new job owns the key from now on.
    assert_eq!(enqueue(&mut h, EXPIRY, "k5"), (6, true));
}
