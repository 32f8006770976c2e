//! Day selection: day-of-month (`L`, `L-n`, `LW`, `nW`) and day-of-week
//! (`nL`, `n#k`) rules, folded into one bitmask of matching days per month.
//!
//! A month's mask is computed once per month the search visits, from the
//! weekday of its 1st and its length, with rotations and shifts only.

use super::field::{DOM, DOW, Field};
use crate::spec::SpecError;

/// Replicates a 7-bit weekday pattern five times (bits 0..35).
const WEEKS: u64 = 1 | 1 << 7 | 1 << 14 | 1 << 21 | 1 << 28;

/// The day rules of a cron expression.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Days {
    /// Plain days of month: bit `d` for day `d` (1..=31).
    pub dom: u32,
    /// `L` and `L-n`: bit `n` for "the n-th day before the last" (`L` = 0).
    pub dom_last: u32,
    /// `LW`: the last weekday (Mon–Fri) of the month.
    pub dom_last_weekday: bool,
    /// `nW`: bit `n` for "the weekday nearest day n, within the month".
    pub dom_nearest: u32,
    /// Plain weekdays: bit `w` for weekday `w` (0 = Sunday).
    pub dow: u8,
    /// `w#k`: `dow_nth[k-1]` has bit `w` for "the k-th weekday w".
    pub dow_nth: [u8; 5],
    /// `wL` / `w#L`: bit `w` for "the last weekday w of the month".
    pub dow_last: u8,
    /// The day-of-month field was `*` or `?` (unrestricted).
    pub dom_star: bool,
    /// The day-of-week field was `*` or `?` (unrestricted).
    pub dow_star: bool,
    /// `+` on the day-of-week field: both day fields must match.
    pub and: bool,
    /// Derived: `dow` in every week plus `dow_nth[k]` in week k, 7 bits a
    /// week (bit `7k + w`), so one rotation places them all.
    pub dow_weeks: u64,
    /// Derived: the mask depends on the month's length only (no weekday
    /// rule), so months can be skipped without their day count.
    pub by_len: bool,
}

impl Days {
    /// The weekdays that match when the day rule depends on the weekday
    /// alone (day-of-month `*`, no `#`/`L`), else 0.
    pub(super) fn weekly(&self) -> u8 {
        let plain = self.dow_nth == [0; 5] && self.dow_last == 0;
        match (self.dom_star, self.dow_star) {
            (true, true) => 0x7f,
            (true, false) if plain => self.dow,
            _ => 0,
        }
    }

    /// Mask of matching days (bit `d` = day `d`) in a month of `len` days
    /// whose 1st falls on weekday `first` (0 = Sunday).
    #[inline]
    pub(super) fn month_mask(&self, first: u32, len: u32) -> u32 {
        debug_assert!(first < 7 && (28..=31).contains(&len));
        let valid = (u32::MAX >> (31 - len)) & !1;
        let mask = match (self.dom_star, self.dow_star) {
            (true, true) => return valid,
            (false, true) => self.dom_mask(first, len),
            (true, false) => self.dow_mask(first, len),
            (false, false) if self.and => self.dom_mask(first, len) & self.dow_mask(first, len),
            (false, false) => self.dom_mask(first, len) | self.dow_mask(first, len),
        };
        mask & valid
    }

    /// Days selected by the day-of-month field (may include bits past `len`).
    fn dom_mask(&self, first: u32, len: u32) -> u32 {
        let mut mask = self.dom;
        if self.dom_last != 0 {
            // Bit n (L-n) lands on bit len-n; offsets >= len fall to bit 0 or
            // below and are masked away.
            mask |= self.dom_last.reverse_bits() >> (31 - len);
        }
        if self.dom_last_weekday {
            mask |= 1
                << match (first + len - 1) % 7 {
                    6 => len - 1,
                    0 => len - 2,
                    _ => len,
                };
        }
        // Only days that exist this month; the W rule never leaves the month.
        let mut nearest = self.dom_nearest & (u32::MAX >> (31 - len));
        while nearest != 0 {
            let day = nearest.trailing_zeros();
            nearest &= nearest - 1;
            mask |= 1
                << match (first + day - 1) % 7 {
                    6 if day > 1 => day - 1,
                    6 => day + 2,
                    0 if day < len => day + 1,
                    0 => day - 2,
                    _ => day,
                };
        }
        mask
    }

    /// Fills the derived fields once both day fields are parsed.
    pub(super) fn finish(&mut self) {
        self.dow_weeks = self
            .dow_nth
            .iter()
            .enumerate()
            .fold(u64::from(self.dow) * WEEKS, |acc, (k, &set)| {
                acc | u64::from(set) << (7 * k)
            });
        self.by_len = self.dow_star && !self.dom_last_weekday && self.dom_nearest == 0;
    }

    /// Days selected by the day-of-week field (may include bits past `len`).
    fn dow_mask(&self, first: u32, len: u32) -> u32 {
        // Rotate each week's 7 bits right by `first`: bit 7k + j then says
        // whether day 7k + j + 1 is selected.
        let low = WEEKS * ((1 << (7 - first)) - 1);
        let mut mask = ((self.dow_weeks >> first) & low)
            | ((self.dow_weeks << (7 - first)) & (WEEKS * 0x7f) & !low);
        if self.dow_last != 0 {
            // The last seven days of the month, starting at offset len-7.
            let start = len - 7;
            mask |= rotate_week(self.dow_last, (first + start) % 7) << start;
        }
        (mask << 1) as u32
    }

    /// Parses the day-of-month field (not `*`/`?`, handled by the caller).
    pub(super) fn parse_dom(&mut self, f: &Field<'_>) -> Result<(), SpecError> {
        for (at, item) in f.items()? {
            let bytes = item.as_bytes();
            if item.eq_ignore_ascii_case("L") {
                self.dom_last |= 1;
            } else if item.eq_ignore_ascii_case("LW") {
                self.dom_last_weekday = true;
            } else if let [b'L' | b'l', b'-', ..] = bytes {
                // Both bytes are ASCII: byte 2 is a char boundary.
                let n = &item[2..];
                let n = f
                    .value(at + 2, n, None)
                    .map_err(|_| f.err(format_args!("day-of-month {item} offset must be 1-30")))?;
                if !(1..=30).contains(&n) {
                    return Err(f.err(format_args!("day-of-month {item} offset must be 1-30")));
                }
                self.dom_last |= 1 << n;
            } else if let Some(day) = item.strip_suffix(['W', 'w']) {
                if day.is_empty() || !day.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(f.err_at(
                        at,
                        format_args!(
                            "'W' must follow a single day of month, as in 15W, not {item:?}"
                        ),
                    ));
                }
                self.dom_nearest |= 1 << f.value(at, day, None)?;
            } else {
                self.dom |= f.run(at, item)?.bits() as u32;
            }
        }
        debug_assert!(std::ptr::eq(f.kind, &DOM));
        Ok(())
    }

    /// Parses the day-of-week field (without `+`; not `*`/`?`).
    pub(super) fn parse_dow(&mut self, f: &Field<'_>) -> Result<(), SpecError> {
        for (at, item) in f.items()? {
            let (base, occurrence) = match split_once_hash(item) {
                Some((base, occ)) => (base, Some((at + base.len() + 1, occ))),
                None if item.len() > 1 && item.ends_with(['L', 'l']) => {
                    (&item[..item.len() - 1], Some((at + item.len() - 1, "L")))
                }
                None => (item, None),
            };
            if item.eq_ignore_ascii_case("L") {
                return Err(f.err_at(
                    at,
                    "'L' alone is not supported in day-of-week; write nL for the last weekday n \
                     of the month, e.g. 5L",
                ));
            }
            if occurrence.is_some() && (base == "*" || base.starts_with("*/")) {
                return Err(f.err_at(at, format_args!("'#' and 'L' need a weekday, not {base:?}")));
            }
            let set = fold_sunday(f.run(at, base)?.bits());
            match occurrence {
                None => self.dow |= set,
                Some((_, occ)) if occ.eq_ignore_ascii_case("L") => self.dow_last |= set,
                Some((occ_at, occ)) => {
                    let k = occ.parse::<u32>().ok().filter(|k| (1..=5).contains(k));
                    let Some(k) = k else {
                        if occ.is_empty() || occ.bytes().any(|b| !b.is_ascii_digit()) {
                            return Err(f.err_at(
                                occ_at,
                                format_args!("day-of-week occurrence {occ:?} must be 1-5 or L"),
                            ));
                        }
                        return Err(f.err(format_args!(
                            "day-of-week occurrence #{occ} out of range 1-5"
                        )));
                    };
                    self.dow_nth[k as usize - 1] |= set;
                }
            }
        }
        debug_assert!(std::ptr::eq(f.kind, &DOW));
        Ok(())
    }
}

/// `item.split_once('#')`, searching bytes.
fn split_once_hash(item: &str) -> Option<(&str, &str)> {
    let i = item.bytes().position(|b| b == b'#')?;
    Some((&item[..i], &item[i + 1..]))
}

/// Rotates a 7-bit weekday set right by `by` (0..7): bit j of the result is
/// bit (j + by) % 7 of `set`.
#[inline]
pub(super) fn rotate_week(set: u8, by: u32) -> u64 {
    let set = u64::from(set);
    ((set >> by) | (set << (7 - by))) & 0x7f
}

/// Weekday bits 0..=7 to 0..=6 (7 is Sunday, like 0).
pub(super) fn fold_sunday(bits: u64) -> u8 {
    ((bits | bits >> 7) & 0x7f) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::cron::tests::naive_day;
    use crate::time::calendar::{days_from_civil, days_in_month, weekday_from_days};

    fn days(dom: &str, dow: &str) -> Days {
        let mut days = Days {
            dom_star: dom == "*",
            dow_star: dow.trim_start_matches('+') == "*",
            and: dow.starts_with('+'),
            ..Days::default()
        };
        let field = |kind, text| Field {
            kind,
            text,
            number: 1,
            whole: text,
            start: 0,
        };
        if !days.dom_star {
            days.parse_dom(&field(&DOM, dom)).unwrap();
        }
        if !days.dow_star {
            days.parse_dow(&field(&DOW, dow.trim_start_matches('+')))
                .unwrap();
        }
        days.finish();
        days
    }

    #[test]
    fn month_masks_match_the_definitions() {
        let cases = [
            ("*", "*"),
            ("L", "*"),
            ("L-1,L-5", "*"),
            ("L-30", "*"),
            ("LW", "*"),
            ("1W", "*"),
            ("15W,31W", "*"),
            ("30W", "*"),
            ("*", "5L"),
            ("*", "MON#1,FRI#5"),
            ("*", "1-5#2"),
            ("*", "SUN#L,3"),
            ("1,15", "MON"),
            ("1-7", "+MON"),
            ("L", "+FRI"),
            ("*/2", "SAT,SUN"),
            ("13", "+5"),
            ("1W", "0#1"),
            ("LW,L-2", "6L"),
        ];
        for (dom, dow) in cases {
            let spec = days(dom, dow);
            for y in 2020..2032 {
                for m in 1..=12 {
                    let first = days_from_civil(y, m, 1);
                    let len = days_in_month(y, m);
                    let mask = spec.month_mask(weekday_from_days(first), len);
                    for d in 1..=len {
                        assert_eq!(
                            mask & (1 << d) != 0,
                            naive_day(&spec, y, m, d),
                            "{dom} {dow} on {y}-{m}-{d}"
                        );
                    }
                    assert_eq!(u64::from(mask) >> (len + 1), 0);
                    assert_eq!(mask & 1, 0);
                }
            }
        }
    }

    #[test]
    fn nearest_weekday_stays_in_the_month() {
        // 2025-11-01 is a Saturday: 1W is Monday the 3rd.
        let spec = days("1W", "*");
        let first = days_from_civil(2025, 11, 1);
        assert_eq!(spec.month_mask(weekday_from_days(first), 30), 1 << 3);
        // 2026-05-31 is a Sunday: 31W is Friday the 29th.
        let spec = days("31W", "*");
        let first = days_from_civil(2026, 5, 1);
        assert_eq!(spec.month_mask(weekday_from_days(first), 31), 1 << 29);
        // 31W never fires in a 30-day month.
        let first = days_from_civil(2026, 4, 1);
        assert_eq!(spec.month_mask(weekday_from_days(first), 30), 0);
    }
}
