//! `Engine::restore` refuses a snapshot whose schedule parts disagree
//! (`invalid_input` on `snapshot`, naming what is wrong), each fault on
//! its own, and accepts the same snapshot at the edge of each rule:
//! - an in-flight fire of another schedule, or with both or neither of
//!   `job` and `deadline`;
//! - a buffered fire of another schedule, or due before its nominal time
//!   (due exactly then is fine);
//! - a pause log out of order (equal or decreasing times), not
//!   alternating, starting before the cursor (at the cursor is fine), or
//!   ending in a state that is not the schedule's;
//! - counters that do not add up (`processed` against grid fires, skips
//!   and a buffered grid fire);
//! - a cursor with no boundary before `end_at` (the boundary at `end_at`
//!   is not the schedule's; the one before it is).
//!
//! (Mutation testing: the single-fault and edge cases of these checks in
//! `snapshot.rs` `schedule_of` were not noticed.)

use chime_core::{
    Engine, EngineConfig, Epoch, Input, LeadershipGrant, Overlap, QueueConfig, QueueMode, Snapshot,
};
use chime_tests::scenario::*;
use serde_json::{Value, json};

/// A multiple of 10 s, so `@every 10s` boundaries are `S + k * 10 s`.
const S: i64 = 1_000_000_000_000;
const TEN: i64 = 10_000;

fn restore(v: &Value) -> Result<Engine, chime_core::Error> {
    Engine::restore(Snapshot::from_json(&v.to_string()).unwrap())
}

/// `v` restores, passes the engine's invariants and round-trips.
fn accepted(v: &Value) {
    let e = restore(v).unwrap_or_else(|err| panic!("{err}: {v}"));
    e.check_invariants();
    let back: Value = serde_json::from_str(&e.snapshot().to_json()).unwrap();
    assert_eq!(&back["schedules"], &v["schedules"]);
}

/// `v` is refused as a corrupt snapshot with a message containing `what`.
fn refused(v: &Value, what: &str) {
    let Err(err) = restore(v) else {
        panic!("restored: {v}")
    };
    assert_eq!(err.code(), "invalid_input");
    let text = err.to_string();
    assert!(text.starts_with("invalid_input: snapshot: "), "{text}");
    assert!(text.contains(what), "{text} (expected {what:?})");
}

fn with(v: &Value, f: impl FnOnce(&mut Value)) -> Value {
    let mut v = v.clone();
    f(&mut v["schedules"][0]);
    v
}

/// `tick` (`@every 10s`, `buffer_one`) on an external queue: the fire of
/// S+10s is in flight (with a settlement deadline), S+20s is buffered.
fn in_flight_and_buffered() -> Value {
    let mut h = Harness::standalone();
    let mut ext = QueueConfig::new("ext");
    ext.mode = QueueMode::External;
    ext.lease_ms = 60_000;
    h.ok(S, Input::DeclareQueue(ext));
    let mut d = def("tick", "@every 10s", "ext");
    d.overlap = Overlap::BufferOne;
    h.ok(S, Input::UpsertSchedule(d));
    assert_eq!(nominals(&h.advance(S + TEN)), vec![S + TEN]);
    assert!(nominals(&h.advance(S + 2 * TEN)).is_empty());
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let s = &v["schedules"][0];
    assert_eq!(s["inFlight"][0]["fire"], format!("tick@{}", S + TEN));
    assert!(s["inFlight"][0]["deadline"].is_i64(), "{s}");
    assert!(s["inFlight"][0].get("job").is_none(), "{s}");
    assert_eq!(s["buffered"]["fire"], format!("tick@{}", S + 2 * TEN));
    assert_eq!(s["buffered"]["dueAt"], S + 2 * TEN);
    v
}

#[test]
fn in_flight_fire_faults() {
    let v = in_flight_and_buffered();
    accepted(&v);
    let bad = "bad in-flight fire";
    refused(
        &with(&v, |s| {
            s["inFlight"][0]["fire"] = json!(format!("tock@{}", S + TEN))
        }),
        bad,
    );
    refused(&with(&v, |s| s["inFlight"][0]["job"] = json!(7)), bad);
    refused(
        &with(&v, |s| {
            s["inFlight"][0].as_object_mut().unwrap().remove("deadline");
        }),
        bad,
    );
}

#[test]
fn buffered_fire_faults() {
    let v = in_flight_and_buffered();
    let bad = "bad buffered fire";
    refused(
        &with(&v, |s| {
            s["buffered"]["fire"] = json!(format!("tock@{}", S + 2 * TEN))
        }),
        bad,
    );
    refused(
        &with(&v, |s| s["buffered"]["dueAt"] = json!(S + 2 * TEN - 1)),
        bad,
    );
    // Due exactly at its nominal time (as made) and later are fine.
    accepted(&with(&v, |s| {
        s["buffered"]["dueAt"] = json!(S + 2 * TEN + 1)
    }));
}

/// A replica whose `tick` (`@every 10s`, `allow`) fired S+10s, lost
/// leadership at S+15s, and was paused at S+35s and resumed at S+40s:
/// cursor S+20s, pause log `[(S+35s, paused), (S+40s, active)]`.
fn pause_log() -> Value {
    let mut h = Harness::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let grant = Input::Leadership(Some(LeadershipGrant {
        epoch: Epoch(1),
        valid_until: t(S + 15_000),
    }));
    h.ok(S, grant);
    let mut d = def("tick", "@every 10s", "q");
    d.overlap = Overlap::Allow;
    h.ok(S, Input::UpsertSchedule(d));
    assert_eq!(nominals(&h.advance(S + TEN)), vec![S + TEN]);
    let pause = Input::PauseSchedule {
        name: "tick".into(),
        note: None,
    };
    h.ok(S + 35_000, pause);
    let resume = Input::ResumeSchedule {
        name: "tick".into(),
    };
    h.ok(S + 40_000, resume);
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let s = &v["schedules"][0];
    assert_eq!(s["cursor"], S + 2 * TEN);
    assert_eq!(
        s["pauseLog"],
        json!([{"at": S + 35_000, "paused": true}, {"at": S + 40_000, "paused": false}])
    );
    v
}

fn log(v: &Value, entries: &[(i64, bool)]) -> Value {
    let list: Vec<Value> = entries
        .iter()
        .map(|&(at, paused)| json!({"at": at, "paused": paused}))
        .collect();
    with(v, |s| s["pauseLog"] = Value::Array(list))
}

#[test]
fn pause_log_faults() {
    let v = pause_log();
    accepted(&v);
    let bad = "bad pause log";
    let c = S + 2 * TEN;
    // Starting at the cursor is fine; 1 ms before it is not.
    accepted(&log(&v, &[(c, true), (S + 40_000, false)]));
    refused(&log(&v, &[(c - 1, true), (S + 40_000, false)]), bad);
    // Equal or decreasing times.
    refused(&log(&v, &[(S + 35_000, true), (S + 35_000, false)]), bad);
    refused(&log(&v, &[(S + 40_000, true), (S + 35_000, false)]), bad);
    // Not alternating (the last state is the schedule's: active).
    refused(&log(&v, &[(S + 35_000, false), (S + 40_000, false)]), bad);
    // Ending paused while the schedule is active.
    refused(&log(&v, &[(S + 35_000, true)]), bad);
}

#[test]
fn cursor_without_a_boundary_before_end_at() {
    let mut h = Harness::standalone();
    let mut d = def("tick", "@every 10s", "q");
    d.end_at = Some(t(S + 6 * TEN));
    h.ok(S, Input::UpsertSchedule(d));
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    assert_eq!(v["schedules"][0]["cursor"], S + TEN);
    // The last boundary before `end_at` is a cursor; `end_at` is not.
    accepted(&with(&v, |s| s["cursor"] = json!(S + 5 * TEN)));
    refused(
        &with(&v, |s| s["cursor"] = json!(S + 6 * TEN)),
        "no boundary at or after its cursor",
    );
}

#[test]
fn counters_that_do_not_add_up() {
    // processed (2) = gridFires (1) + skipped (0) + the buffered grid fire.
    let v = in_flight_and_buffered();
    let c = &v["schedules"][0]["counters"];
    assert_eq!(
        (&c["processed"], &c["gridFires"], &c["fires"]),
        (&json!(2), &json!(1), &json!(1))
    );
    let bad = "counters disagree";
    refused(&with(&v, |s| s["counters"]["processed"] = json!(3)), bad);
    refused(&with(&v, |s| s["counters"]["processed"] = json!(1)), bad);
    // Without the buffered fire, 2 is one too many.
    refused(
        &with(&v, |s| {
            s.as_object_mut().unwrap().remove("buffered");
        }),
        bad,
    );
    // More fires than grid fires (manual, backfill) is fine.
    accepted(&with(&v, |s| s["counters"]["fires"] = json!(5)));
}
