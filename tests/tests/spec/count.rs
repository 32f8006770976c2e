//! `Spec::count_between`, `Spec::nth_from` and `Spec::first_at_or_after`
//! against their definition: a brute-force loop over `next_after`.
//!
//! Random cron specs (5, 6 and 7 fields with `L`, `W`, `#`, lists, steps,
//! seconds and years, plus a few hand-written ones with `L-n` and macros)
//! in zones with 1-hour, 30-minute and no DST and one whose offset changed
//! without DST (Asia/Kathmandu, 1986), under every DST policy, over ranges
//! that mostly start shortly before an offset transition. Most ranges end
//! at the k-th boundary after their start (k up to 100,000, log-uniform),
//! so the counts are not zero by construction; the rest are arbitrary.
//! The test fails if fewer than two thirds of the cases saw a boundary (a
//! typical run: 82%, about 9 million boundaries compared), so it cannot
//! pass vacuously.

use chime_core::Timestamp;
use chime_core::{DstPolicy, FoldPolicy, GapPolicy, Spec, SpecOptions};
use chime_tests::specgen::{Rng, cron_spec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;

const ZONES: [&str; 5] = [
    "UTC",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
];

/// Specs the generator leaves out (`L-n`, macros) or rarely hits.
const EXTRA: [&str; 12] = [
    "* * * * * *",
    "*/10 * * * * *",
    "0 30 2 * * *",
    "15,45 1-3 * * *",
    "0 0 L-2 * *",
    "0 0 L-1,15W * *",
    "0 */30 1-3 * * SUN",
    "@hourly",
    "@daily",
    "0 0 9 * * 5#2,1L",
    "*/5 0 2 * * * 2026-2030",
    "0 0 0 29 2 * *",
];

/// Boundaries the brute force collects at most per case.
const CAP: usize = 100_000;

/// 1975-01-01 .. 2040-01-01 (UTC seconds).
const START_LO: i64 = 157_766_400;
const START_HI: i64 = 2_208_988_800;

#[derive(Clone, Debug)]
struct Case {
    text: String,
    zone: &'static str,
    dst: DstPolicy,
    horizon_years: u32,
    /// Start in ms; moved to just before a transition when `near` and the
    /// zone has one later.
    start_ms: i64,
    near: bool,
    /// How far before the transition, in ms (under two days).
    back_ms: i64,
    /// End the range at the k-th boundary (`Some`) or `len_ms` after the
    /// start (`None`).
    kth: Option<u32>,
    len_ms: i64,
    /// Milliseconds added to the k-th boundary (less than a second, so no
    /// boundary is added: cron boundaries are whole seconds).
    slack_ms: i64,
}

fn case() -> impl Strategy<Value = Case> {
    let text = (any::<u64>(), 0u32..100).prop_map(|(seed, pick)| {
        if pick < 20 {
            EXTRA[(seed % EXTRA.len() as u64) as usize].to_string()
        } else {
            cron_spec(&mut Rng::new(seed)).text
        }
    });
    let gap = prop::sample::select(vec![None, Some(GapPolicy::Shift), Some(GapPolicy::Skip)]);
    let fold = prop::sample::select(vec![
        None,
        Some(FoldPolicy::First),
        Some(FoldPolicy::Last),
        Some(FoldPolicy::Both),
    ]);
    let horizon = prop::sample::select(vec![100u32, 100, 100, 100, 100, 100, 100, 100, 1, 0]);
    let kth = (0u32..10, 0u32..=17, any::<u32>()).prop_map(|(mode, bits, low)| {
        // Log-uniform up to CAP, or no k at all.
        (mode < 8).then(|| ((1u32 << bits) + low % (1 << bits)).min(CAP as u32))
    });
    (
        (text, prop::sample::select(&ZONES[..]), gap, fold, horizon),
        (
            START_LO * 1000..START_HI * 1000,
            0u32..4,
            0i64..2 * 86_400_000,
        ),
        (kth, 0i64..40 * 86_400_000, 0i64..1000),
    )
        .prop_map(
            |(
                (text, zone, gap, fold, horizon_years),
                (start_ms, near, back_ms),
                (kth, len_ms, slack_ms),
            )| {
                Case {
                    text,
                    zone,
                    dst: DstPolicy { gap, fold },
                    horizon_years,
                    start_ms,
                    near: near > 0,
                    back_ms,
                    kth,
                    len_ms,
                    slack_ms,
                }
            },
        )
}

/// The first offset transition after `ms`, in ms.
fn next_transition(zone: &str, ms: i64) -> Option<i64> {
    let tz = jiff::tz::TimeZone::get(zone).ok()?;
    let t = jiff::Timestamp::from_millisecond(ms).ok()?;
    let before = tz.to_offset(t);
    tz.following(t)
        .take(8)
        .find(|tr| tr.offset() != before)
        .map(|tr| tr.timestamp().as_millisecond())
}

fn ts(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// The definition: `next_after` from `from - 1 ms`, at most `cap` steps
/// and up to `until`.
fn brute(spec: &Spec, from: Timestamp, until: Timestamp, cap: usize) -> Vec<Timestamp> {
    let mut out = Vec::new();
    let mut next = spec.next_after(from.saturating_add_ms(-1));
    while let Some(b) = next.filter(|&b| b <= until && out.len() < cap) {
        out.push(b);
        next = spec.next_after(b);
    }
    out
}

/// Checks one case; returns the number of boundaries in its range.
fn check(c: &Case) -> Result<usize, TestCaseError> {
    let opts = SpecOptions {
        tz: Some(c.zone.to_string()),
        dst: c.dst,
        horizon_years: c.horizon_years,
        ..SpecOptions::default()
    };
    let spec = Spec::parse(&c.text, &opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let start = match next_transition(c.zone, c.start_ms) {
        Some(tr) if c.near => tr - c.back_ms,
        _ => c.start_ms,
    };
    let from = ts(start);
    let (until, want) = match c.kth {
        Some(k) => {
            let got = brute(&spec, from, Timestamp::MAX, k as usize);
            match got.last() {
                Some(&b) => (b.saturating_add_ms(c.slack_ms), got),
                None => (from.saturating_add_ms(c.len_ms), got),
            }
        }
        None => {
            let until = from.saturating_add_ms(c.len_ms);
            let got = brute(&spec, from, until, CAP);
            // Past the cap, end the range at the last boundary seen.
            let until = if got.len() == CAP {
                got[CAP - 1]
            } else {
                until
            };
            (until, got)
        }
    };
    let n = want.len();
    prop_assert_eq!(
        spec.count_between(from, until),
        n as u64,
        "count to {:?}",
        until
    );
    prop_assert_eq!(
        spec.first_at_or_after(from),
        spec.next_after(from.saturating_add_ms(-1))
    );
    // Sampled indexes, the first and the last, and one past the end.
    let mut rng = Rng::new(start.unsigned_abs() ^ n as u64);
    let mut picks: Vec<usize> = (0..6)
        .filter(|_| n > 0)
        .map(|_| rng.below(n as u64) as usize)
        .collect();
    picks.extend([0, n.saturating_sub(1)].into_iter().filter(|_| n > 0));
    for &k in &picks {
        prop_assert_eq!(spec.nth_from(from, k as u64), Some(want[k]), "#{}", k);
    }
    if let Some(&last) = want.last() {
        prop_assert_eq!(
            spec.nth_from(from, n as u64),
            spec.next_after(last),
            "one past the end"
        );
    }
    // Sub-ranges between two boundaries, and from just after one.
    if n >= 2 {
        let (i, j) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
        let (i, j) = (i.min(j), i.max(j));
        prop_assert_eq!(spec.count_between(want[i], want[j]), (j - i + 1) as u64);
        let after = want[i].saturating_add_ms(1);
        prop_assert_eq!(
            spec.count_between(after, want[j]),
            (j - i) as u64,
            "after #{}",
            i
        );
        prop_assert_eq!(
            spec.count_between(want[j], want[i].saturating_add_ms(-1)),
            0
        );
    }
    Ok(n)
}

#[test]
fn count_and_nth_agree_with_next_after() {
    let cases = 768;
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let (seen, nonzero, total) = (Cell::new(0u32), Cell::new(0u32), Cell::new(0u64));
    runner
        .run(&case(), |c| {
            let n = check(&c)?;
            seen.set(seen.get() + 1);
            nonzero.set(nonzero.get() + u32::from(n > 0));
            total.set(total.get() + n as u64);
            Ok(())
        })
        .unwrap();
    let (seen, nonzero) = (seen.get(), nonzero.get());
    eprintln!(
        "{nonzero} of {seen} cases had boundaries; {} boundaries compared",
        total.get()
    );
    assert!(
        nonzero * 3 >= seen * 2,
        "only {nonzero} of {seen} cases had a boundary: the test would be vacuous"
    );
    assert!(
        total.get() > 1_000_000,
        "boundaries compared: {}",
        total.get()
    );
}

#[test]
fn every_and_at_agree_with_next_after() {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        1i64..100_000,
        0u32..1000,
        0i64..86_400_000,
        0i64..5_000_000_000,
    );
    runner
        .run(&strategy, |(interval_s, frac, from_ms, len_ms)| {
            let offset_s = interval_s * i64::from(frac) / 1000;
            let spec = Spec::parse(
                &format!("@every {interval_s}s +{offset_s}s"),
                &SpecOptions::default(),
            )
            .unwrap();
            let from = ts(from_ms);
            let until = from.saturating_add_ms(len_ms);
            let want = brute(&spec, from, until, CAP);
            let until = if want.len() == CAP {
                want[CAP - 1]
            } else {
                until
            };
            prop_assert_eq!(spec.count_between(from, until), want.len() as u64);
            for (k, &b) in want.iter().enumerate().step_by(want.len() / 5 + 1) {
                prop_assert_eq!(spec.nth_from(from, k as u64), Some(b));
            }
            prop_assert_eq!(
                spec.first_at_or_after(Timestamp::MIN),
                Some(ts(offset_s * 1000))
            );
            Ok(())
        })
        .unwrap();
    let at = Spec::parse("@at 2030-01-01T00:00:00Z", &SpecOptions::default()).unwrap();
    let b = at.next_after(Timestamp::MIN).unwrap();
    assert_eq!(at.count_between(Timestamp::MIN, Timestamp::MAX), 1);
    assert_eq!(at.nth_from(b, 0), Some(b));
    assert_eq!(at.count_between(b.saturating_add_ms(1), Timestamp::MAX), 0);
}
