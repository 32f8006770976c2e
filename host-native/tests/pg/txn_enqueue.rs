//! Transactional enqueue (the outbox) on a real PostgreSQL (see
//! `pg_support`): `PgQueues::enqueue_in` adds a job inside the
//! application's own transaction, so the job exists if and only if the
//! application's writes commit — with the same checks, keys and stored
//! row as `enqueue`, an implicitly created queue that a rollback takes
//! away, and a wake-up that `LISTEN`ers get at commit and never after a
//! rollback.

use crate::pg_support;

use chime_core::{EngineConfig, EnqueueRequest, JobId, Payload, QueueConfig, Timestamp};
use chime_native::pg::{PgConfig, PgQueues, QueueError};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use tokio_postgres::Client;

fn code(e: QueueError) -> &'static str {
    match e {
        QueueError::Refused(e) => e.code(),
        QueueError::Db(e) => panic!("database error: {e}"),
    }
}

fn job(queue: &str, n: u32) -> EnqueueRequest {
    EnqueueRequest::new(
        queue,
        Payload::from_json(&format!("{{\"order\": {n}}}")).unwrap(),
    )
}

fn keyed(queue: &str, n: u32, key: &str) -> EnqueueRequest {
    let mut req = job(queue, n);
    req.key = Some(key.into());
    req
}

/// The queues, and an application connection whose `search_path` is the
/// test's schema, holding the application's own `orders` table.
async fn setup(test: &str) -> Option<(PgConfig, PgQueues, Client)> {
    let cfg = pg_support::config(test)?;
    let q = PgQueues::connect(&cfg, EngineConfig::default())
        .await
        .unwrap();
    let app = connect_app(&cfg).await;
    app.batch_execute(
        "CREATE TABLE orders (
             id bigserial PRIMARY KEY, customer text NOT NULL, total_cents bigint NOT NULL)",
    )
    .await
    .unwrap();
    Some((cfg, q, app))
}

/// Another connection, on the test's schema.
async fn connect_app(cfg: &PgConfig) -> Client {
    let c = chime_native::pg::connect(&cfg.url).await.unwrap();
    c.batch_execute(&format!("SET search_path TO \"{}\"", cfg.schema))
        .await
        .unwrap();
    c
}

async fn add_order(c: &impl tokio_postgres::GenericClient, customer: &str) -> i64 {
    c.query_one(
        "INSERT INTO orders (customer, total_cents) VALUES ($1, 4200) RETURNING id",
        &[&customer],
    )
    .await
    .unwrap()
    .get(0)
}

/// The customers of the committed orders, as another connection sees them.
async fn customers(observer: &Client) -> Vec<String> {
    observer
        .query("SELECT customer FROM orders ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// `SELECT count(*)` of a query, as another connection sees it.
async fn count(observer: &Client, sql: &str, name: &str) -> i64 {
    observer
        .query_one(&format!("SELECT count(*) FROM ({sql}) t"), &[&name])
        .await
        .unwrap()
        .get(0)
}

async fn queue_rows(observer: &Client, queue: &str) -> i64 {
    count(
        observer,
        "SELECT 1 FROM chime_queues WHERE name = $1",
        queue,
    )
    .await
}

async fn key_rows(observer: &Client, key: &str) -> i64 {
    count(observer, "SELECT 1 FROM chime_job_keys WHERE key = $1", key).await
}

/// Everything stored about a job but its id and key, as one text (the
/// delay as `run_at` minus the insert's clock).
async fn stored(observer: &Client, id: JobId) -> String {
    observer
        .query_one(
            "SELECT row(queue, state, priority, attempt, max_attempts, payload, headers, fire,
                        token, worker, lease_until, last_error, finished_at,
                        run_at - date_trunc('milliseconds', created_at))::text
             FROM chime_jobs WHERE id = $1",
            &[&(id.0 as i64)],
        )
        .await
        .unwrap()
        .get(0)
}

fn assert_send<T: Send>(_: &T) {}

#[tokio::test]
async fn a_committed_transaction_has_its_order_and_its_job() {
    let Some((cfg, q, mut app)) = setup("tx_commit").await else {
        return;
    };
    let observer = connect_app(&cfg).await;
    let mut req = EnqueueRequest::new(
        "receipts",
        Payload::from_json("{ \"order\" : 1.50 }").unwrap(),
    );
    req.priority = 3;
    req.max_attempts = Some(2);
    req.headers.insert("trace".into(), "é".into());
    let mut later = req.clone();
    later.delay_ms = Some(60_000);

    let tx = app.transaction().await.unwrap();
    add_order(&tx, "ada").await;
    // The queue is not declared: created inside the transaction too.
    let enqueue = q.enqueue_in(&tx, &req);
    assert_send(&enqueue); // usable in spawned tasks (a web handler's)
    let done = enqueue.await.unwrap();
    assert!(!done.deduplicated);
    let delayed = q.enqueue_in(&tx, &later).await.unwrap().job;
    // Nothing is visible outside the transaction before it commits.
    assert!(customers(&observer).await.is_empty());
    assert_eq!(q.job(done.job).await.unwrap(), None);
    assert_eq!(queue_rows(&observer, "receipts").await, 0);
    assert!(q.claim("receipts", "w", 10, None).await.unwrap().is_empty());
    tx.commit().await.unwrap();

    assert_eq!(customers(&observer).await, ["ada"]);
    assert_eq!(queue_rows(&observer, "receipts").await, 1);
    let row = q.job(done.job).await.unwrap().unwrap();
    assert_eq!(
        (row.queue.as_str(), row.state.as_str(), row.attempt),
        ("receipts", "available", 0)
    );
    // The same row as `enqueue` stores for the same requests.
    let plain = q.enqueue(&req).await.unwrap().job;
    let plain_later = q.enqueue(&later).await.unwrap().job;
    assert_eq!(
        stored(&observer, done.job).await,
        stored(&observer, plain).await
    );
    assert_eq!(
        stored(&observer, delayed).await,
        stored(&observer, plain_later).await
    );
    assert!(stored(&observer, delayed).await.contains("00:01:00"));

    // Claimable at once, in claim order, with the payload verbatim.
    let got = q.claim("receipts", "w", 10, None).await.unwrap();
    let ids: Vec<JobId> = got.iter().map(|c| c.job).collect();
    assert_eq!(ids, [done.job, plain], "the delayed ones wait");
    assert_eq!(got[0].payload.as_json(), "{ \"order\" : 1.50 }");
    assert_eq!(got[0].headers["trace"], "é");
    assert_eq!(got[0].attempt, 1);
    q.complete(done.job, got[0].token).await.unwrap();

    // A plain client (no transaction) commits at once.
    let now = q.enqueue_in(&app, &job("receipts", 2)).await.unwrap().job;
    assert_eq!(
        q.claim("receipts", "w", 10, None).await.unwrap()[0].job,
        now
    );
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn a_rolled_back_transaction_leaves_no_order_no_job_and_no_queue() {
    let Some((cfg, q, mut app)) = setup("tx_rollback").await else {
        return;
    };
    let observer = connect_app(&cfg).await;

    let tx = app.transaction().await.unwrap();
    add_order(&tx, "bob").await;
    let gone = q.enqueue_in(&tx, &keyed("fresh", 1, "k1")).await.unwrap();
    assert!(!gone.deduplicated);
    tx.rollback().await.unwrap();
    assert!(customers(&observer).await.is_empty());
    assert_eq!(q.job(gone.job).await.unwrap(), None);
    assert_eq!(queue_rows(&observer, "fresh").await, 0, "queue rolled back");
    assert_eq!(key_rows(&observer, "k1").await, 0);
    assert!(q.claim("fresh", "w", 10, None).await.unwrap().is_empty());

    // Dropping the transaction rolls back too.
    let tx = app.transaction().await.unwrap();
    add_order(&tx, "cy").await;
    let dropped = q.enqueue_in(&tx, &job("fresh2", 2)).await.unwrap().job;
    drop(tx);
    assert!(customers(&app).await.is_empty());
    assert_eq!(q.job(dropped).await.unwrap(), None);
    assert_eq!(queue_rows(&observer, "fresh2").await, 0);

    // The handle did not remember either queue: enqueueing to them again,
    // outside and inside a transaction, creates them (a remembered queue
    // would be skipped, and the job's insert refused by the foreign key).
    let outside = q.enqueue(&job("fresh", 3)).await.unwrap();
    assert!(!outside.deduplicated);
    let mut tx = app.transaction().await.unwrap();
    let inside = q.enqueue_in(&tx, &job("fresh2", 4)).await.unwrap().job;
    // A savepoint is a transaction too: its rollback takes its job away
    // and keeps the rest.
    let sp = tx.savepoint("undo").await.unwrap();
    let undone = q.enqueue_in(&sp, &job("fresh2", 5)).await.unwrap().job;
    sp.rollback().await.unwrap();
    add_order(&tx, "dee").await;
    tx.commit().await.unwrap();
    assert_eq!(customers(&observer).await, ["dee"]);
    assert_eq!(queue_rows(&observer, "fresh").await, 1);
    assert_eq!(queue_rows(&observer, "fresh2").await, 1);
    assert_eq!(q.job(undone).await.unwrap(), None);
    assert_eq!(
        q.claim("fresh", "w", 10, None).await.unwrap()[0].job,
        outside.job
    );
    let got = q.claim("fresh2", "w", 10, None).await.unwrap();
    assert_eq!(got.iter().map(|c| c.job).collect::<Vec<_>>(), [inside]);
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn a_key_taken_in_a_rolled_back_transaction_is_free_afterwards() {
    let Some((cfg, q, mut app)) = setup("tx_key_free").await else {
        return;
    };
    q.declare(&QueueConfig::new("mail")).await.unwrap();
    // Then taken by a plain enqueue, or by a committed transaction.
    for (key, in_tx) in [("k1", false), ("k2", true)] {
        let tx = app.transaction().await.unwrap();
        let rolled = q.enqueue_in(&tx, &keyed("mail", 1, key)).await.unwrap();
        assert!(!rolled.deduplicated);
        tx.rollback().await.unwrap();
        let next = if in_tx {
            let tx = app.transaction().await.unwrap();
            let next = q.enqueue_in(&tx, &keyed("mail", 2, key)).await.unwrap();
            tx.commit().await.unwrap();
            next
        } else {
            q.enqueue(&keyed("mail", 2, key)).await.unwrap()
        };
        assert!(!next.deduplicated, "{key}");
        assert_ne!(next.job, rolled.job);
        assert_eq!(q.job(rolled.job).await.unwrap(), None);
        assert_eq!(
            q.job(next.job).await.unwrap().unwrap().key.as_deref(),
            Some(key)
        );
        let got = q.claim("mail", "w", 10, None).await.unwrap();
        assert_eq!(got.iter().map(|c| c.job).collect::<Vec<_>>(), [next.job]);
        // And it is live now: the next use finds that job.
        let again = q.enqueue(&keyed("mail", 3, key)).await.unwrap();
        assert_eq!((again.job, again.deduplicated), (next.job, true));
    }
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn a_key_conflict_in_a_transaction_returns_the_existing_job() {
    let Some((cfg, q, mut app)) = setup("tx_key_dup").await else {
        return;
    };
    q.declare(&QueueConfig::new("mail")).await.unwrap();
    let first = q.enqueue(&keyed("mail", 1, "once")).await.unwrap();

    let tx = app.transaction().await.unwrap();
    let again = q.enqueue_in(&tx, &keyed("mail", 2, "once")).await.unwrap();
    assert_eq!((again.job, again.deduplicated), (first.job, true));
    // A key new in this transaction, used twice in it: one job.
    let new = q.enqueue_in(&tx, &keyed("mail", 3, "new")).await.unwrap();
    assert!(!new.deduplicated);
    let twice = q.enqueue_in(&tx, &keyed("mail", 4, "new")).await.unwrap();
    assert_eq!((twice.job, twice.deduplicated), (new.job, true));
    tx.commit().await.unwrap();
    let got: BTreeSet<JobId> = q
        .claim("mail", "w", 10, None)
        .await
        .unwrap()
        .iter()
        .map(|c| c.job)
        .collect();
    assert_eq!(got, BTreeSet::from([first.job, new.job]));

    // An enqueue of a key an open transaction holds waits for it, then
    // finds its job (commit) or takes the key (rollback). On another
    // handle: its connection waits.
    let other = std::sync::Arc::new(
        PgQueues::connect(&cfg, EngineConfig::default())
            .await
            .unwrap(),
    );
    for commit in [true, false] {
        let key = format!("held-{commit}");
        let tx = app.transaction().await.unwrap();
        let held = q.enqueue_in(&tx, &keyed("mail", 5, &key)).await.unwrap();
        let waiter = tokio::spawn({
            let (other, req) = (other.clone(), keyed("mail", 6, &key));
            async move { other.enqueue(&req).await.unwrap() }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiter.is_finished(), "waits while the key is held");
        if commit {
            tx.commit().await.unwrap();
        } else {
            tx.rollback().await.unwrap();
        }
        let theirs = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("done when the transaction ends")
            .unwrap();
        if commit {
            assert_eq!((theirs.job, theirs.deduplicated), (held.job, true));
        } else {
            assert!(!theirs.deduplicated);
            assert_ne!(theirs.job, held.job);
            assert_eq!(q.job(held.job).await.unwrap(), None);
        }
    }
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn bad_input_is_refused_as_by_enqueue_and_the_transaction_goes_on() {
    let Some((cfg, q, mut app)) = setup("tx_bad").await else {
        return;
    };
    let observer = connect_app(&cfg).await;
    let big = "x".repeat(EngineConfig::default().limits.payload_bytes + 1);
    let too_big = EnqueueRequest::new("mail", Payload::from_json(&format!("\"{big}\"")).unwrap());
    let mut both = job("mail", 1);
    both.delay_ms = Some(5);
    both.run_at = Some(Timestamp::from_millis(5).unwrap());
    let mut no_attempts = job("mail", 2);
    no_attempts.max_attempts = Some(0);
    let no_queue = job("", 3);

    let tx = app.transaction().await.unwrap();
    add_order(&tx, "eve").await;
    for (req, want) in [
        (&too_big, "payload_too_large"),
        (&both, "invalid_input"),
        (&no_attempts, "invalid_input"),
        (&no_queue, "invalid_name"),
    ] {
        let inside = code(q.enqueue_in(&tx, req).await.unwrap_err());
        let outside = code(q.enqueue(req).await.unwrap_err());
        assert_eq!((inside, outside), (want, want));
    }
    // The transaction is still usable: the order and a good job commit.
    let good = q.enqueue_in(&tx, &job("mail", 4)).await.unwrap().job;
    tx.commit().await.unwrap();
    assert_eq!(customers(&observer).await, ["eve"]);
    let got = q.claim("mail", "w", 10, None).await.unwrap();
    assert_eq!(got.iter().map(|c| c.job).collect::<Vec<_>>(), [good]);
    pg_support::drop_schema(&cfg).await;
}

/// Notifications received within `wait`.
async fn drain(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<(String, String, Instant)>,
    wait: Duration,
) -> Vec<(String, String, Instant)> {
    tokio::time::sleep(wait).await;
    let mut got = Vec::new();
    while let Ok(n) = rx.try_recv() {
        got.push(n);
    }
    got
}

/// The first `want` notifications (waiting up to 5 s for them), then any
/// more that come within 500 ms.
async fn expect(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<(String, String, Instant)>,
    want: usize,
) -> Vec<(String, String, Instant)> {
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while got.len() < want {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(n)) => got.push(n),
            _ => break,
        }
    }
    got.extend(drain(rx, Duration::from_millis(500)).await);
    got
}

#[tokio::test]
async fn listeners_are_woken_at_commit_and_never_after_a_rollback() {
    let Some((cfg, q, mut app)) = setup("tx_notify").await else {
        return;
    };
    q.declare(&QueueConfig::new("work")).await.unwrap();
    q.declare(&QueueConfig::new("other")).await.unwrap();
    let (_listener, mut rx) = pg_support::listen(&cfg.url, q.channel()).await;

    let tx = app.transaction().await.unwrap();
    add_order(&tx, "fay").await;
    q.enqueue_in(&tx, &keyed("work", 1, "k")).await.unwrap();
    q.enqueue_in(&tx, &job("work", 2)).await.unwrap();
    q.enqueue_in(&tx, &job("work", 3)).await.unwrap();
    q.enqueue_in(&tx, &job("other", 4)).await.unwrap();
    let early = drain(&mut rx, Duration::from_millis(500)).await;
    assert!(early.is_empty(), "woken before the commit: {early:?}");
    let committing = Instant::now();
    tx.commit().await.unwrap();
    let got = expect(&mut rx, 2).await;
    // One per queue: PostgreSQL folds a transaction's identical ones.
    let mut payloads: Vec<&str> = got.iter().map(|n| n.1.as_str()).collect();
    payloads.sort_unstable();
    assert_eq!(payloads, ["other", "work"], "{got:?}");
    assert!(got.iter().all(|n| n.0 == q.channel() && n.2 >= committing));
    assert_eq!(q.claim("work", "w", 10, None).await.unwrap().len(), 3);

    // Rolled back: no wake-up, ever.
    let tx = app.transaction().await.unwrap();
    q.enqueue_in(&tx, &job("work", 5)).await.unwrap();
    tx.rollback().await.unwrap();
    let got = drain(&mut rx, Duration::from_millis(1_000)).await;
    assert!(got.is_empty(), "woken by a rollback: {got:?}");

    // Nothing new (the key names a job): nothing to wake for.
    let tx = app.transaction().await.unwrap();
    let dup = q.enqueue_in(&tx, &keyed("work", 6, "k")).await.unwrap();
    assert!(dup.deduplicated);
    tx.commit().await.unwrap();
    let got = drain(&mut rx, Duration::from_millis(1_000)).await;
    assert!(got.is_empty(), "woken without a new job: {got:?}");

    // And a later committed job wakes again.
    let tx = app.transaction().await.unwrap();
    q.enqueue_in(&tx, &job("work", 7)).await.unwrap();
    tx.commit().await.unwrap();
    let got = expect(&mut rx, 1).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].1, "work");
    pg_support::drop_schema(&cfg).await;
}
