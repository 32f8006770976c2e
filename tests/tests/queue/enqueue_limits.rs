//! `Enqueue` beyond a bound is refused and changes nothing (snapshot
//! byte-identical, no command): a payload over `limits.payloadBytes`
//! (`payload_too_large`), more headers than `limits.headers` and more live
//! jobs than `limits.liveJobs` (`limit_exceeded`). A refused enqueue to a
//! queue that does not exist yet does not create it.

use chime_core::{EngineConfig, EnqueueRequest, Error, Input, Limits, Payload};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn harness(live_jobs: usize) -> Harness {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            payload_bytes: 20,
            headers: 1,
            live_jobs,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    h
}

fn refused(h: &mut Harness, req: EnqueueRequest) -> Error {
    let before = h.engine.snapshot().to_json();
    let (reply, cmds) = h.run(T + 1, Input::Enqueue(req));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before, "nothing changed");
    reply.unwrap_err()
}

#[test]
fn payload_and_headers_beyond_their_bound() {
    let mut h = harness(10);
    let big = Payload::from_json(&format!("\"{}\"", "x".repeat(30))).unwrap();
    for queue in ["q", "fresh"] {
        let err = refused(&mut h, EnqueueRequest::new(queue, big.clone()));
        assert_eq!(err.code(), "payload_too_large", "{err}");
        let mut two = EnqueueRequest::new(queue, Payload::null());
        two.headers = [("a".into(), "1".into()), ("b".into(), "2".into())].into();
        assert_eq!(refused(&mut h, two).code(), "limit_exceeded");
    }
    assert_eq!(h.engine.queue_names().collect::<Vec<_>>(), ["q"]);
    // At the bound is fine.
    let mut one = EnqueueRequest::new("q", Payload::null());
    one.headers = [("a".into(), "1".into())].into();
    h.ok(T + 2, Input::Enqueue(one));
}

#[test]
fn live_jobs_beyond_their_bound() {
    let mut h = harness(1);
    // A refusal that needs state still advances the clock: start there.
    h.advance(T + 1);
    for queue in ["q", "fresh"] {
        let err = refused(&mut h, EnqueueRequest::new(queue, Payload::null()));
        assert_eq!(
            err,
            Error::LimitExceeded {
                what: "live_jobs",
                limit: 1
            }
        );
    }
    assert_eq!(h.engine.queue_names().collect::<Vec<_>>(), ["q"]);
    assert_eq!(h.engine.live_jobs(), 1);
}
