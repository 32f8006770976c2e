//! Cron schedules in America/New_York through both 2026 DST transitions,
//! driven through the engine minute by minute (and in one jump, which
//! catch-up must resolve to the same fires): no lost run in the spring gap
//! for a fixed-time spec, no double fire in the fall-back hour, and both
//! passes for a spec that runs on elapsed time.

use chime_core::{Command, Input, Overlap};
use chime_tests::scenario::*;

fn ms(s: &str) -> i64 {
    s.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).unwrap().to_string()
}

/// Fires of `spec` in New York between `from` and `to`, advancing every `step_ms`.
fn run(spec: &str, from: &str, to: &str, step_ms: i64) -> Vec<String> {
    let mut h = Harness::standalone();
    let mut d = def("dst", spec, "q");
    d.tz = Some("America/New_York".into());
    d.overlap = Overlap::Allow;
    h.ok(ms(from), Input::UpsertSchedule(d));
    let (mut now, end) = (ms(from), ms(to));
    let mut all: Vec<Command> = Vec::new();
    while now < end {
        now = (now + step_ms).min(end);
        all.extend(h.advance(now));
    }
    let info = h.engine.schedule("dst").unwrap();
    assert_eq!(info.skipped, 0, "nothing skipped");
    let got: Vec<String> = nominals(&all).into_iter().map(iso).collect();
    let mut dedup = got.clone();
    dedup.dedup();
    assert_eq!(dedup, got, "no double fire");
    got
}

fn both_ways(spec: &str, from: &str, to: &str) -> Vec<String> {
    let stepped = run(spec, from, to, 60_000);
    let jumped = run(spec, from, to, i64::MAX / 4);
    assert_eq!(
        stepped, jumped,
        "{spec}: a jump catches up to the same fires"
    );
    stepped
}

const SPRING: (&str, &str) = ("2026-03-08T04:00:00Z", "2026-03-08T10:00:00Z");
const FALL: (&str, &str) = ("2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z");

#[test]
fn spring_fixed_time_fires_once_after_the_gap() {
    assert_eq!(
        both_ways("30 2 * * *", SPRING.0, SPRING.1),
        ["2026-03-08T07:00:00Z"]
    );
}

#[test]
fn spring_list_does_not_fire_in_the_gap() {
    assert_eq!(
        both_ways("0,30 2 * * *", SPRING.0, SPRING.1),
        Vec::<String>::new()
    );
}

#[test]
fn spring_hourly_has_one_hour_less() {
    let got = both_ways("0 * * * *", SPRING.0, SPRING.1);
    // 04Z..=10Z is 23:00 EST .. 06:00 EDT: 01:00 EST and 03:00 EDT are one hour apart.
    assert_eq!(
        got,
        [
            "2026-03-08T05:00:00Z",
            "2026-03-08T06:00:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-08T08:00:00Z",
            "2026-03-08T09:00:00Z",
            "2026-03-08T10:00:00Z"
        ]
    );
}

#[test]
fn fall_fixed_time_fires_once() {
    assert_eq!(
        both_ways("30 1 * * *", FALL.0, FALL.1),
        ["2026-11-01T05:30:00Z"]
    );
}

#[test]
fn fall_list_fires_on_both_passes() {
    assert_eq!(
        both_ways("0,20,40 1 * * *", FALL.0, FALL.1),
        [
            "2026-11-01T05:00:00Z",
            "2026-11-01T05:20:00Z",
            "2026-11-01T05:40:00Z",
            "2026-11-01T06:00:00Z",
            "2026-11-01T06:20:00Z",
            "2026-11-01T06:40:00Z"
        ]
    );
}
