//! A buffered fire (`buffer_one`) that the target queue refuses when it is
//! released: the boundary is not lost silently but skipped with reason
//! `queue_full`, counted once in the schedule's skips, and the schedule
//! goes on firing once the queue has room. (Mutation testing: the skip
//! count of this path was changed without any test noticing.)

use chime_core::{
    EngineConfig, EnqueueRequest, FireOutcome, Input, Limits, Overlap, Payload, QueueConfig,
    QueueMode, SkipReason,
};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

#[test]
fn a_refused_release_is_a_queue_full_skip() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            live_jobs: 1,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    // The first fire goes to an external queue (no job, no live place);
    // then the schedule is pointed at the local queue `q`, so the buffered
    // fire targets `q`.
    let mut ext = QueueConfig::new("ext");
    ext.mode = QueueMode::External;
    ext.lease_ms = 60_000;
    h.ok(S, Input::DeclareQueue(ext));
    let mut d = def("tick", "@every 10s", "ext");
    d.overlap = Overlap::BufferOne;
    h.ok(S, Input::UpsertSchedule(d.clone()));
    assert_eq!(nominals(&h.advance(S + 10_000)), vec![S + 10_000]);
    d.target = target("q", "null");
    h.ok(S + 10_000, Input::UpsertSchedule(d));
    // In flight: the next boundary is buffered.
    assert!(nominals(&h.advance(S + 20_000)).is_empty());
    assert!(h.engine.schedule("tick").unwrap().buffered);

    // An application job takes the only live place in the meantime.
    h.ok(
        S + 21_000,
        Input::Enqueue(EnqueueRequest::new("q", Payload::null())),
    );
    // The first fire settles: the buffered fire is released and refused.
    let (_, cmds) = h.ok(
        S + 22_000,
        Input::FireSettled {
            fire: format!("tick@{}", S + 10_000).parse().unwrap(),
            outcome: FireOutcome::Succeeded,
            job: None,
        },
    );
    assert!(fires(&cmds).is_empty(), "{cmds:?}");
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::QueueFull, 1, S + 20_000, S + 20_000)]
    );
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped, info.buffered), (1, 1, false));
    assert!(info.in_flight.is_empty());

    // Room again once the application job is done: the next boundary fires.
    let c = h.claim_one(S + 25_000, "q");
    h.ok(
        S + 25_000,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    assert_eq!(nominals(&h.advance(S + 30_000)), vec![S + 30_000]);
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (2, 1));
    h.check_replay();
}
