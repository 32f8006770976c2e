//! An `external` queue holds no jobs: `Enqueue` to it and `Claim` from it
//! are `invalid_input` and change nothing; a schedule targeting it leaves
//! it external (no implicit re-declaration, no `queue_created`).

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig, QueueMode};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

#[test]
fn external_queues_refuse_jobs() {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("ext");
    q.mode = QueueMode::External;
    h.ok(T, Input::DeclareQueue(q));
    let (_, cmds) = h.ok(T, Input::UpsertSchedule(def("s", "@every 1h", "ext")));
    assert!(events(&cmds).is_empty(), "no queue_created: {cmds:?}");
    let refused = [
        Input::Enqueue(EnqueueRequest::new("ext", Payload::null())),
        Input::Claim {
            queue: "ext".into(),
            worker: "w".into(),
            max: 1,
            lease_ms: None,
        },
    ];
    for input in refused {
        let before = h.engine.snapshot().to_json();
        let (reply, cmds) = h.run(T, input);
        assert_eq!(reply.unwrap_err().code(), "invalid_input");
        assert!(cmds.is_empty());
        assert_eq!(h.engine.snapshot().to_json(), before);
    }
    assert_eq!(h.engine.queue_names().collect::<Vec<_>>(), ["ext"]);
    assert_eq!(h.engine.live_jobs(), 0);
}
