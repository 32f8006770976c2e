//! `DeclareQueue` through the inbox takes effect in the job tables (where
//! every replica's workers claim) with the engine's reply shape, and a
//! schedule upserted through the inbox onto a queue no config names
//! still delivers its fires as jobs in the tables.

use crate::pg_support;

use chime_core::{Input, QueueConfig, Reply};
use chime_native::pg::PgControl;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_declared_through_the_inbox_live_in_the_tables() {
    let Some(pg) = pg_support::config("inbox_declare") else {
        return;
    };
    let a = pg_support::replica(&pg, "a", 3_000);
    pg_support::one_leader(&[&a], Duration::from_secs(10)).await;
    let control = PgControl::for_replica(&a.cfg);
    let emails = QueueConfig {
        max_attempts: 3,
        ..QueueConfig::new("emails")
    };
    let declare = || Input::DeclareQueue(emails.clone());
    assert_eq!(
        control.submit(declare()).await.unwrap(),
        Reply::QueueDeclared {
            created: true,
            changed: true
        }
    );
    assert_eq!(
        control.submit(declare()).await.unwrap(),
        Reply::QueueDeclared {
            created: false,
            changed: false
        }
    );
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    let config: String = c
        .query_one(
            &format!("SELECT config FROM \"{s}\".chime_queues WHERE name = 'emails'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let stored: QueueConfig = serde_json::from_str(&config).unwrap();
    assert_eq!(stored.max_attempts, 3);
    // A schedule onto a queue nobody declared: its fires are jobs.
    let mut def = pg_support::schedule("elsewhere", "@every 1s");
    def.target.queue = "other".into();
    control.submit(Input::UpsertSchedule(def)).await.unwrap();
    let t = Instant::now();
    loop {
        let jobs: i64 = c
            .query_one(
                &format!(
                    "SELECT count(*) FROM \"{s}\".chime_jobs j JOIN \"{s}\".chime_fires f
                     ON f.job = j.id WHERE j.queue = 'other' AND f.schedule = 'elsewhere'"
                ),
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if jobs > 0 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no job for the fire");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    a.end().await;
    pg_support::drop_schema(&pg).await;
}
