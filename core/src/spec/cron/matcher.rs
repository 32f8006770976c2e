//! The next-occurrence search in local seconds.
//!
//! The search jumps field by field: year (bitset), month (`u16`), day (a
//! per-month `u32` mask from [`Days::month_mask`]), then hour, minute and
//! second with `trailing_zeros` on masked bitsets. It visits each month at
//! most once, never a minute or a second, and stops at `limit` or at the
//! end of year 9999, whichever comes first. Expressions whose days depend
//! on the weekday alone (`*/5 * * * *`, `0 9 * * 1-5`) skip the calendar:
//! the next matching day is a rotation of the weekday set.

use super::CronSpec;
use super::calendar::{civil_from_days, days_from_civil};
use super::days::rotate_week;
use super::years;
use crate::time::calendar::{days_in_month, weekday_from_days};

const DAY: i64 = 86_400;
/// 0001-01-01T00:00:00 in local seconds: searches start no earlier.
pub(super) const MIN_LOCAL: i64 = crate::time::calendar::days_from_civil(1, 1, 1) * DAY;
/// 10000-01-01T00:00:00 in local seconds: searches end before it.
pub(super) const END_LOCAL: i64 =
    crate::time::calendar::days_from_civil(years::LAST + 1, 1, 1) * DAY;

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

    /// Second of day of the first matching time of any day.
    fn first_time(&self) -> u32 {
        self.hours.trailing_zeros() * 3600 + self.first_minute() * 60 + self.first_second()
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
        let at = match self.weekly {
            0 => self.search_calendar(from, end)?,
            weekly => self.search_weekly(weekly, from),
        };
        (at < end).then_some(at)
    }

    /// The search for expressions whose days depend only on the weekday
    /// (any month, any year, day-of-month `*`, plain weekdays): no calendar
    /// conversion at all. The result may be `>= end`.
    #[inline]
    fn search_weekly(&self, weekly: u8, from: i64) -> i64 {
        let today = from.div_euclid(DAY);
        let weekday = weekday_from_days(today);
        if weekly & (1 << weekday) != 0
            && let Some(sod) = self.next_in_day(from.rem_euclid(DAY) as u32)
        {
            return today * DAY + i64::from(sod);
        }
        // Bit j: day today+1+j has a matching weekday; weekly is non-empty.
        let ahead = rotate_week(weekly, (weekday + 1) % 7).trailing_zeros();
        (today + 1 + i64::from(ahead)) * DAY + i64::from(self.first_time())
    }

    /// The general search, month by month; the result may be `>= end`.
    fn search_calendar(&self, from: i64, end: i64) -> Option<i64> {
        let today = from.div_euclid(DAY);
        let (mut y, mut m, day) = civil_from_days(today);
        // Lower bounds inside the current month: first day, and second of
        // that day. Both reset when the search moves to a later month.
        let (mut first_day, mut first_sod) = (day, from.rem_euclid(DAY) as u32);
        // Day count of the 1st of (y, m), computed only once a month is
        // settled on.
        let mut month_start = Some(today - i64::from(day) + 1);
        // The month of the last second before `end`, once needed.
        let mut end_month = None;
        // One pass per month visited; every path either returns or moves to
        // a later month, and `end` (at most year 10000) bounds the months.
        loop {
            if let Some(years) = &self.years
                && !years.contains(y)
            {
                y = years.next_from(y)?;
                (m, first_day, first_sod, month_start) = (1, 1, 0, None);
            }
            match next_bit(self.months.into(), m) {
                Some(next) if next == m => {}
                Some(next) => (m, first_day, first_sod, month_start) = (next, 1, 0, None),
                None if y < years::LAST => {
                    (y, m, first_day, first_sod, month_start) = (y + 1, 1, 1, 0, None);
                    continue;
                }
                None => return None,
            }
            let len = days_in_month(y, m);
            // Months without a matching day are skipped before their day
            // count is needed when the days depend on the length alone.
            let by_len = self
                .days
                .by_len
                .then(|| self.days.month_mask(0, len) & (u32::MAX << first_day));
            if by_len == Some(0) {
                let (end_y, end_m) = *end_month.get_or_insert_with(|| {
                    let (end_y, end_m, _) = civil_from_days((end - 1).div_euclid(DAY));
                    (end_y, end_m)
                });
                if (y, m) >= (end_y, end_m) {
                    return None;
                }
                month_start = month_start.map(|start| start + i64::from(len));
            } else {
                let start = month_start.unwrap_or_else(|| days_from_civil(y, m, 1));
                if start * DAY >= end {
                    return None;
                }
                let mut mask = by_len.unwrap_or_else(|| {
                    self.days.month_mask(weekday_from_days(start), len) & (u32::MAX << first_day)
                });
                // At most two days are tried: any day after the first has a
                // match at its first matching time.
                while mask != 0 {
                    let d = mask.trailing_zeros();
                    mask &= mask - 1;
                    let from_sod = if d == first_day { first_sod } else { 0 };
                    if let Some(sod) = self.next_in_day(from_sod) {
                        return Some((start + i64::from(d) - 1) * DAY + i64::from(sod));
                    }
                }
                month_start = Some(start + i64::from(len));
            }
            (m, first_day, first_sod) = (m + 1, 1, 0);
            if m > 12 {
                if y == years::LAST {
                    return None;
                }
                (y, m) = (y + 1, 1);
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
