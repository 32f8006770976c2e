//! Go-style durations such as `90s`, `1h30m`, `250ms` and `1d2h`.
//!
//! A duration is one or more `<digits><unit>` terms with units `d`, `h`, `m`,
//! `s` and `ms`, written largest first, each unit at most once. Stricter than
//! Go on purpose (see `docs/dst.md`, "Durations"):
//!
//! - no sign, no whitespace, no fractions (`1.5h` → write `1h30m`): the engine
//!   keeps no floats, and `0.0001s` would silently round;
//! - no sub-millisecond units (`us`, `µs`, `ns`): timestamps are milliseconds;
//! - units in decreasing order, each once, so `1m30m` is caught as a typo;
//! - `d` is exactly 86 400 000 ms (a day of elapsed time, not a civil day).
//!
//! Errors carry the 0-based character offset of the offending character.

use super::SpecError;

/// Milliseconds per unit, largest first; the index is the unit's rank.
const UNITS: [(&str, i64); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// Parses `90s`, `1h30m`, `250ms`, `1d` into milliseconds.
///
/// The result is never negative; `0s` parses to 0 (callers decide whether
/// zero is acceptable).
pub fn parse_duration_ms(text: &str) -> Result<i64, SpecError> {
    if text.is_empty() {
        return Err(err(text, 0, "empty duration; expected e.g. 90s or 1h30m"));
    }
    if let Some((i, c)) = text.char_indices().find(|(_, c)| !c.is_ascii()) {
        let at = text[..i].chars().count();
        return Err(err(text, at, &format!("unexpected character {c:?}")));
    }
    // From here on the text is ASCII, so byte offsets are character offsets.
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut total_ms: i64 = 0;
    let mut last_rank: Option<usize> = None;
    while pos < bytes.len() {
        let (value, after_digits) = parse_digits(text, pos)?;
        let (rank, after_unit) = parse_unit(text, after_digits)?;
        if let Some(last) = last_rank.filter(|&last| rank <= last) {
            let why = format!(
                "unit {:?} after {:?}: units go from largest to smallest, each once (e.g. 1h30m)",
                UNITS[rank].0, UNITS[last].0
            );
            return Err(err(text, after_digits, &why));
        }
        last_rank = Some(rank);
        total_ms = value
            .checked_mul(UNITS[rank].1)
            .and_then(|ms| total_ms.checked_add(ms))
            .ok_or_else(|| err(text, pos, "duration overflows 64-bit milliseconds"))?;
        pos = after_unit;
    }
    Ok(total_ms)
}

/// Reads the digits at `pos`; returns the value and the offset after them.
fn parse_digits(text: &str, pos: usize) -> Result<(i64, usize), SpecError> {
    let bytes = text.as_bytes();
    let mut end = pos;
    let mut value: i64 = 0;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(bytes[end] - b'0')))
            .ok_or_else(|| err(text, pos, "number overflows 64-bit milliseconds"))?;
        end += 1;
    }
    if end == pos {
        let why = match bytes[pos] {
            b'+' | b'-' => "durations have no sign".to_string(),
            c if c.is_ascii_whitespace() => "unexpected whitespace".to_string(),
            c => format!("expected a number, found {:?}", c as char),
        };
        return Err(err(text, pos, &why));
    }
    if end < bytes.len() && bytes[end] == b'.' {
        return Err(err(
            text,
            end,
            "fractions are not supported; combine units instead (1h30m, not 1.5h)",
        ));
    }
    Ok((value, end))
}

/// Reads the unit at `pos`; returns its rank and the offset after it.
fn parse_unit(text: &str, pos: usize) -> Result<(usize, usize), SpecError> {
    let rest = &text[pos..];
    let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
    let unit = &rest[..letters];
    match UNITS.iter().position(|(name, _)| *name == unit) {
        Some(rank) => Ok((rank, pos + letters)),
        None if unit.is_empty() => Err(err(text, pos, "missing unit (ms, s, m, h or d)")),
        None if matches!(unit, "us" | "ns") => Err(err(
            text,
            pos,
            "sub-millisecond units are not supported (use ms, s, m, h or d)",
        )),
        None => Err(err(
            text,
            pos,
            &format!("unknown unit {unit:?} (use ms, s, m, h or d)"),
        )),
    }
}

fn err(text: &str, at: usize, why: &str) -> SpecError {
    SpecError::InvalidDuration {
        message: format!("{why} at offset {at} in {text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> i64 {
        parse_duration_ms(s).unwrap()
    }

    fn bad(s: &str) -> String {
        let e = parse_duration_ms(s).unwrap_err();
        assert_eq!(e.code(), "invalid_duration");
        e.to_string()
    }

    #[test]
    fn parses_go_style() {
        assert_eq!(ok("90s"), 90_000);
        assert_eq!(ok("1h30m"), 5_400_000);
        assert_eq!(ok("250ms"), 250);
        assert_eq!(ok("1d"), 86_400_000);
        assert_eq!(ok("1d2h"), 93_600_000);
        assert_eq!(ok("1h1m1s1ms"), 3_661_001);
        assert_eq!(ok("0s"), 0);
        assert_eq!(ok("36h"), 129_600_000);
        assert_eq!(ok("007s"), 7_000);
    }

    #[test]
    fn rejects_with_offsets() {
        assert!(bad("").contains("empty"));
        assert!(bad("1.5h").contains("fractions") && bad("1.5h").contains("offset 1"));
        assert!(bad("10us").contains("sub-millisecond"));
        assert!(bad("10ns").contains("offset 2"));
        assert!(bad("-5s").contains("no sign"));
        assert!(bad("+5s").contains("no sign"));
        assert!(bad("5").contains("missing unit"));
        assert!(bad("5x").contains("unknown unit"));
        assert!(bad("5H").contains("unknown unit"));
        assert!(bad("1m30m").contains("offset 4"));
        assert!(bad("30m1h").contains("largest to smallest"));
        assert!(bad("1h 30m").contains("whitespace"));
        assert!(bad("1hµs").contains("offset 2"));
        assert!(bad("h").contains("expected a number"));
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(bad("9223372036854775808ms").contains("overflows"));
        assert!(bad("106751991167301d").contains("overflows"));
        assert_eq!(ok("9223372036854775807ms"), i64::MAX);
        assert!(bad("9223372036854776s").contains("overflows"));
    }
}
