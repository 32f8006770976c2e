//! An engine restored from a snapshot whose grant has run out at the
//! snapshot's clock (`validUntil` ≤ `clock`) is not a leader before its
//! first input: `is_leader()` is false, and the next input reports the
//! loss and fires nothing. One that still holds the grant at its clock is
//! a leader. (Mutation testing: in the planted-bug check of
//! `Engine::is_leader`, `planted(LeadershipNeverExpires) && grant.is_some()`
//! turned into `||` — "any grant held leads, expired or not" — was not
//! noticed: an engine expires its grant on every advance, so only a
//! restored snapshot holds one that has run out.)

use chime_core::{Engine, EngineConfig, Epoch, Event, Input, LeadershipGrant, Snapshot};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;
const UNTIL: i64 = S + 8_500;

/// A replica leading under epoch 7 until `UNTIL`, snapshotted at `S`, with
/// the snapshot's clock moved to `clock`.
fn restored_at(clock: i64) -> Engine {
    let mut e = Engine::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let grant = Input::Leadership(Some(LeadershipGrant {
        epoch: Epoch(7),
        valid_until: t(UNTIL),
    }));
    e.handle(t(S), grant).unwrap();
    e.handle(t(S), Input::UpsertSchedule(def("tick", "@every 1s", "q")))
        .unwrap();
    assert!(e.is_leader());
    let mut json: serde_json::Value = serde_json::from_str(&e.snapshot().to_json()).unwrap();
    let until = json["leadership"]["grant"]["validUntil"].clone();
    assert_eq!(until, serde_json::to_value(t(UNTIL)).unwrap());
    json["clock"] = serde_json::to_value(t(clock)).unwrap();
    Engine::restore(Snapshot::from_json(&json.to_string()).unwrap()).unwrap()
}

#[test]
fn a_grant_that_ran_out_at_the_snapshot_clock_does_not_lead() {
    let mut e = restored_at(UNTIL);
    assert!(!e.is_leader(), "the grant ran out at the clock");
    assert_eq!(e.poll_timeout(), Some(t(UNTIL)));
    e.handle(t(UNTIL), Input::Advance).unwrap();
    let cmds: Vec<_> = std::iter::from_fn(|| e.poll_command()).collect();
    assert!(fires(&cmds).is_empty(), "{cmds:?}");
    assert!(
        events(&cmds)
            .iter()
            .any(|ev| matches!(ev, Event::LeadershipLost { epoch } if *epoch == Epoch(7)))
    );
    assert!(!e.is_leader());
}

#[test]
fn a_grant_still_valid_at_the_snapshot_clock_leads() {
    let e = restored_at(UNTIL - 1);
    assert!(e.is_leader());
}
