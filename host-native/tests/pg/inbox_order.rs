//! Inputs submitted concurrently through two replicas are applied in
//! inbox order: the leader's journal holds the inbox's inputs in the
//! order of their row ids, each once.

use crate::pg_support;

use chime_core::{Input, JournalEntry};
use chime_native::pg::PgControl;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inputs_from_two_replicas_are_applied_in_inbox_order() {
    let Some(pg) = pg_support::config("inbox_order") else {
        return;
    };
    let a = pg_support::replica(&pg, "a", 3_000);
    let b = pg_support::replica(&pg, "b", 3_000);
    pg_support::one_leader(&[&a, &b], Duration::from_secs(10)).await;
    let controls = [
        Arc::new(PgControl::for_replica(&a.cfg)),
        Arc::new(PgControl::for_replica(&b.cfg)),
    ];
    // Each replica upserts its own schedules and pauses and resumes
    // them, all at once.
    let mut tasks = Vec::new();
    for (r, control) in controls.iter().enumerate() {
        for i in 0..10 {
            let control = control.clone();
            tasks.push(tokio::spawn(async move {
                let name = format!("s{r}_{i}");
                control
                    .submit(Input::UpsertSchedule(pg_support::schedule(
                        &name,
                        "@every 1h",
                    )))
                    .await
                    .unwrap();
                control
                    .submit(Input::PauseSchedule {
                        name: name.clone(),
                        note: None,
                    })
                    .await
                    .unwrap();
                control
                    .submit(Input::ResumeSchedule { name })
                    .await
                    .unwrap();
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    let inbox: Vec<Input> = c
        .query(
            &format!("SELECT input FROM \"{s}\".chime_inbox ORDER BY id"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str(r.get::<_, &str>(0)).unwrap())
        .collect();
    assert_eq!(inbox.len(), 60);
    let journal: Vec<Input> = c
        .query(
            &format!("SELECT entry FROM \"{s}\".chime_journal ORDER BY seq"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| {
            serde_json::from_str::<JournalEntry>(r.get::<_, &str>(0))
                .unwrap()
                .input
        })
        .filter(chime_native::pg::is_control)
        // The term's own config (the queue `ticks`) is not the inbox's.
        .filter(|i| !matches!(i, Input::DeclareQueue(_)))
        .collect();
    assert_eq!(journal, inbox, "the journal follows the inbox order");
    a.end().await;
    b.end().await;
    pg_support::drop_schema(&pg).await;
}
