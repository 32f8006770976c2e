//! Europe/London across the 2026 transitions, under every DST policy.
//!
//! Spring: 2026-03-29 01:00 GMT → 02:00 BST at 01:00Z (civil 01:00–01:59
//! does not exist). Fall: 2026-10-25 02:00 BST → 01:00 GMT at 01:00Z (civil
//! 01:00–01:59 happens twice: 00:00–00:59Z, then 01:00–01:59Z).

const ZONE: &str = "Europe/London";

use chime_core::spec::{DstNote, DstPolicy, FoldPolicy, GapPolicy};
use chime_core::{Spec, SpecOptions, Timestamp};

fn ts(s: &str) -> Timestamp {
    let j: jiff::Timestamp = s.parse().unwrap();
    Timestamp::from_millis(j.as_millisecond()).unwrap()
}

fn opts(gap: Option<GapPolicy>, fold: Option<FoldPolicy>) -> SpecOptions {
    SpecOptions {
        tz: Some(ZONE.to_string()),
        dst: DstPolicy { gap, fold },
        ..SpecOptions::default()
    }
}

/// Occurrences in `[from, until)` as RFC 3339 UTC strings without millis.
fn fires(spec: &str, o: &SpecOptions, from: &str, until: &str) -> Vec<String> {
    let spec = Spec::parse(spec, o).unwrap();
    let until = ts(until);
    let mut t = Timestamp::from_millis(ts(from).as_millis() - 1).unwrap();
    let mut out = Vec::new();
    while let Some(next) = spec.next_after(t) {
        if next >= until || out.len() > 100 {
            break;
        }
        out.push(next.to_string().replace(".000Z", "Z"));
        t = next;
    }
    out
}

const AUTO: (Option<GapPolicy>, Option<FoldPolicy>) = (None, None);
const SHIFT: (Option<GapPolicy>, Option<FoldPolicy>) = (Some(GapPolicy::Shift), None);
const SKIP: (Option<GapPolicy>, Option<FoldPolicy>) = (Some(GapPolicy::Skip), None);
const FIRST: (Option<GapPolicy>, Option<FoldPolicy>) = (None, Some(FoldPolicy::First));
const LAST: (Option<GapPolicy>, Option<FoldPolicy>) = (None, Some(FoldPolicy::Last));
const BOTH: (Option<GapPolicy>, Option<FoldPolicy>) = (None, Some(FoldPolicy::Both));

fn run(spec: &str, p: (Option<GapPolicy>, Option<FoldPolicy>), day: (&str, &str)) -> Vec<String> {
    fires(spec, &opts(p.0, p.1), day.0, day.1)
}

fn notes(
    spec: &str,
    p: (Option<GapPolicy>, Option<FoldPolicy>),
    from: &str,
    n: usize,
) -> Vec<(String, i32, Option<DstNote>)> {
    Spec::parse(spec, &opts(p.0, p.1))
        .unwrap()
        .preview(ts(from), n)
        .into_iter()
        .map(|o| (o.civil, o.offset_seconds, o.note))
        .collect()
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
