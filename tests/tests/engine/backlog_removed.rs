//! Finding L1 of the long simulation: an advance that hits
//! `limits.firesPerAdvance` leaves a backlog, and `poll_timeout()` returns
//! the clock so the host advances again at once. If an input then removes
//! every schedule still behind, nothing is due any more: the live engine
//! must ask for its next real deadline, exactly as an engine restored from
//! its snapshot does (a restore derives the backlog from what is due). The
//! engine before the fix kept asking for "now", so a restarted engine fired
//! at other moments than the one that crashed. The same holds when the
//! budget is used up by exactly the fires that were due.

use chime_core::{EngineConfig, Input, Limits};
use chime_tests::scenario::{Harness, def, fires, t};

const T: i64 = 1_000_000_000_000;

#[test]
fn removing_the_schedules_behind_ends_the_backlog() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            fires_per_advance: 2,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let names = ["a", "b", "c", "d", "e"];
    for n in names {
        h.ok(T, Input::UpsertSchedule(def(n, "@every 10s", "q")));
    }
    let first = h.advance(T + 10_000);
    let fired: Vec<String> = fires(&first)
        .iter()
        .map(|f| f.schedule().to_owned())
        .collect();
    assert_eq!(fired.len(), 2, "the budget holds: {first:?}");
    assert_eq!(
        h.engine.poll_timeout(),
        Some(t(T + 10_000)),
        "a backlog: advance again now"
    );

    // Remove the three that are still behind.
    for n in names.iter().filter(|n| !fired.iter().any(|f| f == *n)) {
        h.ok(T + 10_000, Input::remove_schedule(*n));
    }
    let live = h.engine.poll_timeout();
    assert_eq!(live, Some(t(T + 20_000)), "nothing due: the next boundary");
    h.restart();
    assert_eq!(h.engine.poll_timeout(), live, "a restored engine agrees");

    // Nothing fires before that boundary.
    assert!(fires(&h.advance(T + 19_999)).is_empty());
    h.check_replay();
}

/// A budget used up by exactly the fires that were due leaves no backlog:
/// the engine asks for its next boundary, not for another advance now
/// (which a restored engine would not ask for either).
#[test]
fn a_budget_used_up_exactly_leaves_no_backlog() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            fires_per_advance: 2,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    h.ok(T, Input::UpsertSchedule(def("a", "@every 10s", "q")));
    h.ok(T, Input::UpsertSchedule(def("b", "@every 10s", "q")));
    assert_eq!(fires(&h.advance(T + 10_000)).len(), 2);
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 20_000)));
    h.restart();
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 20_000)));
    h.check_replay();
}
