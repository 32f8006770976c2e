//! A paused schedule with jitter: a boundary is skipped as paused only once
//! it is due (nominal + jitter), not when its nominal time passes — the
//! last boundary of a paused run whose due time is still ahead stays the
//! cursor, with its due time.
//! (Kills the due-limit mutants of `schedule::catchup::span`.)

use chime_core::{Input, SkipReason};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000; // on a 10 s grid

#[test]
fn the_last_paused_boundary_waits_for_its_due_time() {
    let mut h = Harness::standalone();
    let mut d = def("jittery", "@every 10s", "q");
    d.paused = true;
    d.jitter_ms = 9000;
    h.ok(S, Input::UpsertSchedule(d));
    let due1 = h.engine.schedule("jittery").unwrap().next_due_at.unwrap();
    assert!(due1.as_millis() < S + 20_000);

    // S + 10 s is due; S + 20 s has passed its nominal time but is not due.
    let now = S + 20_000;
    let cmds = h.advance(now);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 1, S + 10_000, S + 10_000)]
    );
    let info = h.engine.schedule("jittery").unwrap();
    assert_eq!(info.skipped, 1);
    assert_eq!(info.next_nominal.unwrap().as_millis(), S + 20_000);
    let due2 = info.next_due_at.unwrap().as_millis();
    assert!(
        due2 > now,
        "the scenario needs a jitter > 0 at S + 20 s: {due2}"
    );

    // Once due, it is skipped too.
    let cmds = h.advance(due2);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 1, S + 20_000, S + 20_000)]
    );
    h.check_replay();
}
