//! The exact bounds of a queue declaration (`DeclareQueue`): a backoff
//! `baseMs` and `capMs`, a retention `completedMs` and a `dedupWindowMs` of
//! 0 are accepted; -1 is refused with `invalid_input` naming that field,
//! and the refused declaration changes nothing (snapshot byte-identical, no
//! command, no queue). (Mutation testing: `<` → `<=` and `<` → `==` on
//! these four checks were not noticed.)

use chime_core::{Error, Input, QueueConfig};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

/// The four fields that must not be negative, with their wire names.
#[allow(clippy::type_complexity)]
const FIELDS: [(&str, fn(&mut QueueConfig, i64)); 4] = [
    ("backoff.baseMs", |c, v| c.backoff.base_ms = v),
    ("backoff.capMs", |c, v| c.backoff.cap_ms = v),
    ("retention.completedMs", |c, v| c.retention.completed_ms = v),
    ("dedupWindowMs", |c, v| c.dedup_window_ms = v),
];

#[test]
fn zero_is_accepted_and_minus_one_refused() {
    let mut h = Harness::standalone();
    for (i, (field, set)) in FIELDS.into_iter().enumerate() {
        // Zero: declared.
        let mut cfg = QueueConfig::new(format!("zero{i}"));
        set(&mut cfg, 0);
        h.ok(S, Input::DeclareQueue(cfg.clone()));
        assert!(h.engine.queue_stats(&cfg.name).is_some(), "{field}");

        // -1: refused, nothing changes.
        let mut cfg = QueueConfig::new(format!("minus{i}"));
        set(&mut cfg, -1);
        let before = h.engine.snapshot().to_json();
        let (reply, cmds) = h.run(S + 1, Input::DeclareQueue(cfg.clone()));
        match reply.unwrap_err() {
            Error::InvalidInput { field: f, .. } => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
        assert!(cmds.is_empty(), "{cmds:?}");
        assert_eq!(h.engine.snapshot().to_json(), before, "{field}");
        assert!(h.engine.queue_stats(&cfg.name).is_none(), "{field}");
    }
    assert_eq!(
        h.engine.queue_names().collect::<Vec<_>>(),
        ["zero0", "zero1", "zero2", "zero3"]
    );
    h.check_replay();
}
