//! Schedules due at the same instant fire in name order, which the engine
//! keeps as a rank per schedule, spaced 2^32 apart and halved by each name
//! inserted between two others. Names inserted ever closer to one
//! neighbour exhaust the space between two ranks after 32 insertions; the
//! engine must then re-space the ranks, never give two schedules one rank
//! (which would make one of them shadow the other in the due index and
//! lose its fires).

use chime_core::{Input, Overlap};
use chime_tests::scenario::*;

const S: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

#[test]
fn names_squeezed_between_two_neighbours_all_fire() {
    let mut h = Harness::standalone();
    // "b" and "z" first, then "k99", "k98", …: each new name sorts between
    // "b" and the previous one, so each takes half the remaining gap.
    let mut names = vec!["b".to_string(), "z".to_string()];
    names.extend((0..48).map(|i| format!("k{:02}", 99 - i)));
    for name in &names {
        let mut d = def(name, "@every 10s", "q");
        d.overlap = Overlap::Allow;
        h.ok(S, Input::UpsertSchedule(d));
    }
    let fired = fires(&h.advance(S + 10_000))
        .iter()
        .map(|f| f.fire_id.schedule.to_string())
        .collect::<Vec<_>>();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(fired, sorted, "each schedule once, in name order");
    h.restart();
    let again = fires(&h.advance(S + 20_000)).len();
    assert_eq!(again, names.len(), "and again after a restart");
    h.check_replay();
}
