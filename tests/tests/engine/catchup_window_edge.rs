//! The edge of the catch-up window: a boundary due exactly `window_ms`
//! before now is still on time (too old is strictly older), and a too-old
//! run stops at the last boundary due before the cutoff.
//! (Kills the cutoff mutants of `schedule::catchup::plan`.)

use chime_core::{Input, Overlap, QueueConfig, QueueMode, SkipReason};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000; // on a 10 s grid

fn harness(spec: &str) -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(S, Input::DeclareQueue(q));
    let mut d = def("w", spec, "out");
    d.overlap = Overlap::Allow;
    d.catchup.window_ms = 10_000;
    h.ok(S, Input::UpsertSchedule(d));
    h
}

#[test]
fn due_exactly_at_the_cutoff_is_not_too_old() {
    let mut h = harness("@every 10s");
    // The cutoff is now - 10 s = S + 10 s: the boundary due then fires.
    let cmds = h.advance(S + 20_000);
    assert_eq!(nominals(&cmds), vec![S + 10_000, S + 20_000]);
    assert!(skips(&cmds).is_empty());
}

#[test]
fn too_old_stops_before_the_cutoff() {
    let mut h = harness("@every 1s");
    let cmds = h.advance(S + 20_000);
    // Due before S + 10 s: too old; S + 10 s ..= S + 20 s fire.
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::TooOld, 9, S + 1000, S + 9000)]
    );
    let expect: Vec<i64> = (10..=20).map(|k| S + k * 1000).collect();
    assert_eq!(nominals(&cmds), expect);
}
