//! Counting boundaries without walking them: [`Spec::count_between`],
//! [`Spec::nth_from`] and [`Spec::first_at_or_after`].
//!
//! All three are defined by the `next_after` iteration: starting from the
//! first boundary at or after `from`, each next boundary is
//! `next_after(previous)`. Catch-up after a long clock jump must report the
//! exact number of skipped boundaries, and walking them one by one costs one
//! step per boundary (`* * * * * *` over ten years is 315 million steps).
//!
//! - `@every` is a grid: arithmetic.
//! - `@at` is one instant.
//! - cron: the zone is a sequence of constant-offset segments (see
//!   `spec/dst.rs`). Inside one segment the boundaries are the civil matches
//!   of a civil range shifted by the offset, so they are counted per civil
//!   day with bitset popcounts (`cron/count.rs`); the DST policy only moves
//!   the ends of that civil range (fold) or adds the one shifted instant at
//!   the segment's start (gap), exactly as the walk's `search_segment`
//!   decides them.
//!
//! One more rule of the iteration: `next_after` searches only
//! `horizon_years` ahead, so the iteration stops at a boundary followed by a
//! longer gap (a sparse year field, or a tiny horizon). The count follows it
//! by probing the range in windows of half the horizon (see
//! [`Counter::chain_end`]); dense specs need one window per 50 years.

use super::cron::CronSpec;
use super::dst::{FoldPolicy, GapPolicy, LAST_SECS, ZonedCron, horizon_secs, walk_from};
use super::zone::{Segment, ZoneTable};
use super::{Spec, SpecKind};
use crate::time::Timestamp;

/// See [`Spec::count_between`].
pub(super) fn count_between(spec: &Spec, from: Timestamp, until: Timestamp) -> u64 {
    if until < from {
        return 0;
    }
    match &spec.kind {
        SpecKind::Every(e) => e.count_between(from, until),
        SpecKind::At(a) => u64::from(from <= a.at && a.at <= until),
        SpecKind::Cron(c) => Counter::new(c, spec.horizon_years).count(from, until),
    }
}

/// See [`Spec::nth_from`].
pub(super) fn nth_from(spec: &Spec, from: Timestamp, n: u64) -> Option<Timestamp> {
    match &spec.kind {
        SpecKind::Every(e) => e.nth_from(from, n),
        SpecKind::At(a) => (n == 0 && a.at >= from).then_some(a.at),
        SpecKind::Cron(c) => {
            let at = Counter::new(c, spec.horizon_years).nth(ceil_secs(from), n)?;
            Timestamp::from_secs(at).ok()
        }
    }
}

/// See [`Spec::first_at_or_after`].
pub(super) fn first_at_or_after(spec: &Spec, t: Timestamp) -> Option<Timestamp> {
    nth_from(spec, t, 0)
}

/// The first whole second at or after `t`: cron boundaries are whole
/// seconds, and `next_after(t - 1 ms)` starts its search there.
fn ceil_secs(t: Timestamp) -> i64 {
    t.as_millis().div_euclid(1000) + i64::from(t.as_millis().rem_euclid(1000) != 0)
}

/// A cron spec's parts plus its horizon, in UTC seconds throughout.
struct Counter<'a> {
    cron: &'a CronSpec,
    zone: &'a ZoneTable,
    gap: GapPolicy,
    fold: FoldPolicy,
    /// `next_after` finds a boundary at most this many seconds after its
    /// argument plus one second.
    horizon: i64,
}

/// Where the `next_after` iteration ends within a range: boundaries in
/// `[b0, end]` all belong to it; `broken` says that it stops there (a gap
/// longer than the horizon) rather than at the end of the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ChainEnd {
    end: i64,
    broken: bool,
}

impl<'a> Counter<'a> {
    fn new(c: &'a ZonedCron, horizon_years: u32) -> Counter<'a> {
        let (cron, zone, gap, fold) = c.parts();
        Counter {
            cron,
            zone,
            gap,
            fold,
            horizon: horizon_secs(horizon_years),
        }
    }

    /// The first boundary at or after UTC second `from`, searched as
    /// `next_after(from - 1 s)` searches (`from + horizon` at most).
    fn first(&self, from: i64) -> Option<i64> {
        self.next_within(from, from.saturating_add(self.horizon))
    }

    /// The first boundary in `[from, last]`, by the walk itself.
    fn next_within(&self, from: i64, last: i64) -> Option<i64> {
        walk_from(self.cron, self.zone, self.gap, self.fold, from, last).map(|(at, _)| at)
    }

    fn count(&self, from: Timestamp, until: Timestamp) -> u64 {
        let until = until.as_secs();
        match self.first(ceil_secs(from)) {
            Some(b0) if b0 <= until => {
                let end = self.chain_end(b0, until).end;
                self.count_set(b0, end + 1)
            }
            _ => 0,
        }
    }

    /// The boundary `n` places after the first one at or after `from`.
    fn nth(&self, from: i64, n: u64) -> Option<i64> {
        let b0 = self.first(from)?;
        if n == 0 {
            return Some(b0);
        }
        let target = n.checked_add(1)?;
        // Gallop: a span that holds `target` boundaries if the spec is as
        // dense as its matches per day suggest, doubled until it does.
        let spacing = (86_400 / self.cron.per_day().max(1)).max(1);
        let mut span = i64::try_from(n.saturating_mul(spacing)).unwrap_or(i64::MAX);
        loop {
            let hi = b0.saturating_add(span).min(LAST_SECS);
            let chain = self.chain_end(b0, hi);
            let total = self.count_set(b0, chain.end + 1);
            if total >= target {
                return Some(self.bisect(b0, chain.end, target));
            }
            if chain.broken || hi == LAST_SECS {
                return None;
            }
            span = span.saturating_mul(2);
        }
    }

    /// The smallest `x` in `(b0, hi]` with `target` boundaries in
    /// `[b0, x]`, given that `[b0, hi]` holds at least `target` (and `b0`
    /// is a boundary, `target >= 2`). Each probe counts only the half it
    /// splits off, so the probes together cost about two counts of the
    /// range.
    fn bisect(&self, b0: i64, hi: i64, target: u64) -> i64 {
        let (mut lo, mut hi, mut at_lo) = (b0, hi, 1u64);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let at_mid = at_lo + self.count_set(lo + 1, mid + 1);
            if at_mid >= target {
                hi = mid;
            } else {
                (lo, at_lo) = (mid, at_mid);
            }
        }
        hi
    }

    /// How far the `next_after` iteration from boundary `b0` reaches within
    /// `[b0, until]`.
    ///
    /// Invariant: every boundary in `[b0, w)` belongs to the iteration, and
    /// the last of them, `p`, is at least `w - half - 1`. The next boundary
    /// `n >= w` belongs to it iff `n <= p + 1 + horizon`; when
    /// `n <= w + half` that holds (as `2 half + 1 <= horizon + 1`), else it
    /// is checked exactly by looking for a boundary in
    /// `[n - 1 - horizon, w)`. Each step moves `w` on by more than `half`.
    fn chain_end(&self, b0: i64, until: i64) -> ChainEnd {
        let half = self.horizon / 2;
        if half == 0 {
            return self.run_end(b0, until);
        }
        let mut w = b0 + 1;
        loop {
            if w > until {
                return ChainEnd {
                    end: until,
                    broken: false,
                };
            }
            let reach = w.saturating_add(self.horizon);
            let Some(n) = self.next_within(w, reach.min(until)) else {
                // Nothing up to `until`, or nothing within reach of `p`.
                return ChainEnd {
                    end: w - 1,
                    broken: reach < until,
                };
            };
            if n > w + half {
                let probe = (n - 1 - self.horizon).max(b0);
                if self.next_within(probe, w - 1).is_none() {
                    return ChainEnd {
                        end: w - 1,
                        broken: true,
                    };
                }
            }
            w = n.saturating_add(half + 1);
        }
    }

    /// [`Counter::chain_end`] for a horizon under two seconds (0 years):
    /// `next_after(b)` then finds only `b + 1 s`, so the iteration is the
    /// run of consecutive boundaries from `b0`, found by galloping and
    /// bisecting on counts.
    fn run_end(&self, b0: i64, until: i64) -> ChainEnd {
        let cap = until - b0 + 1;
        let full = |k: i64| self.count_set(b0, b0 + k) == k.unsigned_abs();
        let (mut good, mut step) = (1i64, 1i64);
        let bad = loop {
            let next = good.saturating_add(step).min(cap);
            if next == good {
                return ChainEnd {
                    end: until,
                    broken: false,
                };
            }
            if !full(next) {
                break next;
            }
            (good, step) = (next, step.saturating_mul(2));
        };
        let mut bad = bad;
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if full(mid) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        ChainEnd {
            end: b0 + good - 1,
            broken: true,
        }
    }

    /// Boundaries in UTC seconds `[u, v)` with no horizon: one count per
    /// offset segment.
    fn count_set(&self, mut u: i64, v: i64) -> u64 {
        let v = v.min(LAST_SECS + 1);
        let mut n = 0;
        while u < v {
            let seg = self.zone.segment_at(u);
            if seg.end <= u {
                break; // unreachable: a segment contains its lookup second
            }
            let end = seg.end.min(v);
            n += self.count_segment(&seg, u, end);
            u = end;
        }
        n
    }

    /// Boundaries in UTC seconds `[u, v)` of one segment
    /// (`seg.start <= u < v <= seg.end`): `search_segment` in `spec/dst.rs`
    /// as a count. The civil range `[u + offset, v + offset)` loses the
    /// second pass of a fold before the segment under `fold: first` and the
    /// first pass of a fold after it under `fold: last`; under `gap: shift`
    /// the segment's first instant is a boundary when a civil time in the
    /// gap before it matches (once, even if it also matches itself).
    fn count_segment(&self, seg: &Segment, u: i64, v: i64) -> u64 {
        let off = i64::from(seg.offset);
        let prev = i64::from(seg.prev_offset);
        let next = i64::from(seg.next_offset);
        let (mut civil_lo, mut civil_hi) = (u + off, v + off);
        if self.fold == FoldPolicy::First && prev > off {
            civil_lo = civil_lo.max(seg.start + prev);
        }
        if self.fold == FoldPolicy::Last && next < off && seg.end != i64::MAX {
            civil_hi = civil_hi.min(seg.end + next);
        }
        let mut n = self.cron.count_civil(civil_lo, civil_hi);
        let shifted = u == seg.start
            && prev < off
            && self.gap == GapPolicy::Shift
            && self
                .cron
                .next_civil(seg.start + prev, seg.start + off)
                .is_some();
        if shifted {
            let own = seg.start + off;
            let counted = civil_lo <= own && own < civil_hi && self.cron.matches_civil(own);
            n += u64::from(!counted);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{DstPolicy, SpecOptions};

    fn spec(text: &str, tz: &str, dst: DstPolicy, horizon_years: u32) -> Spec {
        let opts = SpecOptions {
            tz: Some(tz.to_string()),
            dst,
            horizon_years,
            ..SpecOptions::default()
        };
        Spec::parse(text, &opts).unwrap()
    }

    fn ts(s: &str) -> Timestamp {
        let t: jiff::Timestamp = s.parse().unwrap();
        Timestamp::from_millis(t.as_millisecond()).unwrap()
    }

    /// The definition: iterate `next_after` from the first boundary.
    fn brute(s: &Spec, from: Timestamp, until: Timestamp) -> Vec<Timestamp> {
        let mut out = Vec::new();
        let mut next = match from.checked_add_ms(-1) {
            Some(before) => s.next_after(before),
            None => s.first_at_or_after(from),
        };
        while let Some(b) = next.filter(|&b| b <= until) {
            out.push(b);
            next = s.next_after(b);
        }
        out
    }

    fn check(s: &Spec, from: Timestamp, until: Timestamp) -> usize {
        let want = brute(s, from, until);
        let n = want.len() as u64;
        assert_eq!(
            s.count_between(from, until),
            n,
            "{s:?} {from:?}..={until:?}"
        );
        for (k, &b) in want.iter().enumerate().step_by(want.len() / 7 + 1) {
            assert_eq!(s.nth_from(from, k as u64), Some(b), "{s:?} {from:?} #{k}");
        }
        if let Some(&last) = want.last() {
            assert_eq!(
                s.nth_from(from, n),
                s.next_after(last),
                "{s:?} after {last:?}"
            );
        }
        want.len()
    }

    const AUTO: DstPolicy = DstPolicy {
        gap: None,
        fold: None,
    };

    #[test]
    fn epoch_is_a_boundary() {
        let utc = |text: &str| spec(text, "UTC", AUTO, 100);
        let at = |ms| Some(Timestamp::from_millis(ms).unwrap());
        assert_eq!(
            utc("@every 1h +15m").first_at_or_after(Timestamp::MIN),
            at(900_000)
        );
        assert_eq!(utc("@every 1h").first_at_or_after(Timestamp::MIN), at(0));
        assert_eq!(
            utc("0 12 * * *").first_at_or_after(Timestamp::MIN),
            at(43_200_000)
        );
        assert_eq!(utc("0 0 * * *").first_at_or_after(Timestamp::MIN), at(0));
        let day = Timestamp::from_millis(86_399_999).unwrap();
        assert_eq!(utc("0 0 * * *").count_between(Timestamp::MIN, day), 1);
        assert_eq!(
            utc("0 12 * * *").nth_from(Timestamp::MIN, 1),
            at(129_600_000)
        );
        // New York is at -5 h at the epoch: local midnight is 05:00Z.
        let ny = spec("0 0 * * *", "America/New_York", AUTO, 100);
        assert_eq!(ny.first_at_or_after(Timestamp::MIN), at(18_000_000));
    }

    #[test]
    fn at_is_one_instant() {
        let s = spec("@at 2026-03-08T02:30", "America/New_York", AUTO, 100);
        let at = ts("2026-03-08T07:00:00Z");
        assert_eq!(s.count_between(Timestamp::MIN, Timestamp::MAX), 1);
        assert_eq!(s.count_between(at, at), 1);
        assert_eq!(s.count_between(at.saturating_add_ms(1), Timestamp::MAX), 0);
        assert_eq!(s.nth_from(Timestamp::MIN, 0), Some(at));
        assert_eq!(s.nth_from(Timestamp::MIN, 1), None);
        assert_eq!(s.first_at_or_after(at.saturating_add_ms(1)), None);
    }

    #[test]
    fn dst_days_under_every_policy() {
        let zones = ["America/New_York", "Europe/London", "Australia/Lord_Howe"];
        let specs = [
            "30 2 * * *",
            "0,30 1,2 * * *",
            "*/7 * * * *",
            "*/20 * 0-3 * * *",
            "0 30 1 * * *",
        ];
        let (from, until) = (ts("2026-03-01T00:00:00Z"), ts("2026-11-08T00:00:00Z"));
        for zone in zones {
            for text in specs {
                for gap in [None, Some(GapPolicy::Shift), Some(GapPolicy::Skip)] {
                    for fold in [None, Some(FoldPolicy::First), Some(FoldPolicy::Last)]
                        .into_iter()
                        .chain([Some(FoldPolicy::Both)])
                    {
                        let s = spec(text, zone, DstPolicy { gap, fold }, 100);
                        assert!(check(&s, from, until) > 0, "{zone} {text}");
                    }
                }
            }
        }
    }

    #[test]
    fn ten_years_of_seconds() {
        let s = spec("* * * * * *", "America/New_York", AUTO, 100);
        let (from, until) = (ts("2026-01-01T00:00:00Z"), ts("2035-12-31T23:59:59.999Z"));
        // Elapsed seconds: the gap hours do not exist, folds run twice.
        let secs = (until.as_millis() + 1 - from.as_millis()) / 1000;
        assert_eq!(s.count_between(from, until), secs.unsigned_abs());
        let utc = spec("* * * * * *", "UTC", AUTO, 100);
        assert_eq!(utc.count_between(from, until), secs.unsigned_abs());
        // Under `fold: first` the 10 second passes are missing.
        let first = DstPolicy {
            gap: None,
            fold: Some(FoldPolicy::First),
        };
        let s = spec("* * * * * *", "America/New_York", first, 100);
        assert_eq!(
            s.count_between(from, until),
            secs.unsigned_abs() - 10 * 3600
        );
        let mid = ts("2031-07-04T12:00:00Z");
        let k = s.count_between(from, mid) - 1;
        assert_eq!(s.nth_from(from, k), Some(mid));
        assert_eq!(s.nth_from(from, k + 1), s.next_after(mid));
    }

    #[test]
    fn the_whole_range_is_bounded() {
        let s = spec("* * * * * *", "America/New_York", AUTO, 100);
        let all = s.count_between(Timestamp::MIN, Timestamp::MAX);
        // Every second from the epoch on (civil 1969-12-31T19:00 there).
        assert_eq!(all, (Timestamp::MAX.as_secs() + 1).unsigned_abs());
        let last = Timestamp::from_secs(Timestamp::MAX.as_secs()).ok();
        assert_eq!(s.nth_from(Timestamp::MIN, all - 1), last);
        assert_eq!(s.nth_from(Timestamp::MIN, all), None);
        // 2007 leap years from 1972 to 9996, less 60 centuries not
        // divisible by 400.
        let leap = spec("0 0 29 2 *", "Europe/London", AUTO, 100);
        assert_eq!(check(&leap, Timestamp::MIN, Timestamp::MAX), 1947);
    }

    #[test]
    fn the_horizon_ends_the_iteration() {
        // 2035 to 2140 is more than a 100-year horizon: next_after stops.
        let s = spec("0 0 0 1 1 * 2030,2035,2140", "UTC", AUTO, 100);
        assert_eq!(check(&s, Timestamp::MIN, Timestamp::MAX), 2);
        assert_eq!(
            s.count_between(ts("2036-01-01T00:00:00Z"), Timestamp::MAX),
            0
        );
        assert_eq!(
            s.count_between(ts("2040-01-01T00:00:00Z"), Timestamp::MAX),
            1
        );
        assert_eq!(s.nth_from(Timestamp::MIN, 2), None);
        let s = spec("0 0 0 1 1 * 2030,2035,2140", "UTC", AUTO, 120);
        assert_eq!(check(&s, Timestamp::MIN, Timestamp::MAX), 3);
        // A one-year horizon is 365.2425 days: the 366 days after
        // 1972-01-01 are too many for `0 0 1 1 *`.
        let s = spec("0 0 1 1 *", "America/New_York", AUTO, 1);
        assert_eq!(check(&s, Timestamp::MIN, Timestamp::MAX), 3);
        for text in ["0 0 1 1 *", "0 0 29 2 *", "0 0 0 * * * 2026-2030,2032"] {
            for h in [1, 2, 5] {
                let s = spec(text, "America/New_York", AUTO, h);
                check(&s, Timestamp::MIN, ts("2100-01-01T00:00:00Z"));
            }
        }
    }

    #[test]
    fn a_zero_year_horizon_is_a_run_of_seconds() {
        let s = spec("* 0-10 12 * * *", "UTC", AUTO, 0);
        let from = ts("2026-05-05T12:00:00Z");
        assert_eq!(check(&s, from, Timestamp::MAX), 660);
        assert_eq!(
            s.count_between(from.saturating_add_ms(1), Timestamp::MAX),
            659
        );
        assert_eq!(
            s.count_between(from.saturating_add_ms(-1), Timestamp::MAX),
            660
        );
        assert_eq!(
            s.count_between(from.saturating_add_ms(-1000), Timestamp::MAX),
            0
        );
        let s = spec("*/2 * * * * *", "UTC", AUTO, 0);
        assert_eq!(check(&s, from, Timestamp::MAX), 1);
    }
}
