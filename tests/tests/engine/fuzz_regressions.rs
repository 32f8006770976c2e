//! One test per fuzz finding (`scripts/fuzz.sh`, `docs/testing.md`
//! "Fuzzing"), each a minimized reproduction of the crash input.
//!
//! A finding whose fix is still open is `#[ignore]`d with its id, so the
//! suite stays green while the report is open; run them with
//! `cargo test -p chime-tests --test engine fuzz_regressions:: -- --include-ignored`.
//! Remove the `#[ignore]` with the fix. F1 and F2 are fixed.

use chime_core::{Engine, EngineConfig, Input, ScheduleDef, Snapshot, Timestamp};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00Z

fn ts(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// F1 (fuzz target `snapshot_restore`, artifact
/// `crash-19bd4b4176cbf913313d0034956f0517db655e59`): a snapshot whose
/// schedule cursor is not a boundary of its spec restores (and passes
/// `check_invariants`), and the first input then panics in the catch-up
/// walk:
///
/// ```text
/// panicked at core/src/catchup.rs:79:5: from is a boundary within the limit
///   catchup::span ← catchup::stretch (:122) ← catchup::plan (:136)
///   ← advance::step (:163) ← advance::fire_due (:146)
///   ← advance::advance_to (:40) ← Engine::handle (engine.rs:175)
/// ```
///
/// Minimized: one `@at` schedule (fires 2026-01-01T01:00Z), the clock at
/// 00:00, the snapshot's `cursor` moved back 400 days, beyond the default
/// catch-up window (365 days), so the advance takes the catch-up walk
/// (`advance.rs` `step`: not "plain"), which asserts that `[cursor, now]`
/// holds a boundary of the spec; it holds none. (Moved back less than the
/// window, the plain path fires a fire at the bogus nominal instead: no
/// panic, but a fire id off the grid.) Snapshots
/// are meant to be opaque, but they are files a host reads back, and a
/// tz database update between builds moves cron boundaries the same way.
/// Expected: `restore` refuses with a typed error, or the engine recovers
/// (re-grids the cursor); never a panic.
#[test]
fn f1_restored_cursor_off_the_grid_does_not_panic() {
    let mut engine = Engine::new(EngineConfig::default());
    let def: ScheduleDef = serde_json::from_str(
        r#"{"name": "once", "spec": "@at 2026-01-01T01:00:00Z", "target": {"queue": "jobs"}}"#,
    )
    .unwrap();
    engine.handle(ts(T0), Input::UpsertSchedule(def)).unwrap();
    while engine.poll_command().is_some() {}

    let mut snap: serde_json::Value = serde_json::from_str(&engine.snapshot().to_json()).unwrap();
    assert_eq!(snap["schedules"][0]["cursor"], T0 + 3_600_000);
    snap["schedules"][0]["cursor"] = (T0 - 400 * 86_400_000).into();
    let text = snap.to_string();

    let Ok(mut restored) = Engine::restore(Snapshot::from_json(&text).unwrap()) else {
        return; // refusing the snapshot with a typed error is a fix
    };
    restored.check_invariants();
    // Fixed: restore continues from the first boundary at or after the
    // bogus cursor (here the `@at` instant itself); before, this panicked
    // at catchup.rs:79.
    let next = restored.schedule("once").unwrap().next_nominal;
    assert_eq!(next, Some(ts(T0 + 3_600_000)));
    let _ = restored.handle(ts(T0 + 1), Input::Advance);
    while restored.poll_command().is_some() {}
    restored.check_invariants();
}

/// F2 (fuzz target `snapshot_restore`, artifact
/// `crash-67a7bb2801318a81c029c2f792dcbdecdc969aed`): `Engine::restore`
/// checks the accounting identity (`processed = gridFires + skipped +
/// buffered`) but not `fires >= gridFires`, so a snapshot with
/// `"counters": {"fires": 0, "gridFires": 1, …}` restores and the
/// restored engine breaks its own invariant:
///
/// ```text
/// panicked at core/src/schedule.rs:722:9: fires < grid fires
///   Schedule::check_invariants ← Schedules::check_invariants
///   (schedules.rs:425) ← Engine::check_invariants (engine.rs:135)
/// ```
///
/// Minimized: one `@every 1h` schedule that fired once, the snapshot's
/// `counters.fires` set to 0. Expected: `restore` refuses with a typed
/// error, like the other counter checks in `snapshot.rs` `schedule_of`.
#[test]
fn f2_restored_counters_fires_below_grid_fires_are_refused() {
    let mut engine = Engine::new(EngineConfig::default());
    let def: ScheduleDef = serde_json::from_str(
        r#"{"name": "backup", "spec": "@every 1h", "target": {"queue": "jobs"}}"#,
    )
    .unwrap();
    engine.handle(ts(T0), Input::UpsertSchedule(def)).unwrap();
    engine.handle(ts(T0 + 3_600_000), Input::Advance).unwrap();
    while engine.poll_command().is_some() {}
    assert_eq!(engine.schedule("backup").unwrap().fires, 1);

    let mut snap: serde_json::Value = serde_json::from_str(&engine.snapshot().to_json()).unwrap();
    assert_eq!(snap["schedules"][0]["counters"]["gridFires"], 1);
    snap["schedules"][0]["counters"]["fires"] = 0.into();
    let text = snap.to_string();

    // Before the fix this restored and then broke an invariant
    // (schedule.rs:722); now restore refuses it with a typed error.
    let err = Engine::restore(Snapshot::from_json(&text).unwrap()).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("counters disagree"), "{err}");
}
