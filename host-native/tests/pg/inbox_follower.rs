//! A schedule upserted through the follower replica's `PgControl` reaches
//! the leader's engine through the inbox and fires from the leader: two
//! in-process replicas on one schema, the reply is the engine's
//! `ScheduleUpserted`, and the fires in `chime_fires` carry the leader's
//! epoch. Prints the submit → reply latency through the follower.

use crate::pg_support;

use chime_core::{Input, Reply};
use chime_native::pg::PgControl;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_upserted_through_the_follower_fires_from_the_leader() {
    let Some(pg) = pg_support::config("inbox_follower") else {
        return;
    };
    let a = pg_support::replica(&pg, "a", 3_000);
    let b = pg_support::replica(&pg, "b", 3_000);
    let leader = pg_support::one_leader(&[&a, &b], Duration::from_secs(10)).await;
    let (lead, follow) = if leader == 0 { (&a, &b) } else { (&b, &a) };
    let epoch = lead.cfg.status.view().epoch;
    assert!(!follow.leading());
    let control = PgControl::for_replica(&follow.cfg);
    let def = pg_support::schedule("every_second", "@every 1s");
    let t = Instant::now();
    let reply = control.submit(Input::UpsertSchedule(def)).await.unwrap();
    let first = t.elapsed();
    assert!(
        matches!(reply, Reply::ScheduleUpserted { changed: true, .. }),
        "{reply:?}"
    );
    // A few more to measure (pause/resume round trips).
    let mut took = vec![first];
    for i in 0..10 {
        let input = if i % 2 == 0 {
            Input::PauseSchedule {
                name: "every_second".into(),
                note: None,
            }
        } else {
            Input::ResumeSchedule {
                name: "every_second".into(),
            }
        };
        let t = Instant::now();
        control.submit(input).await.unwrap();
        took.push(t.elapsed());
    }
    took.sort();
    println!(
        "inbox submit→reply via the follower: first {first:?}, median {:?}, max {:?}",
        took[took.len() / 2],
        took[took.len() - 1]
    );
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    let t = Instant::now();
    let fired = loop {
        let row = c
            .query_one(
                &format!(
                    "SELECT count(*), min(epoch), max(epoch) FROM \"{s}\".chime_fires
                     WHERE schedule = 'every_second'"
                ),
                &[],
            )
            .await
            .unwrap();
        let n: i64 = row.get(0);
        if n >= 2 {
            break (row.get::<_, Option<i64>>(1), row.get::<_, Option<i64>>(2));
        }
        if t.elapsed() > Duration::from_secs(10) {
            let skips: Vec<(String, i64)> = c
                .query(
                    &format!("SELECT reason, count FROM \"{s}\".chime_skips"),
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let journal: Vec<String> = c
                .query(
                    &format!("SELECT entry FROM \"{s}\".chime_journal ORDER BY seq"),
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            panic!("no fires from the leader; skips {skips:?}; journal {journal:#?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(fired, (Some(epoch as i64), Some(epoch as i64)));
    // Every row was applied once, by the leader's epoch, with a reply.
    let row = c
        .query_one(
            &format!(
                "SELECT count(*), count(*) FILTER (WHERE applied_at IS NOT NULL AND epoch = $1
                 AND reply IS NOT NULL) FROM \"{s}\".chime_inbox"
            ),
            &[&(epoch as i64)],
        )
        .await
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (11, 11));
    a.end().await;
    b.end().await;
    pg_support::drop_schema(&pg).await;
}
