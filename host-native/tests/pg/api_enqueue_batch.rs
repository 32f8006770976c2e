//! Single enqueues sent together through the listener's queue port on
//! Postgres (`PgApiQueues`, what concurrent `POST /v1/jobs` requests call)
//! are coalesced into `enqueue_batch`: 100 enqueues end in at most a few
//! transactions (one `created_at` each, `now()` being the transaction's
//! start) instead of one commit per job, and each request keeps its own
//! answer: a bad one among them is refused alone (`invalid_name`, nothing
//! else refused), two with the same key make one job (the later one
//! `deduplicated`), and a key a live job holds names that job.

use crate::pg_support;
use chime_core::{EngineConfig, EnqueueRequest, Payload, QueueConfig};
use chime_native::backend::{PortError, QueueBackend};
use chime_native::pg::PgApiQueues;

fn req(queue: &str, n: i32, key: Option<&str>) -> EnqueueRequest {
    let mut r = EnqueueRequest::new(queue, Payload::from_json(&n.to_string()).unwrap());
    r.key = key.map(str::to_owned);
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_enqueues_sent_together_are_one_statement() {
    let Some(config) = pg_support::config("api_enqueue") else {
        return;
    };
    let port = PgApiQueues::new(config.clone(), EngineConfig::default());
    port.declare(&QueueConfig::new("e")).await.unwrap();
    let live = port.enqueue(&req("e", -1, Some("held"))).await.unwrap();
    assert!(!live.deduplicated);

    // 0: a bad queue name; 1 and 2: one key twice; 3: the live job's key;
    // 4..100: plain jobs.
    let mut reqs = vec![
        req("not a queue!", 0, None),
        req("e", 1, Some("twice")),
        req("e", 2, Some("twice")),
        req("e", 3, Some("held")),
    ];
    reqs.extend((4..100).map(|n| req("e", n, None)));
    let results = futures_util::future::join_all(reqs.iter().map(|r| port.enqueue(r))).await;

    match &results[0] {
        Err(PortError::Refused(e)) => assert_eq!(e.code(), "invalid_name"),
        other => panic!("the bad request: {other:?}"),
    }
    let ok: Vec<_> = results[1..]
        .iter()
        .enumerate()
        .map(|(i, r)| match r {
            Ok(e) => *e,
            Err(e) => panic!("request {}: {e:?}", i + 1),
        })
        .collect();
    // One of the two "twice" requests made the job, the other names it.
    assert_eq!(ok[0].job, ok[1].job);
    assert_eq!(
        [ok[0].deduplicated, ok[1].deduplicated]
            .iter()
            .filter(|d| **d)
            .count(),
        1
    );
    assert!(ok[2].deduplicated);
    assert_eq!(ok[2].job, live.job);
    assert!(ok[3..].iter().all(|e| !e.deduplicated));
    for (n, e) in ok.iter().enumerate().skip(3) {
        let job = port.job(e.job).await.unwrap().expect("stored");
        assert_eq!(job.payload.as_json(), (n + 1).to_string());
    }

    let c = chime_native::pg::connect(&config.url).await.unwrap();
    let row = c
        .query_one(
            &format!(
                "SELECT count(*), count(DISTINCT created_at) FROM \"{}\".chime_jobs
                 WHERE queue = 'e' AND id <> $1",
                config.schema
            ),
            &[&(live.job.0 as i64)],
        )
        .await
        .unwrap();
    let (jobs, commits): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(jobs, 97, "96 plain jobs and one keyed");
    assert!(
        commits <= 3,
        "99 enqueues sent together ended in {commits} transactions"
    );
    pg_support::drop_schema(&config).await;
}
