//! POSIX TZ rules (the footer of a TZif file, RFC 8536 §3.3), which give a
//! zone's offsets after its last explicit transition: `EST5EDT,M3.2.0,M11.1.0`,
//! `<+03>-3`, `IST-1GMT0,M10.5.0,M3.5.0/1`.
//!
//! Only what chime needs: the standard offset and, for zones with daylight
//! saving time, the two transitions of a given year. The strings come from
//! the bundled database (checked against jiff for every zone in the tests),
//! so a malformed one is a build defect and parses to `None`.

use crate::time::calendar::{days_from_civil, days_in_month, is_leap, weekday_from_days};

/// A zone's rule for the times after its explicit transitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PosixTz {
    /// Standard-time offset, seconds east of UTC.
    pub std_offset: i32,
    /// Daylight saving time, if the zone observes it.
    pub dst: Option<Dst>,
}

/// The daylight-saving part of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dst {
    /// Offset during daylight saving time, seconds east of UTC.
    pub offset: i32,
    /// When it starts (local standard time) and ends (local daylight time).
    pub start: RuleTime,
    pub end: RuleTime,
}

/// A day of the year and a local time on it (seconds, may be negative or
/// past 24 h, RFC 8536 §3.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RuleTime {
    day: RuleDay,
    secs: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RuleDay {
    /// `Jn`: day 1..=365, February 29 never counted.
    Julian1(u16),
    /// `n`: day 0..=365, February 29 counted.
    Julian0(u16),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    MonthWeekDay { month: u8, week: u8, weekday: u8 },
}

impl PosixTz {
    /// Parses a TZ string; `None` if it is not one.
    pub(crate) fn parse(text: &str) -> Option<PosixTz> {
        let mut p = Parser { rest: text };
        p.name()?;
        let std_offset = -p.hms(24)?;
        if p.rest.is_empty() {
            return Some(PosixTz {
                std_offset,
                dst: None,
            });
        }
        p.name()?;
        let offset = if p.rest.starts_with(',') || p.rest.is_empty() {
            std_offset + 3600
        } else {
            -p.hms(24)?
        };
        // POSIX's default rule when none is given (US rules since 2007).
        let (start, end) = if p.rest.is_empty() {
            (
                RuleTime::month_week_day(3, 2, 0),
                RuleTime::month_week_day(11, 1, 0),
            )
        } else {
            p.eat(',')?;
            let start = p.rule_time()?;
            p.eat(',')?;
            (start, p.rule_time()?)
        };
        p.rest.is_empty().then_some(PosixTz {
            std_offset,
            dst: Some(Dst { offset, start, end }),
        })
    }

    /// Whether the rule changes the offset at all: it has daylight saving
    /// time with its own offset, not all year long (RFC 8536 §3.3.1 writes
    /// permanent DST as one that ends when the next year's begins).
    pub(crate) fn changes_offset(&self) -> bool {
        let Some(dst) = self.dst else {
            return false;
        };
        let mut times: Vec<i64> = (2001..=2003)
            .flat_map(|y| self.transitions(y))
            .map(|t| t.0)
            .collect();
        times.sort_unstable();
        dst.offset != self.std_offset && times.windows(2).all(|w| w[0] < w[1])
    }

    /// The rule's two transitions in `year` as `(UTC second, offset from
    /// then on)`, in time order; none without daylight saving time.
    pub(crate) fn transitions(&self, year: i32) -> impl Iterator<Item = (i64, i32)> {
        let both = self.dst.map(|dst| {
            let start = dst.start.local_secs(year) - i64::from(self.std_offset);
            let end = dst.end.local_secs(year) - i64::from(dst.offset);
            let mut both = [(start, dst.offset), (end, self.std_offset)];
            both.sort_by_key(|&(at, _)| at);
            both
        });
        both.into_iter().flatten()
    }
}

impl RuleTime {
    const fn month_week_day(month: u8, week: u8, weekday: u8) -> RuleTime {
        RuleTime {
            day: RuleDay::MonthWeekDay {
                month,
                week,
                weekday,
            },
            secs: 7200,
        }
    }

    /// Local seconds (since 1970, as if UTC) of this time in `year`.
    fn local_secs(self, year: i32) -> i64 {
        let jan1 = days_from_civil(year, 1, 1);
        let day = match self.day {
            RuleDay::Julian1(n) => {
                let n = i64::from(n);
                jan1 + n - 1 + i64::from(is_leap(year) && n >= 60)
            }
            RuleDay::Julian0(n) => jan1 + i64::from(n),
            RuleDay::MonthWeekDay {
                month,
                week,
                weekday,
            } => {
                let month = u32::from(month);
                let first = days_from_civil(year, month, 1);
                let lead = (i64::from(weekday) - i64::from(weekday_from_days(first))).rem_euclid(7);
                let mut day = first + lead + 7 * (i64::from(week) - 1);
                let last = first + i64::from(days_in_month(year, month)) - 1;
                while day > last {
                    day -= 7;
                }
                day
            }
        };
        day * 86_400 + i64::from(self.secs)
    }
}

struct Parser<'a> {
    rest: &'a str,
}

impl Parser<'_> {
    fn eat(&mut self, c: char) -> Option<()> {
        self.rest = self.rest.strip_prefix(c)?;
        Some(())
    }

    /// A zone abbreviation: `<…>` or three or more letters.
    fn name(&mut self) -> Option<()> {
        if let Some(quoted) = self.rest.strip_prefix('<') {
            let close = quoted.find('>')?;
            self.rest = &quoted[close + 1..];
        } else {
            let len = self
                .rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(self.rest.len());
            if len < 3 {
                return None;
            }
            self.rest = &self.rest[len..];
        }
        Some(())
    }

    fn number(&mut self, max: u32) -> Option<u32> {
        let len = self
            .rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(self.rest.len());
        let n: u32 = self
            .rest
            .get(..len)
            .filter(|d| !d.is_empty())?
            .parse()
            .ok()?;
        self.rest = &self.rest[len..];
        (n <= max).then_some(n)
    }

    /// `[+-]hh[:mm[:ss]]` as seconds (sign as written).
    fn hms(&mut self, max_hours: u32) -> Option<i32> {
        let sign = if self.eat('-').is_some() {
            -1
        } else {
            let _ = self.eat('+');
            1
        };
        let mut secs = self.number(max_hours)? * 3600;
        if self.eat(':').is_some() {
            secs += self.number(59)? * 60;
            if self.eat(':').is_some() {
                secs += self.number(59)?;
            }
        }
        Some(sign * i32::try_from(secs).ok()?)
    }

    fn rule_time(&mut self) -> Option<RuleTime> {
        let day = if self.eat('J').is_some() {
            RuleDay::Julian1(u16::try_from(self.number(365)?).ok().filter(|&n| n >= 1)?)
        } else if self.eat('M').is_some() {
            let month = self.number(12)?;
            self.eat('.')?;
            let week = self.number(5)?;
            self.eat('.')?;
            let weekday = self.number(6)?;
            if month == 0 || week == 0 {
                return None;
            }
            RuleDay::MonthWeekDay {
                month: month as u8,
                week: week as u8,
                weekday: weekday as u8,
            }
        } else {
            RuleDay::Julian0(u16::try_from(self.number(365)?).ok()?)
        };
        let secs = if self.eat('/').is_some() {
            self.hms(167)?
        } else {
            7200
        };
        Some(RuleTime { day, secs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `YYYY-MM-DDTHH:MM:SS` (UTC) as seconds since 1970.
    fn utc(text: &str) -> i64 {
        let n = |r: std::ops::Range<usize>| text[r].parse::<u32>().unwrap();
        let day = days_from_civil(n(0..4) as i32, n(5..7), n(8..10));
        day * 86_400 + i64::from(n(11..13) * 3600 + n(14..16) * 60 + n(17..19))
    }

    #[test]
    fn parses_the_common_forms() {
        let ny = PosixTz::parse("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_eq!(ny.std_offset, -18_000);
        assert_eq!(ny.dst.unwrap().offset, -14_400);
        assert_eq!(
            ny.transitions(2026).collect::<Vec<_>>(),
            vec![
                (utc("2026-03-08T07:00:00"), -14_400),
                (utc("2026-11-01T06:00:00"), -18_000)
            ]
        );
        let fixed = PosixTz::parse("<+0545>-5:45").unwrap();
        assert_eq!(fixed.std_offset, 20_700);
        assert_eq!(fixed.transitions(2026).count(), 0);
        // Southern hemisphere: DST ends in April, starts in October.
        let syd = PosixTz::parse("AEST-10AEDT,M10.1.0,M4.1.0/3").unwrap();
        assert_eq!(
            syd.transitions(2026).collect::<Vec<_>>(),
            vec![
                (utc("2026-04-04T16:00:00"), 36_000),
                (utc("2026-10-03T16:00:00"), 39_600)
            ]
        );
        // Negative DST (Dublin's legal form) and hours past 24.
        let dub = PosixTz::parse("IST-1GMT0,M10.5.0,M3.5.0/1").unwrap();
        assert_eq!(dub.std_offset, 3600);
        assert_eq!(dub.dst.unwrap().offset, 0);
        let godthab = PosixTz::parse("<-02>2<-01>,M3.5.0/-1,M10.5.0/0").unwrap();
        assert_eq!(
            godthab.transitions(2026).next().unwrap(),
            (utc("2026-03-29T01:00:00"), -3600)
        );
        assert_eq!(
            PosixTz::parse("XXX3YYY,J60/25,300")
                .unwrap()
                .transitions(2024)
                .collect::<Vec<_>>(),
            vec![
                (utc("2024-03-02T04:00:00"), -7200),
                (utc("2024-10-27T04:00:00"), -10_800)
            ]
        );
    }

    #[test]
    fn knows_rules_that_change_nothing() {
        assert!(
            PosixTz::parse("EST5EDT,M3.2.0,M11.1.0")
                .unwrap()
                .changes_offset()
        );
        assert!(!PosixTz::parse("<+03>-3").unwrap().changes_offset());
        // DST all year: starts January 1 at 0:00, ends December 31 at 25:00.
        assert!(
            !PosixTz::parse("EST5EDT,0/0,J365/25")
                .unwrap()
                .changes_offset()
        );
        assert!(
            !PosixTz::parse("AAA3BBB3,M3.2.0,M11.1.0")
                .unwrap()
                .changes_offset()
        );
    }

    #[test]
    fn rejects_what_is_not_a_rule() {
        for bad in [
            "",
            "E5",
            "EST",
            "EST5EDT,M13.1.0,M11.1.0",
            "EST5EDT,M3.2.0",
            "EST5x",
        ] {
            assert_eq!(PosixTz::parse(bad), None, "{bad}");
        }
    }
}
