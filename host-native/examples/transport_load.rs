//! Publish and consume throughput through a transport (BENCHMARKS.md,
//! "Transports: Redis and NATS beside BullMQ"): `N` messages published
//! with `C` in flight (Redis: one `SET NX` + `XADD` script each; NATS: one
//! JetStream publish with a `Nats-Msg-Id`, awaited until the server's
//! ack), then claimed in batches of 256 and completed one by one by
//! `CONSUMERS` consumers (default `C`; chime's claim/complete of the queue
//! port).
//!
//! `transport_load redis|nats N C [CONSUMERS]`
//!
//! ```sh
//! scripts/redis-test-server.sh cargo run --release -p chime-native --example transport_load -- redis 20000 64
//! scripts/nats-test-server.sh cargo run --release -p chime-native --example transport_load -- nats 20000 64
//! ```
//!
//! `scripts/bench-transports.sh` runs both beside BullMQ. Output: one
//! `publish:` line (rate and latency percentiles) and one `consume:` line
//! (end-to-end rate: from the first claim to the last completion).

use chime_core::{EngineConfig, FireId, Headers, Payload, QueueConfig};
use chime_native::transport::config::{NatsOptions, RedisOptions};
use chime_native::transport::nats::NatsQueues;
use chime_native::transport::redis::RedisTransport;
use chime_native::transport::{Message, NoSettlements, Transport};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Connects to the transport named `kind` on the server of the test
/// scripts' environment variable, with queue `queue` declared.
async fn transport(kind: &str, queue: &QueueConfig) -> Arc<dyn Transport> {
    let t: Arc<dyn Transport> = match kind {
        "redis" => {
            let url = std::env::var("CHIME_REDIS_URL")
                .expect("CHIME_REDIS_URL (scripts/redis-test-server.sh)");
            let db = std::env::var("CHIME_BENCH_REDIS_DB").unwrap_or_else(|_| "9".into());
            let options = RedisOptions {
                url: format!("{url}/{db}"),
                ..RedisOptions::default()
            };
            Arc::new(
                RedisTransport::new(
                    options,
                    EngineConfig::default(),
                    vec![],
                    Arc::new(NoSettlements),
                )
                .unwrap(),
            )
        }
        "nats" => {
            let url = std::env::var("CHIME_NATS_URL")
                .expect("CHIME_NATS_URL (scripts/nats-test-server.sh)");
            let options = NatsOptions {
                url,
                ..NatsOptions::default()
            };
            Arc::new(
                NatsQueues::connect(options, EngineConfig::default())
                    .await
                    .unwrap()
                    .with_namespace(&format!("bench{}", std::process::id())),
            )
        }
        other => panic!("transport {other:?}: redis or nats"),
    };
    t.declare(queue).await.unwrap();
    t
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = args.get(1).map(String::as_str).unwrap_or("redis");
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let c: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(64);
    let consumers: u64 = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(c);
    let mut q = QueueConfig::new("bench");
    q.retention.completed_max = 1;
    let t = transport(kind, &q).await;
    let payload =
        Payload::from_json(r#"{"runId":"r-1","tenantId":"t-1","digests":["sha256:00"]}"#).unwrap();

    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..c {
        let (t, next, payload) = (t.clone(), next.clone(), payload.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return lat;
                }
                let fire: FireId = format!("bench@{}", 1_700_000_000_000 + i * 1000)
                    .parse()
                    .unwrap();
                let m = Message::of_fire(&fire, "bench", &payload, &Headers::new(), 0, None);
                let t0 = Instant::now();
                t.publish(&m).await.unwrap();
                lat.push(t0.elapsed());
            }
        }));
    }
    let mut lat: Vec<Duration> = Vec::new();
    for task in tasks {
        lat.extend(task.await.unwrap());
    }
    let published = start.elapsed();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    println!(
        "publish: {kind} {n} in {:.2}s = {:.0} jobs/s, {c} in flight, p50 {:.2} ms, p99 {:.2} ms",
        published.as_secs_f64(),
        n as f64 / published.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
    );

    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..consumers {
        let (t, done) = (t.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let worker = format!("w{w}");
            while done.load(Ordering::Relaxed) < n {
                let jobs = t.claim("bench", &worker, 256, None).await.unwrap();
                if jobs.is_empty() {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
                for j in jobs {
                    t.complete(j.job, j.token).await.unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let consumed = start.elapsed();
    println!(
        "consume: {kind} {n} claimed+completed in {:.2}s = {:.0} jobs/s, {consumers} consumers",
        consumed.as_secs_f64(),
        n as f64 / consumed.as_secs_f64()
    );
}
