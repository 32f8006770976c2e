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

/// Upserts `names` in order (all `@every 10s`), then checks that the next
/// boundary fires each once, in name order, before and after a restart.
fn all_fire_in_name_order(names: &[String]) {
    let mut h = Harness::standalone();
    for name in names {
        let mut d = def(name, "@every 10s", "q");
        d.overlap = Overlap::Allow;
        h.ok(S, Input::UpsertSchedule(d));
    }
    let fired = |cmds: &[chime_core::Command]| {
        fires(cmds)
            .iter()
            .map(|f| f.fire_id.schedule.to_string())
            .collect::<Vec<_>>()
    };
    let mut sorted = names.to_vec();
    sorted.sort();
    assert_eq!(
        fired(&h.advance(S + 10_000)),
        sorted,
        "each once, in name order"
    );
    h.restart();
    assert_eq!(fired(&h.advance(S + 20_000)), sorted, "after a restart");
}

#[test]
fn names_squeezed_towards_the_lower_neighbour() {
    // "b" and "z" first, then "k99", "k98", …: each new name sorts between
    // "b" and the previous one, so each takes half the remaining gap.
    let mut names = vec!["b".to_string(), "z".to_string()];
    names.extend((0..48).map(|i| format!("k{:02}", 99 - i)));
    all_fire_in_name_order(&names);
}

#[test]
fn names_squeezed_towards_the_upper_neighbour() {
    // Each new name sorts just after the previous one and before "z".
    let mut names = vec!["b".to_string(), "z".to_string()];
    names.extend((0..80).map(|i| format!("c{i:03}")));
    all_fire_in_name_order(&names);
}

#[test]
fn names_prepended_and_appended() {
    // Always before the first, then always after the last.
    let mut names: Vec<String> = (0..70).map(|i| format!("m{:03}", 999 - i)).collect();
    names.extend((0..70).map(|i| format!("n{i:03}")));
    all_fire_in_name_order(&names);
}

#[test]
fn names_in_a_scrambled_order_with_squeezes() {
    // 800 names in a fixed pseudo-random order, then 40 squeezed between
    // two of them: re-spacing around neighbours at every level.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut names: Vec<String> = (0..800)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            format!("r{:010}", x >> 34)
        })
        .collect();
    names.sort_unstable_by_key(|n| n.bytes().rev().collect::<Vec<_>>());
    names.dedup();
    names.extend((0..40).map(|i| format!("r{:010}x{:02}", 0, 99 - i)));
    all_fire_in_name_order(&names);
}
