//! Cron expressions as bitsets, matched in civil (local) time.
//!
//! The grammar is documented in `docs/spec.md`: 5 fields (minute hour
//! day-of-month month day-of-week), 6 (seconds first) or 7 (plus year);
//! `* ? , - /`, month and weekday names, `L`, `L-n`, `LW`, `nW`, `nL`, `n#k`,
//! the `+` (AND) modifier on day-of-week, macros such as `@daily`, and an
//! optional `CRON_TZ=`/`TZ=` prefix.
//!
//! Times here are *local seconds*: a civil date-time counted as if it were
//! UTC seconds since 1970-01-01T00:00:00 (see [`crate::time::calendar`]). Zones
//! and DST are applied on top by `spec::dst`. Searching never scans minute
//! by minute: it jumps month → day → hour → minute → second through bitsets,
//! computing one day mask per month visited, and does not allocate.

mod calendar;
mod count;
mod days;
mod display;
mod field;
mod matcher;
mod parse;
#[cfg(test)]
mod tests;
mod years;

use super::SpecError;

/// A parsed cron expression (5, 6 or 7 fields, or a macro).
///
/// Its `Display` is a normalized 6-field form (7 with a year field), e.g.
/// `0 */15 9-17 * * 1-5` for `*/15 9-17 * * MON-FRI`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSpec {
    /// Bit `s` for second `s` (0..=59).
    seconds: u64,
    /// Bit `m` for minute `m` (0..=59).
    minutes: u64,
    /// Bit `h` for hour `h` (0..=23).
    hours: u32,
    /// Bit `m` for month `m` (1..=12).
    months: u16,
    /// Day-of-month and day-of-week rules.
    days: days::Days,
    /// The year field, when one was given and is not `*`.
    years: Option<years::Years>,
    /// Derived: the matching weekdays when every month and year matches and
    /// days depend on the weekday alone (see [`days::Days::weekly`]), else 0.
    /// Such expressions are searched without calendar conversions.
    weekly: u8,
}

/// The set bits of `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = i64> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let b = mask.trailing_zeros();
        mask &= mask - 1;
        Some(i64::from(b))
    })
}

/// A cron expression plus the zone named by a `CRON_TZ=`/`TZ=` prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedCron {
    /// The fields.
    pub cron: CronSpec,
    /// The zone from the prefix, if any (not validated here).
    pub tz: Option<String>,
}

impl CronSpec {
    /// Parses cron text (with optional `CRON_TZ=`/`TZ=` prefix or a macro).
    ///
    /// Errors are [`SpecError::InvalidSpec`] naming the field (1-based, the
    /// prefix not counted) and, for a bad character, its column, e.g.
    /// `invalid_spec: day-of-month 32 out of range 1-31 at field 3`.
    #[inline]
    pub fn parse(text: &str) -> Result<ParsedCron, SpecError> {
        parse::parse(text)
    }

    /// The first local second `>= from` and `< limit` that matches, if any.
    ///
    /// The search also ends at 10000-01-01T00:00:00 and starts no earlier
    /// than 0001-01-01T00:00:00. It costs a few tens of nanoseconds for
    /// common expressions and is bounded by the number of months between
    /// `from` and `limit`.
    pub fn next_civil(&self, from: i64, limit: i64) -> Option<i64> {
        self.search(from, limit)
    }

    /// Whether local second `local` matches every field.
    pub fn matches_civil(&self, local: i64) -> bool {
        self.matches(local)
    }

    /// The shortest gap, in seconds, between two times of day this
    /// expression selects, if it is below `below` (`None`: no gap is).
    ///
    /// Exact on the civil clock when every day matches: the times of day
    /// are walked in order (hour, minute, second bits ascending), and the
    /// wrap from the last time of one day to the first of the next counts
    /// as a gap too. With restricted days that wrap is only a lower bound,
    /// so the answer never overstates the gap. It walks every selected time
    /// of day (at most 86,400; stopping at a 1 s gap): a few microseconds
    /// for specs a minimum accepts, which select at most `86400 / below`
    /// times, and bounded for the ones it refuses. Integers only.
    pub fn gap_below(&self, below: i64) -> Option<i64> {
        if below <= 1 {
            return None;
        }
        let mut first: Option<i64> = None;
        let mut prev: Option<i64> = None;
        let mut min = i64::MAX;
        for h in bits(u64::from(self.hours)) {
            for m in bits(self.minutes) {
                for s in bits(self.seconds) {
                    let t = h * 3600 + m * 60 + s;
                    if let Some(p) = prev {
                        min = min.min(t - p);
                        // A second is the least gap there is.
                        if min == 1 {
                            return (min < below).then_some(min);
                        }
                    }
                    first.get_or_insert(t);
                    prev = Some(t);
                }
            }
        }
        let (first, last) = (first?, prev?);
        min = min.min(86_400 - last + first);
        (min < below).then_some(min)
    }

    /// Second, minute and hour fields each select exactly one value.
    ///
    /// Under `dst: auto` such an expression shifts out of a spring-forward
    /// gap and fires once in a repeated hour (see `docs/dst.md`).
    pub fn is_fixed_time(&self) -> bool {
        self.seconds.count_ones() == 1
            && self.minutes.count_ones() == 1
            && self.hours.count_ones() == 1
    }
}
