//! A schedule created at a boundary with `startAt` = now: its first
//! boundary is the first one strictly after now (docs/semantics.md,
//! "Upsert": "the first boundary after now, not before `startAt`"), so
//! the boundary at now does not fire; one with `startAt` = now + 1 ms
//! skips to the same boundary, and one with `startAt` a boundary in the
//! future starts exactly there.

use chime_core::{Input, Overlap, QueueConfig, QueueMode};
use chime_tests::scenario::*;

const MIN: i64 = 60_000;
const S: i64 = 1_000_000_020_000; // a multiple of a minute

fn first_fire(start_at: i64) -> i64 {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(S, Input::DeclareQueue(q));
    let mut d = def("s", "@every 1m", "out");
    // `allow`: the first of the backlog fires (under `skip` the most recent would).
    d.overlap = Overlap::Allow;
    d.start_at = Some(t(start_at));
    h.ok(S, Input::UpsertSchedule(d));
    let cmds = h.advance(S);
    assert!(fires(&cmds).is_empty(), "nothing fires at now");
    let cmds = h.advance(S + 10 * MIN);
    nominals(&cmds)[0]
}

#[test]
fn start_at_now_begins_after_now() {
    assert_eq!(S % MIN, 0);
    assert_eq!(first_fire(S), S + MIN);
    assert_eq!(first_fire(S + 1), S + MIN);
    assert_eq!(first_fire(S - MIN), S + MIN);
    assert_eq!(first_fire(S + 3 * MIN), S + 3 * MIN);
}
