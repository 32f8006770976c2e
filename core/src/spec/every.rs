//! `@every <duration> [+<offset>]`: an epoch-aligned grid.
//!
//! Occurrences are `offset + k · interval` milliseconds since the Unix epoch
//! for integer `k`: absolute time, independent of any zone or DST, so
//! `@every 1h +15m` fires at xx:15 UTC (and at xx:15 or xx:45 local time in
//! zones with a half-hour offset). The offset must be smaller than the
//! interval; a larger one would name the same grid and is rejected as a
//! likely mistake.

use super::{SpecError, duration::parse_duration_ms};
use crate::time::Timestamp;

/// An `@every` grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Every {
    interval_ms: i64,
    offset_ms: i64,
}

impl Every {
    /// The cadence in milliseconds.
    pub(crate) fn interval_ms(&self) -> i64 {
        self.interval_ms
    }

    /// Parses the text after `@every`, e.g. `1h +15m`.
    pub(crate) fn parse(rest: &str, min_interval_ms: i64) -> Result<Every, SpecError> {
        let mut words = rest.split_whitespace();
        let Some(interval_text) = words.next() else {
            return Err(SpecError::invalid(
                "@every needs a duration, e.g. `@every 90s`",
            ));
        };
        let interval_ms = parse_duration_ms(interval_text)?;
        let offset_ms = match words.next() {
            None => 0,
            Some(word) => {
                let Some(offset_text) = word.strip_prefix('+') else {
                    return Err(SpecError::invalid(format!(
                        "@every offset must start with '+', e.g. `@every 1h +15m`; found {word:?}"
                    )));
                };
                parse_duration_ms(offset_text)?
            }
        };
        if let Some(extra) = words.next() {
            return Err(SpecError::invalid(format!(
                "unexpected {extra:?} after @every duration and offset"
            )));
        }
        if interval_ms < min_interval_ms.max(1) {
            return Err(SpecError::IntervalTooShort {
                interval_ms,
                min_ms: min_interval_ms.max(1),
            });
        }
        if offset_ms >= interval_ms {
            return Err(SpecError::invalid(format!(
                "@every offset {offset_text} must be smaller than the interval {interval_text}",
                offset_text = rest.split_whitespace().nth(1).unwrap_or_default(),
            )));
        }
        Ok(Every {
            interval_ms,
            offset_ms,
        })
    }

    /// The first grid point strictly after `t`, or `None` past
    /// [`Timestamp::MAX`].
    pub(crate) fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        // i128 cannot overflow here: |t|, offset, interval are all < 2^63.
        let t = i128::from(t.as_millis());
        let interval = i128::from(self.interval_ms);
        let offset = i128::from(self.offset_ms);
        let k = (t - offset).div_euclid(interval) + 1;
        let next = offset + k * interval;
        let next = i64::try_from(next).ok()?;
        Timestamp::from_millis(next).ok()
    }

    /// Index of the first grid point at or after `ms`: `ceil((ms - offset) /
    /// interval)` (never negative for `ms >= 0`, as `offset < interval`).
    fn first_index(&self, ms: i64) -> i128 {
        let (interval, offset) = (i128::from(self.interval_ms), i128::from(self.offset_ms));
        -(offset - i128::from(ms)).div_euclid(interval)
    }

    /// Grid points in `[from, until]`, by arithmetic.
    pub(crate) fn count_between(&self, from: Timestamp, until: Timestamp) -> u64 {
        let first = self.first_index(from.as_millis());
        // Index of the last grid point at or before `until`.
        let (interval, offset) = (i128::from(self.interval_ms), i128::from(self.offset_ms));
        let last = (i128::from(until.as_millis()) - offset).div_euclid(interval);
        u64::try_from(last - first + 1).unwrap_or(0)
    }

    /// The grid point `n` intervals after the first one at or after `from`
    /// (`n = 0`: `next_after(from - 1 ms)`, also at the epoch), or `None`
    /// past [`Timestamp::MAX`].
    pub(crate) fn nth_from(&self, from: Timestamp, n: u64) -> Option<Timestamp> {
        let k = self.first_index(from.as_millis()) + i128::from(n);
        let at = i128::from(self.offset_ms) + k * i128::from(self.interval_ms);
        Timestamp::from_millis(i64::try_from(at).ok()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    #[test]
    fn grid_is_epoch_aligned() {
        let e = Every::parse("90s", 1000).unwrap();
        assert_eq!((e.interval_ms, e.offset_ms), (90_000, 0));
        assert_eq!(e.next_after(ts(0)), Some(ts(90_000)));
        assert_eq!(e.next_after(ts(89_999)), Some(ts(90_000)));
        assert_eq!(e.next_after(ts(90_000)), Some(ts(180_000)));
    }

    #[test]
    fn offset_shifts_the_grid() {
        let e = Every::parse("1h  +15m", 1000).unwrap();
        assert_eq!(e.next_after(ts(0)), Some(ts(900_000)));
        assert_eq!(e.next_after(ts(900_000)), Some(ts(4_500_000)));
        assert_eq!(e.next_after(ts(899_999)), Some(ts(900_000)));
    }

    #[test]
    fn rejects_bad_forms() {
        let short = Every::parse("500ms", 1000).unwrap_err();
        assert_eq!(
            short,
            SpecError::IntervalTooShort {
                interval_ms: 500,
                min_ms: 1000
            }
        );
        assert_eq!(
            Every::parse("0s", 0).unwrap_err().code(),
            "interval_too_short"
        );
        assert!(Every::parse("250ms", 100).is_ok());
        assert_eq!(Every::parse("", 1000).unwrap_err().code(), "invalid_spec");
        let e = Every::parse("1h +1h", 1000).unwrap_err();
        assert!(e.to_string().contains("smaller than the interval"), "{e}");
        assert_eq!(
            Every::parse("1h 15m", 1000).unwrap_err().code(),
            "invalid_spec"
        );
        assert_eq!(
            Every::parse("1h +15m x", 1000).unwrap_err().code(),
            "invalid_spec"
        );
        assert_eq!(
            Every::parse("1.5h", 1000).unwrap_err().code(),
            "invalid_duration"
        );
    }

    #[test]
    fn never_overflows() {
        let e = Every::parse("9223372036854775807ms", 1000).unwrap();
        assert_eq!(e.next_after(ts(0)), None);
        let e = Every::parse("1s", 1000).unwrap();
        assert_eq!(e.next_after(Timestamp::MAX), None);
        // MAX is 9999-12-31T23:59:59.999Z; the last grid point is .000.
        let last_second = Timestamp::MAX.as_millis() - 999;
        assert_eq!(e.next_after(ts(last_second)), None);
        assert_eq!(e.next_after(ts(last_second - 1)), Some(ts(last_second)));
    }

    #[test]
    fn counts_by_arithmetic() {
        let e = Every::parse("1h +15m", 1000).unwrap();
        assert_eq!(e.nth_from(Timestamp::MIN, 0), Some(ts(900_000)));
        assert_eq!(e.nth_from(ts(900_000), 0), Some(ts(900_000)));
        assert_eq!(e.nth_from(ts(900_001), 0), Some(ts(4_500_000)));
        assert_eq!(e.count_between(ts(0), ts(7_199_999)), 2);
        assert_eq!(e.count_between(ts(900_000), ts(900_000)), 1);
        assert_eq!(e.count_between(ts(900_001), ts(4_499_999)), 0);
        assert_eq!(e.count_between(ts(5), ts(4)), 0);
        assert_eq!(e.nth_from(ts(0), 1), Some(ts(4_500_000)));
        let h = Every::parse("1h", 1000).unwrap();
        assert_eq!(h.nth_from(Timestamp::MIN, 0), Some(ts(0)));
        // Ten years of seconds, and the end of time.
        let s = Every::parse("1s", 1000).unwrap();
        let ten_years = 10 * 365 * 86_400_000;
        assert_eq!(s.count_between(ts(0), ts(ten_years)), 315_360_001);
        let last = Timestamp::MAX.as_millis() - 999;
        assert_eq!(s.nth_from(ts(last), 0), Some(ts(last)));
        assert_eq!(s.nth_from(ts(last), 1), None);
        assert_eq!(s.nth_from(ts(0), u64::MAX), None);
        assert_eq!(s.nth_from(ts(last + 1), 0), None);
        let total = s.count_between(Timestamp::MIN, Timestamp::MAX);
        assert_eq!(total, u64::try_from(last / 1000 + 1).unwrap());
        // The same as iterating next_after.
        let mut t = ts(123_456);
        for k in 0..50 {
            let want = e.next_after(t).unwrap();
            assert_eq!(e.nth_from(ts(123_457), k), Some(want));
            assert_eq!(e.count_between(ts(123_457), want), k + 1);
            t = want;
        }
    }
}
