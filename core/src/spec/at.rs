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
use super::zone::{LocalResolution, ZoneTable};
use super::{SpecError, SpecOptions};
use crate::time::Timestamp;
use std::sync::Arc;

/// A parsed one-shot: the instant and the zone used to display it.
#[derive(Clone, Debug)]
pub(crate) struct At {
    pub(crate) at: Timestamp,
    pub(crate) zone: Arc<ZoneTable>,
}

/// Parses the text after `@at`.
pub(crate) fn parse(rest: &str, opts: &SpecOptions) -> Result<At, SpecError> {
    let zone = match &opts.tz {
        Some(name) => ZoneTable::get(name)?,
        None => ZoneTable::utc(),
    };
    let at = match rest.parse::<jiff::Timestamp>() {
        Ok(instant) => instant_ms(rest, instant)?,
        Err(e) if has_offset(rest) => {
            return Err(SpecError::invalid(format!(
                "@at {rest:?} is not an RFC 3339 timestamp: {e}"
            )));
        }
        Err(_) => civil_ms(rest, &zone, opts)?,
    };
    Ok(At { at, zone })
}

/// Whether the text names an offset (`Z`, `+hh:mm`, `-hh:mm`) after the date.
fn has_offset(text: &str) -> bool {
    text.get(10..)
        .is_some_and(|time| time.contains(['Z', 'z', '+', '-', '[']))
}

fn instant_ms(text: &str, instant: jiff::Timestamp) -> Result<Timestamp, SpecError> {
    if instant.subsec_nanosecond() % 1_000_000 != 0 {
        return Err(sub_ms(text));
    }
    Timestamp::from_millis(instant.as_millisecond()).map_err(|_| out_of_range(text))
}

fn civil_ms(text: &str, zone: &ZoneTable, opts: &SpecOptions) -> Result<Timestamp, SpecError> {
    let dt: jiff::civil::DateTime = text.parse().map_err(|e| {
        SpecError::invalid(format!(
            "@at needs an RFC 3339 timestamp or a civil date-time such as \
             2026-12-01T09:00; {text:?}: {e}"
        ))
    })?;
    let nanos = dt.subsec_nanosecond();
    if nanos % 1_000_000 != 0 {
        return Err(sub_ms(text));
    }
    let local = crate::time::calendar::Civil {
        year: i32::from(dt.year()),
        month: dt.month().unsigned_abs().into(),
        day: dt.day().unsigned_abs().into(),
        hour: dt.hour().unsigned_abs().into(),
        minute: dt.minute().unsigned_abs().into(),
        second: dt.second().unsigned_abs().into(),
    }
    .to_local_secs();
    let (gap, fold) = opts.dst.effective(true);
    let utc = match zone.resolve_local(local) {
        LocalResolution::Unique(utc) => utc * 1000 + i64::from(nanos / 1_000_000),
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
            pick * 1000 + i64::from(nanos / 1_000_000)
        }
    };
    Timestamp::from_millis(utc).map_err(|_| out_of_range(text))
}

fn sub_ms(text: &str) -> SpecError {
    SpecError::invalid(format!(
        "@at {text:?} has sub-millisecond precision; chime keeps milliseconds"
    ))
}

fn out_of_range(text: &str) -> SpecError {
    SpecError::invalid(format!("@at {text:?} is outside years 1970..=9999"))
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
