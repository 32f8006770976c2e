//! The exact bounds of job headers, on both inputs that carry them
//! (`Enqueue` and a schedule target in `UpsertSchedule`): exactly
//! `limits.headers` headers, and a header name or value of exactly
//! `limits.textBytes` bytes, are accepted; one header more is refused with
//! `limit_exceeded` (`headers`), one byte more in the name or in the value
//! with `invalid_input` on `headers`, and a refusal changes nothing
//! (snapshot byte-identical, no command). (Mutation testing: `>` → `>=`/`==`
//! on the count and on both lengths, and `||` → `&&` between the name and
//! value checks, were not noticed.)

use chime_core::{EngineConfig, EnqueueRequest, Error, Headers, Input, Limits, Payload};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

/// `limits.headers` 2, `textBytes` 10.
fn harness() -> Harness {
    Harness::new(EngineConfig {
        limits: Limits {
            headers: 2,
            text_bytes: 10,
            ..Limits::default()
        },
        ..EngineConfig::default()
    })
}

fn headers(pairs: &[(&str, &str)]) -> Headers {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The same headers on both inputs: an enqueue and a schedule (named `n`).
fn inputs(n: usize, h: &Headers) -> [Input; 2] {
    let mut req = EnqueueRequest::new("q", Payload::null());
    req.headers = h.clone();
    let mut d = def(&format!("s{n}"), "@every 10s", "q");
    d.target.headers = h.clone();
    [Input::Enqueue(req), Input::UpsertSchedule(d)]
}

/// Both inputs with `h` are refused with `err` and change nothing.
fn refused(h: &mut Harness, n: usize, headers: &Headers, err: Error) {
    for input in inputs(n, headers) {
        let before = h.engine.snapshot().to_json();
        let (reply, cmds) = h.run(S, input.clone());
        assert_eq!(reply.unwrap_err(), err, "{input:?}");
        assert!(cmds.is_empty(), "{cmds:?}");
        assert_eq!(h.engine.snapshot().to_json(), before, "{input:?}");
    }
}

#[test]
fn header_count_and_lengths_at_and_beyond_their_bound() {
    let mut h = harness();
    let ten = "k".repeat(10);
    let eleven = "k".repeat(11);
    // At the bounds: accepted on both inputs.
    let at = [
        headers(&[("a", "1"), ("b", "2")]),
        headers(&[(&ten, "v")]),
        headers(&[("k", &ten)]),
        headers(&[(&ten, &ten)]),
    ];
    for (n, hs) in at.iter().enumerate() {
        for input in inputs(n, hs) {
            h.ok(S, input);
        }
        assert_eq!(
            h.engine
                .schedule(&format!("s{n}"))
                .unwrap()
                .def
                .target
                .headers,
            *hs
        );
    }
    assert_eq!(h.engine.live_jobs(), 4);
    for (n, hs) in at.iter().enumerate() {
        let c = h.claim_one(S, "q");
        assert_eq!(c.headers, *hs, "job {n}");
    }

    // One more header.
    refused(
        &mut h,
        10,
        &headers(&[("a", "1"), ("b", "2"), ("c", "3")]),
        Error::LimitExceeded {
            what: "headers",
            limit: 2,
        },
    );
    // One byte more in the name (short value), in the value (short name).
    let long = Error::InvalidInput {
        field: "headers",
        message: "a header is longer than 10 bytes".into(),
    };
    refused(&mut h, 11, &headers(&[(&eleven, "v")]), long.clone());
    refused(&mut h, 12, &headers(&[("k", &eleven)]), long);
    assert_eq!(h.engine.live_jobs(), 4);
    assert_eq!(h.engine.schedule_count(), 4);
    h.check_replay();
}
