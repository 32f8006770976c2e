//! A worker pool's completions ride on its next claim
//! (`PgQueues::complete_and_claim`, what `PgSource` sends while a pool
//! runs): one statement, so one transaction — the completed jobs'
//! `finished_at` is the new claims' `claimed_at` (`now()` is the
//! transaction's start) — with the fence of `complete_many` on each
//! completion (a stale token is `lease_lost` and changes nothing), the
//! claim order and leases of `claim`, keys entering their dedup window,
//! and a refused claim sending nothing. Then the daemon's pool
//! (`run_pool` on `PgSource`) drains 300 jobs: each completed once, on
//! its first attempt. (How many of its commits also carried a claim
//! depends on scheduling: it is printed, and measured by
//! `scripts/bench/pg-commits.sh`, not asserted.)

use crate::pg_support;
use chime_core::{EngineConfig, EnqueueRequest, LeaseToken, Payload, QueueConfig};
use chime_native::pg::workers::PgSource;
use chime_native::pg::{PgQueues, QueueError};
use chime_native::worker::{Handler, Job, PoolConfig, run_pool};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

fn job(n: i32, priority: i32) -> EnqueueRequest {
    let mut r = EnqueueRequest::new("c", Payload::from_json(&n.to_string()).unwrap());
    r.priority = priority;
    r.key = Some(format!("k{n}"));
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_ride_on_the_next_claim() {
    let Some(config) = pg_support::config("pool_cycle") else {
        return;
    };
    let q = PgQueues::connect(&config, EngineConfig::default())
        .await
        .unwrap();
    let mut queue = QueueConfig::new("c");
    queue.dedup_window_ms = 60_000;
    q.declare(&queue).await.unwrap();
    // Payloads 0..10; 7, 8, 9 first by priority.
    let reqs: Vec<_> = (0..10).map(|n| job(n, i32::from(n >= 7))).collect();
    q.enqueue_many(&reqs).await.unwrap();
    let first = q.claim("c", "w1", 4, None).await.unwrap();
    let payloads = |c: &[chime_core::Claimed]| -> Vec<String> {
        c.iter().map(|c| c.payload.as_json().to_owned()).collect()
    };
    assert_eq!(payloads(&first), ["7", "8", "9", "0"]);

    // A bad claim (max 0) is refused by core before anything is sent: the
    // completions beside it are not made either.
    let done: Vec<_> = first.iter().map(|c| (c.job, c.token)).collect();
    match q.complete_and_claim(&done, "c", "w2", 0, None).await {
        Err(QueueError::Refused(e)) => assert_eq!(e.code(), "invalid_input"),
        other => panic!("a claim of 0: {other:?}"),
    }
    for c in &first {
        let info = q.job(c.job).await.unwrap().unwrap();
        assert_eq!(info.state.as_str(), "claimed");
    }

    // The four completions (and one stale token) with a claim of three.
    let mut with_stale = vec![(first[0].job, LeaseToken(first[0].token.0 + 1_000_000))];
    with_stale.extend(done.iter().copied());
    let (results, next) = q
        .complete_and_claim(&with_stale, "c", "w2", 3, Some(30_000))
        .await
        .unwrap();
    match &results[0] {
        Err(QueueError::Refused(e)) => assert_eq!(e.code(), "lease_lost"),
        other => panic!("the stale token: {other:?}"),
    }
    assert!(results[1..].iter().all(Result::is_ok), "{results:?}");
    assert_eq!(payloads(&next), ["1", "2", "3"]);
    let now = q.db_now().await.unwrap().as_millis();
    for c in &next {
        let info = q.job(c.job).await.unwrap().unwrap();
        assert_eq!(info.state.as_str(), "claimed");
        assert_eq!(info.worker.as_deref(), Some("w2"));
        assert_eq!(info.lease_deadline, Some(c.deadline));
        let lease = c.deadline.as_millis() - now;
        assert!((29_000..=30_000).contains(&lease), "lease {lease} ms");
        assert!(done.iter().all(|&(_, t)| t != c.token), "a fresh token");
    }

    let c = chime_native::pg::connect(&config.url).await.unwrap();
    let s = &config.schema;
    // One transaction: the completions' finished_at is the claims'
    // claimed_at; the completed jobs' keys count their dedup window.
    let row = c
        .query_one(
            &format!(
                "SELECT count(DISTINCT finished_at), min(finished_at) = (
                     SELECT min(claimed_at) FROM \"{s}\".chime_jobs WHERE worker = 'w2')
                 FROM \"{s}\".chime_jobs WHERE state = 'completed'"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 1);
    assert!(
        row.get::<_, bool>(1),
        "completed and claimed in one transaction"
    );
    let expiring: i64 = c
        .query_one(
            &format!(
                "SELECT count(*) FROM \"{s}\".chime_job_keys
                 WHERE expires_at > now() + interval '50 seconds'"
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(expiring, 4, "the completed jobs' keys");
    // A completed key still deduplicates.
    let again = q.enqueue(&job(7, 0)).await.unwrap();
    assert!(again.deduplicated);
    assert_eq!(again.job, first[0].job);

    // The pool: 300 more jobs drained by a pool of 8 through `PgSource`.
    let more: Vec<_> = (0..300)
        .map(|n| EnqueueRequest::new("p", Payload::from_json(&n.to_string()).unwrap()))
        .collect();
    q.enqueue_many(&more).await.unwrap();
    let q = Arc::new(q);
    let ran = Arc::new(AtomicU64::new(0));
    let counter = ran.clone();
    let handler: Handler = Arc::new(move |_job: Job| {
        counter.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    });
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let mut pool = PoolConfig::new("p");
    pool.concurrency = 8;
    pool.poll = Duration::from_millis(50);
    let wake = Arc::new(tokio::sync::Notify::new());
    let task = tokio::spawn(run_pool(
        PgSource::new(q.clone()),
        wake,
        pool,
        handler,
        stop_rx,
    ));
    let count = |what: &'static str| {
        let (c, s) = (&c, s.clone());
        async move {
            c.query_one(
                &format!("SELECT count(*) FROM \"{s}\".chime_jobs WHERE queue = 'p' AND {what}"),
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
        }
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while count("state = 'completed'").await < 300 {
        assert!(tokio::time::Instant::now() < deadline, "the pool stalled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stop.send(true);
    task.await.unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), 300, "each job ran once");
    assert_eq!(count("attempt = 1 AND state = 'completed'").await, 300);
    // Commits that completed jobs and claimed others.
    let carried: i64 = c
        .query_one(
            &format!(
                "SELECT count(DISTINCT d.finished_at) FROM \"{s}\".chime_jobs d
                 WHERE d.queue = 'p' AND EXISTS (
                     SELECT 1 FROM \"{s}\".chime_jobs n
                     WHERE n.queue = 'p' AND n.claimed_at = d.finished_at)"
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    eprintln!("pool commits that completed jobs and claimed others: {carried}");
    pg_support::drop_schema(&config).await;
}
