//! Durable end-to-end throughput: enqueue → no-op handler → complete, on the
//! redb store with fsync on every commit (one commit per driver turn).
//!
//! `cargo run --release -p chime-native --example throughput -- [JOBS]`

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig};
use chime_native::driver::SystemClock;
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, PoolConfig};
use chime_native::{Setup, start};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let jobs: usize = std::env::args().nth(1).map_or(Ok(20_000), |a| a.parse())?;
    let dir = tempfile::tempdir()?;
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let handler: Handler = Arc::new(move |_job| {
        counter.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    });
    let mut pool = PoolConfig::new("bench");
    pool.concurrency = 256;
    let setup = Setup {
        queues: vec![QueueConfig::new("bench")],
        pools: vec![(pool, handler)],
        ..Setup::default()
    };
    let store = RedbStore::open(dir.path())?;
    let running = start(setup, Box::new(store), Arc::new(SystemClock)).await?;
    let started = Instant::now();
    let producers = 64;
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
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let engine = running.shutdown().await?;
    let elapsed = started.elapsed();
    let completed = engine.queue_stats("bench").unwrap().totals.completed;
    println!(
        "{jobs} jobs: enqueued in {:.2?}, all handled and stopped in {:.2?} \
         ({completed} completed durably) = {:.0} jobs/s end to end",
        enqueued,
        elapsed,
        completed as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}
