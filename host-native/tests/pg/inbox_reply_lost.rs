//! A row a previous leader applied without writing its reply (it died
//! between the journal commit and the reply) is answered `reply_lost` by
//! the next leader at the start of its term, and not applied again;
//! pending rows are then applied as usual.

use crate::pg_support;

use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applied_row_without_a_reply_gets_reply_lost() {
    let Some(pg) = pg_support::config("inbox_lost") else {
        return;
    };
    let mut c = chime_native::pg::connect(&pg.url).await.unwrap();
    chime_native::pg::migrate::migrate(&mut c, &pg.schema)
        .await
        .unwrap();
    let s = &pg.schema;
    let upsert = |name: &str| {
        serde_json::to_string(&chime_core::Input::UpsertSchedule(pg_support::schedule(
            name,
            "@every 1h",
        )))
        .unwrap()
    };
    // As a leader that died after its journal commit left it, and one
    // still pending.
    c.execute(
        &format!(
            "INSERT INTO \"{s}\".chime_inbox (engine, input, applied_at, epoch)
             VALUES ('chime', $1, now(), 1)"
        ),
        &[&upsert("lost")],
    )
    .await
    .unwrap();
    c.execute(
        &format!("INSERT INTO \"{s}\".chime_inbox (engine, input) VALUES ('chime', $1)"),
        &[&upsert("pending")],
    )
    .await
    .unwrap();
    let a = pg_support::replica(&pg, "a", 3_000);
    let t = Instant::now();
    let rows = loop {
        let rows: Vec<(i64, Option<String>, Option<String>)> = c
            .query(
                &format!("SELECT id, reply, error FROM \"{s}\".chime_inbox ORDER BY id"),
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        if rows.iter().all(|r| r.1.is_some() || r.2.is_some()) {
            break rows;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{rows:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let error: serde_json::Value = serde_json::from_str(rows[0].2.as_deref().unwrap()).unwrap();
    assert_eq!(error["code"], "reply_lost", "{rows:?}");
    assert!(
        rows[1].1.as_deref().unwrap().contains("scheduleUpserted"),
        "{rows:?}"
    );
    // The lost one was not applied again: only `pending` is in the journal.
    let journal: Vec<String> = c
        .query(&format!("SELECT entry FROM \"{s}\".chime_journal"), &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(journal.iter().any(|e| e.contains("\"pending\"")));
    assert!(
        !journal.iter().any(|e| e.contains("\"lost\"")),
        "{journal:#?}"
    );
    a.end().await;
    pg_support::drop_schema(&pg).await;
}
