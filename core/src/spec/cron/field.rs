//! One cron field as written: its kind, position, and the generic item
//! grammar (`*`, `n`, `a-b`, `*/s`, `a-b/s`, `a/s`, names) shared by every
//! field. Day-specific modifiers (`L`, `W`, `#`) live in `days.rs`.

use crate::spec::SpecError;

/// Static description of a field: its name in messages, value range, names.
#[derive(Debug)]
pub(super) struct Kind {
    /// Name used in error messages, e.g. `day-of-month`.
    pub name: &'static str,
    /// Smallest value.
    pub min: u32,
    /// Largest value accepted as written (7 for day-of-week).
    pub max: u32,
    /// Largest value a wildcard or an open step (`a/s`) reaches (6 for
    /// day-of-week, so `*/2` is `0,2,4,6` and never adds a second Sunday).
    pub wild_max: u32,
    /// Largest step: the number of distinct values the field can take.
    pub step_max: u32,
    /// Three-letter names for `min..`, upper case (months, weekdays).
    pub names: &'static [&'static str],
}

pub(super) static SECOND: Kind = Kind::plain("second", 0, 59);
pub(super) static MINUTE: Kind = Kind::plain("minute", 0, 59);
pub(super) static HOUR: Kind = Kind::plain("hour", 0, 23);
pub(super) static DOM: Kind = Kind::plain("day-of-month", 1, 31);
pub(super) static YEAR: Kind = Kind::plain("year", 1970, 9999);
pub(super) static MONTH: Kind = Kind {
    names: &[
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ],
    ..Kind::plain("month", 1, 12)
};
pub(super) static DOW: Kind = Kind {
    name: "day-of-week",
    min: 0,
    max: 7,
    wild_max: 6,
    step_max: 7,
    names: &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
};

impl Kind {
    const fn plain(name: &'static str, min: u32, max: u32) -> Kind {
        Kind {
            name,
            min,
            max,
            wild_max: max,
            step_max: max - min + 1,
            names: &[],
        }
    }
}

impl Run {
    /// What `*` selects in a field of `kind`.
    pub(super) fn wild(kind: &Kind) -> Run {
        Run {
            lo: kind.min,
            hi: kind.wild_max,
            step: 1,
        }
    }
}

/// An arithmetic run of values `lo, lo+step, … <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub lo: u32,
    pub hi: u32,
    pub step: u32,
}

impl Run {
    /// The values as bits (`bit v` set for value `v`); fields up to 63 only.
    pub(super) fn bits(self) -> u64 {
        debug_assert!(self.hi < 64 && self.step >= 1);
        if self.step == 1 {
            // Bits lo..=hi (none when lo > hi).
            return (u64::MAX >> (63 - self.hi)) & (u64::MAX.checked_shl(self.lo).unwrap_or(0));
        }
        // Every multiple of `step` below 64, by doubling, moved to `lo` and
        // cut at `hi`.
        let mut pattern = 1u64;
        let mut width = self.step;
        while width < 64 {
            pattern |= pattern << width;
            width *= 2;
        }
        let below_hi = u64::MAX >> (63 - self.hi);
        (pattern.checked_shl(self.lo).unwrap_or(0)) & below_hi
    }
}

/// A field of the expression as written, for parsing and error messages.
pub(super) struct Field<'a> {
    pub kind: &'static Kind,
    /// The field's text as written (without a leading `+`).
    pub text: &'a str,
    /// 1-based position among the cron fields (a prefix is not counted).
    pub number: usize,
    /// The whole expression, for columns in error messages.
    pub whole: &'a str,
    /// Byte offset of `text` in `whole` (columns are counted in characters,
    /// only when an error is built).
    pub start: usize,
}

/// The list items of a field with their byte offsets (see [`Field::items`]).
pub(super) struct Items<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<(usize, &'a str)> {
        let start = self.pos;
        let rest = self.text.get(start..)?;
        let len = find(rest, b',').unwrap_or(rest.len());
        self.pos = start + len + 1;
        Some((start, &rest[..len]))
    }
}

/// Byte offset of the first `b` (an ASCII byte) in `text`.
#[inline]
pub(super) fn find(text: &str, b: u8) -> Option<usize> {
    text.bytes().position(|c| c == b)
}

/// `text.split_once(b)` for an ASCII byte `b`.
#[inline]
fn split_once(text: &str, b: u8) -> Option<(&str, &str)> {
    let i = find(text, b)?;
    // `b` is ASCII, so both sides are at char boundaries.
    Some((&text[..i], &text[i + 1..]))
}

/// The first byte that is not an ASCII digit, with the char starting there.
fn first_non_digit(text: &str) -> Option<(usize, char)> {
    let i = text.bytes().position(|b| !b.is_ascii_digit())?;
    // Every byte before `i` is ASCII, so `i` is a char boundary.
    text[i..].chars().next().map(|c| (i, c))
}

impl<'a> Field<'a> {
    /// An error about the field as a whole: `… at field N`.
    pub(super) fn err(&self, what: impl std::fmt::Display) -> SpecError {
        SpecError::invalid(format!("{what} at field {}", self.number))
    }

    /// An error about the character at byte `offset` of the field text.
    pub(super) fn err_at(&self, offset: usize, what: impl std::fmt::Display) -> SpecError {
        let column = self.whole[..self.start + offset].chars().count() + 1;
        SpecError::invalid(format!("{what} at field {}, column {column}", self.number))
    }

    /// Splits the field into list items, each with its byte offset; an empty
    /// item (`1,,2`, `1,`) is an error.
    pub(super) fn items(&self) -> Result<Items<'a>, SpecError> {
        let text = self.text;
        let bytes = text.as_bytes();
        // Byte offset of the item being scanned; an empty one is an error.
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b',' {
                if i == start {
                    break;
                }
                start = i + 1;
            }
        }
        if start == bytes.len() || bytes[start] == b',' {
            return Err(self.err_at(
                start,
                format_args!("empty list item in {} {text:?}", self.kind.name),
            ));
        }
        Ok(Items { text, pos: 0 })
    }

    /// Parses one generic item at byte `at`: `*`, `v`, `a-b`, `*/s`, `a-b/s`
    /// or `a/s` (= `a-max/s`).
    pub(super) fn run(&self, at: usize, item: &str) -> Result<Run, SpecError> {
        let kind = self.kind;
        let (base, step) = match split_once(item, b'/') {
            Some((base, step)) => (base, Some(self.step(at + base.len() + 1, step)?)),
            None => (item, None),
        };
        let (lo, hi) = if base == "*" {
            (kind.min, kind.wild_max)
        } else if let Some((a, b)) = split_once(base, b'-') {
            let lo = self.value(at, a, None)?;
            let hi = self.value(at + a.len() + 1, b, Some(lo))?;
            if lo > hi {
                let top = kind.wild_max;
                return Err(self.err(format_args!(
                    "{} range {a}-{b} is reversed (wraparound ranges are not supported; \
                     write {lo}-{top},{}-{hi})",
                    kind.name, kind.min
                )));
            }
            (lo, hi)
        } else {
            let v = self.value(at, base, None)?;
            match step {
                Some(_) => (v, kind.wild_max.max(v)),
                None => (v, v),
            }
        };
        Ok(Run {
            lo,
            hi,
            step: step.unwrap_or(1),
        })
    }

    pub(super) fn step(&self, at: usize, text: &str) -> Result<u32, SpecError> {
        let kind = self.kind;
        if text.is_empty() {
            return Err(self.err_at(at, format_args!("missing step after '/' in {}", kind.name)));
        }
        if let Some((i, c)) = first_non_digit(text) {
            return Err(self.bad_char(at + i, c));
        }
        let step = parse_digits(text);
        if step == 0 {
            return Err(self.err(format_args!("{} step 0 is not allowed", kind.name)));
        }
        if step > u64::from(kind.step_max) {
            return Err(self.err(format_args!(
                "{} step {text} is larger than {}",
                kind.name, kind.step_max
            )));
        }
        Ok(step as u32)
    }

    /// Parses a number or name at byte `at`. `range_start` is `Some(lo)` for
    /// the end of a range, where `SUN` means 7 so `FRI-SUN` works.
    pub(super) fn value(
        &self,
        at: usize,
        text: &str,
        range_start: Option<u32>,
    ) -> Result<u32, SpecError> {
        let kind = self.kind;
        if text.is_empty() {
            let what = if range_start.is_some() {
                "missing range end"
            } else {
                "missing value"
            };
            return Err(self.err_at(at, format_args!("{what} in {} {:?}", kind.name, self.text)));
        }
        if let Some(v) = digits(text) {
            if v < u64::from(kind.min) || v > u64::from(kind.max) {
                return Err(self.err(format_args!(
                    "{} {text} out of range {}-{}",
                    kind.name, kind.min, kind.max
                )));
            }
            return Ok(v as u32);
        }
        let alpha = text.bytes().all(|b| b.is_ascii_alphabetic());
        if alpha && !kind.names.is_empty() {
            let Some(i) = kind.names.iter().position(|n| n.eq_ignore_ascii_case(text)) else {
                return Err(self.err_at(at, format_args!("unknown {} name {text:?}", kind.name)));
            };
            let v = kind.min + i as u32;
            // `FRI-SUN`: a Sunday closing a range is 7.
            return Ok(match range_start {
                Some(lo) if v == 0 && lo > 0 => 7,
                _ => v,
            });
        }
        let (i, c) = first_non_digit(text).unwrap_or((0, '?'));
        Err(self.bad_char(at + i, c))
    }

    /// An error for a character that has no place here, naming the fields
    /// where it would be valid.
    pub(super) fn bad_char(&self, at: usize, c: char) -> SpecError {
        let name = self.kind.name;
        let (dom, dow) = (name == DOM.name, name == DOW.name);
        let day = dom || dow;
        let msg = match c.to_ascii_uppercase() {
            '?' if day => format!("'?' must be the whole {name} field"),
            '?' => "'?' is only allowed in day-of-month and day-of-week".to_string(),
            'L' if dom => "'L' in day-of-month must be L, L-n or LW".to_string(),
            'L' if dow => "'L' in day-of-week must follow a weekday, as in 5L or FRI#L".to_string(),
            'L' => "'L' is only allowed in day-of-month and day-of-week".to_string(),
            'W' if dom => "'W' must follow a single day of month, as in 15W or LW".to_string(),
            'W' => "'W' is only allowed in day-of-month".to_string(),
            '#' if dow => "'#' must join a weekday and an occurrence, as in 5#3".to_string(),
            '#' => "'#' is only allowed in day-of-week".to_string(),
            '+' => "'+' is only allowed at the start of the day-of-week field".to_string(),
            _ => format!("unexpected character {c:?} in {name} {:?}", self.text),
        };
        self.err_at(at, msg)
    }
}

/// All-digit text to a number (saturating), else `None`.
#[inline]
fn digits(text: &str) -> Option<u64> {
    let mut v = 0u64;
    for b in text.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    Some(v)
}

/// Digits to a number, saturating (the caller reports it out of range).
fn parse_digits(text: &str) -> u64 {
    text.bytes().fold(0u64, |acc, b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(kind: &'static Kind, text: &'static str) -> Field<'static> {
        Field {
            kind,
            text,
            number: 1,
            whole: text,
            start: 0,
        }
    }

    fn run(kind: &'static Kind, text: &'static str) -> Result<Run, String> {
        let f = field(kind, text);
        f.run(0, text).map_err(|e| e.to_string())
    }

    #[test]
    fn items() {
        assert_eq!(run(&MINUTE, "*").unwrap().bits(), (1 << 60) - 1);
        assert_eq!(
            run(&MINUTE, "*/15").unwrap().bits(),
            1 | 1 << 15 | 1 << 30 | 1 << 45
        );
        assert_eq!(run(&MINUTE, "50/5").unwrap().bits(), 1 << 50 | 1 << 55);
        assert_eq!(
            run(&HOUR, "9-17/4").unwrap().bits(),
            1 << 9 | 1 << 13 | 1 << 17
        );
        assert_eq!(
            run(&MONTH, "jan-Mar").unwrap(),
            Run {
                lo: 1,
                hi: 3,
                step: 1
            }
        );
        assert_eq!(
            run(&DOW, "FRI-SUN").unwrap(),
            Run {
                lo: 5,
                hi: 7,
                step: 1
            }
        );
        assert_eq!(
            run(&DOW, "SUN-SAT").unwrap(),
            Run {
                lo: 0,
                hi: 6,
                step: 1
            }
        );
        assert_eq!(run(&DOW, "*/2").unwrap().bits(), 0b101_0101);
        assert_eq!(run(&MINUTE, "007").unwrap().bits(), 1 << 7);
    }

    #[test]
    fn bits_match_a_loop() {
        for lo in 0..64 {
            for hi in 0..64 {
                for step in 1..=64 {
                    let mut want = 0u64;
                    let mut v = lo;
                    while v <= hi {
                        want |= 1 << v;
                        v += step;
                    }
                    assert_eq!(Run { lo, hi, step }.bits(), want, "{lo}-{hi}/{step}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let e = |k, t| run(k, t).unwrap_err();
        assert!(e(&MINUTE, "60").contains("minute 60 out of range 0-59 at field 1"));
        assert!(e(&MINUTE, "*/0").contains("minute step 0 is not allowed"));
        assert!(e(&MINUTE, "*/61").contains("minute step 61 is larger than 60"));
        assert!(e(&DOW, "FRI-MON").contains("range FRI-MON is reversed"));
        assert!(e(&MINUTE, "5-").contains("missing range end"));
        assert!(e(&MINUTE, "5x").contains("unexpected character 'x'"));
        assert!(e(&MINUTE, "5x").contains("column 2"));
        assert!(e(&MONTH, "FOO").contains("unknown month name \"FOO\""));
        assert!(e(&HOUR, "L").contains("'L' is only allowed"));
        assert!(e(&MINUTE, "99999999999999999999999").contains("out of range"));
        let f = field(&MINUTE, "1,,2");
        assert!(f.items().is_err());
    }
}
