//! The number of queues is bounded (`limits.queues`, default 10,000): a
//! new queue beyond it — declared explicitly, implicitly by `Enqueue`, or
//! by a schedule's target — is refused with `limit_exceeded{what:
//! "queues"}` and changes nothing; existing queues stay usable.

use chime_core::{
    EngineConfig, EnqueueRequest, Error, Input, Limits, Payload, QueueConfig, Reply, Snapshot,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn full() -> Harness {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            queues: 2,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    h.ok(T, Input::DeclareQueue(QueueConfig::new("a")));
    h.ok(T, Input::Enqueue(EnqueueRequest::new("b", Payload::null())));
    h
}

fn refused(h: &mut Harness, input: Input) {
    let before = h.engine.snapshot().to_json();
    let (r, cmds) = h.run(T, input.clone());
    let err = r.expect_err(&format!("{input:?} must be refused"));
    assert_eq!(
        err,
        Error::LimitExceeded {
            what: "queues",
            limit: 2
        },
        "{input:?}"
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before);
}

#[test]
fn a_new_queue_beyond_the_limit_is_refused() {
    let mut h = full();
    refused(&mut h, Input::DeclareQueue(QueueConfig::new("c")));
    refused(
        &mut h,
        Input::Enqueue(EnqueueRequest::new("c", Payload::null())),
    );
    refused(&mut h, Input::UpsertSchedule(def("s", "@every 1h", "c")));
    assert_eq!(h.engine.queue_names().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(h.engine.schedule_count(), 0);
}

#[test]
fn existing_queues_stay_usable_at_the_limit() {
    let mut h = full();
    let mut a = QueueConfig::new("a");
    a.lease_ms = 5_000;
    let (r, _) = h.ok(T, Input::DeclareQueue(a));
    assert_eq!(
        r,
        Reply::QueueDeclared {
            created: false,
            changed: true
        }
    );
    h.ok(T, Input::Enqueue(EnqueueRequest::new("a", Payload::null())));
    h.ok(T, Input::UpsertSchedule(def("s", "@every 1h", "b")));
    assert_eq!(h.claim(T, "a", 1, None).len(), 1);
}

#[test]
fn the_default_is_ten_thousand_and_old_snapshots_load() {
    assert_eq!(Limits::default().queues, 10_000);
    let h = full();
    let json = h.engine.snapshot().to_json();
    // A snapshot written before the limit existed has no `queues` limit.
    let old = json.replace(r#""queues":2,"#, "");
    assert_ne!(old, json);
    let e = chime_core::Engine::restore(Snapshot::from_json(&old).unwrap()).unwrap();
    assert_eq!(e.config().limits.queues, 10_000);
}
