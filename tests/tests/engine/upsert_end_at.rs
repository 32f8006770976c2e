//! An upsert that keeps the grid but moves `end_at` (no regrid: the
//! cursor stays): the schedule completes at once with `end_at` when the
//! new end is at or before its next boundary (`end_at` is exclusive), and
//! goes on firing when the end is later, even by 1 ms. An upsert that
//! changes nothing about the end (here the priority) leaves a schedule
//! with a later `end_at` active. (Mutation testing: the `cursor >= end`
//! test of the non-regrid path turned into `<` was not noticed.)

use chime_core::{Event, Input, Overlap, ScheduleStatus};
use chime_tests::scenario::*;

/// A multiple of 10 s, so `@every 10s` boundaries are `S + k * 10 s`.
const S: i64 = 1_000_000_000_000;
const TEN: i64 = 10_000;

fn completed(cmds: &[chime_core::Command]) -> Vec<&str> {
    events(cmds)
        .into_iter()
        .filter_map(|e| match e {
            Event::ScheduleCompleted { schedule, reason } if schedule == "tick" => {
                Some(reason.as_str())
            }
            _ => None,
        })
        .collect()
}

/// `tick` (`@every 10s`, `allow`, `end_at` S+60s) that fired S+10s: next
/// S+20s.
fn started() -> (Harness, chime_core::ScheduleDef) {
    let mut h = Harness::standalone();
    let mut d = def("tick", "@every 10s", "q");
    d.overlap = Overlap::Allow;
    d.end_at = Some(t(S + 6 * TEN));
    h.ok(S, Input::UpsertSchedule(d.clone()));
    assert_eq!(nominals(&h.advance(S + TEN)), vec![S + TEN]);
    (h, d)
}

#[test]
fn end_moved_onto_the_next_boundary_completes_at_once() {
    let (mut h, mut d) = started();
    // Another field changes: still active, same next boundary.
    d.target.priority = 3;
    let (_, cmds) = h.ok(S + TEN, Input::UpsertSchedule(d.clone()));
    assert!(completed(&cmds).is_empty(), "{cmds:?}");
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(info.status, ScheduleStatus::Active);
    assert_eq!(info.next_nominal, Some(t(S + 2 * TEN)));

    // `end_at` at the next boundary: that boundary is not the schedule's.
    d.end_at = Some(t(S + 2 * TEN));
    let (_, cmds) = h.ok(S + TEN + 1, Input::UpsertSchedule(d));
    assert_eq!(completed(&cmds), ["end_at"]);
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(info.status, ScheduleStatus::Completed);
    assert_eq!((info.next_nominal, info.fires), (None, 1));
    assert!(fires(&h.advance(S + 10 * TEN)).is_empty());
    h.check_replay();
}

#[test]
fn end_moved_just_after_the_next_boundary_fires_it_last() {
    let (mut h, mut d) = started();
    d.end_at = Some(t(S + 2 * TEN + 1));
    let (_, cmds) = h.ok(S + TEN + 1, Input::UpsertSchedule(d));
    assert!(completed(&cmds).is_empty(), "{cmds:?}");
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(info.status, ScheduleStatus::Active);
    assert_eq!(info.next_nominal, Some(t(S + 2 * TEN)));
    let cmds = h.advance(S + 2 * TEN);
    assert_eq!(nominals(&cmds), vec![S + 2 * TEN]);
    assert_eq!(completed(&cmds), ["end_at"]);
    assert_eq!(h.engine.schedule("tick").unwrap().fires, 2);
    h.check_replay();
}
