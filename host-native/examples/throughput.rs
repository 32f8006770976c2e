//! Durable end-to-end throughput: enqueue → no-op handler → complete, on the
//! redb store with fsync on every commit (one commit per driver turn).
//!
//! `cargo run --release -p chime-native --example throughput -- [JOBS] [PRODUCERS] [CONCURRENCY] [SNAPSHOT_EVERY]`
//!
//! `PRODUCERS` tasks each enqueue their share of `JOBS` one call at a time
//! (so at most `PRODUCERS` enqueues wait for a commit at once); one pool
//! with `CONCURRENCY` slots runs a no-op handler. Prints wall time, the
//! process's CPU time, the number of commits and inputs per commit.

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig};
use chime_native::driver::SystemClock;
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, PoolConfig};
use chime_native::{Setup, start};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// User + system CPU time of this process so far, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime and
    // stime are the 12th and 13th of them, in clock ticks (100 Hz).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let arg = |i: usize, default: usize| -> anyhow::Result<usize> {
        Ok(std::env::args().nth(i).map_or(Ok(default), |a| a.parse())?)
    };
    let jobs = arg(1, 20_000)?;
    let producers = arg(2, 64)?.max(1);
    let concurrency = arg(3, 256)?.max(1);
    let mut driver = chime_native::driver::DriverConfig::default();
    driver.snapshot_every = arg(4, driver.snapshot_every as usize)? as u64;
    let dir = tempfile::tempdir()?;
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let handler: Handler = Arc::new(move |_job| {
        counter.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    });
    let mut pool = PoolConfig::new("bench");
    pool.concurrency = concurrency;
    let setup = Setup {
        queues: vec![QueueConfig::new("bench")],
        pools: vec![(pool, handler)],
        driver,
        ..Setup::default()
    };
    let store = RedbStore::open(dir.path())?;
    let running = start(setup, Box::new(store), Arc::new(SystemClock)).await?;
    let commits_before = running.handle().vitals().read().commits;
    let cpu_before = cpu_seconds();
    let running_snapshot_every = arg(4, 10_000)?;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for p in 0..producers {
        let handle = running.handle().clone();
        tasks.push(tokio::spawn(async move {
            for _ in (p..jobs).step_by(producers) {
                let req = EnqueueRequest::new("bench", Payload::null());
                handle.call(Input::Enqueue(req)).await.unwrap().unwrap();
            }
        }));
    }
    for t in tasks {
        t.await?;
    }
    let enqueued = started.elapsed();
    while done.load(Ordering::Relaxed) < jobs {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    let handled = started.elapsed();
    let commits = running.handle().vitals().read().commits - commits_before;
    let cpu = cpu_seconds() - cpu_before;
    let commit_seconds: f64 = running
        .handle()
        .metrics()
        .render(&Default::default())
        .lines()
        .find_map(|l| l.strip_prefix("chime_journal_commit_seconds_sum "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN);
    let engine = running.shutdown().await?;
    let elapsed = started.elapsed();
    let completed = engine.queue_stats("bench").unwrap().totals.completed;
    println!(
        "{jobs} jobs, {producers} producers, concurrency {concurrency}, snapshot every {}: enqueued in {:.2?}, \
         all handled in {:.2?}, stopped in {:.2?} ({completed} completed durably) \
         = {:.0} jobs/s end to end; {commits} commits ({:.0} inputs each, {:.2} ms each, {:.2} ms of it in the commit); \
         CPU {:.2} s = {:.1} µs/job",
        running_snapshot_every,
        enqueued,
        handled,
        elapsed,
        completed as f64 / elapsed.as_secs_f64(),
        // An enqueue and a complete per job, plus the claims.
        (2 * jobs) as f64 / commits.max(1) as f64,
        handled.as_secs_f64() * 1e3 / commits.max(1) as f64,
        commit_seconds * 1e3 / commits.max(1) as f64,
        cpu,
        cpu * 1e6 / jobs as f64,
    );
    Ok(())
}
