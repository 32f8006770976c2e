//! What a zoned boundary means, apart from the instant the tz database of
//! the day gives it: the civil date-time it stands for and the UTC offset
//! that mapped it to the instant. A snapshot keeps both beside each zoned
//! schedule's cursor, so that a restore under another tz database can find
//! the boundary again under the new rules (`engine::tzdb`).

use super::dst::horizon_secs;
use super::zone::{LocalResolution, ZoneTable};
use super::{DstNote, Spec, SpecKind};
use crate::time::Timestamp;
use crate::time::calendar::Civil;
use std::sync::Arc;

/// A boundary's civil meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CivilTime {
    /// Local time in the zone, milliseconds since 1970-01-01T00:00 local.
    pub local_ms: i64,
    /// Seconds east of UTC: `instant = local - offset`.
    pub offset_s: i32,
}

impl CivilTime {
    /// `2025-04-02T09:00:00` (`.mmm` appended when not a whole second).
    pub(crate) fn text(&self) -> String {
        let secs = self.local_ms.div_euclid(1000);
        let ms = self.local_ms.rem_euclid(1000);
        let mut s = Civil::from_local_secs(secs).to_string();
        if ms != 0 {
            s.push_str(&format!(".{ms:03}"));
        }
        s
    }
}

impl Spec {
    /// The zone civil times of this spec are read in, unless that is UTC
    /// (whose rules never change) or the spec is an `@every` grid.
    pub(crate) fn civil_zone(&self) -> Option<Arc<ZoneTable>> {
        let zone = match &self.kind {
            SpecKind::Cron(c) => c.zone_arc(),
            SpecKind::At(a) => Arc::clone(&a.zone),
            SpecKind::Every(_) => return None,
        };
        (zone.name() != "UTC").then_some(zone)
    }

    /// The civil time boundary `b` stands for. For a cron boundary shifted
    /// out of a spring-forward gap that is the start of the gap (with the
    /// offset before it), whose next boundary is the shifted one under any
    /// rules that keep the gap; otherwise the civil time of the instant.
    pub(crate) fn civil_of(&self, b: Timestamp) -> Option<CivilTime> {
        let zone = self.civil_zone()?;
        let secs = b.as_secs();
        let seg = zone.segment_at(secs);
        let shifted = match &self.kind {
            SpecKind::Cron(c) => {
                seg.start == secs
                    && b.as_millis() % 1000 == 0
                    && c.next_after(b.saturating_add_ms(-1), self.horizon_years)
                        == Some((b, Some(DstNote::ShiftedFromGap)))
            }
            _ => false,
        };
        let offset_s = if shifted { seg.prev_offset } else { seg.offset };
        Some(CivilTime {
            local_ms: b.as_millis() + i64::from(offset_s) * 1000,
            offset_s,
        })
    }

    /// The first boundary at or after the instant `civil` has under this
    /// spec's rules: the pass with `civil`'s offset in a repeated hour
    /// (else the first), the end of a gap it falls in.
    pub(crate) fn boundary_for(&self, civil: CivilTime) -> Option<Timestamp> {
        let zone = self.civil_zone()?;
        let local = civil.local_ms.div_euclid(1000);
        let ms = civil.local_ms.rem_euclid(1000);
        let utc = match zone.resolve_local(local) {
            LocalResolution::Unique(u) => u,
            LocalResolution::Gap { transition } => transition,
            LocalResolution::Fold { first, second } => {
                if local - second == i64::from(civil.offset_s) {
                    second
                } else {
                    first
                }
            }
        };
        let at = Timestamp::from_millis(utc.checked_mul(1000)?.checked_add(ms)?).ok()?;
        self.first_at_or_after(at)
    }

    /// The last boundary before `t`, searched back at most the horizon.
    pub(crate) fn prev_before(&self, t: Timestamp) -> Option<Timestamp> {
        let until = t.checked_add_ms(-1)?;
        let limit_ms = horizon_secs(self.horizon_years).saturating_mul(1000);
        let mut window_ms: i64 = 3_600_000;
        loop {
            let from = until.saturating_add_ms(-window_ms);
            let n = self.count_between(from, until);
            if n > 0 {
                return self.nth_from(from, n - 1);
            }
            if from == Timestamp::MIN || window_ms >= limit_ms {
                return None;
            }
            window_ms = window_ms.saturating_mul(16).min(limit_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{DstPolicy, SpecOptions};

    fn spec(text: &str, tz: &str) -> Spec {
        let opts = SpecOptions {
            tz: Some(tz.to_string()),
            dst: DstPolicy::default(),
            ..SpecOptions::default()
        };
        Spec::parse(text, &opts).unwrap()
    }

    fn ts(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    #[test]
    fn civil_time_and_back() {
        let s = spec("0 9 * * *", "America/New_York");
        let b = s.first_at_or_after(ts(1_772_000_000_000)).unwrap();
        let c = s.civil_of(b).unwrap();
        assert!(c.text().ends_with("T09:00:00"), "{}", c.text());
        assert_eq!(c.offset_s, -18_000);
        assert_eq!(s.boundary_for(c), Some(b));
        let prev = s.prev_before(b).unwrap();
        assert_eq!(s.next_after(prev), Some(b));
        assert_eq!(b.as_millis() - prev.as_millis(), 86_400_000);
        assert!(spec("@every 1h", "America/New_York").civil_of(b).is_none());
        assert!(spec("0 9 * * *", "UTC").civil_of(b).is_none());
    }

    #[test]
    fn a_shifted_boundary_stands_for_the_gap() {
        // 02:30 on 2026-03-08 does not exist in New York: 07:00Z.
        let s = spec("30 2 * * *", "America/New_York");
        let b = ts(1_772_953_200_000);
        assert_eq!(s.next_after(b.saturating_add_ms(-1)), Some(b));
        let c = s.civil_of(b).unwrap();
        assert_eq!(
            (c.text().as_str(), c.offset_s),
            ("2026-03-08T02:00:00", -18_000)
        );
        assert_eq!(s.boundary_for(c), Some(b));
        // A fold's second pass is found again by its offset.
        let opts = SpecOptions {
            tz: Some("America/New_York".into()),
            dst: DstPolicy {
                gap: None,
                fold: Some(crate::spec::FoldPolicy::Both),
            },
            ..SpecOptions::default()
        };
        let both2 = Spec::parse("30 1 * * *", &opts).unwrap();
        let second = ts(1_793_514_600_000);
        let c = both2.civil_of(second).unwrap();
        assert_eq!(both2.boundary_for(c), Some(second));
    }
}
