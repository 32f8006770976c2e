//! Schedules whose spec text and zone are the same but whose DST policy
//! differs each follow their own policy. The engine shares one parsed grid
//! between schedules with the same spec, zone and policy (interned by a key
//! ordered on all three); a key order that confused two policies (`auto`
//! with `skip`, `auto` with `shift`, `auto` with `first`) would hand one
//! schedule the other's grid. Every schedule here sits next to the ones it
//! could be confused with, in both insertion orders.

use chime_core::{DstPolicy, FoldPolicy, GapPolicy, Input, Overlap};
use chime_tests::scenario::*;
use std::collections::BTreeMap;

fn ms(s: &str) -> i64 {
    s.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).unwrap().to_string()
}

/// Fires per schedule between `from` and `to` (New York), one schedule per
/// `(name, spec, gap, fold)`, upserted in the order given.
fn run(schedules: &[Sched], from: &str, to: &str) -> BTreeMap<String, Vec<String>> {
    let mut h = Harness::standalone();
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &(name, spec, gap, fold) in schedules {
        let mut d = def(name, spec, "q");
        d.tz = Some("America/New_York".into());
        d.dst = DstPolicy { gap, fold };
        d.overlap = Overlap::Allow;
        h.ok(ms(from), Input::UpsertSchedule(d));
        got.insert(name.to_string(), vec![]);
    }
    let (mut now, end) = (ms(from), ms(to));
    while now < end {
        now = (now + 60_000).min(end);
        for f in fires_of(&h.advance(now)) {
            got.get_mut(&*f.0).unwrap().push(iso(f.1));
        }
    }
    got
}

fn fires_of(cmds: &[chime_core::Command]) -> Vec<(String, i64)> {
    fires(cmds)
        .into_iter()
        .map(|f| {
            (
                f.fire_id.schedule.to_string(),
                f.fire_id.nominal.as_millis(),
            )
        })
        .collect()
}

type Sched = (
    &'static str,
    &'static str,
    Option<GapPolicy>,
    Option<FoldPolicy>,
);

/// [`run`] on a pair of schedules, upserted in both orders.
fn both_orders(pair: [Sched; 2], window: (&str, &str)) -> Vec<BTreeMap<String, Vec<String>>> {
    [[0, 1], [1, 0]]
        .map(|o| run(&[pair[o[0]], pair[o[1]]], window.0, window.1))
        .into()
}

const SPRING: (&str, &str) = ("2026-03-08T05:00:00Z", "2026-03-08T09:00:00Z");
const FALL: (&str, &str) = ("2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z");

#[test]
fn fixed_time_in_the_gap_auto_versus_skip() {
    // 02:30 does not exist on 2026-03-08: auto (fixed-time → shift) fires at
    // 03:00 EDT, skip does not fire that day.
    let spec = "30 2 * * *";
    let pair = [
        ("auto", spec, None, None),
        ("skip", spec, Some(GapPolicy::Skip), None),
    ];
    for got in both_orders(pair, SPRING) {
        assert_eq!(got["auto"], ["2026-03-08T07:00:00Z"], "{got:?}");
        assert!(got["skip"].is_empty(), "{got:?}");
    }
}

#[test]
fn elapsed_time_in_the_gap_auto_versus_shift() {
    // `*/30 2` runs on elapsed time: auto (skip) has no fire in the missing
    // hour, shift fires once at the first instant after it.
    let spec = "*/30 2 * * *";
    let pair = [
        ("auto", spec, None, None),
        ("shift", spec, Some(GapPolicy::Shift), None),
    ];
    for got in both_orders(pair, SPRING) {
        assert!(got["auto"].is_empty(), "{got:?}");
        assert_eq!(got["shift"], ["2026-03-08T07:00:00Z"], "{got:?}");
    }
}

#[test]
fn elapsed_time_in_the_fold_auto_versus_first_and_last() {
    // 01:00 and 01:30 happen twice on 2026-11-01: auto (both) fires on both
    // passes, first and last on one each.
    let spec = "*/30 1 * * *";
    let all = [
        ("auto", spec, None, None),
        ("first", spec, None, Some(FoldPolicy::First)),
        ("last", spec, None, Some(FoldPolicy::Last)),
    ];
    for order in [[0, 1, 2], [1, 2, 0], [2, 0, 1]] {
        let got = run(&order.map(|i| all[i]), FALL.0, FALL.1);
        let edt = ["2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z"];
        let est = ["2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z"];
        assert_eq!(got["auto"], [edt, est].concat(), "{order:?}");
        assert_eq!(got["first"], edt, "{order:?}");
        assert_eq!(got["last"], est, "{order:?}");
    }
}

#[test]
fn a_gap_policy_is_not_a_fold_policy() {
    // `gap: shift` (fold auto: both passes) next to `fold: first` (gap
    // auto), on the fall-back day: the two sides of the policy are keyed
    // apart.
    let spec = "*/30 1 * * *";
    let pair = [
        ("gap_shift", spec, Some(GapPolicy::Shift), None),
        ("fold_first", spec, None, Some(FoldPolicy::First)),
    ];
    for got in both_orders(pair, FALL) {
        assert_eq!(got["gap_shift"].len(), 4, "{got:?}");
        assert_eq!(got["fold_first"].len(), 2, "{got:?}");
    }
}
