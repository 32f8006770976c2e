//! Schema migrations on a real PostgreSQL: applied once, safe when
//! replicas start at the same time, and a schema newer than the binary is
//! refused rather than written to.

use crate::pg_support;

use chime_native::pg::migrate::{latest_version, migrate};
use chime_native::pg::{PgError, connect};

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
