//! `chime_core::validate_input` (for backends that apply some inputs
//! outside the engine, such as the Postgres queues) gives exactly the
//! error `Engine::handle` gives for an input that fails on its own — same
//! code, field and message — and accepts what `handle` accepts.

use chime_core::{
    Engine, EngineConfig, EnqueueRequest, Input, Limits, Payload, QueueConfig, validate_input,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn config() -> EngineConfig {
    EngineConfig {
        limits: Limits {
            payload_bytes: 16,
            ..Limits::default()
        },
        ..EngineConfig::default()
    }
}

#[test]
fn the_same_answer_as_handle() {
    let big = EnqueueRequest::new("q", Payload::from_json(r#""0123456789abcdef""#).unwrap());
    let mut late = EnqueueRequest::new("q", Payload::null());
    late.delay_ms = Some(-1);
    let mut bad_queue = QueueConfig::new("q");
    bad_queue.lease_ms = 0;
    let bad = [
        Input::Enqueue(big),
        Input::Enqueue(late),
        Input::Enqueue(EnqueueRequest::new("", Payload::null())),
        Input::DeclareQueue(bad_queue),
        Input::UpsertSchedule(def("s", "61 * * * *", "q")),
        Input::UpsertSchedule(def("s t", "@every 1m", "q")),
    ];
    for input in bad {
        let want = Engine::new(config())
            .handle(t(T), input.clone())
            .unwrap_err();
        let got = validate_input(&input, &config(), t(T)).unwrap_err();
        assert_eq!(got, want, "{input:?}");
    }
    let good = [
        Input::Enqueue(EnqueueRequest::new("q", Payload::null())),
        Input::DeclareQueue(QueueConfig::new("q")),
        Input::UpsertSchedule(def("s", "@every 1m", "q")),
        Input::Advance,
    ];
    for input in good {
        assert!(Engine::new(config()).handle(t(T), input.clone()).is_ok());
        assert_eq!(validate_input(&input, &config(), t(T)), Ok(()), "{input:?}");
    }
}
