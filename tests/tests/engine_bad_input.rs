//! Every input with invalid fields is refused with a typed error and a
//! stable code, and leaves the engine exactly as it was (snapshot JSON
//! unchanged, no command emitted).

mod engine_common;
use chime_core::{
    EngineConfig, EnqueueRequest, Epoch, FireId, FireOutcome, Input, JobId, LeadershipGrant,
    LeaseToken, Limits, Payload, QueueConfig, Reply,
};
use engine_common::*;

const S: i64 = 1_000_000_000_000;

/// An engine with a schedule, a claimed job and a held lease.
fn busy() -> (Harness, JobId) {
    let mut h = Harness::standalone();
    h.ok(S, Input::UpsertSchedule(def("tick", "@every 1h", "work")));
    h.ok(
        S,
        Input::Enqueue(EnqueueRequest::new("work", Payload::null())),
    );
    let (r, _) = h.ok(
        S,
        Input::Claim {
            queue: "work".into(),
            worker: "w".into(),
            max: 1,
            lease_ms: None,
        },
    );
    let Reply::Claimed { jobs } = r else { panic!() };
    h.ok(
        S,
        Input::AcquireLease {
            name: "cron-leader".into(),
            owner: "a".into(),
            ttl_ms: 60_000,
        },
    );
    (h, jobs[0].job)
}

fn bad_inputs(job: JobId) -> Vec<(Input, &'static str)> {
    let with = |f: &dyn Fn(&mut chime_core::ScheduleDef)| {
        let mut d = def("tick2", "@every 1m", "work");
        f(&mut d);
        Input::UpsertSchedule(d)
    };
    let mut both = EnqueueRequest::new("work", Payload::null());
    both.run_at = Some(t(S));
    both.delay_ms = Some(5);
    let big = format!("\"{}\"", "x".repeat(1 << 20));
    let mut bad_queue = QueueConfig::new("work");
    bad_queue.lease_ms = 0;
    vec![
        (
            Input::DeclareQueue(QueueConfig::new("bad name")),
            "invalid_name",
        ),
        (Input::DeclareQueue(bad_queue), "invalid_input"),
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
            with(&|d| d.spec = "@at 2000-01-01T00:00:00Z".into()),
            "spec_never_fires",
        ),
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
            with(&|d| d.target.payload = Payload::from_json(&big).unwrap()),
            "payload_too_large",
        ),
        (
            with(&|d| {
                d.target.headers.insert(String::new(), "v".into());
            }),
            "invalid_input",
        ),
        (Input::RemoveSchedule { name: "a b".into() }, "invalid_name"),
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
                from: t(S),
                to: t(S),
                overlap: None,
            },
            "invalid_input",
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
            Input::Enqueue(EnqueueRequest::new("a b", Payload::null())),
            "invalid_name",
        ),
        (Input::Enqueue(both), "invalid_input"),
        (
            Input::Claim {
                queue: "work".into(),
                worker: "w".into(),
                max: 0,
                lease_ms: None,
            },
            "invalid_input",
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
            },
            "unknown_fire",
        ),
        (
            Input::Leadership(Some(LeadershipGrant {
                epoch: Epoch(1),
                valid_until: t(S - 1),
            })),
            "invalid_input",
        ),
        (
            Input::AcquireLease {
                name: "cron-leader".into(),
                owner: "b".into(),
                ttl_ms: 1000,
            },
            "lease_held",
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
            Input::RenewLease {
                name: "cron-leader".into(),
                token: LeaseToken(99),
                ttl_ms: 1000,
            },
            "lease_held",
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

#[test]
fn every_bad_input_is_refused_and_changes_nothing() {
    let (mut h, job) = busy();
    for (input, code) in bad_inputs(job) {
        let before = h.engine.snapshot().to_json();
        let (r, cmds) = h.run(S, input.clone());
        let err = r.expect_err(&format!("{input:?} must be refused"));
        assert_eq!(err.code(), code, "{input:?}: {err}");
        assert!(
            err.to_string().starts_with(code),
            "Display starts with the code: {err}"
        );
        assert!(cmds.is_empty(), "{input:?} emitted {cmds:?}");
        assert_eq!(
            h.engine.snapshot().to_json(),
            before,
            "{input:?} changed the state"
        );
    }
}

#[test]
fn stateless_errors_do_not_even_move_the_clock() {
    let (mut h, _) = busy();
    let before = h.engine.snapshot().to_json();
    let (r, cmds) = h.run(S + 5000, Input::RemoveSchedule { name: "a b".into() });
    assert_eq!(r.unwrap_err().code(), "invalid_name");
    assert!(cmds.is_empty());
    assert_eq!(h.engine.snapshot().to_json(), before);
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
