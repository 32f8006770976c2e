//! Go-style durations. STUB (helper B).
use super::SpecError;

/// Parses `90s`, `1h30m`, `250ms`, `1d` into milliseconds.
pub fn parse_duration_ms(_text: &str) -> Result<i64, SpecError> {
    todo!()
}
