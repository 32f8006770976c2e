//! Australia/Lord_Howe: a 30-minute DST shift.
//!
//! Standard time is +10:30, DST +11:00. Fall: 2026-04-05 02:00 (+11) →
//! 01:30 (+10:30) at 2026-04-04T15:00Z (civil 01:30–01:59 twice: 14:30–14:59Z
//! and 15:00–15:29Z). Spring: 2026-10-04 02:00 (+10:30) → 02:30 (+11) at
//! 2026-10-03T15:30Z (civil 02:00–02:29 does not exist).

const ZONE: &str = "Australia/Lord_Howe";

use chime_core::DstNote;
use chime_tests::dst::{self, AUTO, BOTH, FIRST, LAST, Policy, SHIFT, SKIP};

fn run(spec: &str, p: Policy, day: (&str, &str)) -> Vec<String> {
    dst::fires(spec, &dst::opts(ZONE, p), day.0, day.1)
}

fn notes(spec: &str, p: Policy, from: &str, n: usize) -> Vec<(String, i32, Option<DstNote>)> {
    dst::notes(ZONE, spec, p, from, n)
}

const SPRING: (&str, &str) = ("2026-10-03T12:00:00Z", "2026-10-04T12:00:00Z");
const FALL: (&str, &str) = ("2026-04-04T12:00:00Z", "2026-04-05T12:00:00Z");

#[test]
fn spring_fixed_time() {
    assert_eq!(run("15 2 * * *", AUTO, SPRING), ["2026-10-03T15:30:00Z"]);
    assert_eq!(run("15 2 * * *", SHIFT, SPRING), ["2026-10-03T15:30:00Z"]);
    assert!(run("15 2 * * *", SKIP, SPRING).is_empty());
    // 02:30 exists: it is the first instant after the gap.
    assert_eq!(run("30 2 * * *", SKIP, SPRING), ["2026-10-03T15:30:00Z"]);
    // 02:45 exists in DST (+11).
    assert_eq!(run("45 2 * * *", AUTO, SPRING), ["2026-10-03T15:45:00Z"]);
}

#[test]
fn spring_list() {
    let list = "0,15,30,45 2 * * *";
    assert_eq!(
        run(list, AUTO, SPRING),
        ["2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z"]
    );
    assert_eq!(
        run(list, SKIP, SPRING),
        ["2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z"]
    );
    // 02:00 and 02:15 shift to 15:30Z, where 02:30 fires anyway: once.
    assert_eq!(
        run(list, SHIFT, SPRING),
        ["2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z"]
    );
    assert_eq!(
        notes(list, SHIFT, SPRING.0, 2),
        [
            (
                "2026-10-04T02:30:00".to_string(),
                39_600,
                Some(DstNote::ShiftedFromGap)
            ),
            ("2026-10-04T02:45:00".to_string(), 39_600, None),
        ]
    );
}

#[test]
fn fall_fixed_time() {
    assert_eq!(run("45 1 * * *", AUTO, FALL), ["2026-04-04T14:45:00Z"]);
    assert_eq!(run("45 1 * * *", FIRST, FALL), ["2026-04-04T14:45:00Z"]);
    assert_eq!(run("45 1 * * *", LAST, FALL), ["2026-04-04T15:15:00Z"]);
    assert_eq!(
        run("45 1 * * *", BOTH, FALL),
        ["2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z"]
    );
    // 01:15 is before the repeated half hour: one fire under any policy.
    for p in [AUTO, FIRST, LAST, BOTH] {
        assert_eq!(run("15 1 * * *", p, FALL), ["2026-04-04T14:15:00Z"]);
    }
}

#[test]
fn fall_step() {
    let all = [
        "2026-04-04T14:00:00Z", // 01:00 +11
        "2026-04-04T14:15:00Z", // 01:15 +11
        "2026-04-04T14:30:00Z", // 01:30 +11, first pass
        "2026-04-04T14:45:00Z", // 01:45 +11, first pass
        "2026-04-04T15:00:00Z", // 01:30 +10:30, second pass
        "2026-04-04T15:15:00Z", // 01:45 +10:30, second pass
    ];
    assert_eq!(run("*/15 1 * * *", AUTO, FALL), all);
    assert_eq!(run("*/15 1 * * *", BOTH, FALL), all);
    assert_eq!(run("*/15 1 * * *", FIRST, FALL), all[..4]);
    assert_eq!(
        run("*/15 1 * * *", LAST, FALL),
        [all[0], all[1], all[4], all[5]]
    );
    let n = notes("*/15 1 * * *", AUTO, FALL.0, 6);
    let got: Vec<_> = n.iter().map(|(_, off, note)| (*off, *note)).collect();
    assert_eq!(
        got,
        [
            (39_600, None),
            (39_600, None),
            (39_600, Some(DstNote::FirstPass)),
            (39_600, Some(DstNote::FirstPass)),
            (37_800, Some(DstNote::SecondPass)),
            (37_800, Some(DstNote::SecondPass)),
        ]
    );
}
