//! Counting matches in a range of local seconds without visiting them.
//!
//! Every matching day has the same matching times of day (the hour, minute
//! and second fields do not depend on the date), so a range of whole days
//! holds `matching days × |hours| × |minutes| × |seconds|` matches, and a
//! partial day is a difference of two prefix counts over the time bitsets.
//! Matching days are counted a month at a time with one popcount of the
//! month's day mask; months and years outside the month and year fields are
//! jumped over without computing a mask. The cost is bounded by the number
//! of months in the range (at most 96,360 for years 1..=10000), never by the
//! number of matches. Catch-up uses this to count skipped boundaries.

use super::CronSpec;
use super::calendar::{civil_from_days, days_from_civil};
use super::matcher::{END_LOCAL, MIN_LOCAL};
use super::years;
use crate::time::calendar::{days_in_month, weekday_from_days};

const DAY: i64 = 86_400;

/// Bits `0..n` set (`n <= 64`).
fn below(n: u32) -> u64 {
    u64::MAX.checked_shr(64 - n).unwrap_or(0)
}

/// Number of set bits of `bits` below bit `n` (`n <= 64`).
fn ones_below(bits: u64, n: u32) -> u64 {
    u64::from((bits & below(n)).count_ones())
}

impl CronSpec {
    /// Matching times in one matching day.
    pub(crate) fn per_day(&self) -> u64 {
        u64::from(self.hours.count_ones())
            * u64::from(self.minutes.count_ones())
            * u64::from(self.seconds.count_ones())
    }

    /// Matching times of day strictly before second-of-day `sod`
    /// (`0..=86_400`).
    fn times_before(&self, sod: u32) -> u64 {
        debug_assert!(sod <= 86_400);
        let (h, m, s) = (sod / 3600, sod / 60 % 60, sod % 60);
        let per_hour = u64::from(self.minutes.count_ones()) * u64::from(self.seconds.count_ones());
        let mut n = ones_below(self.hours.into(), h) * per_hour;
        if h < 24 && self.hours & (1 << h) != 0 {
            n += ones_below(self.minutes, m) * u64::from(self.seconds.count_ones());
            if self.minutes & (1 << m) != 0 {
                n += ones_below(self.seconds, s);
            }
        }
        n
    }

    /// Whether day `days` (since 1970-01-01) passes the year, month and
    /// day rules.
    fn day_matches(&self, days: i64) -> bool {
        self.matching_days(days, days + 1) == 1
    }

    /// Number of matching local seconds in `[lo, hi)`, the same set that
    /// [`CronSpec::next_civil`] searches (clipped to years 1..=9999).
    pub(crate) fn count_civil(&self, lo: i64, hi: i64) -> u64 {
        let (lo, hi) = (lo.max(MIN_LOCAL), hi.min(END_LOCAL));
        if lo >= hi {
            return 0;
        }
        let (first, last) = (lo.div_euclid(DAY), (hi - 1).div_euclid(DAY));
        let lo_sod = lo.rem_euclid(DAY) as u32;
        let hi_sod = ((hi - 1).rem_euclid(DAY) + 1) as u32;
        if first == last {
            return if self.day_matches(first) {
                self.times_before(hi_sod) - self.times_before(lo_sod)
            } else {
                0
            };
        }
        let mut n = self.matching_days(first + 1, last) * self.per_day();
        if self.day_matches(first) {
            n += self.per_day() - self.times_before(lo_sod);
        }
        if self.day_matches(last) {
            n += self.times_before(hi_sod);
        }
        n
    }

    /// Number of days in `[from, to)` (day counts since 1970-01-01, within
    /// years 1..=9999) that pass the year, month and day rules.
    fn matching_days(&self, from: i64, to: i64) -> u64 {
        if from >= to {
            return 0;
        }
        let every_day = self.years.is_none()
            && self.months == 0x1ffe
            && self.days.dom_star
            && self.days.dow_star;
        if every_day {
            return (to - from).unsigned_abs();
        }
        let (mut y, mut m, mut d) = civil_from_days(from);
        let mut n = 0u64;
        // One pass per month visited; every pass moves to a later month, so
        // the loop is bounded by the months in the range.
        loop {
            if let Some(set) = &self.years
                && !set.contains(y)
            {
                match set.next_from(y) {
                    Some(next) => (y, m, d) = (next, 1, 1),
                    None => return n,
                }
            }
            let months = u32::from(self.months) & (u32::MAX << m);
            if months == 0 {
                if y >= years::LAST {
                    return n;
                }
                (y, m, d) = (y + 1, 1, 1);
                continue;
            }
            let next_m = months.trailing_zeros();
            if next_m != m {
                (m, d) = (next_m, 1);
            }
            let start = days_from_civil(y, m, 1);
            if start + i64::from(d) > to {
                return n;
            }
            let len = days_in_month(y, m);
            let mask = self.days.month_mask(weekday_from_days(start), len);
            // Days d..=len, cut at `to`.
            let last_day = (to - start).min(i64::from(len)) as u32;
            let window = (u32::MAX << d) & (u32::MAX >> (31 - last_day));
            n += u64::from((mask & window).count_ones());
            if m == 12 {
                if y >= years::LAST {
                    return n;
                }
                (y, m, d) = (y + 1, 1, 1);
            } else {
                (m, d) = (m + 1, 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::calendar::Civil;

    fn local(s: &str) -> i64 {
        let dt: jiff::civil::DateTime = s.parse().unwrap();
        Civil {
            year: dt.year().into(),
            month: dt.month().unsigned_abs().into(),
            day: dt.day().unsigned_abs().into(),
            hour: dt.hour().unsigned_abs().into(),
            minute: dt.minute().unsigned_abs().into(),
            second: dt.second().unsigned_abs().into(),
        }
        .to_local_secs()
    }

    /// Counts by iterating `next_civil` (the reference).
    fn by_search(c: &CronSpec, lo: i64, hi: i64) -> u64 {
        let mut n = 0;
        let mut t = lo;
        while let Some(x) = c.next_civil(t, hi) {
            n += 1;
            t = x + 1;
        }
        n
    }

    #[test]
    fn bits_below() {
        assert_eq!(below(0), 0);
        assert_eq!(below(1), 1);
        assert_eq!(below(64), u64::MAX);
        assert_eq!(ones_below(0b1011, 2), 2);
        assert_eq!(ones_below(u64::MAX, 60), 60);
    }

    #[test]
    fn times_before_is_a_prefix_count() {
        for text in [
            "*/7 5,10-12 */3 * * *",
            "0 0 * * *",
            "* * * * * *",
            "59 59 23 * * *",
        ] {
            let c = CronSpec::parse(text).unwrap().cron;
            let mut n = 0;
            for sod in 0..=86_400u32 {
                assert_eq!(c.times_before(sod), n, "{text} at {sod}");
                if sod < 86_400 && c.matches_civil(i64::from(sod)) {
                    n += 1;
                }
            }
            assert_eq!(n, c.per_day());
        }
    }

    #[test]
    fn agrees_with_the_search() {
        let specs = [
            "0 0 * * *",
            "*/20 * * * * *",
            "30 2 29 2 *",
            "0 12 L * *",
            "0 9 15W * *",
            "0 9 LW * *",
            "0 9 L-3 * *",
            "0 9 * * 5#3",
            "0 9 * * 1L",
            "0 9 1,15 * MON",
            "0 9 1-7 * +MON",
            "*/15 8-9 * FEB,AUG SAT,SUN",
            "0 0 0 1 1 * 2024,2026-2028",
            "* * * * * * 2025",
        ];
        let ranges = [
            ("2024-01-01T00:00:00", "2028-03-01T00:00:00"),
            ("2024-02-28T13:17:05", "2024-03-01T00:00:01"),
            ("2025-06-15T09:00:00", "2025-06-15T09:00:01"),
            ("2025-12-31T23:59:30", "2026-01-01T00:00:30"),
            ("2026-01-01T00:00:00", "2026-01-01T00:00:00"),
        ];
        for text in specs {
            let c = CronSpec::parse(text).unwrap().cron;
            for (lo, hi) in ranges {
                let (lo, hi) = (local(lo), local(hi));
                if hi - lo > 400 * DAY && c.per_day() > 100 {
                    continue; // the reference would take too long
                }
                assert_eq!(
                    c.count_civil(lo, hi),
                    by_search(&c, lo, hi),
                    "{text} {lo} {hi}"
                );
            }
        }
    }

    #[test]
    fn whole_range_is_bounded_and_clipped() {
        let c = CronSpec::parse("0 0 29 2 *").unwrap().cron;
        // Leap years in 1..=9999: 2424 (every 4th, minus 75 non-leap centuries).
        assert_eq!(c.count_civil(i64::MIN, i64::MAX), 2424);
        let c = CronSpec::parse("* * * * * *").unwrap().cron;
        let all = (END_LOCAL - MIN_LOCAL).unsigned_abs();
        assert_eq!(c.count_civil(i64::MIN, i64::MAX), all);
        let c = CronSpec::parse("0 0 0 1 1 * 9999").unwrap().cron;
        assert_eq!(c.count_civil(0, i64::MAX), 1);
        assert_eq!(c.count_civil(5, 5), 0);
        assert_eq!(c.count_civil(6, 5), 0);
    }
}
