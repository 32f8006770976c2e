//! Unit tests of the queue state machine. Every helper checks the invariants
//! after each step, so any index drift fails at the step that caused it.

use super::Queues;
use super::backoff::retry_delay_ms;
use crate::time::Timestamp;
use crate::wire::command::{CancelReason, Command, Event, Output};
use crate::wire::config::Limits;
use crate::wire::error::Error;
use crate::wire::ids::{FireId, JobId, LeaseToken};
use crate::wire::input::EnqueueRequest;
use crate::wire::job::{Claimed, JobState};
use crate::wire::payload::Payload;
use crate::wire::queue_config::{QueueConfig, QueueMode};

const SEED: u64 = 7;

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

fn req(queue: &str) -> EnqueueRequest {
    EnqueueRequest::new(queue, Payload::from_json(r#"{"n": 1.50}"#).unwrap())
}

fn keyed(queue: &str, key: &str) -> EnqueueRequest {
    EnqueueRequest {
        key: Some(key.into()),
        ..req(queue)
    }
}

/// Queues plus the output and limits the engine would pass.
struct H {
    qs: Queues,
    out: Output,
    limits: Limits,
}

impl H {
    fn new() -> H {
        H {
            qs: Queues::default(),
            out: Output::default(),
            limits: Limits::default(),
        }
    }

    fn with(cfg: QueueConfig) -> H {
        let mut h = H::new();
        assert_eq!(h.declare(cfg), Ok((true, true)));
        h
    }

    /// `DeclareQueue` as the engine does it: stateless checks, then apply.
    fn declare(&mut self, cfg: QueueConfig) -> Result<(bool, bool), Error> {
        crate::engine::validate::check_queue_config(&cfg, &self.limits)?;
        let res = self.qs.declare(cfg, &self.limits);
        self.qs.check_invariants();
        res
    }

    /// `Claim` as the engine does it: stateless checks, then apply.
    fn try_claim(
        &mut self,
        now: i64,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, Error> {
        crate::engine::validate::check_claim(queue, worker, max, lease_ms, &self.limits)?;
        let res = self.qs.claim(t(now), queue, worker, max, lease_ms);
        self.qs.check_invariants();
        res
    }

    fn drain(&mut self) -> Vec<Command> {
        let mut v = Vec::new();
        while let Some(c) = self.out.pop() {
            v.push(c);
        }
        v
    }

    fn events(&mut self) -> Vec<Event> {
        self.drain()
            .into_iter()
            .filter_map(|c| match c {
                Command::Event(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    /// `Enqueue` as the engine does it: stateless checks, then apply.
    fn enqueue_at(&mut self, now: i64, r: EnqueueRequest) -> Result<(JobId, bool), Error> {
        crate::engine::validate::check_enqueue(&r, &self.limits)?;
        let res = self
            .qs
            .enqueue(t(now), r, None, &self.limits, &mut self.out);
        self.qs.check_invariants();
        res
    }

    fn enq(&mut self, now: i64, r: EnqueueRequest) -> JobId {
        let (id, dedup) = self.enqueue_at(now, r).unwrap();
        assert!(!dedup);
        id
    }

    fn claim(&mut self, now: i64, queue: &str, max: u32) -> Vec<Claimed> {
        self.try_claim(now, queue, "w1", max, None).unwrap()
    }

    fn claim1(&mut self, now: i64, queue: &str) -> Claimed {
        let mut v = self.claim(now, queue, 1);
        assert_eq!(v.len(), 1, "one job claimable");
        v.pop().unwrap()
    }

    fn complete(&mut self, now: i64, c: &Claimed) -> Result<JobState, Error> {
        let res = self.qs.complete(t(now), c.job, c.token, &mut self.out);
        self.qs.check_invariants();
        res
    }

    fn fail(
        &mut self,
        now: i64,
        c: &Claimed,
        retry_at: Option<i64>,
    ) -> Result<(JobState, Option<Timestamp>), Error> {
        let res = self.qs.fail(
            t(now),
            c.job,
            c.token,
            "boom".into(),
            retry_at.map(t),
            &self.limits,
            SEED,
            &mut self.out,
        );
        self.qs.check_invariants();
        res
    }

    fn advance(&mut self, now: i64) {
        self.qs.advance(t(now), &self.limits, SEED, &mut self.out);
        self.qs.check_invariants();
    }

    fn state(&self, id: JobId) -> Option<JobState> {
        self.qs.job_state(id)
    }

    fn json(&self) -> String {
        serde_json::to_string(&self.qs).unwrap()
    }
}

fn wakes(cmds: &[Command]) -> Vec<&str> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Wake { queue } => Some(queue.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn enqueue_claim_complete() {
    let mut h = H::new();
    let a = h.enq(1_000, req("mail"));
    let b = h.enq(1_000, req("mail"));
    assert_eq!((a, b), (JobId(1), JobId(2)));
    let cmds = h.drain();
    assert_eq!(
        cmds,
        vec![
            Command::Event(Event::QueueCreated {
                queue: "mail".into()
            }),
            Command::Wake {
                queue: "mail".into()
            },
        ]
    );
    let c = h.claim1(2_000, "mail");
    assert_eq!((c.job, c.attempt, c.deadline), (a, 1, t(62_000)));
    assert_eq!(c.payload.as_json(), r#"{"n": 1.50}"#);
    assert_eq!(h.state(a), Some(JobState::Claimed));
    let info = h.qs.job(a).unwrap();
    assert_eq!(
        (info.worker.as_deref(), info.lease_deadline),
        (Some("w1"), Some(t(62_000)))
    );
    assert_eq!(h.complete(3_000, &c), Ok(JobState::Completed));
    assert_eq!(
        h.events(),
        vec![Event::JobCompleted {
            job: a,
            queue: "mail".into()
        }]
    );
    assert_eq!(h.qs.take_finished(), vec![(a, None)]);
    assert!(h.qs.take_finished().is_empty());
    assert_eq!(h.qs.live_jobs(), 1);
    let d = h.claim1(3_000, "mail");
    assert_ne!(d.token, c.token, "tokens change on every claim");
    assert_eq!(h.qs.job(a).unwrap().finished_at, Some(t(3_000)));
}

#[test]
fn claim_on_unknown_queue_is_empty_and_creates_nothing() {
    let mut h = H::new();
    assert!(h.claim(0, "nothing", 5).is_empty());
    assert_eq!(h.qs.queue_names().count(), 0);
}

#[test]
fn priority_then_time_then_id() {
    let mut h = H::new();
    let low = h.enq(
        0,
        EnqueueRequest {
            priority: -1,
            ..req("q")
        },
    );
    let mid = h.enq(0, req("q"));
    let hi1 = h.enq(
        5,
        EnqueueRequest {
            priority: 5,
            ..req("q")
        },
    );
    let hi0 = h.enq(
        10,
        EnqueueRequest {
            priority: 5,
            run_at: Some(t(4)),
            ..req("q")
        },
    );
    let hi2 = h.enq(
        5,
        EnqueueRequest {
            priority: 5,
            ..req("q")
        },
    );
    // hi0's run_at is in the past: it counts as available at 10 (no backdating).
    let order: Vec<JobId> = h.claim(20, "q", 10).iter().map(|c| c.job).collect();
    assert_eq!(order, vec![hi1, hi2, hi0, mid, low]);
    assert_eq!(h.qs.job(hi0).unwrap().run_at, t(10));
}

#[test]
fn delayed_jobs_become_available_at_run_at() {
    let mut h = H::new();
    let a = h.enq(
        1_000,
        EnqueueRequest {
            delay_ms: Some(500),
            ..req("q")
        },
    );
    let b = h.enq(
        1_000,
        EnqueueRequest {
            run_at: Some(t(1_200)),
            ..req("q")
        },
    );
    assert_eq!(h.state(a), Some(JobState::Scheduled));
    let cmds = h.drain();
    assert!(wakes(&cmds).is_empty(), "nothing claimable yet");
    assert!(h.claim(1_100, "q", 5).is_empty());
    assert_eq!(h.qs.next_deadline(), Some(t(1_200)));
    h.advance(1_199);
    assert!(h.drain().is_empty());
    h.advance(1_200);
    assert_eq!(h.state(b), Some(JobState::Available));
    assert_eq!(wakes(&h.drain()), vec!["q"]);
    h.advance(1_500);
    assert_eq!(h.state(a), Some(JobState::Available));
    assert!(wakes(&h.drain()).is_empty(), "queue was already claimable");
    let order: Vec<JobId> = h.claim(1_500, "q", 5).iter().map(|c| c.job).collect();
    assert_eq!(order, vec![b, a]);
    assert_eq!(h.qs.stats("q", t(1_500)).unwrap().totals.enqueued, 2);
}

#[test]
fn one_wake_per_queue_per_transition_to_claimable() {
    let mut h = H::new();
    for _ in 0..3 {
        h.enq(
            0,
            EnqueueRequest {
                delay_ms: Some(10),
                ..req("a")
            },
        );
        h.enq(
            0,
            EnqueueRequest {
                delay_ms: Some(10),
                ..req("b")
            },
        );
    }
    h.drain();
    h.advance(10);
    assert_eq!(wakes(&h.drain()), vec!["a", "b"]);
    h.enq(11, req("a"));
    assert!(wakes(&h.drain()).is_empty());
    h.claim(12, "a", 10);
    h.enq(13, req("a"));
    assert_eq!(wakes(&h.drain()), vec!["a"]);
}

#[test]
fn invalid_enqueues_change_nothing() {
    let mut h = H::new();
    h.limits.payload_bytes = 20;
    h.limits.headers = 1;
    h.enq(0, req("q"));
    h.drain();
    let before = h.json();
    let big = EnqueueRequest::new(
        "q",
        Payload::from_json(&format!("\"{}\"", "x".repeat(30))).unwrap(),
    );
    let two_headers = EnqueueRequest {
        headers: [("a".into(), "1".into()), ("b".into(), "2".into())].into(),
        ..req("q")
    };
    let cases: Vec<(EnqueueRequest, &str)> = vec![
        (big, "payload_too_large"),
        (two_headers, "limit_exceeded"),
        (
            EnqueueRequest {
                run_at: Some(t(5)),
                delay_ms: Some(5),
                ..req("q")
            },
            "invalid_input",
        ),
        (
            EnqueueRequest {
                delay_ms: Some(-1),
                ..req("q")
            },
            "invalid_input",
        ),
        (
            EnqueueRequest {
                max_attempts: Some(0),
                ..req("q")
            },
            "invalid_input",
        ),
        (keyed("q", ""), "invalid_input"),
        (req("bad name"), "invalid_name"),
        (req("__chime_x"), "reserved_name"),
        // A new queue is not created by a rejected enqueue.
        (
            EnqueueRequest {
                delay_ms: Some(-1),
                ..req("fresh")
            },
            "invalid_input",
        ),
    ];
    for (r, code) in cases {
        let err = h.enqueue_at(1, r).unwrap_err();
        assert_eq!(err.code(), code, "{err}");
        assert_eq!(h.json(), before);
        assert!(h.drain().is_empty());
    }
    h.limits.live_jobs = 1;
    assert_eq!(
        h.enqueue_at(1, req("fresh")).unwrap_err().code(),
        "limit_exceeded"
    );
    assert_eq!(h.json(), before);
    assert!(h.drain().is_empty());
}

#[test]
fn external_queues_refuse_jobs() {
    let mut h = H::with(QueueConfig {
        mode: QueueMode::External,
        ..QueueConfig::new("ext")
    });
    assert_eq!(
        h.enqueue_at(0, req("ext")).unwrap_err().code(),
        "invalid_input"
    );
    let err = h.try_claim(0, "ext", "w", 1, None).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    // ensure leaves an existing external queue alone.
    h.qs.ensure("ext", &h.limits, &mut h.out).unwrap();
    assert_eq!(h.qs.config("ext").unwrap().mode, QueueMode::External);
    assert!(h.drain().is_empty());
}

#[test]
fn ensure_declares_implicitly_once() {
    let mut h = H::new();
    h.qs.ensure("q", &h.limits, &mut h.out).unwrap();
    h.qs.ensure("q", &h.limits, &mut h.out).unwrap();
    assert_eq!(h.events(), vec![Event::QueueCreated { queue: "q".into() }]);
    assert_eq!(h.qs.config("q"), Some(&QueueConfig::new("q")));
    assert!(h.qs.ensure("a b", &h.limits, &mut h.out).is_err());
    h.qs.ensure("__chime_outbox:q", &h.limits, &mut h.out)
        .unwrap();
    assert_eq!(
        h.qs.queue_names().collect::<Vec<_>>(),
        vec!["__chime_outbox:q", "q"]
    );
}

#[test]
fn declare_reports_created_and_changed() {
    let mut h = H::new();
    let cfg = QueueConfig::new("q");
    assert_eq!(h.declare(cfg.clone()), Ok((true, true)));
    assert_eq!(h.declare(cfg.clone()), Ok((false, false)));
    let longer = QueueConfig {
        lease_ms: 5,
        ..cfg.clone()
    };
    assert_eq!(h.declare(longer), Ok((false, true)));
    assert_eq!(h.qs.config("q").unwrap().lease_ms, 5);
    let bad = QueueConfig {
        max_attempts: 0,
        ..cfg.clone()
    };
    assert_eq!(h.declare(bad).unwrap_err().code(), "invalid_input");
    // A local queue holding jobs cannot become external.
    h.enq(0, req("q"));
    let ext = QueueConfig {
        mode: QueueMode::External,
        ..cfg
    };
    assert_eq!(h.declare(ext).unwrap_err().code(), "invalid_input");
}

#[test]
fn retained_history_survives_a_switch_to_external() {
    let mut h = H::new();
    h.limits.completed_per_queue = 10;
    let c = h.claim1_after_enq();
    assert_eq!(
        h.qs.config("q").unwrap().retention.completed_max,
        10,
        "clamped"
    );
    h.complete(1, &c).unwrap();
    let ext = QueueConfig {
        mode: QueueMode::External,
        ..h.qs.config("q").unwrap().clone()
    };
    assert_eq!(h.declare(ext), Ok((false, true)));
    h.qs.check_invariants();
    let back: Queues = serde_json::from_str(&h.json()).unwrap();
    assert_eq!(back, h.qs);
    h.advance(2 + 24 * 3_600_000);
    assert_eq!(h.qs.job(c.job), None);
}

#[test]
fn claim_arguments_are_checked() {
    let mut h = H::new();
    h.enq(0, req("q"));
    let before = h.json();
    let codes = [
        h.try_claim(0, "q", "w", 0, None).unwrap_err().code(),
        h.try_claim(0, "q", "w", h.limits.claim_batch + 1, None)
            .unwrap_err()
            .code(),
        h.try_claim(0, "q", "w", 1, Some(0)).unwrap_err().code(),
        h.try_claim(0, "q", "bad worker", 1, None)
            .unwrap_err()
            .code(),
    ];
    assert_eq!(
        codes,
        [
            "invalid_input",
            "limit_exceeded",
            "invalid_input",
            "invalid_name"
        ]
    );
    assert_eq!(h.json(), before);
    let c = h.try_claim(0, "q", "w", 1, Some(10)).unwrap();
    assert_eq!(c[0].deadline, t(10));
}

#[test]
fn dedup_within_and_after_window() {
    let mut h = H::with(QueueConfig {
        dedup_window_ms: 1_000,
        ..QueueConfig::new("q")
    });
    let a = h.enq(0, keyed("q", "k"));
    assert_eq!(h.enqueue_at(5, keyed("q", "k")), Ok((a, true)));
    // Another queue has its own keys.
    let other = h.enq(5, keyed("r", "k"));
    assert_ne!(other, a);
    let c = h.claim1(10, "q");
    assert_eq!(h.enqueue_at(11, keyed("q", "k")), Ok((a, true)));
    h.complete(100, &c).unwrap();
    // Finished at 100: remembered until 1_100 (exclusive).
    assert_eq!(h.qs.next_deadline(), Some(t(1_100)));
    assert_eq!(h.enqueue_at(1_099, keyed("q", "k")), Ok((a, true)));
    h.advance(1_100);
    let b = h.enq(1_100, keyed("q", "k"));
    assert_ne!(b, a);
    assert_eq!(h.qs.stats("q", t(1_100)).unwrap().totals.enqueued, 2);
}

#[test]
fn dedup_outlives_retention() {
    let mut h = H::with(QueueConfig {
        retention: crate::wire::queue_config::Retention {
            completed_max: 0,
            completed_ms: 0,
        },
        ..QueueConfig::new("q")
    });
    let a = h.enq(0, keyed("q", "k"));
    let c = h.claim1(0, "q");
    h.complete(1, &c).unwrap();
    assert_eq!(h.qs.job(a), None, "pruned at once");
    assert_eq!(h.enqueue_at(2, keyed("q", "k")), Ok((a, true)));
    h.advance(2 + 24 * 3_600_000);
    assert_ne!(h.enq(3 + 24 * 3_600_000, keyed("q", "k")), a);
}

#[test]
fn dedup_table_is_bounded() {
    let mut h = H::new();
    h.limits.dedup_keys = 2;
    let k1 = h.enq(0, keyed("q", "k1"));
    h.enq(0, keyed("q", "k2"));
    h.drain();
    let before = h.json();
    // Both keys belong to live jobs: nothing can be forgotten.
    let err = h.enqueue_at(1, keyed("q", "k3")).unwrap_err();
    assert_eq!(
        err,
        Error::LimitExceeded {
            what: "dedup_keys",
            limit: 2
        }
    );
    assert_eq!(h.json(), before);
    // Without a key there is no limit on keys.
    h.enq(1, req("q"));
    let c = h.claim1(2, "q");
    assert_eq!(c.job, k1);
    h.complete(3, &c).unwrap();
    // k1 is now a finished job's key: the oldest one, forgotten to make room.
    let k3 = h.enq(4, keyed("q", "k3"));
    // k1 was forgotten (not de-duplicated), and the table is again full of live keys.
    let err = h.enqueue_at(5, keyed("q", "k1")).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    let c = h
        .claim(6, "q", 5)
        .into_iter()
        .find(|c| c.job == k3)
        .unwrap();
    h.complete(7, &c).unwrap();
    assert_ne!(h.enq(8, keyed("q", "k1")), k1);
}

#[test]
fn stale_token_is_fenced_and_changes_nothing() {
    let mut h = H::with(QueueConfig {
        lease_ms: 100,
        backoff: crate::wire::queue_config::Backoff {
            base_ms: 0,
            cap_ms: 0,
        },
        ..QueueConfig::new("q")
    });
    let id = h.enq(0, req("q"));
    let first = h.claim1(0, "q");
    h.advance(100); // expired → retried at once (zero backoff)
    let second = h.claim1(100, "q");
    assert_eq!((second.job, second.attempt), (id, 2));
    assert!(second.token > first.token);
    h.drain();
    let before = h.json();
    let lost = Error::LeaseLost { job: id };
    assert_eq!(
        h.qs.heartbeat(t(101), id, first.token, None),
        Err(lost.clone())
    );
    assert_eq!(h.complete(101, &first), Err(lost.clone()));
    assert_eq!(h.fail(101, &first, None), Err(lost.clone()));
    assert_eq!(
        h.qs.heartbeat(t(101), id, LeaseToken(999), Some(5)),
        Err(lost)
    );
    assert_eq!(
        h.qs.heartbeat(t(101), JobId(77), second.token, None),
        Err(Error::UnknownJob(JobId(77)))
    );
    assert_eq!(h.json(), before);
    assert!(h.drain().is_empty());
    assert_eq!(h.complete(102, &second), Ok(JobState::Completed));
    // A finished job has no lease at all.
    assert_eq!(h.complete(103, &second), Err(Error::LeaseLost { job: id }));
}

#[test]
fn heartbeat_extends_the_lease() {
    let mut h = H::with(QueueConfig {
        lease_ms: 100,
        ..QueueConfig::new("q")
    });
    let c = h.claim1_after_enq();
    assert_eq!(h.qs.heartbeat(t(90), c.job, c.token, None), Ok(t(190)));
    h.qs.check_invariants();
    h.advance(150);
    assert_eq!(h.state(c.job), Some(JobState::Claimed));
    assert_eq!(
        h.qs.heartbeat(t(150), c.job, c.token, Some(1_000)),
        Ok(t(1_150))
    );
    assert_eq!(h.qs.next_deadline(), Some(t(1_150)));
    // Checked before the engine advances, so before the token is looked at.
    assert_eq!(
        crate::engine::validate::check_lease_ms(Some(-1))
            .unwrap_err()
            .code(),
        "invalid_input"
    );
    h.advance(1_150);
    assert_eq!(h.state(c.job), Some(JobState::Scheduled));
}

impl H {
    fn claim1_after_enq(&mut self) -> Claimed {
        self.enq(0, req("q"));
        self.claim1(0, "q")
    }
}

#[test]
fn retries_follow_equal_jitter_backoff() {
    let mut h = H::with(QueueConfig {
        max_attempts: 10,
        ..QueueConfig::new("q")
    });
    let id = h.enq(0, req("q"));
    let mut now = 0;
    for attempt in 1..=9u32 {
        let c = h.claim1(now, "q");
        assert_eq!(c.attempt, attempt);
        let (state, run_at) = h.fail(now + 1, &c, None).unwrap();
        assert_eq!(state, JobState::Scheduled);
        let wait = run_at.unwrap().as_millis() - (now + 1);
        let d = (5_000_i64 << (attempt - 1)).min(3_600_000);
        assert!(
            (d / 2..=d).contains(&wait),
            "attempt {attempt}: wait {wait}, d {d}"
        );
        assert_eq!(wait, retry_delay_ms(Default::default(), SEED, id, attempt));
        let events = h.events();
        let expected = Event::JobRetried {
            job: id,
            queue: "q".into(),
            attempt,
            run_at: run_at.unwrap(),
            error: "boom".into(),
        };
        assert_eq!(events, vec![expected]);
        assert_eq!(h.qs.next_deadline(), run_at);
        now = run_at.unwrap().as_millis();
        h.advance(now);
    }
    assert_eq!(h.qs.stats("q", t(now)).unwrap().totals.retried, 9);
    assert_eq!(h.qs.job(id).unwrap().last_error.as_deref(), Some("boom"));
}

#[test]
fn retry_at_overrides_and_is_clamped_to_now() {
    let mut h = H::new();
    let c = h.claim1_after_enq();
    assert_eq!(
        h.fail(10, &c, Some(5_000)),
        Ok((JobState::Scheduled, Some(t(5_000))))
    );
    h.advance(5_000);
    h.drain();
    let c = h.claim1(5_000, "q");
    assert_eq!(
        h.fail(6_000, &c, Some(1)),
        Ok((JobState::Available, Some(t(6_000))))
    );
    assert_eq!(wakes(&h.drain()), vec!["q"]);
    assert_eq!(h.qs.job(c.job).unwrap().run_at, t(6_000));
}

#[test]
fn error_text_is_truncated() {
    let mut h = H::new();
    h.limits.text_bytes = 3;
    let c = h.claim1_after_enq();
    h.qs.fail(
        t(1),
        c.job,
        c.token,
        "héllo".into(),
        None,
        &h.limits,
        SEED,
        &mut h.out,
    )
    .unwrap();
    assert_eq!(h.qs.job(c.job).unwrap().last_error.as_deref(), Some("hé"));
}

#[test]
fn lease_expiry_retries_then_dead_letters() {
    let mut h = H::with(QueueConfig {
        lease_ms: 100,
        max_attempts: 2,
        ..QueueConfig::new("q")
    });
    let id = h.enq(
        0,
        EnqueueRequest {
            key: Some("k".into()),
            ..req("q")
        },
    );
    h.claim1(0, "q");
    h.drain();
    assert_eq!(h.qs.next_deadline(), Some(t(100)));
    h.advance(99);
    assert!(h.drain().is_empty());
    h.advance(100);
    let events = h.events();
    let Event::JobRetried {
        run_at, ref error, ..
    } = events[1]
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        events[0],
        Event::LeaseExpired {
            job: id,
            queue: "q".into(),
            attempt: 1
        }
    );
    assert_eq!(error, "lease_expired");
    assert_eq!(h.state(id), Some(JobState::Scheduled));
    h.advance(run_at.as_millis());
    let c = h.claim1(run_at.as_millis(), "q");
    assert_eq!(c.attempt, 2);
    h.drain();
    h.advance(c.deadline.as_millis() + 5);
    assert_eq!(
        h.events(),
        vec![
            Event::LeaseExpired {
                job: id,
                queue: "q".into(),
                attempt: 2
            },
            Event::JobDead {
                job: id,
                queue: "q".into(),
                attempts: 2
            },
        ]
    );
    assert_eq!(h.state(id), Some(JobState::Dead));
    assert_eq!(h.qs.take_finished(), vec![(id, None)]);
    let dead = h.qs.dead_letters("q", 10);
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].last_error.as_deref(), Some("lease_expired"));
    let s = h.qs.stats("q", t(1_000_000)).unwrap();
    assert_eq!(
        (s.dead, s.totals.dead, s.totals.expired, s.totals.retried),
        (1, 1, 2, 1)
    );
    // Dead letters are not pruned by retention.
    h.advance(10 * 24 * 3_600_000);
    assert_eq!(h.state(id), Some(JobState::Dead));
    // Its key is remembered for the window after its death, then forgotten.
    assert_ne!(h.enq(10 * 24 * 3_600_000, keyed("q", "k")), id);
}

#[test]
fn per_job_max_attempts_and_no_dead_letter_drops() {
    let mut h = H::with(QueueConfig {
        dead_letter: false,
        ..QueueConfig::new("q")
    });
    let id = h.enq(
        0,
        EnqueueRequest {
            max_attempts: Some(1),
            ..req("q")
        },
    );
    let c = h.claim1(0, "q");
    assert_eq!(h.fail(1, &c, Some(2)), Ok((JobState::Dropped, None)));
    assert_eq!(
        h.events(),
        vec![Event::JobDropped {
            job: id,
            queue: "q".into(),
            reason: "exhausted".into()
        }]
    );
    assert!(h.qs.dead_letters("q", 10).is_empty());
    assert_eq!(h.qs.take_finished(), vec![(id, None)]);
    assert_eq!(h.qs.job(id).unwrap().max_attempts, 1);
    assert_eq!(h.qs.stats("q", t(1)).unwrap().totals.dropped, 1);
}

#[test]
fn dead_letters_are_bounded_per_queue() {
    let mut h = H::with(QueueConfig {
        max_attempts: 1,
        ..QueueConfig::new("q")
    });
    h.limits.dead_letters_per_queue = 2;
    let ids: Vec<JobId> = (0..3).map(|i| h.enq(i, req("q"))).collect();
    for i in 0..3 {
        let c = h.claim1(10 + i, "q");
        h.fail(10 + i, &c, None).unwrap();
    }
    let events = h.events();
    assert_eq!(
        events[events.len() - 2..],
        [
            Event::JobDead {
                job: ids[2],
                queue: "q".into(),
                attempts: 1
            },
            Event::JobDropped {
                job: ids[0],
                queue: "q".into(),
                reason: "dead_letter_limit".into()
            },
        ]
    );
    let dead: Vec<JobId> = h.qs.dead_letters("q", 10).iter().map(|j| j.id).collect();
    assert_eq!(dead, vec![ids[1], ids[2]]);
    assert_eq!(h.state(ids[0]), Some(JobState::Dropped));
    // With a bound of zero a job is dropped as it dies, and `fail` says so.
    h.limits.dead_letters_per_queue = 0;
    let last = h.enq(20, req("q"));
    let c = h.claim1(20, "q");
    assert_eq!(h.fail(20, &c, None), Ok((JobState::Dropped, None)));
    assert_eq!(h.state(last), Some(JobState::Dropped));
    assert!(h.qs.dead_letters("q", 10).is_empty());
    let mut ids = ids;
    ids.push(last);
    // Reported once, when it died.
    let finished: Vec<JobId> = h.qs.take_finished().into_iter().map(|f| f.0).collect();
    assert_eq!(finished, ids);
}

#[test]
fn redrive_and_purge() {
    let mut h = H::with(QueueConfig {
        max_attempts: 1,
        ..QueueConfig::new("q")
    });
    let ids: Vec<JobId> = (0..4).map(|_| h.enq(0, req("q"))).collect();
    for i in 0..4 {
        let c = h.claim1(100 * i, "q");
        h.fail(100 * i, &c, None).unwrap();
    }
    h.drain();
    assert_eq!(
        h.qs.redrive(t(500), "nope", None, &h.limits, &mut h.out)
            .unwrap_err()
            .code(),
        "unknown_queue"
    );
    let l = h.limits.clone();
    assert_eq!(
        h.qs.redrive(t(500), "q", Some(JobId(99)), &l, &mut h.out)
            .unwrap_err()
            .code(),
        "unknown_job"
    );
    assert_eq!(
        h.qs.redrive(t(500), "q", Some(ids[1]), &l, &mut h.out),
        Ok((1, 0))
    );
    h.qs.check_invariants();
    assert_eq!(wakes(&h.drain()), vec!["q"]);
    let info = h.qs.job(ids[1]).unwrap();
    assert_eq!(
        (info.state, info.attempt, info.run_at, info.finished_at),
        (JobState::Available, 0, t(500), None)
    );
    let err =
        h.qs.redrive(t(500), "q", Some(ids[1]), &l, &mut h.out)
            .unwrap_err();
    assert_eq!(err.code(), "invalid_state");
    // Purge the dead letters that died before 200: ids[0] (died at 0).
    assert_eq!(h.qs.purge_dead("q", Some(t(200))), Ok(1));
    h.qs.check_invariants();
    assert_eq!(h.qs.job(ids[0]), None);
    // Redrive all: refused as a whole when it would pass the live-job limit.
    let mut tight = l.clone();
    tight.live_jobs = 2;
    let err =
        h.qs.redrive(t(600), "q", None, &tight, &mut h.out)
            .unwrap_err();
    assert_eq!(
        err,
        Error::LimitExceeded {
            what: "live_jobs",
            limit: 2
        }
    );
    assert_eq!(h.qs.redrive(t(600), "q", None, &l, &mut h.out), Ok((2, 0)));
    h.qs.check_invariants();
    assert!(wakes(&h.drain()).is_empty(), "already claimable");
    let order: Vec<JobId> = h.claim(600, "q", 10).iter().map(|c| c.job).collect();
    assert_eq!(order, vec![ids[1], ids[2], ids[3]]);
    assert_eq!(h.qs.purge_dead("q", None), Ok(0));
    assert_eq!(
        h.qs.purge_dead("zz", None).unwrap_err().code(),
        "unknown_queue"
    );
}

#[test]
fn cancel() {
    let mut h = H::new();
    let a = h.enq(0, req("q"));
    let b = h.enq(
        0,
        EnqueueRequest {
            delay_ms: Some(50),
            ..req("q")
        },
    );
    let c = h.claim1(0, "q");
    assert_eq!(c.job, a);
    h.drain();
    assert_eq!(
        h.qs.cancel(t(1), a, CancelReason::Superseded, &mut h.out),
        Ok(JobState::Cancelled)
    );
    assert_eq!(
        h.drain(),
        vec![
            Command::Cancel {
                job: a,
                reason: CancelReason::Superseded
            },
            Command::Event(Event::JobCancelled {
                job: a,
                queue: "q".into(),
                reason: CancelReason::Superseded
            }),
        ]
    );
    assert_eq!(h.complete(2, &c), Err(Error::LeaseLost { job: a }));
    assert_eq!(
        h.qs.cancel(t(2), b, CancelReason::Requested, &mut h.out),
        Ok(JobState::Cancelled)
    );
    h.qs.check_invariants();
    assert_eq!(
        h.events(),
        vec![Event::JobCancelled {
            job: b,
            queue: "q".into(),
            reason: CancelReason::Requested
        }]
    );
    let err =
        h.qs.cancel(t(3), b, CancelReason::Requested, &mut h.out)
            .unwrap_err();
    assert_eq!(err.code(), "invalid_state");
    assert_eq!(
        h.qs.cancel(t(3), JobId(9), CancelReason::Requested, &mut h.out),
        Err(Error::UnknownJob(JobId(9)))
    );
    assert_eq!(h.qs.take_finished(), vec![(a, None), (b, None)]);
    let s = h.qs.stats("q", t(3)).unwrap();
    assert_eq!((s.cancelled, s.totals.cancelled, s.scheduled), (2, 2, 0));
    assert_eq!(
        h.qs.next_deadline(),
        Some(t(1 + 24 * 3_600_000)),
        "retention of the first cancel"
    );
}

#[test]
fn retention_by_count_and_age() {
    let mut h = H::with(QueueConfig {
        retention: crate::wire::queue_config::Retention {
            completed_max: 2,
            completed_ms: 1_000,
        },
        ..QueueConfig::new("q")
    });
    let ids: Vec<JobId> = (0..3).map(|_| h.enq(0, req("q"))).collect();
    for i in 0..3 {
        let c = h.claim1(i, "q");
        h.complete(i, &c).unwrap();
    }
    assert_eq!(h.qs.job(ids[0]), None, "count bound");
    assert_eq!(h.qs.stats("q", t(3)).unwrap().completed, 2);
    assert_eq!(h.qs.next_deadline(), Some(t(1_001)));
    h.advance(1_001);
    assert_eq!(h.qs.job(ids[1]), None, "age bound");
    assert_eq!(h.state(ids[2]), Some(JobState::Completed));
    h.advance(1_002);
    assert_eq!(h.qs.job(ids[2]), None);
    assert_eq!(h.qs.next_deadline(), None);
    // Lowering the bound trims at once.
    let more: Vec<JobId> = (0..2).map(|_| h.enq(2_000, req("q"))).collect();
    for _ in 0..2 {
        let c = h.claim1(2_000, "q");
        h.complete(2_000, &c).unwrap();
    }
    let mut cfg = h.qs.config("q").unwrap().clone();
    cfg.retention.completed_max = 0;
    assert_eq!(h.declare(cfg), Ok((false, true)));
    h.qs.check_invariants();
    assert!(more.iter().all(|&id| h.qs.job(id).is_none()));
    assert_eq!(h.qs.stats("q", t(2_000)).unwrap().totals.completed, 5);
}

#[test]
fn stats_counts_and_oldest_age() {
    let mut h = H::new();
    h.enq(100, req("q"));
    h.enq(200, req("q"));
    h.enq(
        200,
        EnqueueRequest {
            priority: 9,
            ..req("q")
        },
    );
    h.enq(
        200,
        EnqueueRequest {
            delay_ms: Some(1_000),
            ..req("q")
        },
    );
    let c = h.claim1(300, "q"); // the priority-9 one
    assert_eq!(c.job, JobId(3));
    let s = h.qs.stats("q", t(1_000)).unwrap();
    assert_eq!(
        (s.scheduled, s.available, s.claimed, s.completed, s.dead),
        (1, 2, 1, 0, 0)
    );
    assert_eq!(s.oldest_available_age_ms, Some(900));
    assert_eq!(s.as_of, Some(t(1_000)));
    assert_eq!(s.totals.enqueued, 4);
    assert_eq!(h.qs.stats("none", t(0)), None);
    assert_eq!(h.qs.live_jobs(), 4);
}

#[test]
fn fires_are_linked_and_reported_when_finished() {
    let mut h = H::new();
    let fire: FireId = "backup@60000".parse().unwrap();
    let r = keyed("q", &fire.to_string());
    let (id, _) =
        h.qs.enqueue(
            t(60_000),
            r.clone(),
            Some(fire.clone()),
            &h.limits,
            &mut h.out,
        )
        .unwrap();
    // Re-delivery of the same fire de-duplicates by key.
    let again =
        h.qs.enqueue(t(60_001), r, Some(fire.clone()), &h.limits, &mut h.out);
    assert_eq!(again, Ok((id, true)));
    let c = h.claim1(60_002, "q");
    assert_eq!(c.fire.as_ref(), Some(&fire));
    assert!(h.qs.take_finished().is_empty());
    h.complete(60_003, &c).unwrap();
    assert_eq!(h.qs.take_finished(), vec![(id, Some(fire))]);
}

/// Builds a queue set with jobs in every state, keys, a pending finished list.
fn busy() -> H {
    let mut h = H::with(QueueConfig {
        max_attempts: 1,
        ..QueueConfig::new("dead")
    });
    let fire: FireId = "s@1000".parse().unwrap();
    h.qs.enqueue(
        t(1_000),
        keyed("main", "k1"),
        Some(fire),
        &h.limits,
        &mut h.out,
    )
    .unwrap();
    h.enq(
        1_000,
        EnqueueRequest {
            headers: [("h".into(), "v".into())].into(),
            priority: 3,
            ..keyed("main", "k2")
        },
    );
    h.enq(
        1_000,
        EnqueueRequest {
            delay_ms: Some(5_000),
            ..req("main")
        },
    );
    h.enq(1_000, req("main"));
    h.enq(1_000, req("dead"));
    let c = h.claim1(1_100, "dead");
    h.fail(1_100, &c, None).unwrap();
    let c = h.claim1(1_200, "main");
    h.complete(1_300, &c).unwrap();
    h.claim1(1_400, "main");
    h
}

#[test]
fn serde_round_trip_is_byte_identical() {
    let mut h = busy();
    let json = h.json();
    let back: Queues = serde_json::from_str(&json).unwrap();
    assert_eq!(back, h.qs, "indexes rebuilt exactly");
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    back.check_invariants();
    // The restored copy behaves identically.
    let mut other = H {
        qs: back,
        out: Output::default(),
        limits: Limits::default(),
    };
    h.drain();
    for now in [2_000, 61_400, 70_000, 100_000_000] {
        h.advance(now);
        other.advance(now);
        let c1 = h.claim(now, "main", 5);
        let c2 = other.claim(now, "main", 5);
        assert_eq!(c1, c2);
        assert_eq!(h.drain(), other.drain());
        assert_eq!(h.json(), other.json());
    }
    assert!(
        json.contains(r#""payload":{"n": 1.50}"#),
        "payload verbatim: {json}"
    );
}

#[test]
fn corrupt_snapshots_are_rejected() {
    let h = busy();
    let json = h.json();
    let bad = [
        json.replace(r#""lastJob":5"#, r#""lastJob":2"#),
        json.replace(r#""lastToken":3"#, r#""lastToken":1"#),
        json.replace(r#""queue":"main""#, r#""queue":"gone""#),
        json.replace(r#""state":"available""#, r#""state":"claimed""#),
    ];
    for b in bad {
        assert_ne!(b, json, "replacement applied");
        assert!(serde_json::from_str::<Queues>(&b).is_err(), "{b}");
    }
}

#[test]
fn identical_inputs_give_identical_outputs() {
    let run = || {
        let mut h = busy();
        h.advance(90_000);
        let mut log = format!("{:?}", h.drain());
        for c in h.claim(90_000, "main", 10) {
            h.fail(90_001, &c, None).unwrap();
        }
        log.push_str(&format!("{:?}", h.drain()));
        (log, h.json())
    };
    assert_eq!(run(), run());
}

/// Random operations against the invariant checker (a cheap model check).
#[test]
fn random_operations_keep_invariants() {
    let mut h = H::new();
    h.limits.dedup_keys = 8;
    h.limits.dead_letters_per_queue = 3;
    h.limits.live_jobs = 40;
    for name in ["a", "b"] {
        let cfg = QueueConfig {
            lease_ms: 50,
            max_attempts: 2,
            dedup_window_ms: 200,
            dead_letter: name == "a",
            backoff: crate::wire::queue_config::Backoff {
                base_ms: 10,
                cap_ms: 100,
            },
            retention: crate::wire::queue_config::Retention {
                completed_max: 5,
                completed_ms: 300,
            },
            ..QueueConfig::new(name)
        };
        h.declare(cfg).unwrap();
    }
    let mut rng = 12345u64;
    let mut next = |n: u64| {
        rng = crate::det::mix64(rng);
        rng % n
    };
    let mut now = 0i64;
    let mut held: Vec<Claimed> = Vec::new();
    for step in 0..4_000 {
        now += next(20) as i64;
        let queue = if next(2) == 0 { "a" } else { "b" };
        match next(9) {
            0 | 1 => {
                let r = EnqueueRequest {
                    key: (next(2) == 0).then(|| format!("k{}", next(12))),
                    delay_ms: (next(3) == 0).then(|| next(100) as i64),
                    priority: next(3) as i32,
                    ..req(queue)
                };
                let _ = h.enqueue_at(now, r);
            }
            2 => held.extend(h.claim(now, queue, 1 + next(3) as u32)),
            3 | 4 if !held.is_empty() => {
                let c = held.swap_remove(next(held.len() as u64) as usize);
                let _ = if next(2) == 0 {
                    h.complete(now, &c)
                } else {
                    h.fail(now, &c, None).map(|r| r.0)
                };
            }
            5 if !held.is_empty() => {
                let c = &held[next(held.len() as u64) as usize];
                let _ = h.qs.heartbeat(t(now), c.job, c.token, None);
            }
            6 => {
                let id = JobId(1 + next(h.qs.last_job.max(1)));
                let _ = h.qs.cancel(t(now), id, CancelReason::Requested, &mut h.out);
            }
            7 => {
                let l = h.limits.clone();
                let _ = h.qs.redrive(t(now), "a", None, &l, &mut h.out);
                let _ = h.qs.purge_dead("a", Some(t((now - 100).max(0))));
            }
            _ => h.advance(now),
        }
        h.qs.check_invariants();
        assert!(h.qs.live_jobs() <= 40);
        assert!(h.qs.idx.dedup_keys <= 8);
        assert!(h.qs.dead_letters("a", 100).len() <= 3);
        for (id, _) in h.qs.take_finished() {
            if let Some(s) = h.state(id) {
                assert!(
                    s.is_terminal() || s == JobState::Available,
                    "step {step}: {s:?}"
                );
            }
        }
        if step % 500 == 0 {
            let json = h.json();
            let back: Queues = serde_json::from_str(&json).unwrap();
            assert_eq!(serde_json::to_string(&back).unwrap(), json);
            assert_eq!(back, h.qs);
        }
        h.drain();
    }
    let a = h.qs.stats("a", t(now)).unwrap().totals;
    let b = h.qs.stats("b", t(now)).unwrap().totals;
    // Every path was exercised.
    assert!(a.enqueued > 100 && a.completed > 0 && a.retried > 0 && a.dead > 0 && a.expired > 0);
    assert!(a.dropped > 0 && a.cancelled > 0 && b.dropped > 0);
}
