//! `@at` one-shots: an RFC 3339 instant, or a civil date-time in a zone.
//!
//! - `@at 2026-12-01T09:00:00Z` / `@at 2026-12-01T09:00:00+01:00`: that
//!   instant, whatever the zone.
//! - `@at 2026-12-01T09:00`, `@at 2026-12-01 09:00:00`, `@at 2026-12-01`
//!   (midnight): civil time in `opts.tz` (UTC if none), resolved like a
//!   fixed-time cron spec: a time in a spring-forward gap fires at the first
//!   instant after the gap (`gap: skip` is rejected, since a one-shot that
//!   never fires is a mistake); a time in a repeated hour fires on the first
//!   pass (`fold: last` picks the second; `both` is the first, as a one-shot
//!   fires once).
//!
//! Precision is the millisecond: finer fractions are rejected rather than
//! rounded. Instants must fall in years 1970..=9999.

use super::dst::{FoldPolicy, GapPolicy};
use super::tzdb::TzDatabase;
use super::zone::{LocalResolution, ZoneTable};
use super::{SpecError, SpecOptions};
use crate::time::Timestamp;
use crate::time::calendar::{Civil, days_in_month};
use std::sync::Arc;

/// A parsed one-shot: the instant and the zone used to display it.
#[derive(Clone, Debug)]
pub(crate) struct At {
    pub(crate) at: Timestamp,
    pub(crate) zone: Arc<ZoneTable>,
}

/// Parses the text after `@at`.
pub(crate) fn parse(rest: &str, opts: &SpecOptions, db: &TzDatabase) -> Result<At, SpecError> {
    let zone = match &opts.tz {
        Some(name) => db.zone(name)?,
        None => ZoneTable::utc(),
    };
    let written = Written::parse(rest).map_err(|e| {
        SpecError::invalid(match e {
            WrittenError::SubMillisecond => {
                format!("@at {rest:?} has sub-millisecond precision; chime keeps milliseconds")
            }
            WrittenError::Invalid(detail) if has_offset(rest) => {
                format!("@at {rest:?} is not an RFC 3339 timestamp: {detail}")
            }
            WrittenError::Invalid(detail) => format!(
                "@at needs an RFC 3339 timestamp or a civil date-time such as \
                 2026-12-01T09:00; {rest:?}: {detail}"
            ),
        })
    })?;
    let local = written.civil.to_local_secs();
    let ms = i64::from(written.millis);
    let at = match written.offset {
        Some(offset) => (local - i64::from(offset)) * 1000 + ms,
        None => civil_ms(rest, local, ms, &zone, opts)?,
    };
    let at = Timestamp::from_millis(at).map_err(|_| out_of_range(rest))?;
    Ok(At { at, zone })
}

/// Whether the text names an offset (`Z`, `+hh:mm`, `-hh:mm`) after the date.
fn has_offset(text: &str) -> bool {
    text.get(10..)
        .is_some_and(|time| time.contains(['Z', 'z', '+', '-', '[']))
}

/// A date-time as written: `YYYY-MM-DD`, then optionally `T` (or `t` or a
/// space) and `hh:mm[:ss[.fraction]]`, then optionally an offset (`Z`,
/// `±hh:mm`, `±hhmm`, `±hh`) and, after one, an ignored RFC 9557 `[…]`
/// annotation. The grammar jiff accepted when chime parsed with it, less
/// the ISO 8601 basic and expanded-year forms.
struct Written {
    civil: Civil,
    /// Milliseconds of the fraction.
    millis: u32,
    /// Seconds east of UTC, if the text names an offset.
    offset: Option<i32>,
}

/// Why a written date-time is not one.
enum WrittenError {
    /// A fraction finer than milliseconds (rejected rather than rounded).
    SubMillisecond,
    /// Anything else, described.
    Invalid(String),
}

impl From<String> for WrittenError {
    fn from(detail: String) -> WrittenError {
        WrittenError::Invalid(detail)
    }
}

impl From<&str> for WrittenError {
    fn from(detail: &str) -> WrittenError {
        WrittenError::Invalid(detail.to_string())
    }
}

impl Written {
    fn parse(text: &str) -> Result<Written, WrittenError> {
        let mut s = Scanner(text.as_bytes());
        let year = s.digits(4, "a four-digit year")?;
        s.expect(b'-', "`-` after the year")?;
        let month = s.digits(2, "a two-digit month")?;
        s.expect(b'-', "`-` after the month")?;
        let day = s.digits(2, "a two-digit day")?;
        if !(1..=12).contains(&month) {
            return Err(format!("month {month} is not in 1..=12").into());
        }
        let year = i32::try_from(year).expect("four digits");
        if day == 0 || day > days_in_month(year, month) {
            return Err(format!("day {day} is not in month {year:04}-{month:02}").into());
        }
        let mut written = Written {
            civil: Civil {
                year,
                month,
                day,
                hour: 0,
                minute: 0,
                second: 0,
            },
            millis: 0,
            offset: None,
        };
        if s.0.is_empty() {
            return Ok(written);
        }
        if !s.eat(b'T') && !s.eat(b't') && !s.eat(b' ') {
            return Err("expected `T` or a space after the date".into());
        }
        let c = &mut written.civil;
        c.hour = s.digits(2, "a two-digit hour")?;
        s.expect(b':', "`:` after the hour")?;
        c.minute = s.digits(2, "a two-digit minute")?;
        if s.eat(b':') {
            c.second = s.digits(2, "two-digit seconds")?;
            if s.eat(b'.') || s.eat(b',') {
                written.millis = s.fraction_millis()?;
            }
        }
        if c.hour > 23 || c.minute > 59 || c.second > 59 {
            return Err(format!(
                "{:02}:{:02}:{:02} is not a time of day",
                c.hour, c.minute, c.second
            )
            .into());
        }
        written.offset = s.offset()?;
        if written.offset.is_some() && s.eat(b'[') {
            let name = s.0.iter().take_while(|&&b| is_zone_name_byte(b)).count();
            s.0 = &s.0[name..];
            if name == 0 || !s.eat(b']') {
                return Err("expected a time zone name in `[…]`".into());
            }
        }
        if !s.0.is_empty() {
            return Err(format!(
                "unexpected {:?} after the date-time",
                String::from_utf8_lossy(s.0)
            )
            .into());
        }
        Ok(written)
    }
}

/// Whether `b` can be part of an IANA zone name (`America/Port-au-Prince`,
/// `Etc/GMT+5`).
fn is_zone_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'+')
}

/// Reads the written form left to right.
struct Scanner<'a>(&'a [u8]);

impl Scanner<'_> {
    fn eat(&mut self, byte: u8) -> bool {
        match self.0.split_first() {
            Some((&b, rest)) if b == byte => {
                self.0 = rest;
                true
            }
            _ => false,
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), String> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(format!("expected {what}"))
        }
    }

    /// Exactly `n` ASCII digits.
    fn digits(&mut self, n: usize, what: &str) -> Result<u32, String> {
        match self.0.get(..n) {
            Some(d) if d.iter().all(u8::is_ascii_digit) => {
                self.0 = &self.0[n..];
                Ok(d.iter().fold(0, |v, &b| v * 10 + u32::from(b - b'0')))
            }
            _ => Err(format!("expected {what}")),
        }
    }

    /// 1 to 9 fraction digits as milliseconds; finer precision is an error.
    fn fraction_millis(&mut self) -> Result<u32, WrittenError> {
        let len = self.0.iter().take_while(|b| b.is_ascii_digit()).count();
        if !(1..=9).contains(&len) {
            return Err("expected 1 to 9 digits of fraction".into());
        }
        let (digits, rest) = self.0.split_at(len);
        self.0 = rest;
        if digits.iter().skip(3).any(|&b| b != b'0') {
            return Err(WrittenError::SubMillisecond);
        }
        let mut millis = 0;
        for i in 0..3 {
            millis = millis * 10 + digits.get(i).map_or(0, |&b| u32::from(b - b'0'));
        }
        Ok(millis)
    }

    /// `Z`, `±hh:mm`, `±hhmm` or `±hh`, if there is one.
    fn offset(&mut self) -> Result<Option<i32>, String> {
        if self.eat(b'Z') || self.eat(b'z') {
            return Ok(Some(0));
        }
        let sign = if self.eat(b'+') {
            1
        } else if self.eat(b'-') {
            -1
        } else {
            return Ok(None);
        };
        let hours = self.digits(2, "a two-digit offset hour")?;
        let minutes = if self.eat(b':') || self.0.first().is_some_and(u8::is_ascii_digit) {
            self.digits(2, "two-digit offset minutes")?
        } else {
            0
        };
        if hours > 25 || minutes > 59 {
            return Err(format!("offset {hours:02}:{minutes:02} is out of range"));
        }
        let secs = i32::try_from(hours * 3600 + minutes * 60).expect("small");
        Ok(Some(sign * secs))
    }
}

/// A civil date-time in `zone` (local second `local`, `ms` into it) as UTC
/// milliseconds, under the DST policy.
fn civil_ms(
    text: &str,
    local: i64,
    ms: i64,
    zone: &ZoneTable,
    opts: &SpecOptions,
) -> Result<i64, SpecError> {
    let (gap, fold) = opts.dst.effective(true);
    Ok(match zone.resolve_local(local) {
        LocalResolution::Unique(utc) => utc * 1000 + ms,
        LocalResolution::Gap { transition } => match gap {
            GapPolicy::Shift => transition * 1000,
            GapPolicy::Skip => {
                return Err(SpecError::invalid(format!(
                    "@at {text:?} does not exist in {} (spring-forward gap) and dst gap is \
                     `skip`; use `shift` or another time",
                    zone.name()
                )));
            }
        },
        LocalResolution::Fold { first, second } => {
            let pick = if fold == FoldPolicy::Last {
                second
            } else {
                first
            };
            pick * 1000 + ms
        }
    })
}

fn out_of_range(text: &str) -> SpecError {
    SpecError::invalid(format!("@at {text:?} is outside years 1970..=9999"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(rest: &str, opts: &SpecOptions) -> Result<At, SpecError> {
        super::parse(rest, opts, &TzDatabase::bundled())
    }
    use crate::spec::DstPolicy;

    fn opts(tz: Option<&str>, gap: Option<GapPolicy>, fold: Option<FoldPolicy>) -> SpecOptions {
        SpecOptions {
            tz: tz.map(str::to_string),
            dst: DstPolicy { gap, fold },
            ..SpecOptions::default()
        }
    }

    fn at(text: &str, o: &SpecOptions) -> String {
        parse(text, o).unwrap().at.to_string()
    }

    #[test]
    fn absolute_instants() {
        let o = opts(Some("America/New_York"), None, None);
        assert_eq!(at("2026-12-01T09:00:00Z", &o), "2026-12-01T09:00:00.000Z");
        assert_eq!(
            at("2026-12-01T09:00:00.250+01:00", &o),
            "2026-12-01T08:00:00.250Z"
        );
        assert_eq!(
            at("2026-12-01 09:00:00-05:00", &o),
            "2026-12-01T14:00:00.000Z"
        );
    }

    #[test]
    fn civil_times_use_the_zone() {
        let utc = SpecOptions::default();
        assert_eq!(at("2026-12-01T09:00", &utc), "2026-12-01T09:00:00.000Z");
        assert_eq!(at("2026-12-01", &utc), "2026-12-01T00:00:00.000Z");
        let ny = opts(Some("America/New_York"), None, None);
        assert_eq!(at("2026-12-01 09:00:00", &ny), "2026-12-01T14:00:00.000Z");
        assert_eq!(at("2026-07-01T09:00:00.5", &ny), "2026-07-01T13:00:00.500Z");
    }

    #[test]
    fn dst_policy_applies() {
        let ny = opts(Some("America/New_York"), None, None);
        assert_eq!(at("2026-03-08T02:30", &ny), "2026-03-08T07:00:00.000Z");
        assert_eq!(at("2026-11-01T01:30", &ny), "2026-11-01T05:30:00.000Z");
        let last = opts(Some("America/New_York"), None, Some(FoldPolicy::Last));
        assert_eq!(at("2026-11-01T01:30", &last), "2026-11-01T06:30:00.000Z");
        let both = opts(Some("America/New_York"), None, Some(FoldPolicy::Both));
        assert_eq!(at("2026-11-01T01:30", &both), "2026-11-01T05:30:00.000Z");
        let skip = opts(Some("America/New_York"), Some(GapPolicy::Skip), None);
        let e = parse("2026-03-08T02:30", &skip).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert_eq!(at("2026-03-08T03:30", &skip), "2026-03-08T07:30:00.000Z");
    }

    #[test]
    fn rejects_bad_input() {
        let o = SpecOptions::default();
        for bad in [
            "tomorrow",
            "2026-13-01T00:00",
            "2026-12-01T09:00:00.0000001Z",
            "2026-12-01T09:00:00.0000001",
            "1969-12-31T23:59:59Z",
            "1969-12-31T23:59:59",
            "2026-12-01T09:00:00+26:00",
        ] {
            assert_eq!(parse(bad, &o).unwrap_err().code(), "invalid_spec", "{bad}");
        }
        let e = parse("2026-12-01T09:00", &opts(Some("Nowhere/City"), None, None));
        assert_eq!(e.unwrap_err().code(), "invalid_time_zone");
    }

    /// What jiff (which chime parsed `@at` with before) makes of `text` as
    /// UTC milliseconds, with chime's limits: milliseconds, years 1970..=9999.
    fn jiff_ms(text: &str) -> Option<i64> {
        let (ms, nanos) = if has_offset(text) {
            let ts = text.parse::<jiff::Timestamp>().ok()?;
            (ts.as_millisecond(), ts.subsec_nanosecond())
        } else {
            // jiff's instants end late on 9999-12-30; its civil ones do not.
            let dt: jiff::civil::DateTime = text.parse().ok()?;
            let civil = Civil {
                year: i32::from(dt.year()),
                month: dt.month().unsigned_abs().into(),
                day: dt.day().unsigned_abs().into(),
                hour: dt.hour().unsigned_abs().into(),
                minute: dt.minute().unsigned_abs().into(),
                second: dt.second().unsigned_abs().into(),
            };
            let nanos = dt.subsec_nanosecond();
            (
                civil.to_local_secs() * 1000 + i64::from(nanos / 1_000_000),
                nanos,
            )
        };
        let in_range = (0..253_402_300_800_000).contains(&ms);
        (nanos % 1_000_000 == 0 && in_range).then_some(ms)
    }

    /// Every combination of dates, separators, times and offsets, valid and
    /// not: accepted exactly when jiff accepts it, as the same instant.
    #[test]
    fn agrees_with_jiff_on_written_forms() {
        let dates = [
            "2026-12-01",
            "2024-02-29",
            "2026-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "1970-01-01",
            "9999-12-29",
            "1969-12-31",
            "2026-1-01",
            "26-12-01",
        ];
        let times = [
            "09:00",
            "23:59:59",
            "24:00",
            "09:60",
            "00:00:00.5",
            "09:00:00,25",
            "9:00",
            "09:00:00.123456789",
            "09:00:00.123000000",
            "09:00:00.1234",
            "09:00:00.",
            "09:00:00.1234567891",
            "09:00:61",
            "09:00.5",
        ];
        let offsets = [
            "",
            "Z",
            "z",
            "+01:00",
            "-05:30",
            "+0530",
            "+05",
            "+25:59",
            "+26:00",
            "-00:00",
            "+01:00[Europe/Paris]",
            "Z[Etc/UTC]",
            "Z[!u-ca=iso8601]",
            "+1",
            "+01:",
            "+01:60",
            " Z",
            "Zx",
        ];
        let utc = SpecOptions::default();
        let mut checked = 0;
        let mut accepted = 0;
        let mut check = |text: String| {
            let ours = parse(&text, &utc).map(|a| a.at.as_millis());
            match (ours, jiff_ms(&text)) {
                (Ok(ours), Some(theirs)) => {
                    assert_eq!(ours, theirs, "{text}");
                    accepted += 1;
                }
                (Err(e), None) => assert_eq!(e.code(), "invalid_spec", "{text}"),
                (ours, theirs) => panic!("{text:?}: chime {ours:?}, jiff {theirs:?}"),
            }
            checked += 1;
        };
        for date in dates {
            check(date.to_string());
            for sep in ["T", "t", " ", "_"] {
                for time in times {
                    for offset in offsets {
                        check(format!("{date}{sep}{time}{offset}"));
                    }
                }
            }
        }
        assert!(accepted > 300 && checked > 2000, "{accepted} of {checked}");
        // Past jiff's last instant (9999-12-30T22:00Z), still in chime's range.
        assert_eq!(
            at("9999-12-31T23:59:59.999Z", &utc),
            "9999-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let o = SpecOptions::default();
        let msg = |text: &str| parse(text, &o).unwrap_err().to_string();
        assert!(msg("2026-12-01T09:00:00.0000001Z").contains("sub-millisecond"));
        assert!(msg("2026-02-30").contains("day 30 is not in month 2026-02"));
        assert!(msg("2026-12-01T09:00+26:00").contains("not an RFC 3339 timestamp"));
        assert!(msg("2026-12-01T25:00").contains("civil date-time such as"));
        assert!(msg("1969-12-31T23:59:59Z").contains("outside years 1970..=9999"));
    }
}
