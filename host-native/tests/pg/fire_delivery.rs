//! Fires leave the leader through its store: a crash between a turn's
//! append and its delivery loses no fire (the next leader's recovery
//! delivers what the replayed journal produced) and doubles none
//! (delivering again is a no-op, however many leaders recover), and a
//! deposed leader's delivery is refused and writes nothing.

use crate::pg_support;

use chime_core::{
    Command, Engine, EngineConfig, Event, Input, JournalEntry, QueueConfig, QueueMode, ScheduleDef,
    Timestamp,
};
use chime_native::driver::{Driver, DriverConfig, SystemClock};
use chime_native::pg::{PgConfig, PgStore};
use chime_native::store::{Store, StoreError};
use std::sync::Arc;

/// (fires, jobs made by fires, skipped boundaries) in the schema.
async fn delivered(cfg: &PgConfig) -> (i64, i64, i64) {
    let c = chime_native::pg::connect(&cfg.url).await.unwrap();
    let s = &cfg.schema;
    let one = |sql: String| {
        let c = &c;
        async move { c.query_one(&sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    (
        one(format!("SELECT count(*) FROM \"{s}\".chime_fires")).await,
        one(format!(
            "SELECT count(*) FROM \"{s}\".chime_jobs WHERE fire IS NOT NULL"
        ))
        .await,
        one(format!(
            "SELECT coalesce(sum(count), 0)::bigint FROM \"{s}\".chime_skips"
        ))
        .await,
    )
}

fn recover(cfg: &PgConfig, epoch: chime_core::Epoch) -> Driver {
    let store = PgStore::open(cfg, "engine", epoch, &EngineConfig::default()).unwrap();
    Driver::recover(
        Box::new(store),
        Arc::new(SystemClock),
        DriverConfig {
            engine: EngineConfig {
                standalone: false,
                ..EngineConfig::default()
            },
            ..DriverConfig::default()
        },
    )
    .unwrap()
}

#[tokio::test]
async fn a_crash_between_append_and_delivery_loses_and_doubles_nothing() {
    let Some(cfg) = pg_support::config("fire_delivery") else {
        return;
    };
    let mut lease = pg_support::lease(&cfg, "a", 60_000, 1_000).await;
    let grant = lease.acquire().await.unwrap().unwrap();
    let t0 = Timestamp::from_millis(1_767_225_600_000).unwrap();
    let def: ScheduleDef = serde_json::from_value(serde_json::json!({
        "name": "tick", "spec": "@every 1s",
        "target": {"queue": "ticks", "priority": 3, "maxAttempts": 4}
    }))
    .unwrap();
    let entries: Vec<JournalEntry> = [
        (
            0,
            Input::DeclareQueue(QueueConfig {
                mode: QueueMode::External,
                lease_ms: 3_600_000,
                ..QueueConfig::new("ticks")
            }),
        ),
        (0, Input::UpsertSchedule(def)),
        (0, Input::Leadership(Some(grant.leadership()))),
        // Three boundaries missed: one fires, the rest overlap it.
        (3_500, Input::Advance),
        (
            3_600,
            Input::TriggerSchedule {
                name: "tick".into(),
                overlap: Some(chime_core::Overlap::Allow),
            },
        ),
    ]
    .into_iter()
    .map(|(ms, input)| JournalEntry {
        now: t0.saturating_add_ms(ms),
        input,
    })
    .collect();
    // What those inputs make the engine deliver.
    let mut engine = Engine::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let mut out = Vec::new();
    for e in &entries {
        engine.handle(e.now, e.input.clone()).unwrap();
        engine.drain_commands(&mut out);
    }
    let fires = out
        .iter()
        .filter(|c| matches!(c, Command::Enqueue { .. }))
        .count() as i64;
    let skipped: u64 = out
        .iter()
        .map(|c| match c {
            Command::Event(Event::FireSkipped { count, .. }) => *count,
            _ => 0,
        })
        .sum();
    assert_eq!(fires, 2, "a catch-up fire and a manual one: {out:?}");
    assert!(skipped >= 2, "{out:?}");

    // The leader appends the turn and crashes before delivering it.
    let mut store = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
    store.append(&entries).unwrap();
    drop(store);
    assert_eq!(delivered(&cfg).await, (0, 0, 0));

    // The next term's recovery delivers what the journal produced...
    let second = lease.acquire().await.unwrap().unwrap();
    drop(recover(&cfg, second.epoch));
    assert_eq!(delivered(&cfg).await, (fires, fires, skipped as i64));
    // Each fire's job carries the target's priority and attempts.
    let c = chime_native::pg::connect(&cfg.url).await.unwrap();
    let rows = c
        .query(
            &format!(
                "SELECT priority, max_attempts FROM \"{}\".chime_jobs WHERE fire IS NOT NULL",
                cfg.schema
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len() as i64, fires);
    for r in rows {
        assert_eq!(
            (r.get::<_, i32>(0), r.get::<_, Option<i32>>(1)),
            (3, Some(4))
        );
    }
    // ...and one more recovery (another takeover) adds nothing.
    let third = lease.acquire().await.unwrap().unwrap();
    let driver = recover(&cfg, third.epoch);
    assert_eq!(delivered(&cfg).await, (fires, fires, skipped as i64));
    drop(driver);

    // A deposed term delivers nothing: a fresh fire id (another manual
    // fire) offered under the first epoch is refused.
    let mut deposed = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
    engine
        .handle(
            t0.saturating_add_ms(3_700),
            Input::TriggerSchedule {
                name: "tick".into(),
                overlap: Some(chime_core::Overlap::Allow),
            },
        )
        .unwrap();
    let mut late = Vec::new();
    engine.drain_commands(&mut late);
    assert!(late.iter().any(|c| matches!(c, Command::Enqueue { .. })));
    match deposed.deliver(&late) {
        Err(StoreError::Fenced {
            epoch,
            current_epoch,
            ..
        }) => {
            assert_eq!(epoch, grant.epoch.0);
            assert_eq!(current_epoch, Some(third.epoch.0));
        }
        other => panic!("a deposed delivery went through: {other:?}"),
    }
    assert_eq!(delivered(&cfg).await, (fires, fires, skipped as i64));
    pg_support::drop_schema(&cfg).await;
}
