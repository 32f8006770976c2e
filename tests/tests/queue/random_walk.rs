//! A random walk over every queue input under tight limits (8 dedup keys,
//! 3 dead letters per queue, 40 live jobs; short leases, windows and
//! retention), through the shared `Checker`: every invariant holds after
//! every step, the bounds hold as seen from outside (`live_jobs()`,
//! `dead_letters()`, the keys remembered in the snapshot), snapshots
//! round-trip along the way, the journal replays from the start, and
//! every path — complete, retry, expiry, dead letter, drop, cancel — was
//! taken.

use chime_core::{
    Backoff, Claimed, EngineConfig, EnqueueRequest, Input, JobId, Limits, Payload, QueueConfig,
    Reply, Retention,
};
use chime_tests::scenario::*;
use serde_json::Value;

const T: i64 = 1_000_000_000_000;

/// splitmix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// Idempotency keys remembered over all queues, from the snapshot.
fn remembered_keys(h: &Harness) -> usize {
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let queues = v["queues"]["queues"].as_object().unwrap();
    let len = |x: &Value| x.as_object().map_or(0, |m| m.len());
    queues
        .values()
        .map(|q| len(&q["dedup"]) + len(&q["fireKeys"]))
        .sum()
}

#[test]
fn random_operations_under_tight_limits() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            dedup_keys: 8,
            dead_letters_per_queue: 3,
            live_jobs: 40,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    for name in ["a", "b"] {
        let cfg = QueueConfig {
            lease_ms: 50,
            max_attempts: 2,
            dedup_window_ms: 200,
            dead_letter: name == "a",
            backoff: Backoff {
                base_ms: 10,
                cap_ms: 100,
            },
            retention: Retention {
                completed_max: 5,
                completed_ms: 300,
            },
            ..QueueConfig::new(name)
        };
        h.ok(T, Input::DeclareQueue(cfg));
    }
    let mut rng = Rng(12345);
    let mut now = T;
    let mut last_job = 0;
    let mut held: Vec<Claimed> = Vec::new();
    for step in 0..4_000 {
        now += rng.below(20) as i64;
        let queue = if rng.below(2) == 0 { "a" } else { "b" };
        match rng.below(9) {
            0 | 1 => {
                let mut req = EnqueueRequest::new(queue, Payload::null());
                req.key = (rng.below(2) == 0).then(|| format!("k{}", rng.below(12)));
                req.delay_ms = (rng.below(3) == 0).then(|| rng.below(100) as i64);
                req.priority = rng.below(3) as i32;
                if let (Ok(Reply::Enqueued { job, .. }), _) = h.run(now, Input::Enqueue(req)) {
                    last_job = last_job.max(job.0);
                }
            }
            2 => {
                let max = 1 + rng.below(3) as u32;
                held.extend(h.claim(now, queue, max, None));
            }
            3 | 4 if !held.is_empty() => {
                let c = held.swap_remove(rng.below(held.len() as u64) as usize);
                let input = if rng.below(2) == 0 {
                    Input::Complete {
                        job: c.job,
                        token: c.token,
                    }
                } else {
                    Input::Fail {
                        job: c.job,
                        token: c.token,
                        error: "e".into(),
                        retry_at: None,
                    }
                };
                let _ = h.run(now, input);
            }
            5 if !held.is_empty() => {
                let c = &held[rng.below(held.len() as u64) as usize];
                let input = Input::Heartbeat {
                    job: c.job,
                    token: c.token,
                    lease_ms: None,
                };
                let _ = h.run(now, input);
            }
            6 => {
                let job = JobId(1 + rng.below(last_job.max(1)));
                let _ = h.run(now, Input::CancelJob { job });
            }
            7 => {
                let redrive = Input::Redrive {
                    queue: "a".into(),
                    job: None,
                };
                let _ = h.run(now, redrive);
                let purge = Input::PurgeDead {
                    queue: "a".into(),
                    before: Some(t((now - 100).max(T))),
                };
                let _ = h.run(now, purge);
            }
            _ => {
                h.advance(now);
            }
        }
        assert!(h.engine.live_jobs() <= 40, "step {step}");
        assert!(h.engine.dead_letters("a", 100).len() <= 3, "step {step}");
        assert!(remembered_keys(&h) <= 8, "step {step}");
        if step % 500 == 0 {
            h.restart();
        }
    }
    let a = h.engine.queue_stats("a").unwrap().totals;
    let b = h.engine.queue_stats("b").unwrap().totals;
    // Every path was taken.
    assert!(a.enqueued > 100 && a.completed > 0 && a.retried > 0 && a.dead > 0 && a.expired > 0);
    assert!(
        a.dropped > 0 && a.cancelled > 0 && b.dropped > 0,
        "{a:?} {b:?}"
    );
    h.check_replay();
}
