//! A schedule made through the API (`origin: api`) survives a leader
//! change: the new leader prunes the declared schedules its config no
//! longer declares and keeps the API's. Two in-process replicas on one
//! schema, writes through the follower's inbox, the leader killed (its
//! lease runs out).

use crate::pg_support;

use chime_core::{Input, Origin, Reply};
use chime_native::backend::PortError;
use chime_native::pg::PgControl;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_schedule_outlives_the_leader_and_a_stale_declared_one_does_not() {
    let Some(pg) = pg_support::config("api_schedule_kept") else {
        return;
    };
    let a = pg_support::replica(&pg, "a", 2_000);
    let b = pg_support::replica(&pg, "b", 2_000);
    let leader = pg_support::one_leader(&[&a, &b], Duration::from_secs(10)).await;
    let (lead, follow) = if leader == 0 { (a, b) } else { (b, a) };
    let control = PgControl::for_replica(&follow.cfg);
    let mut adhoc = pg_support::schedule("adhoc", "@every 1h");
    adhoc.origin = Origin::Api;
    // `stale` stands for a schedule an older config declared.
    let stale = pg_support::schedule("stale", "@every 1h");
    for def in [adhoc, stale] {
        let reply = control.submit(Input::UpsertSchedule(def)).await.unwrap();
        assert!(
            matches!(reply, Reply::ScheduleUpserted { changed: true, .. }),
            "{reply:?}"
        );
    }
    lead.kill();
    let t = std::time::Instant::now();
    while !follow.leading() {
        assert!(t.elapsed() < Duration::from_secs(15), "no takeover");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Pausing is how we ask the new leader's engine whether it holds one.
    let pause = |name: &str| Input::PauseSchedule {
        name: name.into(),
        note: None,
    };
    let kept = control.submit(pause("adhoc")).await;
    assert!(matches!(kept, Ok(Reply::ScheduleStatus { .. })), "{kept:?}");
    let pruned = control.submit(pause("stale")).await;
    match pruned {
        Err(PortError::Refused(e)) => assert_eq!(e.code(), "unknown_schedule"),
        other => panic!("the stale declared schedule was kept: {other:?}"),
    }
    follow.end().await;
    pg_support::drop_schema(&pg).await;
}
