//! Text to [`CronSpec`]: the `CRON_TZ=`/`TZ=` prefix, macros, field count,
//! and the dispatch of each field to its parser.

use super::days::{Days, fold_sunday};
use super::field::{DOM, DOW, Field, HOUR, Kind, MINUTE, MONTH, Run, SECOND, YEAR};
use super::years::Years;
use super::{CronSpec, ParsedCron};
use crate::spec::SpecError;

/// Bits 1..=12.
const ALL_MONTHS: u16 = 0x1ffe;

/// Macros and the fields they stand for (seconds are 0).
const MACROS: [(&str, &str); 7] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// Parses a whole expression (see `docs/spec.md`).
#[inline(always)]
pub(super) fn parse(text: &str) -> Result<ParsedCron, SpecError> {
    let mut tokens = Tokens { text, pos: 0 };
    let mut first = tokens.next();
    let mut tz = None;
    if let Some((_, word)) = first
        && let Some((key, zone)) = prefix(word)
    {
        if zone.is_empty() {
            return Err(SpecError::invalid(format!("empty zone name after {key}")));
        }
        first = tokens.next();
        if first.is_none() {
            return Err(SpecError::invalid(format!(
                "{key}{zone} must be followed by a cron expression"
            )));
        }
        tz = Some(zone.to_string());
    }
    let Some((at, word)) = first else {
        return Err(SpecError::invalid("empty cron expression"));
    };
    // Counted first: the field count decides each field's kind.
    let count = 1 + tokens.clone().count();
    let cron = if word.starts_with('@') {
        if count > 1 {
            return Err(SpecError::invalid(format!(
                "macro {word} must stand alone, found {} more fields",
                count - 1
            )));
        }
        expand_macro(word)?
    } else {
        parse_fields(text, std::iter::once((at, word)).chain(tokens), count)?
    };
    Ok(ParsedCron { cron, tz })
}

/// Words separated by ASCII whitespace (as `str::split_ascii_whitespace`),
/// with their byte offsets in `text`.
#[derive(Clone)]
struct Tokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (usize, &'a str);

    #[inline]
    fn next(&mut self) -> Option<(usize, &'a str)> {
        let bytes = self.text.as_bytes();
        let mut i = self.pos;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == bytes.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        self.pos = i;
        // Both ends are at ASCII bytes or the ends of the text: char
        // boundaries.
        Some((start, &self.text[start..i]))
    }
}

/// `CRON_TZ=Europe/Paris` → `("CRON_TZ=", "Europe/Paris")`.
fn prefix(word: &str) -> Option<(&'static str, &str)> {
    // Every prefix ends in '='; most words have none.
    if !word.as_bytes().contains(&b'=') {
        return None;
    }
    ["CRON_TZ=", "TZ="].into_iter().find_map(|key| {
        let head = word.get(..key.len())?;
        head.eq_ignore_ascii_case(key)
            .then(|| (key, &word[key.len()..]))
    })
}

fn expand_macro(word: &str) -> Result<CronSpec, SpecError> {
    let Some((_, fields)) = MACROS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(word))
    else {
        let known: Vec<&str> = MACROS.iter().map(|(name, _)| *name).collect();
        return Err(SpecError::invalid(format!(
            "unknown macro {word:?}; expected one of {}",
            known.join(" ")
        )));
    };
    let words = Tokens {
        text: fields,
        pos: 0,
    };
    parse_fields(fields, words, 5)
}

/// Parses 5, 6 or 7 fields; `text` is the whole expression, for columns.
#[inline(always)]
fn parse_fields<'a>(
    text: &'a str,
    words: impl Iterator<Item = (usize, &'a str)>,
    count: usize,
) -> Result<CronSpec, SpecError> {
    let kinds: &[&'static Kind] = match count {
        5 => &[&MINUTE, &HOUR, &DOM, &MONTH, &DOW],
        6 => &[&SECOND, &MINUTE, &HOUR, &DOM, &MONTH, &DOW],
        7 => &[&SECOND, &MINUTE, &HOUR, &DOM, &MONTH, &DOW, &YEAR],
        n => {
            return Err(SpecError::invalid(format!(
                "expected 5, 6 or 7 fields (or a macro such as @daily), found {n}"
            )));
        }
    };
    let mut spec = CronSpec {
        seconds: 1,
        minutes: 0,
        hours: 0,
        months: 0,
        days: Days::default(),
        years: None,
        weekly: 0,
    };
    for (i, ((offset, word), &kind)) in words.zip(kinds).enumerate() {
        let mut field = Field {
            kind,
            text: word,
            number: i + 1,
            whole: text,
            start: offset,
        };
        if std::ptr::eq(kind, &DOW)
            && let Some(rest) = word.strip_prefix('+')
        {
            if rest.is_empty() {
                return Err(field.err("'+' must be followed by a day-of-week"));
            }
            spec.days.and = true;
            field.text = rest;
            field.start += 1;
        }
        parse_field(&mut spec, &field)?;
    }
    spec.days.finish();
    if spec.months == ALL_MONTHS && spec.years.is_none() {
        spec.weekly = spec.days.weekly();
    }
    Ok(spec)
}

#[inline(always)]
fn parse_field(spec: &mut CronSpec, f: &Field<'_>) -> Result<(), SpecError> {
    let kind = f.kind;
    let (dom, dow) = (std::ptr::eq(kind, &DOM), std::ptr::eq(kind, &DOW));
    if f.text.len() <= 2 && !std::ptr::eq(kind, &YEAR) && f.text.bytes().all(|b| b.is_ascii_digit())
    {
        // A plain number, the commonest field: what the item parser would
        // do for a one-item list with no '/', '-', 'L', 'W' or '#'.
        let v = f.value(0, f.text, None)?;
        let bit = 1u64 << v;
        if dom {
            spec.days.dom_star = false;
            spec.days.dom |= bit as u32;
        } else if dow {
            spec.days.dow_star = false;
            spec.days.dow |= fold_sunday(bit);
        } else {
            set_bits(spec, kind, bit);
        }
        return Ok(());
    }
    let star = f.text == "*" || f.text == "?";
    if f.text == "?" && !dom && !dow {
        return Err(f.bad_char(0, '?'));
    }
    if dom && f.text.eq_ignore_ascii_case("L") {
        // What `Days::parse_dom` does for a lone `L`.
        spec.days.dom_star = false;
        spec.days.dom_last |= 1;
        return Ok(());
    }
    if dom {
        spec.days.dom_star = star;
        return if star { Ok(()) } else { spec.days.parse_dom(f) };
    }
    if dow {
        spec.days.dow_star = star;
        return if star { Ok(()) } else { spec.days.parse_dow(f) };
    }
    if std::ptr::eq(kind, &YEAR) {
        if f.text != "*" {
            let mut years = Years::new();
            for (at, item) in f.items()? {
                let run = f.run(at, item)?;
                years.insert_run(run.lo, run.hi, run.step);
            }
            spec.years = Some(years);
        }
        return Ok(());
    }
    let bits = if star {
        // `*` (a `?` was refused above).
        Run::wild(kind).bits()
    } else if let Some(step) = f.text.strip_prefix("*/")
        && !step.is_empty()
        && !step.contains(',')
    {
        // `*/s`: what the item parser does for a one-item list.
        Run {
            step: f.step(2, step)?,
            ..Run::wild(kind)
        }
        .bits()
    } else {
        let mut bits = 0u64;
        for (at, item) in f.items()? {
            bits |= f.run(at, item)?.bits();
        }
        bits
    };
    set_bits(spec, kind, bits);
    Ok(())
}

/// Stores the bits of a second, minute, hour or month field.
#[inline(always)]
fn set_bits(spec: &mut CronSpec, kind: &Kind, bits: u64) {
    if std::ptr::eq(kind, &SECOND) {
        spec.seconds = bits;
    } else if std::ptr::eq(kind, &MINUTE) {
        spec.minutes = bits;
    } else if std::ptr::eq(kind, &HOUR) {
        spec.hours = bits as u32;
    } else {
        debug_assert!(std::ptr::eq(kind, &MONTH));
        spec.months = bits as u16;
    }
}
