//! The exact bounds of a schedule definition (`UpsertSchedule`): a spec of
//! exactly `limits.textBytes` bytes, a target payload of exactly
//! `limits.payloadBytes` bytes and a catch-up `windowMs` of 0 are accepted;
//! one byte more, and a window of -1, are refused with the typed error of
//! that field and change nothing (snapshot byte-identical, no command).
//! (Mutation testing: `>` → `>=`/`==` on the spec length, `>` → `>=` on the
//! payload size and `<` → `<=` on the window were not noticed.)

use chime_core::{EngineConfig, Error, Input, Limits, Payload, ScheduleDef};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

/// `limits.textBytes` 10 (the length of `@every 10s`), `payloadBytes` 20.
fn harness() -> Harness {
    Harness::new(EngineConfig {
        limits: Limits {
            text_bytes: 10,
            payload_bytes: 20,
            ..Limits::default()
        },
        ..EngineConfig::default()
    })
}

/// A JSON string payload of exactly `bytes` bytes (quotes included).
fn payload(bytes: usize) -> Payload {
    Payload::from_json(&format!("\"{}\"", "x".repeat(bytes - 2))).unwrap()
}

/// Upserts `d`, which must be accepted and stored as given.
fn accepted(h: &mut Harness, d: ScheduleDef) {
    h.ok(S, Input::UpsertSchedule(d.clone()));
    assert_eq!(h.engine.schedule(&d.name).unwrap().def, d);
}

/// Upserts `d`, which must be refused without any change; the error.
fn refused(h: &mut Harness, d: ScheduleDef) -> Error {
    let before = h.engine.snapshot().to_json();
    let name = d.name.clone();
    let (reply, cmds) = h.run(S + 1, Input::UpsertSchedule(d));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before, "nothing changed");
    assert!(h.engine.schedule(&name).is_none());
    reply.unwrap_err()
}

fn invalid_field(err: &Error) -> &'static str {
    match err {
        Error::InvalidInput { field, .. } => field,
        other => panic!("not invalid_input: {other:?}"),
    }
}

#[test]
fn spec_of_exactly_text_bytes() {
    let mut h = harness();
    let d = def("at", "@every 10s", "q");
    assert_eq!(d.spec.len(), 10);
    accepted(&mut h, d);
    // It fires like any other.
    assert_eq!(nominals(&h.advance(S + 10_000)), vec![S + 10_000]);

    let d = def("over", "@every 100s", "q");
    assert_eq!(d.spec.len(), 11);
    let err = refused(&mut h, d);
    assert_eq!(
        err,
        Error::InvalidInput {
            field: "spec",
            message: "longer than 10 bytes".into()
        }
    );
    h.check_replay();
}

#[test]
fn target_payload_of_exactly_payload_bytes() {
    let mut h = harness();
    let mut d = def("at", "@every 10s", "q");
    d.target.payload = payload(20);
    assert_eq!(d.target.payload.len_bytes(), 20);
    accepted(&mut h, d);
    let cmds = h.advance(S + 10_000);
    assert_eq!(nominals(&cmds), vec![S + 10_000]);
    assert_eq!(h.claim_one(S + 10_000, "q").payload, payload(20));

    let mut d = def("over", "@every 10s", "q");
    d.target.payload = payload(21);
    assert_eq!(
        refused(&mut h, d),
        Error::PayloadTooLarge {
            bytes: 21,
            limit: 20
        }
    );
    h.check_replay();
}

#[test]
fn catchup_window_of_zero() {
    let mut h = harness();
    let mut d = def("zero", "@every 10s", "q");
    d.catchup.window_ms = 0;
    accepted(&mut h, d);

    let mut d = def("minus", "@every 10s", "q");
    d.catchup.window_ms = -1;
    let err = refused(&mut h, d);
    assert_eq!(invalid_field(&err), "catchup", "{err}");
    h.check_replay();
}
