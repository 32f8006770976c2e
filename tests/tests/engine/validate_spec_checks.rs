//! The spec checks an upsert makes beyond the grammar (field report,
//! issue 21): a `tz` that names no zone is refused on an `@every` spec too
//! (before, `@every` ignored `tz` and took any text); `minIntervalMs`
//! applies to cron, measured from the expression's tightest gap (before,
//! `* * * * * *` passed a 60 s minimum); and an `@at` in the past is
//! refused saying so, not "no occurrence within 100 years". Each refusal
//! changes nothing.

use chime_core::{EngineConfig, Error, Input, ScheduleDef, SpecError};
use chime_tests::scenario::*;

/// 2027-01-15T08:00:00Z.
const T0: i64 = 1_800_000_000_000;

fn harness(min_interval_ms: i64) -> Harness {
    Harness::new(EngineConfig {
        min_interval_ms,
        ..EngineConfig::default()
    })
}

/// Upserts `d` at `T0`, which must be refused without any change.
fn refused(h: &mut Harness, d: ScheduleDef) -> Error {
    h.advance(T0);
    let before = h.engine.snapshot().to_json();
    let (reply, cmds) = h.run(T0, Input::UpsertSchedule(d.clone()));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before, "nothing changed");
    assert!(h.engine.schedule(&d.name).is_none());
    reply.unwrap_err()
}

fn accepted(h: &mut Harness, d: ScheduleDef) {
    h.ok(T0, Input::UpsertSchedule(d.clone()));
    assert!(h.engine.schedule(&d.name).is_some(), "{d:?}");
}

#[test]
fn an_unknown_zone_is_refused_on_every_specs_too() {
    let mut h = harness(1_000);
    let mut d = def("e", "@every 5s", "q");
    d.tz = Some("Nowhere/Atlantis".into());
    let err = refused(&mut h, d.clone());
    assert_eq!(err.code(), "invalid_time_zone", "{err}");
    assert_eq!(err.field(), Some("tz"));
    // A real zone is accepted (and has no effect: `chime validate` warns).
    d.tz = Some("Europe/Paris".into());
    accepted(&mut h, d);
}

#[test]
fn min_interval_applies_to_cron_from_its_tightest_gap() {
    let mut h = harness(60_000);
    for (spec, gap_ms) in [
        ("* * * * * *", 1_000),
        ("*/30 * * * * *", 30_000),
        // 00:00:10 and 00:00:30.
        ("10,30 0 0 * * *", 20_000),
        // :50 of one minute to :05 of the next.
        ("5,50 * * * * *", 15_000),
    ] {
        let err = refused(&mut h, def("c", spec, "q"));
        assert_eq!(
            err,
            Error::Spec(SpecError::IntervalTooShort {
                interval_ms: gap_ms,
                min_ms: 60_000
            }),
            "{spec}"
        );
    }
    // Across midnight: 23:00 and 00:00 of the next day are 1 h apart.
    let mut two_hours = harness(7_200_000);
    let err = refused(&mut two_hours, def("c", "0 0,23 * * *", "q"));
    assert_eq!(
        err,
        Error::Spec(SpecError::IntervalTooShort {
            interval_ms: 3_600_000,
            min_ms: 7_200_000
        })
    );
    accepted(&mut two_hours, def("c", "0 0,12 * * *", "q"));
    // At the minimum, or above it, is accepted.
    accepted(&mut h, def("minutely", "* * * * *", "q"));
    accepted(&mut h, def("halfhourly", "0,30 * * * *", "q"));
    accepted(&mut h, def("daily", "0 9 * * MON-FRI", "q"));
    // The default minimum (1 s) never refuses a cron spec.
    accepted(&mut harness(1_000), def("every_second", "* * * * * *", "q"));
}

#[test]
fn an_at_in_the_past_says_it_is_in_the_past() {
    let mut h = harness(1_000);
    let err = refused(&mut h, def("once", &format!("@at {}", t(T0 - 60_000)), "q"));
    assert_eq!(err.code(), "spec_never_fires");
    let text = err.to_string();
    assert!(text.contains("in the past"), "{text}");
    assert!(!text.contains("100 years"), "{text}");
    // A spec that truly never fires still says so.
    let err = refused(&mut h, def("feb30", "0 0 30 2 *", "q"));
    assert!(err.to_string().contains("within 100 years"), "{err}");
}
