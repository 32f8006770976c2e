//! The snapshot's own fields: `format()` is `SNAPSHOT_FORMAT` (3, also in
//! the JSON), `clock()` is the engine clock, and the id floors that a
//! removed schedule leaves (`versionFloor`, `seqFloor`) are written only
//! when not 0: a fresh engine's snapshot has neither key, one after a
//! remove has both, and they survive a restore (a re-created name goes on
//! above them). (Mutation testing: `Snapshot::format` returning 0 or 1 and
//! `is_zero` returning `false` were not noticed.)

use chime_core::{Engine, Input, Reply, SNAPSHOT_FORMAT, Snapshot};
use chime_tests::scenario::*;
use serde_json::Value;

const S: i64 = 1_000_000_000_000;

fn json(h: &Harness) -> Value {
    serde_json::from_str(&h.engine.snapshot().to_json()).unwrap()
}

#[test]
fn format_clock_and_floors() {
    let mut h = Harness::standalone();
    h.advance(S);
    let snap = h.engine.snapshot();
    assert_eq!(SNAPSHOT_FORMAT, 3);
    assert_eq!(snap.format(), SNAPSHOT_FORMAT);
    assert_eq!(snap.clock(), t(S));
    let v = json(&h);
    assert_eq!(v["format"], 3);
    assert!(v.get("versionFloor").is_none(), "{v}");
    assert!(v.get("seqFloor").is_none(), "{v}");

    // A schedule at version 2 with one manual fire (seq 1), removed.
    h.ok(S, Input::UpsertSchedule(def("tick", "@every 1h", "q")));
    h.ok(S, Input::UpsertSchedule(def("tick", "@every 2h", "q")));
    let trigger = Input::TriggerSchedule {
        name: "tick".into(),
        overlap: None,
    };
    h.ok(S + 1, trigger);
    h.ok(S + 2, Input::remove_schedule("tick"));
    let v = json(&h);
    assert_eq!((&v["versionFloor"], &v["seqFloor"]), (&2.into(), &1.into()));
    assert_eq!(h.engine.snapshot().clock(), t(S + 2));

    // Restored, the floors hold: the name comes back at version 3.
    h.restart();
    let (r, _) = h.ok(S + 3, Input::UpsertSchedule(def("tick", "@every 1h", "q")));
    assert!(
        matches!(r, Reply::ScheduleUpserted { version: 3, .. }),
        "{r:?}"
    );
    let back = Engine::restore(Snapshot::from_json(&h.engine.snapshot().to_json()).unwrap());
    assert_eq!(back.unwrap().schedule("tick").unwrap().version, 3);
    h.check_replay();
}
