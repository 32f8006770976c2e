//! The Postgres engine state records the tz database release like every
//! snapshot: a snapshot written under 2024b (real TZif files,
//! `core/testdata/tzif-2024b`) comes back from `chime_snapshot` with its
//! release and civil records, and the restore the driver runs on it moves
//! Asuncion's 09:00 cursor from 13:00Z to 12:00Z and reports it; a
//! snapshot of this build comes back naming this build's release.

use crate::pg_support;

use chime_core::{Engine, EngineConfig, Input, Snapshot, Timestamp, TzDatabase, tzdb_version};
use chime_native::pg::PgStore;
use chime_native::store::Store;
use std::path::Path;

/// 2025-03-29T00:00Z, 2025-03-30T14:00Z, 2025-03-31T12:00Z.
const START: i64 = 1_743_206_400_000;
const SNAP_AT: i64 = 1_743_343_200_000;
const NEW_9AM: i64 = 1_743_422_400_000;

fn old_rules() -> TzDatabase {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/testdata/tzif-2024b/America/Asuncion");
    TzDatabase::from_tzif(
        "2024b",
        [("America/Asuncion", std::fs::read(path).unwrap())],
    )
    .unwrap()
}

fn engine(tzdb: TzDatabase) -> Engine {
    let mut e = Engine::with_tzdb(EngineConfig::default(), tzdb);
    let mut def = pg_support::schedule("report", "0 9 * * *");
    def.tz = Some("America/Asuncion".into());
    e.handle(
        Timestamp::from_millis(START).unwrap(),
        Input::UpsertSchedule(def),
    )
    .unwrap();
    e.handle(Timestamp::from_millis(SNAP_AT).unwrap(), Input::Advance)
        .unwrap();
    while e.poll_command().is_some() {}
    e
}

fn stored(cfg: &chime_native::pg::PgConfig, epoch: chime_core::Epoch, snap: &Snapshot) -> Snapshot {
    {
        let mut s = PgStore::open(cfg, "engine", epoch, &EngineConfig::default()).unwrap();
        s.write_snapshot(snap).unwrap();
    }
    let mut s = PgStore::open(cfg, "engine", epoch, &EngineConfig::default()).unwrap();
    s.load().unwrap().snapshot.expect("snapshot stored")
}

#[tokio::test]
async fn the_engine_state_names_its_release() {
    let Some(cfg) = pg_support::config("tzdb_recorded") else {
        return;
    };
    let grant = pg_support::lease(&cfg, "a", 30_000, 1_000)
        .await
        .acquire()
        .await
        .unwrap()
        .expect("free lease");
    let old = engine(old_rules()).snapshot();
    let back = stored(&cfg, grant.epoch, &old);
    assert_eq!(back.tzdb(), Some("2024b"));
    assert_eq!(back.to_json(), old.to_json());
    assert!(back.to_json().contains(r#""offsetSeconds":-14400"#));
    let restored = Engine::restore_with(back, TzDatabase::bundled()).unwrap();
    assert_eq!(restored.tz_changes.len(), 1);
    assert_eq!(restored.tz_changes[0].new_at.as_millis(), NEW_9AM);
    assert_eq!(
        restored
            .engine
            .schedule("report")
            .unwrap()
            .next_nominal
            .map(|t| t.as_millis()),
        Some(NEW_9AM)
    );
    // Once restored, the next snapshot is this build's.
    let now = stored(&cfg, grant.epoch, &restored.engine.snapshot());
    assert_eq!(now.tzdb(), Some(tzdb_version()));
    assert!(
        Engine::restore_with(now, TzDatabase::bundled())
            .unwrap()
            .tz_changes
            .is_empty()
    );
    pg_support::drop_schema(&cfg).await;
}
