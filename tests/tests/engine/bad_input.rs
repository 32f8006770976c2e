//! Every input with invalid fields is refused with a typed error and a
//! stable code. Each refusal is tried at a `now` later than the engine
//! clock, with a schedule boundary, a lease expiry and a named-lease expiry
//! due in between:
//! - a *stateless* refusal (names, ranges, sizes, exclusive fields, a
//!   backfill reaching past `now`) changes nothing at all: snapshot JSON
//!   identical, no command, not even the clock;
//! - a refusal that needs state (unknown job, stale token, …) changes
//!   exactly what a plain `Advance` to that `now` would have changed.

use chime_core::{
    Engine, EngineConfig, EnqueueRequest, Epoch, FireId, FireOutcome, Input, JobId,
    LeadershipGrant, LeaseToken, Limits, Payload, QueueConfig, Snapshot,
};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;
const HOUR: i64 = 3_600_000;
/// Where every bad input is tried: two schedule boundaries, the claimed
/// job's lease and the named lease all fall between the clock and this.
const LATER: i64 = S + 2 * HOUR;

/// An engine with a schedule, a claimed job and a held lease; the job and
/// its token.
fn busy() -> (Harness, JobId, LeaseToken) {
    let mut h = Harness::standalone();
    h.ok(S, Input::UpsertSchedule(def("tick", "@every 1h", "work")));
    h.ok(
        S,
        Input::Enqueue(EnqueueRequest::new("work", Payload::null())),
    );
    let c = h.claim_one(S, "work");
    h.ok(
        S,
        Input::AcquireLease {
            name: "cron-leader".into(),
            owner: "a".into(),
            ttl_ms: 60_000,
        },
    );
    (h, c.job, c.token)
}

/// A second lease that outlives `LATER`, so `lease_held` is still a refusal there.
fn busy_long() -> (Harness, JobId, LeaseToken) {
    let (mut h, job, token) = busy();
    h.ok(
        S,
        Input::AcquireLease {
            name: "long".into(),
            owner: "a".into(),
            ttl_ms: 100 * HOUR,
        },
    );
    (h, job, token)
}

/// Inputs refused by checks that need no state.
fn stateless_inputs(job: JobId, token: LeaseToken) -> Vec<(Input, &'static str)> {
    let with = |f: &dyn Fn(&mut chime_core::ScheduleDef)| {
        let mut d = def("tick2", "@every 1m", "work");
        f(&mut d);
        Input::UpsertSchedule(d)
    };
    let enqueue = |f: &dyn Fn(&mut EnqueueRequest)| {
        let mut r = EnqueueRequest::new("work", Payload::null());
        f(&mut r);
        Input::Enqueue(r)
    };
    let claim = |queue: &str, worker: &str, max: u32, lease_ms: Option<i64>| Input::Claim {
        queue: queue.into(),
        worker: worker.into(),
        max,
        lease_ms,
    };
    let big = format!("\"{}\"", "x".repeat(1 << 20));
    let big = Payload::from_json(&big).unwrap();
    let mut bad_queue = QueueConfig::new("work");
    bad_queue.lease_ms = 0;
    let mut bad_attempts = QueueConfig::new("fresh");
    bad_attempts.max_attempts = 0;
    vec![
        (
            Input::DeclareQueue(QueueConfig::new("bad name")),
            "invalid_name",
        ),
        (Input::DeclareQueue(bad_queue), "invalid_input"),
        (Input::DeclareQueue(bad_attempts), "invalid_input"),
        (with(&|d| d.name = "bad name".into()), "invalid_name"),
        (with(&|d| d.name = "__chime_x".into()), "reserved_name"),
        (with(&|d| d.target.queue = "".into()), "invalid_name"),
        (with(&|d| d.spec = "nonsense".into()), "invalid_spec"),
        (with(&|d| d.spec = "61 * * * *".into()), "invalid_spec"),
        (
            with(&|d| d.spec = "@every 10ms".into()),
            "interval_too_short",
        ),
        (with(&|d| d.spec = "@every 1x".into()), "invalid_duration"),
        (
            with(&|d| {
                d.spec = "0 3 * * *".into();
                d.tz = Some("Mars/Olympus".into())
            }),
            "invalid_time_zone",
        ),
        (with(&|d| d.jitter_ms = -1), "invalid_input"),
        (
            with(&|d| {
                d.start_at = Some(t(S + 10));
                d.end_at = Some(t(S + 10))
            }),
            "invalid_input",
        ),
        (with(&|d| d.max_fires = Some(0)), "invalid_input"),
        (with(&|d| d.catchup.max = 0), "invalid_input"),
        (with(&|d| d.catchup.max = 65), "limit_exceeded"),
        (with(&|d| d.catchup.window_ms = -1), "invalid_input"),
        (with(&|d| d.target.max_attempts = Some(0)), "invalid_input"),
        (
            with(&|d| d.target.payload = big.clone()),
            "payload_too_large",
        ),
        (
            with(&|d| {
                d.target.headers.insert(String::new(), "v".into());
            }),
            "invalid_input",
        ),
        (Input::remove_schedule("a b"), "invalid_name"),
        (
            Input::PauseSchedule {
                name: "a b".into(),
                note: None,
            },
            "invalid_name",
        ),
        (
            Input::Backfill {
                name: "tick".into(),
                from: t(S),
                to: t(S),
                overlap: None,
            },
            "invalid_input",
        ),
        // Backfill is for the past: `to` after `now` is refused.
        (
            Input::Backfill {
                name: "tick".into(),
                from: t(S),
                to: t(LATER + 1),
                overlap: None,
            },
            "invalid_input",
        ),
        (enqueue(&|r| r.queue = "a b".into()), "invalid_name"),
        (enqueue(&|r| r.queue = "__chime_x".into()), "reserved_name"),
        (
            enqueue(&|r| {
                r.run_at = Some(t(S));
                r.delay_ms = Some(5);
            }),
            "invalid_input",
        ),
        (enqueue(&|r| r.delay_ms = Some(-1)), "invalid_input"),
        (enqueue(&|r| r.payload = big.clone()), "payload_too_large"),
        (enqueue(&|r| r.key = Some(String::new())), "invalid_input"),
        (enqueue(&|r| r.max_attempts = Some(0)), "invalid_input"),
        (claim("work", "w", 0, None), "invalid_input"),
        (claim("work", "w", 1_001, None), "limit_exceeded"),
        (claim("work", "bad worker", 1, None), "invalid_name"),
        (claim("work", "w", 1, Some(0)), "invalid_input"),
        (claim("a b", "w", 1, None), "invalid_name"),
        // A valid job and token: the bad lease is what is refused.
        (
            Input::Heartbeat {
                job,
                token,
                lease_ms: Some(-1),
            },
            "invalid_input",
        ),
        (
            Input::Redrive {
                queue: "a b".into(),
                job: None,
            },
            "invalid_name",
        ),
        (
            Input::PurgeDead {
                queue: "a b".into(),
                before: None,
            },
            "invalid_name",
        ),
        (
            Input::FireSettled {
                fire: "bad name@5".parse::<FireId>().unwrap(),
                outcome: FireOutcome::Succeeded,
                job: None,
            },
            "invalid_name",
        ),
        // Not after `now` (it is after the clock).
        (
            Input::Leadership(Some(LeadershipGrant {
                epoch: Epoch(1),
                valid_until: t(S + HOUR),
            })),
            "invalid_input",
        ),
        (
            Input::AcquireLease {
                name: "x".into(),
                owner: "b".into(),
                ttl_ms: 0,
            },
            "invalid_input",
        ),
        (
            Input::AcquireLease {
                name: "bad name".into(),
                owner: "b".into(),
                ttl_ms: 1_000,
            },
            "invalid_name",
        ),
        (
            Input::AcquireLease {
                name: "x".into(),
                owner: "".into(),
                ttl_ms: 1_000,
            },
            "invalid_name",
        ),
        (
            Input::RenewLease {
                name: "cron-leader".into(),
                token: LeaseToken(1),
                ttl_ms: -5,
            },
            "invalid_input",
        ),
        (
            Input::RenewLease {
                name: "bad name".into(),
                token: LeaseToken(1),
                ttl_ms: 1_000,
            },
            "invalid_name",
        ),
        (
            Input::ReleaseLease {
                name: "bad name".into(),
                token: LeaseToken(1),
            },
            "invalid_name",
        ),
    ]
}

/// Inputs whose refusal needs the engine's state.
fn stateful_inputs(job: JobId) -> Vec<(Input, &'static str)> {
    vec![
        // Whether a spec has a boundary left is judged from `now` when the
        // schedule is created or regridded; an identical re-upsert is a no-op.
        (
            Input::UpsertSchedule(def("tick2", "@at 2000-01-01T00:00:00Z", "work")),
            "spec_never_fires",
        ),
        (
            Input::PauseSchedule {
                name: "nope".into(),
                note: None,
            },
            "unknown_schedule",
        ),
        (
            Input::ResumeSchedule {
                name: "nope".into(),
            },
            "unknown_schedule",
        ),
        (
            Input::TriggerSchedule {
                name: "nope".into(),
                overlap: None,
            },
            "unknown_schedule",
        ),
        (
            Input::Backfill {
                name: "tick".into(),
                from: t(0),
                to: t(S),
                overlap: None,
            },
            "limit_exceeded",
        ),
        (
            Input::Heartbeat {
                job,
                token: LeaseToken(999),
                lease_ms: None,
            },
            "lease_lost",
        ),
        (
            Input::Complete {
                job: JobId(999),
                token: LeaseToken(1),
            },
            "unknown_job",
        ),
        (
            Input::Fail {
                job,
                token: LeaseToken(999),
                error: "x".into(),
                retry_at: None,
            },
            "lease_lost",
        ),
        (Input::CancelJob { job: JobId(999) }, "unknown_job"),
        (
            Input::Redrive {
                queue: "nope".into(),
                job: None,
            },
            "unknown_queue",
        ),
        (
            Input::PurgeDead {
                queue: "nope".into(),
                before: None,
            },
            "unknown_queue",
        ),
        (
            Input::FireSettled {
                fire: "nope@5".parse::<FireId>().unwrap(),
                outcome: FireOutcome::Succeeded,
                job: None,
            },
            "unknown_fire",
        ),
        (
            Input::AcquireLease {
                name: "long".into(),
                owner: "b".into(),
                ttl_ms: 1000,
            },
            "lease_held",
        ),
        (
            Input::RenewLease {
                name: "long".into(),
                token: LeaseToken(99),
                ttl_ms: 1000,
            },
            "lease_held",
        ),
    ]
}

fn restore(json: &str) -> Engine {
    Engine::restore(Snapshot::from_json(json).unwrap()).unwrap()
}

fn drain(e: &mut Engine) -> Vec<chime_core::Command> {
    std::iter::from_fn(|| e.poll_command()).collect()
}

fn check_code(input: &Input, err: &chime_core::Error, code: &str) {
    assert_eq!(err.code(), code, "{input:?}: {err}");
    assert!(
        err.to_string().starts_with(code),
        "Display starts with the code: {err}"
    );
}

#[test]
fn stateless_refusals_at_a_later_now_change_nothing() {
    let (h, job, token) = busy_long();
    let base = h.engine.snapshot().to_json();
    // The later `now` has work: a plain advance there emits commands.
    let mut probe = restore(&base);
    probe.handle(t(LATER), Input::Advance).unwrap();
    assert!(!drain(&mut probe).is_empty(), "work is due by LATER");
    for (input, code) in stateless_inputs(job, token) {
        let mut e = restore(&base);
        let err = e
            .handle(t(LATER), input.clone())
            .expect_err(&format!("{input:?} must be refused"));
        check_code(&input, &err, code);
        let cmds = drain(&mut e);
        assert!(cmds.is_empty(), "{input:?} emitted {cmds:?}");
        assert_eq!(e.snapshot().to_json(), base, "{input:?} changed the state");
        e.check_invariants();
    }
}

#[test]
fn stateful_refusals_change_only_what_the_advance_changes() {
    let (h, job, _) = busy_long();
    let base = h.engine.snapshot().to_json();
    let mut probe = restore(&base);
    probe.handle(t(LATER), Input::Advance).unwrap();
    let advanced_cmds = drain(&mut probe);
    let advanced = probe.snapshot().to_json();
    for (input, code) in stateful_inputs(job) {
        let mut e = restore(&base);
        let err = e
            .handle(t(LATER), input.clone())
            .expect_err(&format!("{input:?} must be refused"));
        check_code(&input, &err, code);
        assert_eq!(drain(&mut e), advanced_cmds, "{input:?}");
        assert_eq!(e.snapshot().to_json(), advanced, "{input:?}");
        e.check_invariants();
    }
}

#[test]
fn every_bad_input_at_the_clock_changes_nothing() {
    let (mut h, job, token) = busy_long();
    let inputs = stateless_inputs(job, token)
        .into_iter()
        .filter(|(i, _)| !matches!(i, Input::Leadership(_)))
        .chain(stateful_inputs(job));
    for (input, code) in inputs {
        let before = h.engine.snapshot().to_json();
        let (r, cmds) = h.run(S, input.clone());
        let err = r.expect_err(&format!("{input:?} must be refused"));
        check_code(&input, &err, code);
        assert!(cmds.is_empty(), "{input:?} emitted {cmds:?}");
        assert_eq!(
            h.engine.snapshot().to_json(),
            before,
            "{input:?} changed the state"
        );
    }
}

#[test]
fn schedule_limit_and_backpressure() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            schedules: 1,
            pending_commands: 1,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    h.ok(S, Input::UpsertSchedule(def("a", "@every 1s", "q")));
    let (r, _) = h.run(S, Input::UpsertSchedule(def("b", "@every 1s", "q")));
    assert_eq!(r.unwrap_err().code(), "limit_exceeded");
    // Undrained commands: every input, Advance included, is refused.
    h.engine.handle(t(S + 1000), Input::Advance).unwrap();
    assert!(h.engine.pending_commands() >= 1);
    let before = h.engine.snapshot().to_json();
    let err = h.engine.handle(t(S + 2000), Input::Advance).unwrap_err();
    assert_eq!(err.code(), "backpressure");
    assert_eq!(h.engine.snapshot().to_json(), before);
}
