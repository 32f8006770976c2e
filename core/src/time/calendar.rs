//! Proleptic Gregorian calendar arithmetic on plain integers.
//!
//! The cron matcher works in *local seconds*: a civil date-time counted as if
//! it were UTC seconds since 1970-01-01T00:00:00. These helpers convert
//! without allocating or consulting a time zone, so the hot path stays a few
//! integer operations (Howard Hinnant's `days_from_civil` algorithms).

/// Days since 1970-01-01 for a civil date (month 1..=12, day 1..=31).
pub(crate) const fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y as i64 - 1 } else { y as i64 };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month, day)` of a day count since 1970-01-01.
pub(crate) const fn civil_from_days(z: i64) -> (i32, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    ((if m <= 2 { y + 1 } else { y }) as i32, m, d)
}

/// Day of week of a day count: 0 = Sunday … 6 = Saturday.
pub(crate) const fn weekday_from_days(z: i64) -> u32 {
    // 1970-01-01 was a Thursday (4).
    (z + 4).rem_euclid(7) as u32
}

/// Whether `y` is a Gregorian leap year.
pub(crate) const fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Number of days in month `m` (1..=12) of year `y`.
pub(crate) const fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        2 => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A civil date-time split into fields (second resolution).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Civil {
    /// Year, e.g. 2026.
    pub year: i32,
    /// Month 1..=12.
    pub month: u32,
    /// Day 1..=31.
    pub day: u32,
    /// Hour 0..=23.
    pub hour: u32,
    /// Minute 0..=59.
    pub minute: u32,
    /// Second 0..=59.
    pub second: u32,
}

impl Civil {
    /// Splits local seconds into fields.
    pub const fn from_local_secs(local: i64) -> Civil {
        let days = local.div_euclid(86_400);
        let sod = local.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: sod / 3600,
            minute: sod / 60 % 60,
            second: sod % 60,
        }
    }

    /// Joins fields into local seconds.
    pub const fn to_local_secs(self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + (self.hour * 3600 + self.minute * 60 + self.second) as i64
    }
}

impl std::fmt::Display for Civil {
    /// ISO 8601 without offset, e.g. `2026-03-08T02:30:00`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_day_of_four_centuries() {
        for z in -1_000i64..146_097 * 2 {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
            assert!((1..=days_in_month(y, m)).contains(&d));
        }
    }

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(weekday_from_days(days_from_civil(2026, 11, 29)), 0); // a Sunday
        assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
        assert!(!is_leap(2100) && is_leap(2000) && is_leap(2024));
        let c = Civil::from_local_secs(1_772_937_000);
        assert_eq!(c.to_string(), "2026-03-08T02:30:00");
        assert_eq!(c.to_local_secs(), 1_772_937_000);
    }
}
