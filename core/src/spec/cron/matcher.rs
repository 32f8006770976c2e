//! The next-occurrence search in local seconds.
//!
//! The search jumps field by field: year (bitset), month (`u16`), day (a
//! per-month `u32` mask from [`Days::month_mask`]), then hour, minute and
//! second with `trailing_zeros` on masked bitsets. It visits each month at
//! most once, never a minute or a second, and stops at `limit` or at the
//! end of year 9999, whichever comes first.

use super::CronSpec;
use super::years;
use crate::spec::civil::{civil_from_days, days_from_civil, days_in_month, weekday_from_days};

const DAY: i64 = 86_400;
/// 0001-01-01T00:00:00 in local seconds: searches start no earlier.
pub(super) const MIN_LOCAL: i64 = days_from_civil(1, 1, 1) * DAY;
/// 10000-01-01T00:00:00 in local seconds: searches end before it.
pub(super) const END_LOCAL: i64 = days_from_civil(years::LAST + 1, 1, 1) * DAY;

/// The first set bit `>= from`, if any.
#[inline]
fn next_bit(bits: u64, from: u32) -> Option<u32> {
    let masked = bits & u64::MAX.checked_shl(from)?;
    (masked != 0).then(|| masked.trailing_zeros())
}

impl CronSpec {
    /// The first matching second of the day at or after second-of-day
    /// `from`, if the day has one.
    #[inline]
    fn next_in_day(&self, from: u32) -> Option<u32> {
        let (mut h, mut m, mut s) = (from / 3600, from / 60 % 60, from % 60);
        // Each pass either returns or moves to a later minute or hour, and a
        // move to minute 0 of a later hour always succeeds: at most 3 passes.
        loop {
            let hour = next_bit(self.hours.into(), h)?;
            if hour != h {
                return Some(hour * 3600 + self.first_minute() * 60 + self.first_second());
            }
            let Some(minute) = next_bit(self.minutes, m) else {
                (h, m, s) = (h + 1, 0, 0);
                continue;
            };
            if minute != m {
                return Some(h * 3600 + minute * 60 + self.first_second());
            }
            match next_bit(self.seconds, s) {
                Some(second) => return Some(h * 3600 + m * 60 + second),
                None if m < 59 => (m, s) = (m + 1, 0),
                None => (h, m, s) = (h + 1, 0, 0),
            }
        }
    }

    fn first_minute(&self) -> u32 {
        self.minutes.trailing_zeros()
    }

    fn first_second(&self) -> u32 {
        self.seconds.trailing_zeros()
    }

    /// See [`CronSpec::next_civil`].
    pub(super) fn search(&self, from: i64, limit: i64) -> Option<i64> {
        let end = limit.min(END_LOCAL);
        let from = from.max(MIN_LOCAL);
        if from >= end {
            return None;
        }
        let today = from.div_euclid(DAY);
        let (mut y, mut m, day) = civil_from_days(today);
        // Lower bounds inside the current month: first day, and second of
        // that day. Both reset when the search moves to a later month.
        let (mut first_day, mut first_sod) = (day, from.rem_euclid(DAY) as u32);
        let mut month_start = today - i64::from(day) + 1;
        // One pass per month visited; every path either returns or moves to
        // a later month, and `end` (at most year 10000) bounds the months.
        loop {
            if let Some(years) = &self.years {
                if !years.contains(y) {
                    y = years.next_from(y)?;
                    (m, first_day, first_sod) = (1, 1, 0);
                    month_start = days_from_civil(y, 1, 1);
                }
            }
            match next_bit(self.months.into(), m) {
                Some(next) if next == m => {}
                Some(next) => {
                    (m, first_day, first_sod) = (next, 1, 0);
                    month_start = days_from_civil(y, m, 1);
                }
                None => {
                    (y, m, first_day, first_sod) = (y + 1, 1, 1, 0);
                    month_start = days_from_civil(y, 1, 1);
                    if month_start * DAY >= end {
                        return None;
                    }
                    continue;
                }
            }
            if month_start * DAY >= end {
                return None;
            }
            let len = days_in_month(y, m);
            let first_weekday = weekday_from_days(month_start);
            let mut mask = self.days.month_mask(first_weekday, len) & (u32::MAX << first_day);
            // At most two days are tried: any day after the first has a
            // match at its first matching time.
            while mask != 0 {
                let d = mask.trailing_zeros();
                mask &= mask - 1;
                let day_start = (month_start + i64::from(d) - 1) * DAY;
                if day_start >= end {
                    return None;
                }
                let from_sod = if d == first_day { first_sod } else { 0 };
                if let Some(sod) = self.next_in_day(from_sod) {
                    let at = day_start + i64::from(sod);
                    return (at < end).then_some(at);
                }
            }
            month_start += i64::from(len);
            (m, first_day, first_sod) = (m + 1, 1, 0);
            if m > 12 {
                (y, m) = (y + 1, 1);
            }
            if month_start * DAY >= end {
                return None;
            }
        }
    }

    /// See [`CronSpec::matches_civil`].
    pub(super) fn matches(&self, local: i64) -> bool {
        if !(MIN_LOCAL..END_LOCAL).contains(&local) {
            return false;
        }
        let days = local.div_euclid(DAY);
        let sod = local.rem_euclid(DAY) as u32;
        let (y, m, d) = civil_from_days(days);
        let first_weekday = weekday_from_days(days - i64::from(d) + 1);
        self.years.as_ref().is_none_or(|years| years.contains(y))
            && self.months & (1 << m) != 0
            && self.days.month_mask(first_weekday, days_in_month(y, m)) & (1 << d) != 0
            && self.hours & (1 << (sod / 3600)) != 0
            && self.minutes & (1 << (sod / 60 % 60)) != 0
            && self.seconds & (1 << (sod % 60)) != 0
    }
}
