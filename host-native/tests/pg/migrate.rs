//! Schema migrations on a real PostgreSQL: applied once, safe when
//! replicas start at the same time, a schema newer than the binary is
//! refused rather than written to, and the jobs a version-3 database holds
//! come through version 4 (core's state names) claimable as before.

use crate::pg_support;

use chime_core::{EngineConfig, JobState};
use chime_native::pg::migrate::{latest_version, migrate, migrate_to};
use chime_native::pg::{PgError, PgQueues, connect};

#[tokio::test]
async fn migrations_apply_once_even_when_replicas_race() {
    let Some(cfg) = pg_support::config("migrate_once") else {
        return;
    };
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let cfg = cfg.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = connect(&cfg.url).await.unwrap();
            migrate(&mut c, &cfg.schema).await.unwrap()
        }));
    }
    let mut applied = Vec::new();
    for t in tasks {
        applied.extend(t.await.unwrap());
    }
    applied.sort();
    let all: Vec<i32> = (1..=latest_version()).collect();
    assert_eq!(applied, all, "each version applied by exactly one replica");
    let mut c = connect(&cfg.url).await.unwrap();
    assert!(migrate(&mut c, &cfg.schema).await.unwrap().is_empty());
    let rows: i64 = c
        .query_one(
            &format!(
                "SELECT count(*) FROM \"{}\".chime_schema_migrations",
                cfg.schema
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, i64::from(latest_version()));
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let Some(cfg) = pg_support::config("migrate_newer") else {
        return;
    };
    let mut c = connect(&cfg.url).await.unwrap();
    migrate(&mut c, &cfg.schema).await.unwrap();
    c.execute(
        &format!(
            "INSERT INTO \"{}\".chime_schema_migrations (version, name) VALUES ($1, 'future')",
            cfg.schema
        ),
        &[&(latest_version() + 1)],
    )
    .await
    .unwrap();
    match migrate(&mut c, &cfg.schema).await {
        Err(e @ PgError::SchemaTooNew { .. }) => {
            assert!(e.to_string().contains("upgrade chime"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        migrate(&mut c, "Bad-Name").await,
        Err(PgError::BadSchema(_))
    ));
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn version_4_renames_stored_states_to_cores() {
    let Some(cfg) = pg_support::config("migrate_v4") else {
        return;
    };
    let mut c = connect(&cfg.url).await.unwrap();
    assert_eq!(migrate_to(&mut c, &cfg.schema, 3).await.unwrap(), [1, 2, 3]);
    // What a version-3 binary wrote: a waiting job ('pending'), a claimed
    // one and a dead letter.
    let s = &cfg.schema;
    let config = serde_json::to_string(&chime_core::QueueConfig::new("q")).unwrap();
    c.batch_execute(&format!(
        "INSERT INTO \"{s}\".chime_queues (name, config, seed, dedup_window_ms)
             VALUES ('q', '{config}', 0, 1000);
         INSERT INTO \"{s}\".chime_jobs (queue, state, priority, run_at, payload, headers)
             VALUES ('q', 'pending', 0, now(), '1', '{{}}'),
                    ('q', 'dead', 0, now(), '2', '{{}}');
         INSERT INTO \"{s}\".chime_jobs
             (queue, state, priority, run_at, payload, headers, attempt, token, lease_until)
             VALUES ('q', 'claimed', 0, now(), '3', '{{}}', 1, 7, now() + interval '1 hour');"
    ))
    .await
    .unwrap();
    assert_eq!(migrate_to(&mut c, &cfg.schema, 4).await.unwrap(), [4]);
    let states: Vec<String> = c
        .query(
            &format!("SELECT state FROM \"{s}\".chime_jobs ORDER BY id"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(states, ["available", "dead", "claimed"]);
    // The old name is refused from now on; the waiting job is claimable.
    let old = c
        .execute(
            &format!("UPDATE \"{s}\".chime_jobs SET state = 'pending' WHERE id = 1"),
            &[],
        )
        .await;
    assert!(old.is_err(), "'pending' is no longer a state");
    let q = PgQueues::connect(&cfg, EngineConfig::default())
        .await
        .unwrap();
    let claimed = q.claim("q", "w", 10, None).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].payload.as_json(), "1");
    let dead = q.job(chime_core::JobId(2)).await.unwrap().unwrap();
    assert_eq!(dead.state, JobState::Dead);
    pg_support::drop_schema(&cfg).await;
}
