//! Text to [`CronSpec`]: the `CRON_TZ=`/`TZ=` prefix, macros, field count,
//! and the dispatch of each field to its parser.

use super::days::Days;
use super::field::{DOM, DOW, Field, HOUR, Kind, MINUTE, MONTH, SECOND, YEAR};
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
pub(super) fn parse(text: &str) -> Result<ParsedCron, SpecError> {
    let mut tokens = tokens(text).peekable();
    let mut tz = None;
    if let Some(&(_, first)) = tokens.peek()
        && let Some((key, zone)) = prefix(first)
    {
        tokens.next();
        if zone.is_empty() {
            return Err(SpecError::invalid(format!("empty zone name after {key}")));
        }
        if tokens.peek().is_none() {
            return Err(SpecError::invalid(format!(
                "{key}{zone} must be followed by a cron expression"
            )));
        }
        tz = Some(zone.to_string());
    }
    let fields: Vec<(usize, &str)> = tokens.collect();
    let cron = match fields.as_slice() {
        [] => return Err(SpecError::invalid("empty cron expression")),
        [(_, word)] if word.starts_with('@') => expand_macro(word)?,
        [(_, word), ..] if word.starts_with('@') => {
            return Err(SpecError::invalid(format!(
                "macro {word} must stand alone, found {} more fields",
                fields.len() - 1
            )));
        }
        _ => parse_fields(text, &fields)?,
    };
    Ok(ParsedCron { cron, tz })
}

/// Whitespace-separated words with their byte offsets in `text`.
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_ascii_whitespace()
        .map(move |word| (word.as_ptr() as usize - text.as_ptr() as usize, word))
}

/// `CRON_TZ=Europe/Paris` → `("CRON_TZ=", "Europe/Paris")`.
fn prefix(word: &str) -> Option<(&'static str, &str)> {
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
    let words: Vec<(usize, &str)> = tokens(fields).collect();
    parse_fields(fields, &words)
}

/// Parses 5, 6 or 7 fields; `text` is the whole expression, for columns.
fn parse_fields(text: &str, fields: &[(usize, &str)]) -> Result<CronSpec, SpecError> {
    let kinds: &[&'static Kind] = match fields.len() {
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
    for (i, (&(offset, word), &kind)) in fields.iter().zip(kinds).enumerate() {
        let column = text
            .get(..offset)
            .map_or(offset, |head| head.chars().count());
        let mut field = Field {
            kind,
            text: word,
            number: i + 1,
            column,
        };
        if kind.name == DOW.name
            && let Some(rest) = word.strip_prefix('+')
        {
            if rest.is_empty() {
                return Err(field.err("'+' must be followed by a day-of-week"));
            }
            spec.days.and = true;
            field.text = rest;
            field.column += 1;
        }
        parse_field(&mut spec, &field)?;
    }
    spec.days.finish();
    if spec.months == ALL_MONTHS && spec.years.is_none() {
        spec.weekly = spec.days.weekly();
    }
    Ok(spec)
}

fn parse_field(spec: &mut CronSpec, f: &Field<'_>) -> Result<(), SpecError> {
    let star = f.text == "*" || f.text == "?";
    let kind = f.kind;
    if f.text == "?" && kind.name != DOM.name && kind.name != DOW.name {
        return Err(f.bad_char(0, '?'));
    }
    if kind.name == DOM.name {
        spec.days.dom_star = star;
        return if star { Ok(()) } else { spec.days.parse_dom(f) };
    }
    if kind.name == DOW.name {
        spec.days.dow_star = star;
        return if star { Ok(()) } else { spec.days.parse_dow(f) };
    }
    if kind.name == YEAR.name {
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
    let mut bits = 0u64;
    for (at, item) in f.items()? {
        bits |= f.run(at, item)?.bits();
    }
    match kind.name {
        n if n == SECOND.name => spec.seconds = bits,
        n if n == MINUTE.name => spec.minutes = bits,
        n if n == HOUR.name => spec.hours = bits as u32,
        n if n == MONTH.name => spec.months = bits as u16,
        _ => unreachable!("every field kind is handled"),
    }
    Ok(())
}
