//! DST policy and the walk over a zone's offset segments.
//!
//! A zone is a piecewise-constant UTC offset. Within one segment civil time
//! is `utc + offset`, so the next occurrence in that segment is one
//! `next_civil` search over the segment's civil range; then the walk steps
//! to the next segment. At a transition where the offset grows by `g` (a
//! gap), civil times in `[end + before, end + before + g)` do not exist; where
//! it shrinks by `f` (a fold), the last `f` seconds of civil time before the
//! transition repeat at the start of the next segment. The policy decides
//! what happens to matches there (see `docs/dst.md`).

use super::cron::CronSpec;
use super::tzdb::TzDatabase;
use super::zone::{Segment, ZoneTable};
use super::{DstNote, SpecError, SpecOptions};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What to do with cron times in a spring-forward gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum GapPolicy {
    /// Fire once at the first instant after the gap.
    Shift,
    /// Do not fire: the civil time does not exist that day.
    Skip,
}

/// What to do with cron times in a fall-back (repeated) hour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum FoldPolicy {
    /// Fire on the first pass only.
    First,
    /// Fire on the second pass only.
    Last,
    /// Fire on both passes.
    Both,
}

/// DST handling; a `None` side means `auto` (see `docs/spec.md`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DstPolicy {
    /// Gap override; `None` = auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<GapPolicy>,
    /// Fold override; `None` = auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fold: Option<FoldPolicy>,
}

impl DstPolicy {
    /// The policy in force for a spec: `auto` resolves to shift + first for
    /// fixed-time specs (croner, Vixie) and skip + both for the rest (they
    /// run on elapsed time).
    pub fn effective(self, fixed_time: bool) -> (GapPolicy, FoldPolicy) {
        let (gap, fold) = if fixed_time {
            (GapPolicy::Shift, FoldPolicy::First)
        } else {
            (GapPolicy::Skip, FoldPolicy::Both)
        };
        (self.gap.unwrap_or(gap), self.fold.unwrap_or(fold))
    }
}

/// Finds matching civil (local) seconds; implemented by [`CronSpec`].
pub(crate) trait CivilMatcher {
    /// The first matching local second in `[from, limit)`.
    fn next_civil(&self, from: i64, limit: i64) -> Option<i64>;
}

impl CivilMatcher for CronSpec {
    fn next_civil(&self, from: i64, limit: i64) -> Option<i64> {
        CronSpec::next_civil(self, from, limit)
    }
}

/// A cron spec bound to a zone and an effective DST policy.
#[derive(Clone, Debug)]
pub(crate) struct ZonedCron {
    cron: CronSpec,
    zone: Arc<ZoneTable>,
    gap: GapPolicy,
    fold: FoldPolicy,
}

impl ZonedCron {
    /// Parses cron text; the zone is `opts.tz`, else the `CRON_TZ=`/`TZ=`
    /// prefix, else UTC. Both given and naming different zones is an error.
    #[inline]
    pub(crate) fn parse(
        text: &str,
        opts: &SpecOptions,
        db: &TzDatabase,
    ) -> Result<ZonedCron, SpecError> {
        let parsed = CronSpec::parse(text)?;
        let zone = match (&opts.tz, &parsed.tz) {
            (None, None) => ZoneTable::utc(),
            (Some(name), None) | (None, Some(name)) => db.zone(name)?,
            (Some(opt), Some(prefix)) => {
                let a = db.zone(opt)?;
                let b = db.zone(prefix)?;
                if !a.name().eq_ignore_ascii_case(b.name()) {
                    return Err(SpecError::invalid(format!(
                        "conflicting time zones: the spec says {prefix:?} but tz is {opt:?}"
                    )));
                }
                a
            }
        };
        // The minimum cadence applies to cron as to `@every`, measured
        // from the expression's tightest gap (whole seconds: a minimum of
        // a second or less never refuses a cron spec).
        let min_ms = opts.min_interval_ms.max(1);
        if let Some(gap) = parsed.cron.gap_below((min_ms + 999) / 1000)
            && gap * 1000 < min_ms
        {
            return Err(SpecError::IntervalTooShort {
                interval_ms: gap * 1000,
                min_ms,
            });
        }
        let (gap, fold) = opts.dst.effective(parsed.cron.is_fixed_time());
        Ok(ZonedCron {
            cron: parsed.cron,
            zone,
            gap,
            fold,
        })
    }

    /// The first occurrence strictly after `t`, at a whole second, with a
    /// DST note; `None` beyond `horizon_years` or year 9999.
    pub(crate) fn next_after(
        &self,
        t: Timestamp,
        horizon_years: u32,
    ) -> Option<(Timestamp, Option<DstNote>)> {
        walk(
            &self.cron,
            &self.zone,
            self.gap,
            self.fold,
            t,
            horizon_years,
        )
    }

    pub(crate) fn is_fixed_time(&self) -> bool {
        self.cron.is_fixed_time()
    }

    pub(crate) fn zone_name(&self) -> &str {
        self.zone.name()
    }

    pub(crate) fn zone_arc(&self) -> Arc<ZoneTable> {
        Arc::clone(&self.zone)
    }

    /// The parts counting needs: fields, zone and the effective policies.
    pub(crate) fn parts(&self) -> (&CronSpec, &ZoneTable, GapPolicy, FoldPolicy) {
        (&self.cron, &self.zone, self.gap, self.fold)
    }
}

/// The last second of year 9999 (UTC).
pub(crate) const LAST_SECS: i64 = Timestamp::MAX.as_millis() / 1000;

/// Seconds in an average Gregorian year (146,097 days / 400).
const YEAR_SECS: i64 = 31_556_952;

/// Upper bound on segments visited by one walk: two transitions a year for
/// 8,030 years, with room to spare. Real walks stop far earlier.
const MAX_SEGMENTS: usize = 40_000;

/// The segment walk: first instant strictly after `t` whose civil time in
/// `zone` matches, under the gap and fold policies.
pub(crate) fn walk<M: CivilMatcher + ?Sized>(
    m: &M,
    zone: &ZoneTable,
    gap: GapPolicy,
    fold: FoldPolicy,
    t: Timestamp,
    horizon_years: u32,
) -> Option<(Timestamp, Option<DstNote>)> {
    let from = t.as_secs() + 1;
    let last = from
        .saturating_add(horizon_secs(horizon_years))
        .min(LAST_SECS);
    let (secs, note) = walk_from(m, zone, gap, fold, from, last)?;
    Some((Timestamp::from_secs(secs).ok()?, note))
}

/// A horizon in whole years as seconds (average Gregorian years), the way
/// [`walk`] measures it.
pub(crate) fn horizon_secs(horizon_years: u32) -> i64 {
    i64::from(horizon_years).saturating_mul(YEAR_SECS)
}

/// The segment walk over UTC seconds: the first occurrence in
/// `[from, last]` (`last` at most the end of year 9999), as UTC seconds.
/// [`walk`] is this with `from = t + 1 s` and `last = from + horizon`;
/// counting calls it directly, also from the epoch itself.
pub(crate) fn walk_from<M: CivilMatcher + ?Sized>(
    m: &M,
    zone: &ZoneTable,
    gap: GapPolicy,
    fold: FoldPolicy,
    from: i64,
    last: i64,
) -> Option<(i64, Option<DstNote>)> {
    let last = last.min(LAST_SECS);
    let mut u = from;
    for _ in 0..MAX_SEGMENTS {
        if u > last {
            return None;
        }
        let seg = zone.segment_at(u);
        if let Some(hit) = search_segment(m, &seg, gap, fold, u, last) {
            return Some(hit);
        }
        if seg.end <= u || seg.end == i64::MAX {
            return None;
        }
        u = skip_ahead(m, zone, seg.end, last)?;
    }
    None
}

/// Where the walk may resume after a segment without a match: a sparse spec
/// (`0 0 29 2 *`) would otherwise search every DST segment on the way to its
/// next match. Any occurrence at UTC `x >= u` comes from a civil match `c`
/// with `c >= u + min_offset` and `x >= c - max_offset` (a gap shift lands
/// on the transition, which is after `c - max_offset` too), so the first
/// civil match `cand` from `u + min_offset` bounds `x >= cand - max_offset`.
fn skip_ahead<M: CivilMatcher + ?Sized>(m: &M, zone: &ZoneTable, u: i64, last: i64) -> Option<i64> {
    let (lo, hi) = zone.offset_range();
    let (lo, hi) = (i64::from(lo), i64::from(hi));
    let cand = m.next_civil(u + lo, last.saturating_add(1).saturating_add(hi))?;
    Some(u.max(cand - hi))
}

/// Searches UTC seconds `[u, min(seg.end, last + 1))` of one segment, where
/// `u >= seg.start`, plus the gap at `seg.start` when `u` is at it.
fn search_segment<M: CivilMatcher + ?Sized>(
    m: &M,
    seg: &Segment,
    gap: GapPolicy,
    fold: FoldPolicy,
    u: i64,
    last: i64,
) -> Option<(i64, Option<DstNote>)> {
    let off = i64::from(seg.offset);
    let prev = i64::from(seg.prev_offset);
    let next = i64::from(seg.next_offset);
    let at_start = u == seg.start;
    // Gap before this segment: civil [start + prev, start + off) is skipped.
    if at_start && prev < off && gap == GapPolicy::Shift {
        let (lo, hi) = (seg.start + prev, seg.start + off);
        if m.next_civil(lo, hi).is_some() {
            return Some((seg.start, Some(DstNote::ShiftedFromGap)));
        }
    }
    let utc_hi = seg.end.min(last.saturating_add(1));
    let mut civil_lo = u + off;
    let mut civil_hi = utc_hi.saturating_add(off);
    // Fold before this segment: civil [start + off, start + prev) is the
    // second pass of times the previous segment already covered.
    let second_pass_hi = if prev > off {
        seg.start + prev
    } else {
        i64::MIN
    };
    if fold == FoldPolicy::First {
        civil_lo = civil_lo.max(second_pass_hi);
    }
    // Fold after this segment: civil [end + next, end + off) repeats later.
    let first_pass_lo = if next < off && seg.end != i64::MAX {
        seg.end + next
    } else {
        i64::MAX
    };
    if fold == FoldPolicy::Last {
        civil_hi = civil_hi.min(first_pass_lo);
    }
    if civil_lo >= civil_hi {
        return None;
    }
    let local = m.next_civil(civil_lo, civil_hi)?;
    let note = if local < second_pass_hi {
        Some(DstNote::SecondPass)
    } else if local >= first_pass_lo {
        Some(DstNote::FirstPass)
    } else {
        None
    };
    Some((local - off, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::calendar::Civil;

    /// Matches local seconds whose `(hour, minute, second)` is listed.
    struct Times(Vec<(u32, u32, u32)>);

    impl CivilMatcher for Times {
        fn next_civil(&self, from: i64, limit: i64) -> Option<i64> {
            let day_start = from.div_euclid(86_400) * 86_400;
            let mut day = day_start;
            while day < limit {
                let mut best: Option<i64> = None;
                for &(h, m, s) in &self.0 {
                    let c = day + i64::from(h * 3600 + m * 60 + s);
                    if c >= from && c < limit && best.is_none_or(|b| c < b) {
                        best = Some(c);
                    }
                }
                if best.is_some() {
                    return best;
                }
                day += 86_400;
            }
            None
        }
    }

    /// Every minute of every day (a wildcard matcher).
    struct EveryMinute;

    impl CivilMatcher for EveryMinute {
        fn next_civil(&self, from: i64, limit: i64) -> Option<i64> {
            let c = from.div_euclid(60) * 60;
            let c = if c < from { c + 60 } else { c };
            (c < limit).then_some(c)
        }
    }

    fn ts(s: &str) -> Timestamp {
        let dt: jiff::civil::DateTime = s.trim_end_matches('Z').parse().unwrap();
        let c = Civil {
            year: dt.year().into(),
            month: dt.month().unsigned_abs().into(),
            day: dt.day().unsigned_abs().into(),
            hour: dt.hour().unsigned_abs().into(),
            minute: dt.minute().unsigned_abs().into(),
            second: dt.second().unsigned_abs().into(),
        };
        Timestamp::from_secs(c.to_local_secs()).unwrap()
    }

    fn run<M: CivilMatcher>(
        m: &M,
        zone: &str,
        gap: GapPolicy,
        fold: FoldPolicy,
        from: &str,
        until: &str,
    ) -> Vec<(String, Option<DstNote>)> {
        let zone = ZoneTable::get(zone).unwrap();
        let until = ts(until);
        let mut t = ts(from);
        let mut out = Vec::new();
        for _ in 0..1000 {
            match walk(m, &zone, gap, fold, t, 100) {
                Some((at, note)) if at < until => {
                    out.push((at.to_string(), note));
                    t = at;
                }
                _ => break,
            }
        }
        out
    }

    fn at(list: &[(String, Option<DstNote>)]) -> Vec<&str> {
        list.iter().map(|(s, _)| &s[11..19]).collect()
    }

    const NY: &str = "America/New_York";
    use DstNote::*;
    use FoldPolicy::{Both, First, Last};
    use GapPolicy::{Shift, Skip};

    #[test]
    fn auto_policy_resolution() {
        let auto = DstPolicy::default();
        assert_eq!(auto.effective(true), (Shift, First));
        assert_eq!(auto.effective(false), (Skip, Both));
        let p = DstPolicy {
            gap: Some(Skip),
            fold: None,
        };
        assert_eq!(p.effective(true), (Skip, First));
    }

    #[test]
    fn spring_gap_fixed_time() {
        let m = Times(vec![(2, 30, 0)]);
        let day = ("2026-03-07T12:00:00Z", "2026-03-09T00:00:00Z");
        let shift = run(&m, NY, Shift, First, day.0, day.1);
        assert_eq!(shift.len(), 1);
        assert_eq!(
            shift[0],
            ("2026-03-08T07:00:00.000Z".into(), Some(ShiftedFromGap))
        );
        assert!(run(&m, NY, Skip, First, day.0, day.1).is_empty());
        // Starting exactly one second before the transition still shifts.
        let just = run(&m, NY, Shift, First, "2026-03-08T06:59:59Z", day.1);
        assert_eq!(just.len(), 1);
        // Starting at the transition does not.
        assert!(run(&m, NY, Shift, First, "2026-03-08T07:00:00Z", day.1).is_empty());
    }

    #[test]
    fn spring_gap_several_times_fire_once() {
        // 02:00 and 02:30 both shift to 07:00Z; 03:00 local also is 07:00Z.
        let m = Times(vec![(2, 0, 0), (2, 30, 0), (3, 0, 0)]);
        let got = run(
            &m,
            NY,
            Shift,
            Both,
            "2026-03-08T05:00:00Z",
            "2026-03-08T12:00:00Z",
        );
        assert_eq!(
            got,
            vec![("2026-03-08T07:00:00.000Z".into(), Some(ShiftedFromGap))]
        );
        let skip = run(
            &m,
            NY,
            Skip,
            Both,
            "2026-03-08T05:00:00Z",
            "2026-03-08T12:00:00Z",
        );
        assert_eq!(skip, vec![("2026-03-08T07:00:00.000Z".into(), None)]);
    }

    #[test]
    fn wildcard_through_the_gap() {
        let got = run(
            &EveryMinute,
            NY,
            Skip,
            Both,
            "2026-03-08T06:58:00Z",
            "2026-03-08T07:02:00Z",
        );
        assert_eq!(at(&got), ["06:59:00", "07:00:00", "07:01:00"]);
        assert!(got.iter().all(|(_, n)| n.is_none()));
        let shifted = run(
            &EveryMinute,
            NY,
            Shift,
            Both,
            "2026-03-08T06:58:00Z",
            "2026-03-08T07:02:00Z",
        );
        assert_eq!(shifted[1].1, Some(ShiftedFromGap));
        assert_eq!(at(&shifted), ["06:59:00", "07:00:00", "07:01:00"]);
    }

    #[test]
    fn fall_fold_fixed_time() {
        let m = Times(vec![(1, 30, 0)]);
        let day = ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z");
        let first = run(&m, NY, Shift, First, day.0, day.1);
        assert_eq!(
            first,
            vec![("2026-11-01T05:30:00.000Z".into(), Some(FirstPass))]
        );
        let last = run(&m, NY, Shift, Last, day.0, day.1);
        assert_eq!(
            last,
            vec![("2026-11-01T06:30:00.000Z".into(), Some(SecondPass))]
        );
        let both = run(&m, NY, Shift, Both, day.0, day.1);
        assert_eq!(at(&both), ["05:30:00", "06:30:00"]);
        // Starting inside the second pass under `first`: nothing that day.
        assert!(run(&m, NY, Shift, First, "2026-11-01T06:10:00Z", day.1).is_empty());
    }

    #[test]
    fn fall_fold_list_fires_six_times() {
        let m = Times(vec![(1, 0, 0), (1, 20, 0), (1, 40, 0)]);
        let got = run(
            &m,
            NY,
            Skip,
            Both,
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
        );
        assert_eq!(
            at(&got),
            [
                "05:00:00", "05:20:00", "05:40:00", "06:00:00", "06:20:00", "06:40:00"
            ]
        );
        let notes: Vec<_> = got.iter().map(|(_, n)| *n).collect();
        assert_eq!(notes[..3], [Some(FirstPass); 3]);
        assert_eq!(notes[3..], [Some(SecondPass); 3]);
    }

    #[test]
    fn lord_howe_half_hour() {
        // Lord Howe: +10:30 standard, +11 DST. 2026-10-04 02:00 -> 02:30.
        let m = Times(vec![(2, 15, 0)]);
        let got = run(
            &m,
            "Australia/Lord_Howe",
            Shift,
            First,
            "2026-10-03T00:00:00Z",
            "2026-10-04T00:00:00Z",
        );
        assert_eq!(
            got,
            vec![("2026-10-03T15:30:00.000Z".into(), Some(ShiftedFromGap))]
        );
    }

    #[test]
    fn utc_and_horizon() {
        let m = Times(vec![(0, 0, 0)]);
        let zone = ZoneTable::utc();
        let t = ts("2026-01-01T00:00:00Z");
        let (next, note) = walk(&m, &zone, Shift, First, t, 1).unwrap();
        assert_eq!(next.to_string(), "2026-01-02T00:00:00.000Z");
        assert_eq!(note, None);
        let never = Times(vec![]);
        assert_eq!(walk(&never, &zone, Shift, First, t, 100), None);
        let end = ts("9999-12-31T00:00:00Z");
        assert_eq!(walk(&m, &zone, Shift, First, end, 100), None);
        // Horizon 0 years: only `t + 1 s` itself is searched.
        assert_eq!(walk(&m, &zone, Shift, First, t, 0), None);
        let ms = Timestamp::from_millis(t.as_millis() - 1).unwrap();
        assert_eq!(walk(&m, &zone, Shift, First, ms, 0).map(|x| x.0), Some(t));
    }

    /// Reference model: enumerate *local* minutes, resolve each through the
    /// zone independently of the walk, and apply the policy per civil time.
    fn model(
        cron: &CronSpec,
        zone: &ZoneTable,
        gap: GapPolicy,
        fold: FoldPolicy,
        from: i64,
        until: i64,
    ) -> Vec<i64> {
        use crate::spec::zone::LocalResolution::*;
        let mut out = std::collections::BTreeSet::new();
        let mut local = (from - 2 * 86_400).div_euclid(60) * 60;
        while local < until + 2 * 86_400 {
            if cron.matches_civil(local) {
                match zone.resolve_local(local) {
                    Unique(u) => {
                        out.insert(u);
                    }
                    Gap { transition } => {
                        if gap == Shift {
                            out.insert(transition);
                        }
                    }
                    Fold { first, second } => {
                        if fold != Last {
                            out.insert(first);
                        }
                        if fold != First {
                            out.insert(second);
                        }
                    }
                }
            }
            local += 60;
        }
        out.into_iter().filter(|&u| u > from && u < until).collect()
    }

    #[test]
    fn walk_agrees_with_a_local_time_model() {
        let cases = [
            ("America/New_York", "2026-03-07T00:00:00Z"),
            ("America/New_York", "2026-10-31T00:00:00Z"),
            ("Europe/London", "2026-03-28T00:00:00Z"),
            ("Europe/London", "2026-10-24T00:00:00Z"),
            ("Australia/Lord_Howe", "2026-04-03T00:00:00Z"),
            ("Australia/Lord_Howe", "2026-10-02T00:00:00Z"),
            ("Pacific/Apia", "2011-12-28T00:00:00Z"),
            ("Europe/Moscow", "2014-10-24T00:00:00Z"),
            ("Europe/Moscow", "2011-03-25T00:00:00Z"),
        ];
        let specs = [
            "30 2 * * *",
            "0,30 2 * * *",
            "*/15 * * * *",
            "0 * * * *",
            "45 1 * * *",
            "0 0 * * *",
            "*/7 1-3 * * *",
            "0 9,17 * * *",
            "59 23 * * *",
        ];
        let policies = [Shift, Skip]
            .into_iter()
            .flat_map(|g| [First, Last, Both].map(|f| (g, f)));
        for (zone_name, start) in cases {
            let zone = ZoneTable::get(zone_name).unwrap();
            let from = ts(start).as_secs();
            let until = from + 4 * 86_400;
            for spec in specs {
                let cron = CronSpec::parse(spec).unwrap().cron;
                for (gap, fold) in policies.clone() {
                    let expected = model(&cron, &zone, gap, fold, from, until);
                    let mut got = Vec::new();
                    let mut t = Timestamp::from_secs(from).unwrap();
                    while let Some((at, _)) = walk(&cron, &zone, gap, fold, t, 1) {
                        if at.as_secs() >= until {
                            break;
                        }
                        got.push(at.as_secs());
                        t = at;
                    }
                    assert_eq!(
                        got, expected,
                        "{zone_name} {start} {spec:?} {gap:?} {fold:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn walks_past_the_table() {
        let m = Times(vec![(2, 30, 0)]);
        // 2300-03-11 is the second Sunday of March 2300.
        let got = run(
            &m,
            NY,
            Shift,
            First,
            "2300-03-10T12:00:00Z",
            "2300-03-12T00:00:00Z",
        );
        assert_eq!(
            got,
            vec![("2300-03-11T07:00:00.000Z".into(), Some(ShiftedFromGap))]
        );
        let c = Civil::from_local_secs(ts("2300-03-11T07:00:00Z").as_secs() - 4 * 3600);
        assert_eq!(c.to_string(), "2300-03-11T03:00:00");
    }
}
