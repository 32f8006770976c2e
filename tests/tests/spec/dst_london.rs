//! Europe/London across the 2026 transitions, under every DST policy.
//!
//! Spring: 2026-03-29 01:00 GMT → 02:00 BST at 01:00Z (civil 01:00–01:59
//! does not exist). Fall: 2026-10-25 02:00 BST → 01:00 GMT at 01:00Z (civil
//! 01:00–01:59 happens twice: 00:00–00:59Z, then 01:00–01:59Z).

const ZONE: &str = "Europe/London";

use chime_core::DstNote;
use chime_tests::dst::{self, AUTO, BOTH, FIRST, LAST, Policy, SHIFT, SKIP};

fn run(spec: &str, p: Policy, day: (&str, &str)) -> Vec<String> {
    dst::fires(spec, &dst::opts(ZONE, p), day.0, day.1)
}

fn notes(spec: &str, p: Policy, from: &str, n: usize) -> Vec<(String, i32, Option<DstNote>)> {
    dst::notes(ZONE, spec, p, from, n)
}

const SPRING: (&str, &str) = ("2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z");
const FALL: (&str, &str) = ("2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z");

#[test]
fn spring_fixed_time() {
    let shifted = ["2026-03-29T01:00:00Z", "2026-03-29T23:30:00Z"];
    // 23:30Z on the 29th is 00:30 BST on the 30th: outside the window.
    assert_eq!(run("30 1 * * *", AUTO, SPRING), shifted[..1]);
    assert_eq!(run("30 1 * * *", SHIFT, SPRING), shifted[..1]);
    assert!(run("30 1 * * *", SKIP, SPRING).is_empty());
    assert_eq!(
        run(
            "30 1 * * *",
            SKIP,
            ("2026-03-28T00:00:00Z", "2026-03-31T00:00:00Z")
        ),
        ["2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"]
    );
    // With seconds (6 fields) the rule is the same.
    assert_eq!(run("59 59 1 * * *", AUTO, SPRING), ["2026-03-29T01:00:00Z"]);
}

#[test]
fn spring_list_and_wildcard() {
    assert!(run("15,45 1 * * *", AUTO, SPRING).is_empty());
    assert!(run("15,45 1 * * *", SKIP, SPRING).is_empty());
    assert_eq!(
        run("15,45 1 * * *", SHIFT, SPRING),
        ["2026-03-29T01:00:00Z"]
    );
    let window = ("2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z");
    let every_20 = [
        "2026-03-29T00:00:00Z",
        "2026-03-29T00:20:00Z",
        "2026-03-29T00:40:00Z",
        "2026-03-29T01:00:00Z",
        "2026-03-29T01:20:00Z",
        "2026-03-29T01:40:00Z",
    ];
    assert_eq!(run("*/20 * * * *", AUTO, window), every_20);
    assert_eq!(run("*/20 * * * *", SHIFT, window), every_20);
    assert_eq!(run("*/20 * * * *", SKIP, window), every_20);
}

#[test]
fn fall_fixed_time() {
    assert_eq!(run("30 1 * * *", AUTO, FALL), ["2026-10-25T00:30:00Z"]);
    assert_eq!(run("30 1 * * *", FIRST, FALL), ["2026-10-25T00:30:00Z"]);
    assert_eq!(run("30 1 * * *", LAST, FALL), ["2026-10-25T01:30:00Z"]);
    assert_eq!(
        run("30 1 * * *", BOTH, FALL),
        ["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"]
    );
}

#[test]
fn fall_list_and_wildcard() {
    let both = [
        "2026-10-25T00:15:00Z",
        "2026-10-25T00:45:00Z",
        "2026-10-25T01:15:00Z",
        "2026-10-25T01:45:00Z",
    ];
    assert_eq!(run("15,45 1 * * *", AUTO, FALL), both);
    assert_eq!(run("15,45 1 * * *", BOTH, FALL), both);
    assert_eq!(run("15,45 1 * * *", FIRST, FALL), both[..2]);
    assert_eq!(run("15,45 1 * * *", LAST, FALL), both[2..]);
    let hours = ("2026-10-24T23:00:00Z", "2026-10-25T03:00:00Z");
    assert_eq!(
        run("0 * * * *", AUTO, hours),
        [
            "2026-10-24T23:00:00Z",
            "2026-10-25T00:00:00Z",
            "2026-10-25T01:00:00Z",
            "2026-10-25T02:00:00Z"
        ]
    );
    assert_eq!(
        run("0 * * * *", LAST, hours),
        [
            "2026-10-24T23:00:00Z",
            "2026-10-25T01:00:00Z",
            "2026-10-25T02:00:00Z"
        ]
    );
}

#[test]
fn preview_shows_local_time_and_notes() {
    assert_eq!(
        notes("30 1 * * *", AUTO, "2026-03-28T12:00:00Z", 2),
        [
            (
                "2026-03-29T02:00:00".to_string(),
                3600,
                Some(DstNote::ShiftedFromGap)
            ),
            ("2026-03-30T01:30:00".to_string(), 3600, None),
        ]
    );
    assert_eq!(
        notes("30 1 * * *", BOTH, "2026-10-24T12:00:00Z", 3),
        [
            (
                "2026-10-25T01:30:00".to_string(),
                3600,
                Some(DstNote::FirstPass)
            ),
            (
                "2026-10-25T01:30:00".to_string(),
                0,
                Some(DstNote::SecondPass)
            ),
            ("2026-10-26T01:30:00".to_string(), 0, None),
        ]
    );
}
