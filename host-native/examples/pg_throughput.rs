//! Jobs per second through the Postgres queues (`PgQueues`): producers
//! enqueue, workers claim a batch, run a no-op handler, and complete the
//! batch in one statement — the River-style batch completer.
//!
//! ```sh
//! scripts/pg-test-server.sh cargo run --release -p chime-native --example pg_throughput -- \
//!     [JOBS] [REPLICAS] [WORKERS_PER_REPLICA] [BATCH] [PRODUCERS] [ENQUEUE_BATCH]
//! ```
//!
//! Defaults: 50,000 jobs, 1 replica, 4 workers per replica, batches of 64,
//! 16 producers enqueueing one job per statement (`ENQUEUE_BATCH` > 1: that
//! many per `enqueue_many` statement). The database is `CHIME_TEST_DATABASE_URL` (set by
//! `scripts/pg-test-server.sh`: a throwaway server on this machine, fsync
//! on). A "replica" is a set of worker connections with its own
//! `PgQueues` handles, as a `chime` process would hold; all replicas run in
//! this process, each worker on its own connection. Every enqueue, claim
//! and batch completion is its own transaction (one commit each).
//!
//! Prints the wall time from the first enqueue to the last completion, jobs
//! per second, and the latency of claim statements (p50/p99/max).

use chime_core::{EngineConfig, EnqueueRequest, Payload, QueueConfig};
use chime_native::pg::{PgConfig, PgQueues};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// One `LISTEN` connection per replica: each notification on `channel`
/// wakes one idle worker of the replica (a worker that wakes claims until
/// the queue is empty; waking all of them made a herd of empty claims).
/// The client is returned so the caller keeps the connection open.
async fn listen(url: &str, channel: &str) -> (Arc<Notify>, tokio_postgres::Client) {
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let wake = Arc::new(Notify::new());
    let notify = wake.clone();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notification(_) = m {
                notify.notify_one();
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN \"{channel}\""))
        .await
        .unwrap();
    (wake, client)
}

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map_or(default, |a| a.parse().expect("a number"))
}

#[tokio::main]
async fn main() {
    let jobs = arg(1, 50_000);
    let replicas = arg(2, 1);
    let workers = arg(3, 4);
    let batch = arg(4, 64) as u32;
    let producers = arg(5, 16);
    let enqueue_batch = arg(6, 1).max(1) as usize;
    let url = std::env::var("CHIME_TEST_DATABASE_URL")
        .expect("run under scripts/pg-test-server.sh (CHIME_TEST_DATABASE_URL)");
    let config = PgConfig::new(url).with_schema(format!("bench_{}", std::process::id()));
    let engine = EngineConfig::default();
    let setup = PgQueues::connect(&config, engine.clone()).await.unwrap();
    let mut q = QueueConfig::new("bench");
    q.lease_ms = 60_000;
    setup.declare(&q).await.unwrap();

    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for p in 0..producers {
        let (config, engine) = (config.clone(), engine.clone());
        let share = jobs / producers + u64::from(p < jobs % producers);
        tasks.push(tokio::spawn(async move {
            let q = PgQueues::connect(&config, engine).await.unwrap();
            let payload = Payload::from_json(r#"{"n":1}"#).unwrap();
            let mut left = share as usize;
            while left > 0 {
                let n = left.min(enqueue_batch);
                let reqs = vec![EnqueueRequest::new("bench", payload.clone()); n];
                if n == 1 {
                    q.enqueue(&reqs[0]).await.unwrap();
                } else {
                    q.enqueue_many(&reqs).await.unwrap();
                }
                left -= n;
            }
            Vec::new()
        }));
    }
    let mut listeners = Vec::new();
    for r in 0..replicas {
        let (wake, client) = listen(&config.url, setup.channel()).await;
        listeners.push(client);
        for w in 0..workers {
            let (config, engine, done) = (config.clone(), engine.clone(), done.clone());
            let wake = wake.clone();
            tasks.push(tokio::spawn(async move {
                let q = PgQueues::connect(&config, engine).await.unwrap();
                let name = format!("r{r}w{w}");
                let mut claim_us = Vec::new();
                while done.load(Ordering::Relaxed) < jobs {
                    let t = Instant::now();
                    let got = q.claim("bench", &name, batch, None).await.unwrap();
                    claim_us.push(t.elapsed().as_micros() as u64);
                    if got.is_empty() {
                        // Wait for a wake-up; poll every 100 ms anyway.
                        let _ =
                            tokio::time::timeout(Duration::from_millis(100), wake.notified()).await;
                        continue;
                    }
                    // The no-op handler, then one completion per batch.
                    let finished: Vec<_> = got.iter().map(|c| (c.job, c.token)).collect();
                    for r in q.complete_many(&finished).await.unwrap() {
                        r.unwrap();
                    }
                    done.fetch_add(finished.len() as u64, Ordering::Relaxed);
                }
                claim_us
            }));
        }
    }
    let mut claims = Vec::new();
    for t in tasks {
        claims.extend(t.await.unwrap());
    }
    let wall = start.elapsed().as_secs_f64();
    claims.sort_unstable();
    let pct = |p: f64| claims[((claims.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    println!(
        "{jobs} jobs, {replicas} replica(s) x {workers} workers, batch {batch}, {producers} producers \
         x {enqueue_batch} per enqueue: \
         {wall:.2} s = {:.0} jobs/s; claim statement p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} claims)",
        jobs as f64 / wall,
        pct(0.5),
        pct(0.99),
        pct(1.0),
        claims.len()
    );
    let c = chime_native::pg::connect(&config.url).await.unwrap();
    c.batch_execute(&format!("DROP SCHEMA \"{}\" CASCADE", config.schema))
        .await
        .unwrap();
}
