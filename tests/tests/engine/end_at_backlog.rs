//! A backlog that runs into `end_at`: the catch-up walk stops before the
//! end (`end_at` is exclusive) whether the boundaries are skipped as paused,
//! as too old, by the catch-up cap, or fire — never one boundary at or past
//! `end_at`, and the schedule completes with `end_at`.
//! (Kills the `end_at` clamp mutants of `schedule::catchup::span`.)

use chime_core::{Event, Input, Overlap, QueueConfig, QueueMode, ScheduleStatus, SkipReason};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000; // on a 1 s grid

fn harness() -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(S, Input::DeclareQueue(q));
    h
}

fn completed_by_end_at(h: &Harness, cmds: &[chime_core::Command]) {
    assert!(events(cmds).iter().any(|e| matches!(
        e,
        Event::ScheduleCompleted { reason, .. } if reason == "end_at"
    )));
    assert_eq!(
        h.engine.schedule("e").unwrap().status,
        ScheduleStatus::Completed
    );
}

#[test]
fn paused_backlog_stops_before_end_at() {
    let mut h = harness();
    let mut d = def("e", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    d.paused = true;
    d.end_at = Some(t(S + 5000));
    h.ok(S, Input::UpsertSchedule(d));
    let cmds = h.advance(S + 10_000);
    assert!(fires(&cmds).is_empty());
    // 1 s ..= 4 s; the boundary at end_at (5 s) is not the schedule's.
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 4, S + 1000, S + 4000)]
    );
    let info = h.engine.schedule("e").unwrap();
    assert_eq!((info.fires, info.skipped), (0, 4));
    completed_by_end_at(&h, &cmds);
    h.check_replay();
}

#[test]
fn too_old_backlog_stops_before_end_at() {
    let mut h = harness();
    let mut d = def("e", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    d.catchup.window_ms = 2000;
    d.end_at = Some(t(S + 5000));
    h.ok(S, Input::UpsertSchedule(d));
    let cmds = h.advance(S + 100_000);
    assert!(fires(&cmds).is_empty());
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::TooOld, 4, S + 1000, S + 4000)]
    );
    let info = h.engine.schedule("e").unwrap();
    assert_eq!((info.fires, info.skipped), (0, 4));
    completed_by_end_at(&h, &cmds);
    h.check_replay();
}

#[test]
fn capped_backlog_stops_before_end_at() {
    let mut h = harness();
    let mut d = def("e", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    d.catchup.max = 2;
    d.end_at = Some(t(S + 10_000));
    h.ok(S, Input::UpsertSchedule(d));
    let cmds = h.advance(S + 20_000);
    // 1 s ..= 9 s due: 7 capped, the 2 most recent before end_at fire.
    assert_eq!(nominals(&cmds), vec![S + 8000, S + 9000]);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::CatchupCap, 7, S + 1000, S + 7000)]
    );
    let info = h.engine.schedule("e").unwrap();
    assert_eq!((info.fires, info.skipped), (2, 7));
    completed_by_end_at(&h, &cmds);
    h.check_replay();
}
