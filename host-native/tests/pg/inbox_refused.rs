//! An invalid input is refused by the submitting replica at once with
//! core's code and field, and nothing is inserted; an input the engine
//! refuses comes back with core's error; the inbox's row bound refuses
//! with `limit_exceeded` and inserts nothing.

use crate::pg_support;

use chime_core::{Error, Input};
use chime_native::backend::PortError;
use chime_native::pg::{InboxOptions, PgControl};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_inputs_are_refused_at_once_and_insert_nothing() {
    let Some(pg) = pg_support::config("inbox_refused") else {
        return;
    };
    let a = pg_support::replica(&pg, "a", 3_000);
    pg_support::one_leader(&[&a], Duration::from_secs(10)).await;
    let control = PgControl::for_replica(&a.cfg);
    let t = Instant::now();
    let bad = Input::UpsertSchedule(pg_support::schedule("bad", "every tuesday-ish"));
    let e = control.submit(bad).await.unwrap_err();
    let PortError::Refused(core) = &e else {
        panic!("{e:?}")
    };
    assert_eq!(core.field(), Some("spec"));
    assert!(t.elapsed() < Duration::from_secs(1), "refused at once");
    let e = control
        .submit(Input::ResumeSchedule {
            name: "not a name!".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_name");
    // Not a schedule or queue input.
    let e = control.submit(Input::Advance).await.unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    let count = || async {
        c.query_one(&format!("SELECT count(*) FROM \"{s}\".chime_inbox"), &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    assert_eq!(count().await, 0, "nothing inserted");
    // Valid, but the engine refuses it: core's error from the leader.
    let e = control
        .submit(Input::PauseSchedule {
            name: "missing".into(),
            note: None,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PortError::Refused(Error::UnknownSchedule(n)) if n == "missing"),
        "{e:?}"
    );
    assert_eq!(count().await, 1);
    a.end().await;
    // The bound: with no leader, the second row waits past the limit.
    let bounded = PgControl::new(
        pg.clone(),
        "chime",
        Default::default(),
        InboxOptions {
            max_pending: 1,
            reply_timeout: Duration::from_secs(3),
            ..InboxOptions::default()
        },
    );
    let bounded = std::sync::Arc::new(bounded);
    let first = {
        let b = bounded.clone();
        tokio::spawn(async move { b.submit(Input::ResumeSchedule { name: "x".into() }).await })
    };
    let t = Instant::now();
    while count().await < 2 {
        assert!(t.elapsed() < Duration::from_secs(3));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let e = bounded
        .submit(Input::ResumeSchedule { name: "y".into() })
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            PortError::Refused(Error::LimitExceeded {
                what: "inbox",
                limit: 1
            })
        ),
        "{e:?}"
    );
    assert_eq!(count().await, 2);
    assert_eq!(first.await.unwrap().unwrap_err().code(), "unavailable");
    pg_support::drop_schema(&pg).await;
}
