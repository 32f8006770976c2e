//! A job made by a schedule fire carries the fire (`Claimed.fire`) and
//! keeps the fire in flight for the schedule's overlap policy until the
//! job ends — by any path: a failure that dead-letters it, a lease expiry
//! that does, a cancel, a completion. A dead letter later dropped by the
//! dead-letter bound is not reported again, and a redriven dead letter does
//! not put its fire back in flight.

use chime_core::{EngineConfig, Event, FireId, Input, JobId, Limits, Overlap, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn in_flight(h: &Harness) -> Vec<FireId> {
    h.engine.schedule("s").unwrap().in_flight
}

/// Advances to `now`, which must fire; returns the fire id and its job.
fn fire(h: &mut Harness, now: i64) -> (FireId, JobId) {
    let cmds = h.advance(now);
    assert!(skips(&cmds).is_empty(), "{cmds:?}");
    let f = fires(&cmds);
    assert_eq!(f.len(), 1, "{cmds:?}");
    (f[0].fire_id.clone(), f[0].job.unwrap())
}

fn fail(h: &mut Harness, now: i64, c: &chime_core::Claimed) -> Vec<chime_core::Command> {
    let input = Input::Fail {
        job: c.job,
        token: c.token,
        error: "x".into(),
        retry_at: None,
    };
    h.ok(now, input).1
}

#[test]
fn every_end_of_a_fire_job_ends_the_flight() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            dead_letters_per_queue: 1,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let mut q = QueueConfig::new("q");
    q.max_attempts = 1;
    q.lease_ms = 5_000;
    h.ok(T, Input::DeclareQueue(q));
    let mut s = def("s", "@every 10s", "q");
    s.overlap = Overlap::Skip;
    h.ok(T, Input::UpsertSchedule(s));

    // Dead letter by `Fail`.
    let (f1, j1) = fire(&mut h, T + 10_000);
    let c1 = h.claim_one(T + 10_000, "q");
    assert_eq!((c1.job, c1.fire.as_ref()), (j1, Some(&f1)));
    assert_eq!(in_flight(&h), [f1]);
    fail(&mut h, T + 10_001, &c1);
    assert!(in_flight(&h).is_empty());

    // Another dead letter: the first is dropped by the bound (no second report).
    let (_, j2) = fire(&mut h, T + 20_000);
    let c2 = h.claim_one(T + 20_000, "q");
    let cmds = fail(&mut h, T + 20_001, &c2);
    assert!(events(&cmds).iter().any(|e| matches!(
        e,
        Event::JobDropped { job, reason, .. } if *job == j1 && reason == "dead_letter_limit"
    )));
    assert!(in_flight(&h).is_empty());
    let redrive = Input::Redrive {
        queue: "q".into(),
        job: Some(j2),
    };
    assert!(matches!(
        h.ok(T + 20_002, redrive).0,
        Reply::Count { count: 1, .. }
    ));
    assert!(in_flight(&h).is_empty(), "a redriven job is not in flight");

    // Cancel.
    let (f3, j3) = fire(&mut h, T + 30_000);
    assert_eq!(in_flight(&h), [f3]);
    h.ok(T + 30_001, Input::CancelJob { job: j3 });
    assert!(in_flight(&h).is_empty());

    // Completion of the redriven job leaves the current flight alone; the
    // current job's lease expires and it dies.
    let (f4, j4) = fire(&mut h, T + 40_000);
    let claimed = h.claim(T + 40_000, "q", 2, None);
    assert_eq!(claimed.iter().map(|c| c.job).collect::<Vec<_>>(), [j2, j4]);
    let done = Input::Complete {
        job: j2,
        token: claimed[0].token,
    };
    h.ok(T + 40_001, done);
    assert_eq!(in_flight(&h), [f4]);
    // Nothing before the lease ends.
    let cmds = h.advance(T + 44_999);
    assert!(cmds.is_empty());
    let cmds = h.advance(T + 45_000);
    assert!(
        events(&cmds)
            .iter()
            .any(|e| matches!(e, Event::JobDead { job, .. } if *job == j4))
    );
    assert!(in_flight(&h).is_empty());

    // Completion.
    let (f5, _) = fire(&mut h, T + 50_000);
    assert_eq!(in_flight(&h), [f5]);
    let c5 = h.claim_one(T + 50_000, "q");
    let done = Input::Complete {
        job: c5.job,
        token: c5.token,
    };
    h.ok(T + 50_001, done);
    assert!(in_flight(&h).is_empty());
    h.check_replay();
}
