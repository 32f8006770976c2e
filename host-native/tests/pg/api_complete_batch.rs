//! A batch complete through the listener's queue port on Postgres
//! (`PgApiQueues`, what `POST /v1/jobs/complete` calls once per item, all
//! at once) is coalesced into `complete_many`: the 100 jobs end in at most
//! a few transactions (one `finished_at` each, `now()` being the
//! transaction's start) instead of one commit per job, and each item keeps
//! its own result: a stale token in the same batch is `lease_lost` and
//! changes nothing, the others complete.

use crate::pg_support;
use chime_core::{EngineConfig, EnqueueRequest, LeaseToken, Payload, QueueConfig};
use chime_native::backend::{PortError, QueueBackend};
use chime_native::pg::PgApiQueues;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_completes_is_one_statement() {
    let Some(config) = pg_support::config("api_complete") else {
        return;
    };
    let port = PgApiQueues::new(config.clone(), EngineConfig::default());
    port.declare(&QueueConfig::new("b")).await.unwrap();
    let reqs: Vec<EnqueueRequest> = (0..100)
        .map(|n| EnqueueRequest::new("b", Payload::from_json(&n.to_string()).unwrap()))
        .collect();
    port.enqueue_batch(&reqs).await.unwrap().unwrap();
    let claimed = port.claim("b", "w", 100, None).await.unwrap();
    assert_eq!(claimed.len(), 100);

    // The first job twice: once with a token that is not its lease's.
    let stale = LeaseToken(claimed[0].token.0 + 1_000_000);
    let mut items = vec![(claimed[0].job, stale)];
    items.extend(claimed.iter().map(|c| (c.job, c.token)));
    let results =
        futures_util::future::join_all(items.iter().map(|&(job, token)| port.complete(job, token)))
            .await;
    match &results[0] {
        Err(PortError::Refused(e)) => assert_eq!(e.code(), "lease_lost"),
        other => panic!("the stale token: {other:?}"),
    }
    for (i, r) in results.iter().enumerate().skip(1) {
        assert!(r.is_ok(), "item {i}: {r:?}");
    }

    let c = chime_native::pg::connect(&config.url).await.unwrap();
    let row = c
        .query_one(
            &format!(
                "SELECT count(*), count(DISTINCT finished_at) FROM \"{}\".chime_jobs
                 WHERE queue = 'b' AND state = 'completed'",
                config.schema
            ),
            &[],
        )
        .await
        .unwrap();
    let (done, commits): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(done, 100);
    assert!(
        commits <= 3,
        "100 completes sent together ended in {commits} transactions"
    );
    pg_support::drop_schema(&config).await;
}
