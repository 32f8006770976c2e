//! Property tests of `Spec::next_after` over random valid specs, zones and
//! start times:
//!
//! - the result is strictly later than the start;
//! - the result matches the spec in the zone's civil time (except a
//!   fixed-time spec shifted out of a spring-forward gap, which lands
//!   exactly on the transition);
//! - nothing is skipped: iterating `next_after` over a short window gives
//!   exactly what a brute-force scan (minute by minute for 5 fields, second
//!   by second for 6 and 7) finds. For specs that are not fixed-time the
//!   scan runs across DST transitions too (they run on elapsed time: a gap
//!   time does not exist, a repeated time matches on both passes); for
//!   fixed-time specs only windows without a transition are compared;
//! - `@every` results lie on the epoch-aligned grid, right after the start.

use chime_core::Timestamp;
use chime_core::testing::CronSpec;
use chime_core::{Spec, SpecOptions};
use chime_tests::specgen::{Rng, cron_spec};
use proptest::prelude::*;

const ZONES: [&str; 10] = [
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
];

/// 1971-01-01T00:00:00Z .. 2038-01-01T00:00:00Z.
const START_LO: i64 = 31_536_000;
const START_HI: i64 = 2_145_916_800;

struct Zoned {
    spec: Spec,
    cron: CronSpec,
    tz: jiff::tz::TimeZone,
    fields: usize,
}

fn zoned(seed: u64, zone: &str) -> Zoned {
    let text = cron_spec(&mut Rng::new(seed));
    let opts = SpecOptions {
        tz: Some(zone.to_string()),
        ..SpecOptions::default()
    };
    Zoned {
        spec: Spec::parse(&text.text, &opts).unwrap(),
        cron: CronSpec::parse(&text.text).unwrap().cron,
        tz: jiff::tz::TimeZone::get(zone).unwrap(),
        fields: text.fields,
    }
}

impl Zoned {
    fn offset(&self, secs: i64) -> i64 {
        let ts = jiff::Timestamp::from_second(secs).unwrap();
        i64::from(self.tz.to_offset(ts).seconds())
    }

    /// Whether the instant `secs` matches the spec on the wall clock.
    fn matches(&self, secs: i64) -> bool {
        self.cron.matches_civil(secs + self.offset(secs))
    }

    /// The first instant after `t` where the zone's offset changes.
    fn next_transition(&self, t: i64) -> Option<i64> {
        let ts = jiff::Timestamp::from_second(t).unwrap();
        let before = self.tz.to_offset(ts);
        self.tz
            .following(ts)
            .take(8)
            .find(|tr| tr.offset() != before)
            .map(|tr| tr.timestamp().as_second())
    }

    /// Whether the offset changes anywhere in `(lo, hi]`.
    fn has_transition(&self, lo: i64, hi: i64) -> bool {
        self.next_transition(lo).is_some_and(|tr| tr <= hi)
    }

    /// chime's occurrences in `(t, t + window]`.
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

    /// A brute-force scan of `(t, t + window]`, minute by minute for
    /// 5-field specs (whose second field is `0`), else second by second.
    fn scan(&self, t: i64, window: i64) -> Vec<i64> {
        let step = if self.fields == 5 { 60 } else { 1 };
        let first = (t.div_euclid(step) + 1) * step;
        (0..)
            .map(|k| first + k * step)
            .take_while(|&u| u <= t + window)
            .filter(|&u| self.matches(u))
            .collect()
    }
}

fn zone() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&ZONES[..])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn next_is_later_and_matches(seed in any::<u64>(), zone in zone(), t in START_LO..START_HI) {
        let z = zoned(seed, zone);
        let mut at = Timestamp::from_secs(t).unwrap();
        for _ in 0..5 {
            let Some(next) = z.spec.next_after(at) else { break };
            prop_assert!(next > at, "{next:?} <= {at:?}");
            let r = next.as_secs();
            if !z.matches(r) {
                // Only a fixed-time spec shifted out of a gap: exactly at a
                // transition where the offset grows.
                let shifted = z.spec.is_fixed_time() && z.offset(r - 1) < z.offset(r);
                prop_assert!(shifted, "{r} does not match and is not a gap shift");
            }
            at = next;
        }
    }

    #[test]
    fn nothing_is_skipped(
        seed in any::<u64>(),
        zone in zone(),
        t in START_LO..START_HI,
        near in any::<bool>(),
        back in 0i64..86_400,
    ) {
        let z = zoned(seed, zone);
        // Half the cases start up to a day before the zone's next
        // transition, so windows cross gaps and folds.
        let t = match z.next_transition(t) {
            Some(tr) if near && tr - back > START_LO => tr - back,
            _ => t,
        };
        // Two days minute by minute; three hours second by second.
        let window = if z.fields == 5 { 2 * 86_400 } else { 3 * 3600 };
        if z.spec.is_fixed_time() && z.has_transition(t, t + window) {
            // Gap shifts and single folds are checked by the scenario tests.
            return Ok(());
        }
        prop_assert_eq!(z.occurrences(t, window), z.scan(t, window));
    }

    #[test]
    fn nothing_is_skipped_in_utc(seed in any::<u64>(), t in START_LO..START_HI) {
        let z = zoned(seed, "UTC");
        let window = if z.fields == 5 { 3 * 86_400 } else { 3 * 3600 };
        prop_assert_eq!(z.occurrences(t, window), z.scan(t, window));
    }

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
    }
}
