//! While no leader is elected a submit times out with a clear error and
//! its row is withdrawn (never applied later); a submit whose leader
//! appears within the bound gets the engine's reply.

use crate::pg_support;

use chime_core::{Input, Reply};
use chime_native::backend::PortError;
use chime_native::pg::{InboxOptions, PgControl};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_without_a_leader_times_out_and_is_withdrawn() {
    let Some(pg) = pg_support::config("inbox_noleader") else {
        return;
    };
    let options = |secs| InboxOptions {
        reply_timeout: Duration::from_secs(secs),
        ..InboxOptions::default()
    };
    let control = PgControl::new(pg.clone(), "chime", Default::default(), options(1));
    let upsert = Input::UpsertSchedule(pg_support::schedule("orphan", "@every 1h"));
    let e = control.submit(upsert).await.unwrap_err();
    assert!(matches!(e, PortError::Unavailable(_)), "{e:?}");
    assert_eq!(e.code(), "unavailable");
    assert!(
        e.to_string()
            .contains("no leader answered within 1 s; the input was withdrawn"),
        "{e}"
    );
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    let rows: i64 = c
        .query_one(&format!("SELECT count(*) FROM \"{s}\".chime_inbox"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 0, "the timed-out row is withdrawn");
    // A submit made now is answered once a replica starts and leads.
    let waiting = PgControl::new(pg.clone(), "chime", Default::default(), options(15));
    let submit =
        tokio::spawn(async move { waiting.submit(Input::remove_schedule("orphan")).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let a = pg_support::replica(&pg, "a", 3_000);
    let reply = submit.await.unwrap().unwrap();
    // The withdrawn upsert never reached the engine.
    assert_eq!(reply, Reply::ScheduleRemoved { existed: false });
    a.end().await;
    pg_support::drop_schema(&pg).await;
}
