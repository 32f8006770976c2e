//! The error text of a `Fail` is kept as the job's `lastError`, cut to
//! `limits.textBytes` on a char boundary (never inside a UTF-8 sequence).

use chime_core::{EngineConfig, EnqueueRequest, Event, Input, Limits, Payload};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

#[test]
fn error_text_is_truncated_on_a_char_boundary() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            text_bytes: 3,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let c = h.claim_one(T, "q");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        // 'h' is one byte, 'é' two: three bytes end after "hé".
        error: "héllo".into(),
        retry_at: None,
    };
    let (_, cmds) = h.ok(T, fail);
    assert!(matches!(&events(&cmds)[..], [Event::JobRetried { error, .. }] if error == "hé"));
    assert_eq!(
        h.engine.job(c.job).unwrap().last_error.as_deref(),
        Some("hé")
    );
}
