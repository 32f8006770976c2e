//! Fast calendar conversions for the search hot path.
//!
//! Same results as [`crate::time::calendar`] over the years the search covers
//! (1..=10000), but in unsigned 32-bit arithmetic with multiplications and
//! shifts (Neri and Schneider, "Euclidean affine functions and their
//! application to calendar algorithms", 2022), several times faster than the
//! signed 64-bit Hinnant algorithms: the search converts on every call.

/// Shift that makes every supported day count positive (82 × 400 years).
const ERAS: u32 = 82;
const K: u32 = 719_468 + 146_097 * ERAS;
const L: u32 = 400 * ERAS;

/// `(year, month, day)` of a day count since 1970-01-01 (years 1..=10000).
#[inline]
pub(super) fn civil_from_days(days: i64) -> (i32, u32, u32) {
    debug_assert!((-719_162..=2_933_262).contains(&days));
    let n = (days as i32 as u32).wrapping_add(K);
    let n1 = 4 * n + 3;
    let century = n1 / 146_097;
    let n_c = n1 % 146_097 / 4;
    let n2 = 4 * n_c + 3;
    let p2 = 2_939_745u64 * u64::from(n2);
    let z = (p2 >> 32) as u32;
    let n_y = (p2 as u32) / 2_939_745 / 4;
    let year = 100 * century + z;
    let n3 = 2141 * n_y + 197_913;
    let month = n3 >> 16;
    let day = (n3 & 0xffff) / 2141 + 1;
    let january_or_february = n_y >= 306;
    let year = (year + u32::from(january_or_february)) as i32 - L as i32;
    let month = if january_or_february {
        month - 12
    } else {
        month
    };
    (year, month, day)
}

/// Day count since 1970-01-01 of a civil date (years 1..=10000).
#[inline]
pub(super) fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    debug_assert!((1..=10_000).contains(&year) && (1..=12).contains(&month));
    let january_or_february = month <= 2;
    let y = (year as u32 + L) - u32::from(january_or_february);
    let m = if january_or_february {
        month + 12
    } else {
        month
    };
    let century = y / 100;
    let y_star = 1461 * y / 4 - century + century / 4;
    let m_star = (979 * m - 2919) / 32;
    i64::from(y_star + m_star + day - 1) - i64::from(K)
}

#[cfg(test)]
mod tests {
    use crate::time::calendar as civil;

    #[test]
    fn agrees_with_civil_over_years_1_to_10000() {
        let first = civil::days_from_civil(1, 1, 1);
        let last = civil::days_from_civil(10_000, 12, 31);
        for days in first..=last {
            let ymd = civil::civil_from_days(days);
            assert_eq!(super::civil_from_days(days), ymd, "{days}");
            assert_eq!(super::days_from_civil(ymd.0, ymd.1, ymd.2), days, "{ymd:?}");
        }
    }
}
