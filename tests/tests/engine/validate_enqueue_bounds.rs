//! The exact bounds of an `Enqueue`: a payload of exactly
//! `limits.payloadBytes` bytes and a key of exactly `limits.textBytes`
//! bytes are accepted; one byte more is refused with the typed error
//! (`payload_too_large` with the size, `invalid_input` on `key`) and
//! changes nothing (snapshot byte-identical, no command). (Mutation
//! testing: `>` → `>=` on the payload size and `>` → `==` on the key
//! length were not noticed.)

use chime_core::{EngineConfig, EnqueueRequest, Error, Input, Limits, Payload};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

/// `limits.payloadBytes` 20, `textBytes` 10.
fn harness() -> Harness {
    Harness::new(EngineConfig {
        limits: Limits {
            payload_bytes: 20,
            text_bytes: 10,
            ..Limits::default()
        },
        ..EngineConfig::default()
    })
}

/// A JSON string payload of exactly `bytes` bytes (quotes included).
fn payload(bytes: usize) -> Payload {
    Payload::from_json(&format!("\"{}\"", "x".repeat(bytes - 2))).unwrap()
}

/// Enqueues `req`, which must be refused without any change; the error.
fn refused(h: &mut Harness, req: EnqueueRequest) -> Error {
    let before = h.engine.snapshot().to_json();
    let (reply, cmds) = h.run(S + 1, Input::Enqueue(req));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before, "nothing changed");
    reply.unwrap_err()
}

#[test]
fn payload_of_exactly_payload_bytes() {
    let mut h = harness();
    h.ok(S, Input::Enqueue(EnqueueRequest::new("q", payload(20))));
    assert_eq!(h.claim_one(S, "q").payload, payload(20));

    let err = refused(&mut h, EnqueueRequest::new("q", payload(21)));
    assert_eq!(
        err,
        Error::PayloadTooLarge {
            bytes: 21,
            limit: 20
        }
    );
    assert_eq!(h.engine.live_jobs(), 1);
    h.check_replay();
}

#[test]
fn key_of_exactly_text_bytes() {
    let mut h = harness();
    let mut req = EnqueueRequest::new("q", Payload::null());
    req.key = Some("k".repeat(10));
    h.ok(S, Input::Enqueue(req));
    assert_eq!(h.engine.live_jobs(), 1);

    let mut req = EnqueueRequest::new("q", Payload::null());
    req.key = Some("k".repeat(11));
    assert_eq!(
        refused(&mut h, req),
        Error::InvalidInput {
            field: "key",
            message: "longer than 10 bytes".into()
        }
    );
    assert_eq!(h.engine.live_jobs(), 1);
    h.check_replay();
}
