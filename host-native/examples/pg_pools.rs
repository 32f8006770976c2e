//! The daemon's worker pools on Postgres, as `chime run --database` runs
//! them (`worker::run_pool` over `PgSource`, woken by
//! `pg::workers::forward_wakes`), with a no-op handler:
//!
//! 1. **throughput**: JOBS jobs enqueued up front in bulk, then REPLICAS
//!    replicas (each its own `PgQueues` connection, `LISTEN` connection
//!    and pool of CONCURRENCY) drain them; jobs per second from the pools'
//!    start to the last completion;
//! 2. **claim latency**: one producer enqueues a job every 5 ms (one
//!    statement each) for 2,000 jobs, the pools idle in between; the time
//!    from the enqueue call to the handler's start, p50/p99/max.
//!
//! ```sh
//! scripts/pg-test-server.sh cargo run --release -p chime-native --example pg_pools -- \
//!     [JOBS] [REPLICAS] [CONCURRENCY]
//! ```
//!
//! Defaults: 20,000 jobs, 1 replica, concurrency 16. The database is
//! `CHIME_TEST_DATABASE_URL` (set by `scripts/pg-test-server.sh`).

use chime_core::{EngineConfig, EnqueueRequest, Payload, QueueConfig};
use chime_native::pg::workers::{PgSource, PoolWakes, forward_wakes};
use chime_native::pg::{PgConfig, PgQueues};
use chime_native::worker::{Handler, Job, PoolConfig, run_pool};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map_or(default, |a| a.parse().expect("a number"))
}

/// Microseconds since the process started (payloads carry it).
fn micros() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// Runs `replicas` pools on queue `bench` until `stop`.
async fn replicas(
    config: &PgConfig,
    n: u64,
    concurrency: usize,
    handler: Handler,
    stop: &watch::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    for r in 0..n {
        let q = PgSource::new(Arc::new(
            PgQueues::connect(config, EngineConfig::default())
                .await
                .unwrap(),
        ));
        let wake = Arc::new(Notify::new());
        let mut wakes = PoolWakes::new();
        wakes.insert("bench".into(), vec![wake.clone()]);
        tasks.push(tokio::spawn(forward_wakes(
            config.clone(),
            wakes,
            stop.clone(),
        )));
        let mut pool = PoolConfig::new("bench");
        pool.worker = format!("replica-{r}");
        pool.concurrency = concurrency;
        pool.poll = Duration::from_secs(1);
        tasks.push(tokio::spawn(run_pool(
            q,
            wake,
            pool,
            handler.clone(),
            stop.clone(),
        )));
    }
    tasks
}

async fn until(done: &AtomicU64, n: u64) {
    while done.load(Ordering::Relaxed) < n {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::main]
async fn main() {
    let jobs = arg(1, 20_000);
    let n = arg(2, 1);
    let concurrency = arg(3, 16) as usize;
    let url = std::env::var("CHIME_TEST_DATABASE_URL")
        .expect("run under scripts/pg-test-server.sh (CHIME_TEST_DATABASE_URL)");
    let config = PgConfig::new(url).with_schema(format!("bench_pools_{}", std::process::id()));
    let producer = PgQueues::connect(&config, EngineConfig::default())
        .await
        .unwrap();
    producer.declare(&QueueConfig::new("bench")).await.unwrap();

    // 1. Throughput.
    let payload = Payload::from_json(r#"{"n":1}"#).unwrap();
    for chunk in 0..jobs.div_ceil(1_000) {
        let k = (jobs - chunk * 1_000).min(1_000) as usize;
        let reqs = vec![EnqueueRequest::new("bench", payload.clone()); k];
        producer.enqueue_many(&reqs).await.unwrap();
    }
    let done = Arc::new(AtomicU64::new(0));
    let counter = done.clone();
    let noop: Handler = Arc::new(move |_job: Job| {
        counter.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    });
    let (stop, stop_rx) = watch::channel(false);
    let start = Instant::now();
    let tasks = replicas(&config, n, concurrency, noop, &stop_rx).await;
    until(&done, jobs).await;
    let wall = start.elapsed().as_secs_f64();
    let _ = stop.send(true);
    for t in tasks {
        t.await.unwrap();
    }
    println!(
        "throughput: {jobs} jobs, {n} replica(s) x concurrency {concurrency}: {wall:.2} s = {:.0} jobs/s",
        jobs as f64 / wall
    );

    // 2. Claim latency: enqueue → handler start, the pools idle between jobs.
    const LATENCY_JOBS: u64 = 2_000;
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::new(AtomicU64::new(0));
    let (l, s) = (latencies.clone(), seen.clone());
    let timed: Handler = Arc::new(move |job: Job| {
        let sent: u64 = job.payload.as_json().parse().unwrap();
        l.lock().unwrap().push(micros().saturating_sub(sent));
        s.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    });
    let (stop, stop_rx) = watch::channel(false);
    let tasks = replicas(&config, n, concurrency, timed, &stop_rx).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    for _ in 0..LATENCY_JOBS {
        tick.tick().await;
        // Stamped before the call: the latency includes the enqueue's own
        // round trip and commit.
        let sent = Payload::from_json(&micros().to_string()).unwrap();
        producer
            .enqueue(&EnqueueRequest::new("bench", sent))
            .await
            .unwrap();
    }
    until(&seen, LATENCY_JOBS).await;
    let _ = stop.send(true);
    for t in tasks {
        t.await.unwrap();
    }
    let mut l = latencies.lock().unwrap().clone();
    l.sort_unstable();
    let pct = |p: f64| l[((l.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    println!(
        "claim latency (enqueue called → handler started), {LATENCY_JOBS} jobs at 200/s: \
         p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
    let c = chime_native::pg::connect(&config.url).await.unwrap();
    c.batch_execute(&format!("DROP SCHEMA \"{}\" CASCADE", config.schema))
        .await
        .unwrap();
}
