//! One set of job-queue semantics, run on every implementation of the
//! queue port ([`QueueBackend`], see `backends`): the
//! embedded engine through its driver, the engine driven in place, the
//! Postgres queues (`PgQueues` on a real server, see `pg_support`) and the
//! Redis Streams transport (a real server, see `redis_support`).
//! Each scenario is written once against the port and must give the same
//! observable results on all: claim order, attempt numbers, fencing
//! errors, retry delays, dead letters and drops, idempotency keys, and the
//! error codes of bad input. A new backend joins every scenario by adding
//! its constructor to `backends::queue_backends`.
//!
//! Covered: the verbs of the port (declare, enqueue, claim, heartbeat,
//! complete, fail, cancel, redrive, purge, job, maintain). The schedule
//! semantics are in `schedule_conformance.rs`.

use crate::backends;

use chime_core::{
    AfterFailure, Backoff, Claimed, EngineConfig, EnqueueRequest, JobId, LeaseToken, Payload,
    QueueConfig, Timestamp, after_failure,
};
use chime_native::backend::{Failed, PortError, QueueBackend};
use std::sync::Arc;
use std::time::Duration;

const SEED: u64 = 4242;

/// What a failed attempt led to, as every backend reports it.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Retry { delay_ms: i64 },
    Dead,
    Dropped,
}

/// A backend under test, through the port only; errors are the stable
/// codes.
struct Backend {
    q: Arc<dyn QueueBackend>,
    name: &'static str,
    priorities: bool,
}

fn code(e: PortError) -> &'static str {
    match e {
        PortError::Refused(e) => e.code(),
        other => panic!("backend failed: {other}"),
    }
}

impl Backend {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn declare(&self, cfg: QueueConfig) {
        self.q.declare(&cfg).await.unwrap();
    }

    async fn enqueue(&self, req: EnqueueRequest) -> Result<(JobId, bool), &'static str> {
        let e = self.q.enqueue(&req).await.map_err(code)?;
        Ok((e.job, e.deduplicated))
    }

    async fn claim(
        &self,
        queue: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, &'static str> {
        self.q.claim(queue, "w", max, lease_ms).await.map_err(code)
    }

    async fn complete(&self, job: JobId, token: LeaseToken) -> Result<(), &'static str> {
        self.q.complete(job, token).await.map_err(code)
    }

    async fn cancel(&self, job: JobId) -> Result<(), &'static str> {
        self.q.cancel(job).await.map_err(code)
    }

    async fn redrive(&self, queue: &str, job: Option<JobId>) -> Result<(u64, u64), &'static str> {
        let r = self.q.redrive(queue, job).await.map_err(code)?;
        Ok((r.count, r.keys_dropped))
    }

    async fn purge_dead(&self, queue: &str) -> Result<u64, &'static str> {
        self.q.purge_dead(queue, None).await.map_err(code)
    }

    /// Whether the backend still holds `job`, after its housekeeping.
    async fn holds(&self, job: JobId) -> bool {
        self.q.maintain().await.unwrap();
        self.q.job(job).await.unwrap().is_some()
    }

    async fn heartbeat(&self, job: JobId, token: LeaseToken) -> Result<(), &'static str> {
        self.q
            .heartbeat(job, token, None)
            .await
            .map(drop)
            .map_err(code)
    }

    async fn fail(&self, job: JobId, token: LeaseToken) -> Result<Outcome, &'static str> {
        Ok(
            match self.q.fail(job, token, "boom", None).await.map_err(code)? {
                Failed::Retry { delay_ms, .. } => Outcome::Retry { delay_ms },
                Failed::Dead => Outcome::Dead,
                Failed::Dropped => Outcome::Dropped,
            },
        )
    }
}

/// Runs `scenario` on every backend (Postgres only when a server is set
/// up; see `pg_support`).
async fn on_all<F, Fut>(test: &str, scenario: F)
where
    F: Fn(Backend) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    on_all_with(test, EngineConfig::default(), scenario).await;
}

/// [`on_all`] with these limits (the seed is always [`SEED`]).
async fn on_all_with<F, Fut>(test: &str, config: EngineConfig, scenario: F)
where
    F: Fn(Backend) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let config = EngineConfig {
        seed: SEED,
        ..config
    };
    for under in backends::queue_backends(test, &config).await {
        let b = Backend {
            q: under.backend.clone(),
            name: under.name,
            priorities: under.priorities,
        };
        scenario(b).await;
        under.end().await;
    }
}

fn queue(name: &str) -> QueueConfig {
    let mut q = QueueConfig::new(name);
    q.backoff = Backoff {
        base_ms: 30,
        cap_ms: 80,
    };
    q.max_attempts = 3;
    q
}

fn job(queue: &str, priority: i32) -> EnqueueRequest {
    let mut r = EnqueueRequest::new(queue, Payload::from_json(&priority.to_string()).unwrap());
    r.priority = priority;
    r
}

/// Claims one job, polling while retries come due.
async fn claim_one(b: &Backend, queue: &str) -> Claimed {
    for _ in 0..200 {
        if let Some(c) = b.claim(queue, 1, None).await.unwrap().pop() {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{}: nothing to claim", b.name());
}

#[tokio::test]
async fn claim_order_and_attempts() {
    on_all("conf_order", |b| async move {
        b.declare(queue("q")).await;
        if !b.priorities {
            // A transport refuses what it cannot order (and adds nothing),
            // then claims in enqueue order.
            assert_eq!(
                b.enqueue(job("q", 5)).await,
                Err("invalid_input"),
                "{}",
                b.name()
            );
            let mut ids = Vec::new();
            for _ in 0..5 {
                ids.push(b.enqueue(job("q", 0)).await.unwrap().0);
            }
            let got = b.claim("q", 10, None).await.unwrap();
            let order: Vec<JobId> = got.iter().map(|c| c.job).collect();
            assert_eq!(order, ids, "{}", b.name());
            assert!(got.iter().all(|c| c.attempt == 1), "{}", b.name());
            assert!(
                b.claim("q", 10, None).await.unwrap().is_empty(),
                "{}",
                b.name()
            );
            return;
        }
        let mut ids = Vec::new();
        for p in [0, 5, 0, 9, 5] {
            ids.push(b.enqueue(job("q", p)).await.unwrap().0);
        }
        let got = b.claim("q", 10, None).await.unwrap();
        let order: Vec<JobId> = got.iter().map(|c| c.job).collect();
        // Priority first, then enqueue order (same run_at: id order).
        assert_eq!(
            order,
            vec![ids[3], ids[1], ids[4], ids[0], ids[2]],
            "{}",
            b.name()
        );
        assert!(got.iter().all(|c| c.attempt == 1), "{}", b.name());
        let payloads: Vec<&str> = got.iter().map(|c| c.payload.as_json()).collect();
        assert_eq!(payloads, ["9", "5", "5", "0", "0"], "{}", b.name());
        assert!(
            b.claim("q", 10, None).await.unwrap().is_empty(),
            "{}",
            b.name()
        );
    })
    .await;
}

#[tokio::test]
async fn fencing_errors() {
    on_all("conf_fence", |b| async move {
        b.declare(queue("q")).await;
        let (id, _) = b.enqueue(job("q", 0)).await.unwrap();
        let c = b.claim("q", 1, None).await.unwrap().remove(0);
        let stale = LeaseToken(c.token.0 + 100);
        let n = b.name();
        assert_eq!(b.complete(id, stale).await, Err("lease_lost"), "{n}");
        assert_eq!(b.heartbeat(id, stale).await, Err("lease_lost"), "{n}");
        assert_eq!(b.fail(id, stale).await, Err("lease_lost"), "{n}");
        assert_eq!(
            b.complete(JobId(987_654), c.token).await,
            Err("unknown_job"),
            "{n}"
        );
        assert_eq!(b.heartbeat(id, c.token).await, Ok(()), "{n}");
        assert_eq!(b.complete(id, c.token).await, Ok(()), "{n}");
        assert_eq!(b.complete(id, c.token).await, Err("lease_lost"), "{n}");
    })
    .await;
}

#[tokio::test]
async fn retries_at_core_delays_then_dead_or_dropped() {
    on_all("conf_retry", |b| async move {
        let n = b.name();
        b.declare(queue("q")).await;
        let (id, _) = b.enqueue(job("q", 0)).await.unwrap();
        let mut outcomes = Vec::new();
        for attempt in 1..=3 {
            let c = claim_one(&b, "q").await;
            assert_eq!((c.job, c.attempt), (id, attempt), "{n}");
            outcomes.push(b.fail(id, c.token).await.unwrap());
        }
        let cfg = queue("q");
        let expected: Vec<Outcome> = (1..=3)
            .map(
                |attempt| match after_failure(&cfg, None, SEED, id, attempt) {
                    AfterFailure::Retry { delay_ms } => Outcome::Retry { delay_ms },
                    AfterFailure::Exhausted { dead_letter: true } => Outcome::Dead,
                    AfterFailure::Exhausted { dead_letter: false } => Outcome::Dropped,
                },
            )
            .collect();
        assert_eq!(outcomes, expected, "{n}");

        let mut no_dead = queue("drop");
        no_dead.dead_letter = false;
        no_dead.max_attempts = 1;
        b.declare(no_dead).await;
        let (id, _) = b.enqueue(job("drop", 0)).await.unwrap();
        let c = b.claim("drop", 1, None).await.unwrap().remove(0);
        assert_eq!(b.fail(id, c.token).await, Ok(Outcome::Dropped), "{n}");
    })
    .await;
}

#[tokio::test]
async fn idempotency_keys() {
    on_all("conf_keys", |b| async move {
        let n = b.name();
        b.declare(queue("q")).await;
        let mut req = job("q", 0);
        req.key = Some("k1".into());
        let (first, dup) = b.enqueue(req.clone()).await.unwrap();
        assert!(!dup, "{n}");
        assert_eq!(b.enqueue(req.clone()).await.unwrap(), (first, true), "{n}");
        let c = b.claim("q", 10, None).await.unwrap();
        assert_eq!(c.len(), 1, "{n}");
        b.complete(first, c[0].token).await.unwrap();
        // Within the dedup window (24 h by default) after it finished.
        assert_eq!(b.enqueue(req).await.unwrap(), (first, true), "{n}");
        let mut other = job("q", 0);
        other.key = Some("k2".into());
        assert!(!b.enqueue(other).await.unwrap().1, "{n}");
    })
    .await;
}

#[tokio::test]
async fn bad_input_codes_and_implicit_queues() {
    on_all("conf_bad", |b| async move {
        let n = b.name();
        b.declare(queue("q")).await;
        let limits = EngineConfig::default().limits;
        let mut cases: Vec<(EnqueueRequest, &str)> = Vec::new();
        let big = format!("\"{}\"", "x".repeat(limits.payload_bytes));
        cases.push((
            EnqueueRequest::new("q", Payload::from_json(&big).unwrap()),
            "payload_too_large",
        ));
        let mut both = job("q", 0);
        both.delay_ms = Some(1);
        both.run_at = Some(Timestamp::from_millis(1).unwrap());
        cases.push((both, "invalid_input"));
        let mut zero = job("q", 0);
        zero.max_attempts = Some(0);
        cases.push((zero, "invalid_input"));
        let mut long_key = job("q", 0);
        long_key.key = Some("k".repeat(limits.text_bytes + 1));
        cases.push((long_key, "invalid_input"));
        cases.push((job("bad name!", 0), "invalid_name"));
        for (req, code) in cases {
            assert_eq!(b.enqueue(req.clone()).await, Err(code), "{n}: {req:?}");
        }
        assert_eq!(
            b.claim("q", 0, None).await.err(),
            Some("invalid_input"),
            "{n}"
        );
        assert_eq!(
            b.claim("q", 1, Some(0)).await.err(),
            Some("invalid_input"),
            "{n}"
        );
        assert!(
            b.claim("q", 10, None).await.unwrap().is_empty(),
            "{n}: nothing added"
        );
    })
    .await;
}

#[tokio::test]
async fn cancel() {
    on_all("conf_cancel", |b| async move {
        let n = b.name();
        b.declare(queue("q")).await;
        // Claimed first: by priority, or (a transport) by enqueue order.
        let (pending, running) = if b.priorities {
            let (pending, _) = b.enqueue(job("q", 0)).await.unwrap();
            (pending, b.enqueue(job("q", 1)).await.unwrap().0)
        } else {
            let (running, _) = b.enqueue(job("q", 0)).await.unwrap();
            (b.enqueue(job("q", 0)).await.unwrap().0, running)
        };
        let c = b.claim("q", 1, None).await.unwrap().remove(0);
        assert_eq!(c.job, running, "{n}");
        assert_eq!(b.cancel(pending).await, Ok(()), "{n}");
        assert_eq!(b.cancel(running).await, Ok(()), "{n}");
        // The cancelled pending job never runs; the running one's token is void.
        assert!(b.claim("q", 10, None).await.unwrap().is_empty(), "{n}");
        assert_eq!(b.complete(running, c.token).await, Err("lease_lost"), "{n}");
        assert_eq!(b.cancel(running).await, Err("invalid_state"), "{n}");
        assert_eq!(b.cancel(JobId(987_654)).await, Err("unknown_job"), "{n}");
        let (done, _) = b.enqueue(job("q", 0)).await.unwrap();
        let c = b.claim("q", 1, None).await.unwrap().remove(0);
        b.complete(done, c.token).await.unwrap();
        assert_eq!(b.cancel(done).await, Err("invalid_state"), "{n}");
    })
    .await;
}

/// Fails `job` (claimed alone from `queue`) until it is dead (1 attempt).
async fn kill(b: &Backend, queue: &str, job: JobId) {
    let c = claim_one(b, queue).await;
    assert_eq!(c.job, job, "{}", b.name());
    assert_eq!(
        b.fail(job, c.token).await,
        Ok(Outcome::Dead),
        "{}",
        b.name()
    );
}

#[tokio::test]
async fn redrive_and_purge_dead_letters() {
    on_all("conf_redrive", |b| async move {
        let n = b.name();
        let mut once = queue("q");
        once.max_attempts = 1;
        once.dedup_window_ms = 100;
        b.declare(once).await;
        let (a, _) = b.enqueue(job("q", 0)).await.unwrap();
        kill(&b, "q", a).await;
        let mut keyed = job("q", 0);
        keyed.key = Some("k".into());
        let (k, _) = b.enqueue(keyed.clone()).await.unwrap();
        kill(&b, "q", k).await;
        // Single-job redrive: only a dead letter of that queue.
        assert_eq!(
            b.redrive("q", Some(JobId(987_654))).await,
            Err("unknown_job"),
            "{n}"
        );
        assert_eq!(b.redrive("nope", None).await, Err("unknown_queue"), "{n}");
        assert_eq!(b.redrive("q", Some(a)).await, Ok((1, 0)), "{n}");
        assert_eq!(b.redrive("q", Some(a)).await, Err("invalid_state"), "{n}");
        let c = claim_one(&b, "q").await;
        assert_eq!((c.job, c.attempt), (a, 1), "{n}: attempts start again");
        b.complete(a, c.token).await.unwrap();
        // After the window, a new job takes key `k`; redriving the dead
        // one then drops its key instead of making two live jobs share it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (k2, dup) = b.enqueue(keyed.clone()).await.unwrap();
        assert!(!dup && k2 != k, "{n}");
        assert_eq!(b.redrive("q", None).await, Ok((1, 1)), "{n}");
        let got: std::collections::BTreeSet<JobId> = b
            .claim("q", 10, None)
            .await
            .unwrap()
            .iter()
            .map(|c| c.job)
            .collect();
        // Both run (their order depends on whether the redrive fell in the
        // enqueue's millisecond).
        assert_eq!(got, [k, k2].into(), "{n}");
        // Purge: dead letters go; the count says how many.
        let (p, _) = b.enqueue(job("q", 0)).await.unwrap();
        kill(&b, "q", p).await;
        assert_eq!(b.purge_dead("q").await, Ok(1), "{n}");
        assert_eq!(b.redrive("q", Some(p)).await, Err("unknown_job"), "{n}");
        assert_eq!(b.purge_dead("q").await, Ok(0), "{n}");
    })
    .await;
}

#[tokio::test]
async fn dead_letters_are_bounded_oldest_dropped() {
    let mut config = EngineConfig::default();
    config.limits.dead_letters_per_queue = 2;
    on_all_with("conf_dead_bound", config, |b| async move {
        let n = b.name();
        let mut once = queue("q");
        once.max_attempts = 1;
        b.declare(once).await;
        let mut dead = Vec::new();
        for _ in 0..3 {
            let (id, _) = b.enqueue(job("q", 0)).await.unwrap();
            kill(&b, "q", id).await;
            dead.push(id);
            // Distinct death instants (ordering ties are by id anyway).
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The oldest was dropped: it is no longer a dead letter.
        assert_eq!(
            b.redrive("q", Some(dead[0])).await,
            Err("invalid_state"),
            "{n}"
        );
        assert_eq!(b.redrive("q", None).await, Ok((2, 0)), "{n}");
        let got: std::collections::BTreeSet<JobId> = b
            .claim("q", 10, None)
            .await
            .unwrap()
            .iter()
            .map(|c| c.job)
            .collect();
        assert_eq!(got, [dead[1], dead[2]].into(), "{n}");
    })
    .await;
}

#[tokio::test]
async fn finished_jobs_are_pruned_by_retention() {
    on_all("conf_retention", |b| async move {
        let n = b.name();
        let mut q = queue("q");
        q.retention.completed_max = 2;
        q.retention.completed_ms = 400;
        b.declare(q).await;
        let mut done = Vec::new();
        for _ in 0..3 {
            let (id, _) = b.enqueue(job("q", 0)).await.unwrap();
            let c = claim_one(&b, "q").await;
            b.complete(id, c.token).await.unwrap();
            done.push(id);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (running, _) = b.enqueue(job("q", 0)).await.unwrap();
        let held = [
            b.holds(done[0]).await,
            b.holds(done[1]).await,
            b.holds(done[2]).await,
        ];
        assert_eq!(
            held,
            [false, true, true],
            "{n}: only the newest completedMax kept"
        );
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(!b.holds(done[2]).await, "{n}: older than completedMs");
        assert!(b.holds(running).await, "{n}: live jobs are never pruned");
    })
    .await;
}
