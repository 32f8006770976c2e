//! One advance emits a bounded number of commands: lease expiries and
//! promotions of delayed (or retried) jobs are budgeted like fires, at most
//! `limits.firesPerAdvance` of each kind per advance; the rest waits for the
//! next advance and `poll_timeout()` returns the clock meanwhile. With
//! 20,000 leases expired at once and a budget of 10, every advance stays
//! within the bound and every lease expires exactly once.

use chime_core::{
    Command, Engine, EngineConfig, EnqueueRequest, Event, Input, JobId, Limits, Payload,
    QueueConfig, Reply,
};
use chime_tests::scenario::t;
use std::collections::BTreeMap;

const T: i64 = 1_000_000_000_000;
const JOBS: u64 = 20_000;
const BUDGET: u32 = 10;
/// Commands one lease expiry may emit: `lease_expired`, then `job_retried`
/// (+ `wake` if it is available at once) or `job_dead` (+ `job_dropped` by
/// the dead-letter bound).
const PER_EXPIRY: usize = 3;

fn engine() -> Engine {
    Engine::new(EngineConfig {
        limits: Limits {
            pending_commands: 100,
            fires_per_advance: BUDGET,
            ..Limits::default()
        },
        ..EngineConfig::default()
    })
}

fn handle(e: &mut Engine, now: i64, input: Input) -> (Reply, Vec<Command>) {
    let reply = e.handle(t(now), input).unwrap();
    (reply, std::iter::from_fn(|| e.poll_command()).collect())
}

/// `JOBS` jobs in queue `q` (lease 10 s, `max_attempts` attempts), all
/// claimed at `T`.
fn claimed(max_attempts: u32) -> Engine {
    let mut e = engine();
    let mut q = QueueConfig::new("q");
    q.lease_ms = 10_000;
    q.max_attempts = max_attempts;
    handle(&mut e, T, Input::DeclareQueue(q));
    for _ in 0..JOBS {
        let req = EnqueueRequest::new("q", Payload::null());
        handle(&mut e, T, Input::Enqueue(req));
    }
    let mut n = 0;
    while n < JOBS {
        let claim = Input::Claim {
            queue: "q".into(),
            worker: "w".into(),
            max: 1_000,
            lease_ms: None,
        };
        let (Reply::Claimed { jobs }, _) = handle(&mut e, T, claim) else {
            panic!()
        };
        n += jobs.len() as u64;
    }
    e.check_invariants();
    e
}

/// Advances at `poll_timeout()` until nothing is pending; returns every
/// command and the largest number one advance emitted.
fn run_out(e: &mut Engine, from: i64) -> (Vec<Command>, usize) {
    let (mut all, mut most) = (Vec::new(), 0);
    let mut now = from;
    for step in 0.. {
        assert!(step < 100_000, "the backlog drains");
        let (_, cmds) = handle(e, now, Input::Advance);
        most = most.max(cmds.len());
        all.extend(cmds);
        if step % 500 == 0 {
            e.check_invariants();
        }
        match e.poll_timeout() {
            Some(next) => now = next.as_millis(),
            None => break,
        }
    }
    e.check_invariants();
    (all, most)
}

fn expiries(cmds: &[Command]) -> BTreeMap<JobId, u32> {
    let mut n = BTreeMap::new();
    for c in cmds {
        if let Command::Event(Event::LeaseExpired { job, .. }) = c {
            *n.entry(*job).or_default() += 1;
        }
    }
    n
}

#[test]
fn twenty_thousand_expiries_are_budgeted() {
    let mut e = claimed(1);
    let (_, cmds) = handle(&mut e, T + 10_000, Input::Advance);
    assert!(
        cmds.len() <= BUDGET as usize * PER_EXPIRY,
        "one advance emitted {} commands",
        cmds.len()
    );
    assert_eq!(expiries(&cmds).len(), BUDGET as usize);
    // Work is left: the host is told to advance again at once.
    assert_eq!(e.poll_timeout(), Some(t(T + 10_000)));
    let (rest, most) = run_out(&mut e, T + 10_000);
    assert!(most <= BUDGET as usize * PER_EXPIRY, "{most} commands");
    let mut all = expiries(&cmds);
    for (job, n) in expiries(&rest) {
        *all.entry(job).or_default() += n;
    }
    assert_eq!(all.len() as u64, JOBS, "every lease expired");
    assert!(all.values().all(|&n| n == 1), "each exactly once");
    let stats = e.queue_stats("q").unwrap();
    assert_eq!((stats.totals.expired, stats.dead), (JOBS, JOBS));
    assert_eq!(stats.claimed, 0);
}

#[test]
fn retries_and_promotions_are_budgeted_too() {
    // Two attempts: each expiry schedules a retry, which is promoted later.
    let mut e = claimed(2);
    let (cmds, most) = run_out(&mut e, T + 10_000);
    assert!(most <= BUDGET as usize * PER_EXPIRY, "{most} commands");
    let n = expiries(&cmds);
    assert_eq!(n.len() as u64, JOBS);
    assert!(n.values().all(|&n| n == 1), "each lease expired once");
    let stats = e.queue_stats("q").unwrap();
    assert_eq!(stats.available, JOBS, "every retry was promoted");
    assert_eq!(stats.totals.retried, JOBS);
}

#[test]
fn delayed_jobs_are_promoted_within_the_budget() {
    let mut e = engine();
    for _ in 0..1_000 {
        let mut req = EnqueueRequest::new("q", Payload::null());
        req.delay_ms = Some(1_000);
        handle(&mut e, T, Input::Enqueue(req));
    }
    let (_, cmds) = handle(&mut e, T + 1_000, Input::Advance);
    assert_eq!(cmds.len(), 1, "one wake: {cmds:?}");
    assert_eq!(e.queue_stats("q").unwrap().available, u64::from(BUDGET));
    assert_eq!(e.poll_timeout(), Some(t(T + 1_000)));
    run_out(&mut e, T + 1_000);
    let stats = e.queue_stats("q").unwrap();
    assert_eq!((stats.available, stats.scheduled), (1_000, 0));
}
