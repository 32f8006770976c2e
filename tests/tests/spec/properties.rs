//! Property tests of `Spec::next_after` over random valid specs, zones, DST
//! policies and start times, against the independent boundary oracle
//! (`chime_tests::oracle`: its own cron parser, calendar and DST rules —
//! never chime's parser or matcher):
//!
//! - `next_after` chains equal the oracle's, step by step (strictly later
//!   each time, gap shifts and fold passes included);
//! - nothing is skipped: iterating `next_after` over a short window gives
//!   exactly what the oracle's brute-force civil scan finds (minute by
//!   minute for specs whose second field is one value, else second by
//!   second). Windows are placed across a DST transition of the zone and
//!   where the spec fires, so most cases compare non-empty results; the
//!   test counts them and fails if they fall below 80 %;
//! - `@every` results lie on the epoch-aligned grid, right after the start.
//!
//! Case counts: the defaults below unless `PROPTEST_CASES` is set.

use chime_core::{DstPolicy, FoldPolicy, GapPolicy, Spec, SpecOptions, Timestamp};
use chime_tests::oracle::{Oracle, Zone};
use chime_tests::specgen::{GenSpec, Rng, cron_spec_full as cron_spec};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::cell::Cell;

const ZONES: [&str; 12] = [
    "UTC",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Pacific/Apia",
    "America/Sao_Paulo",
    "Europe/Moscow",
    "Asia/Kathmandu",
    "America/Havana",
    "Africa/Casablanca",
    "Pacific/Chatham",
];

const GAPS: [Option<GapPolicy>; 3] = [None, Some(GapPolicy::Shift), Some(GapPolicy::Skip)];
const FOLDS: [Option<FoldPolicy>; 4] = [
    None,
    Some(FoldPolicy::First),
    Some(FoldPolicy::Last),
    Some(FoldPolicy::Both),
];

/// 1971-01-01T00:00:00Z .. 2038-01-01T00:00:00Z.
const START_LO: i64 = 31_536_000;
const START_HI: i64 = 2_145_916_800;

/// `default` cases unless `PROPTEST_CASES` says otherwise (the rest of
/// the config, e.g. `PROPTEST_RNG_SEED`, comes from the environment too).
fn config(default: u32) -> ProptestConfig {
    let mut c = ProptestConfig {
        source_file: Some(file!()),
        // Failing cases beside this file (`properties.proptest-regressions`),
        // not in proptest's default `../proptest-regressions/properties.txt`
        // (the directory has a `main.rs`).
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = default;
    }
    // Rejections are counted and bounded (5 %) by the tests themselves.
    c.max_global_rejects = c.max_global_rejects.max(c.cases / 10);
    c
}

/// One spec in one zone under one policy, on both sides.
struct Both {
    text: GenSpec,
    zone_name: &'static str,
    dst: DstPolicy,
    spec: Spec,
    oracle: Oracle,
}

impl Both {
    fn new(text: GenSpec, zone_name: &'static str, dst: DstPolicy) -> Both {
        let opts = SpecOptions {
            tz: Some(zone_name.to_string()),
            dst,
            ..SpecOptions::default()
        };
        let spec = Spec::parse(&text.text, &opts)
            .unwrap_or_else(|e| panic!("chime rejects {:?}: {e}", text.text));
        let oracle = Oracle::parse(&text.text, Some(zone_name), dst, 100)
            .unwrap_or_else(|e| panic!("the oracle rejects {:?}: {e}", text.text));
        Both {
            text,
            zone_name,
            dst,
            spec,
            oracle,
        }
    }

    fn zone(&self) -> &Zone {
        self.oracle.cron().unwrap().1
    }

    /// chime's occurrences in `(t, t + window]` (seconds).
    fn occurrences(&self, t: i64, window: i64) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = Timestamp::from_secs(t).unwrap();
        while let Some(next) = self.spec.next_after(at) {
            if next.as_secs() > t + window {
                break;
            }
            out.push(next.as_secs());
            at = next;
        }
        out
    }

    /// Two days for specs whose second field is one value (scanned minute
    /// by minute), three hours otherwise (second by second).
    fn window(&self) -> i64 {
        let one_second = self
            .text
            .text
            .split_ascii_whitespace()
            .next()
            .is_some_and(|s| self.text.fields == 5 || s.bytes().all(|b| b.is_ascii_digit()));
        if one_second { 2 * 86_400 } else { 3 * 3600 }
    }

    fn describe(&self, lo: i64, window: i64) -> String {
        format!(
            "{:?} in {} under {:?}, window ({}, +{window} s]",
            self.text.text,
            self.zone_name,
            self.dst,
            jiff::Timestamp::from_second(lo).unwrap()
        )
    }
}

fn policy(gap: usize, fold: usize) -> DstPolicy {
    DstPolicy {
        gap: GAPS[gap],
        fold: FOLDS[fold],
    }
}

/// Where a window was placed.
enum Placed {
    /// Across a transition of the zone, where the spec fires.
    AtTransition(Both, i64),
    /// Where the spec fires (the zone has no transition near, or the spec
    /// never fires near one).
    AtOccurrence(Both, i64),
}

/// A window of `(lo, lo + window]` for a spec drawn from `seed`: across a
/// transition of the zone with an occurrence of the spec inside, trying up
/// to 6 specs × 24 transitions; else just before an occurrence; `None` if
/// no spec drawn fires at all.
fn place(seed: u64, zone: &'static str, dst: DstPolicy, t0: i64) -> Option<Placed> {
    let mut rng = Rng::new(seed);
    let mut fallback = None;
    for _ in 0..6 {
        let both = Both::new(cron_spec(&mut rng), zone, dst);
        let window = both.window();
        let transitions: Vec<i64> = both.zone().transitions_after(t0).take(24).collect();
        for tr in transitions {
            let lo = tr - rng.range_i64(1, window);
            if !both
                .oracle
                .between(lo * 1000, (lo + window) * 1000)
                .is_empty()
            {
                return Some(Placed::AtTransition(both, lo));
            }
        }
        if fallback.is_none()
            && let Some(n) = both.oracle.next_after(t0 * 1000)
        {
            let lo = n / 1000 - rng.range_i64(1, window);
            fallback = Some(Placed::AtOccurrence(both, lo));
        }
    }
    fallback
}

#[derive(Default)]
struct Reach {
    cases: Cell<u64>,
    nonempty: Cell<u64>,
    at_transition: Cell<u64>,
    rejected: Cell<u64>,
    results: Cell<u64>,
}

impl Reach {
    fn bump(c: &Cell<u64>, n: u64) {
        c.set(c.get() + n);
    }

    fn report_and_check(&self, name: &str, min_transition_pct: u64) {
        let (cases, nonempty, at_tr, rejected) = (
            self.cases.get(),
            self.nonempty.get(),
            self.at_transition.get(),
            self.rejected.get(),
        );
        println!(
            "{name}: {cases} cases compared, {nonempty} non-empty ({} %), {at_tr} across a \
             transition ({} %), {} results, {rejected} rejected",
            100 * nonempty / cases.max(1),
            100 * at_tr / cases.max(1),
            self.results.get(),
        );
        assert!(cases > 0);
        if cases < 200 {
            return; // too few for the percentages to be stable
        }
        assert!(
            nonempty * 100 >= cases * 80,
            "{name}: only {nonempty} of {cases} cases compared non-empty results"
        );
        assert!(
            at_tr * 100 >= cases * min_transition_pct,
            "{name}: only {at_tr} of {cases} windows cross a transition"
        );
        assert!(
            rejected * 100 <= cases * 5,
            "{name}: {rejected} cases rejected (of {cases} run)"
        );
    }
}

fn zone() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&ZONES[..])
}

/// Windows across DST transitions: chime's occurrences equal the oracle's
/// brute-force scan.
#[test]
fn nothing_is_skipped() {
    let reach = Reach::default();
    let mut runner = TestRunner::new(config(1024));
    let strategy = (
        any::<u64>(),
        zone(),
        0..3usize,
        0..4usize,
        START_LO..START_HI,
    );
    runner
        .run(&strategy, |(seed, zone, gap, fold, t0)| {
            let placed = place(seed, zone, policy(gap, fold), t0);
            let Some(placed) = placed else {
                Reach::bump(&reach.rejected, 1);
                prop_assume!(false, "no spec drawn from {} fires", seed);
                unreachable!()
            };
            let (both, lo, at_tr) = match placed {
                Placed::AtTransition(b, lo) => (b, lo, true),
                Placed::AtOccurrence(b, lo) => (b, lo, false),
            };
            let window = both.window();
            let ours = both.occurrences(lo, window);
            let scan = both.oracle.scan(lo, lo + window);
            prop_assert_eq!(&ours, &scan, "{}", both.describe(lo, window));
            Reach::bump(&reach.cases, 1);
            Reach::bump(&reach.nonempty, u64::from(!scan.is_empty()));
            Reach::bump(&reach.at_transition, u64::from(at_tr));
            Reach::bump(&reach.results, scan.len() as u64);
            Ok(())
        })
        .unwrap();
    // 2 of the 12 zones have no transition after 1971.
    reach.report_and_check("nothing_is_skipped", 60);
}

/// `next_after` chains (5 steps) equal the oracle's `next_after` chains,
/// half of them starting just before a transition of the zone.
#[test]
fn next_after_agrees_with_the_oracle() {
    let reach = Reach::default();
    let mut runner = TestRunner::new(config(1024));
    let strategy = (
        any::<u64>(),
        zone(),
        0..3usize,
        0..4usize,
        START_LO..START_HI,
        any::<bool>(),
        1i64..7200,
    );
    runner
        .run(&strategy, |(seed, zone, gap, fold, t0, near, back)| {
            let both = Both::new(cron_spec(&mut Rng::new(seed)), zone, policy(gap, fold));
            let t = match both.zone().transitions_after(t0).next() {
                Some(tr) if near => tr - back,
                _ => t0,
            };
            let (mut a, mut b) = (t * 1000, t * 1000);
            let mut n = 0;
            for _ in 0..5 {
                let ours = both
                    .spec
                    .next_after(Timestamp::from_millis(a).unwrap())
                    .map(|x| x.as_millis());
                let theirs = both.oracle.next_after(b);
                prop_assert_eq!(ours, theirs, "{} (step {})", both.describe(t, 0), n);
                let Some(x) = ours else { break };
                prop_assert!(x > a);
                (a, b, n) = (x, x, n + 1);
            }
            Reach::bump(&reach.cases, 1);
            Reach::bump(&reach.nonempty, u64::from(n > 0));
            Reach::bump(&reach.at_transition, u64::from(near && t != t0));
            Reach::bump(&reach.results, n);
            Ok(())
        })
        .unwrap();
    reach.report_and_check("next_after_agrees_with_the_oracle", 25);
}

/// UTC windows just before an occurrence: chime equals the oracle's scan.
#[test]
fn nothing_is_skipped_in_utc() {
    let reach = Reach::default();
    let mut runner = TestRunner::new(config(512));
    runner
        .run(&(any::<u64>(), START_LO..START_HI), |(seed, t0)| {
            let mut rng = Rng::new(seed);
            let both = Both::new(cron_spec(&mut rng), "UTC", DstPolicy::default());
            let window = both.window();
            let Some(n) = both.oracle.next_after(t0 * 1000) else {
                Reach::bump(&reach.rejected, 1);
                prop_assume!(false, "a spec that never fires after {}", t0);
                unreachable!()
            };
            let lo = n / 1000 - rng.range_i64(1, window);
            let ours = both.occurrences(lo, window);
            let scan = both.oracle.scan(lo, lo + window);
            prop_assert_eq!(&ours, &scan, "{}", both.describe(lo, window));
            Reach::bump(&reach.cases, 1);
            Reach::bump(&reach.nonempty, u64::from(!scan.is_empty()));
            Reach::bump(&reach.results, scan.len() as u64);
            Ok(())
        })
        .unwrap();
    reach.report_and_check("nothing_is_skipped_in_utc", 0);
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn every_lies_on_the_grid(
        interval_s in 1i64..200_000,
        offset_frac in 0.0f64..1.0,
        t_ms in (START_LO * 1000)..(START_HI * 1000),
    ) {
        let offset_s = (interval_s as f64 * offset_frac) as i64;
        let text = if offset_s == 0 {
            format!("@every {interval_s}s")
        } else {
            format!("@every {interval_s}s +{offset_s}s")
        };
        let spec = Spec::parse(&text, &SpecOptions::default()).unwrap();
        let (iv, off) = (interval_s * 1000, offset_s * 1000);
        let t = Timestamp::from_millis(t_ms).unwrap();
        let r = spec.next_after(t).unwrap().as_millis();
        prop_assert!(r > t_ms);
        prop_assert_eq!((r - off).rem_euclid(iv), 0, "{} not on the grid", r);
        prop_assert!(r - iv <= t_ms, "{} skips a boundary after {}", r, t_ms);
        // And the grid goes on: the next one is exactly one interval later.
        let r2 = spec.next_after(Timestamp::from_millis(r).unwrap()).unwrap().as_millis();
        prop_assert_eq!(r2 - r, iv);
        // The oracle reads the same grid from the text.
        let o = Oracle::parse(&text, None, DstPolicy::default(), 100).unwrap();
        prop_assert_eq!(o.next_after(t_ms), Some(r));
    }
}
