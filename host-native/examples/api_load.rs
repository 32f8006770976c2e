//! A load generator for the server API's worker routes, for
//! `scripts/bench-api.sh` (BENCHMARKS.md "Server API over HTTP"): what
//! wrk's Lua cannot do, a claim followed by the complete of what it
//! claimed, on one keep-alive connection.
//!
//! ```text
//! cargo run --release -p chime-native --example api_load -- work URL QUEUE CONNECTIONS SECONDS MAX
//! cargo run --release -p chime-native --example api_load -- wake URL QUEUE ROUNDS [PRODUCER_URL]
//! ```
//!
//! `work`: CONNECTIONS tasks, each a loop of `POST /v1/queues/QUEUE/claim`
//! (`max` MAX, `waitMs` 1000) and `POST /v1/jobs/complete` of the leases it
//! got, for SECONDS; prints jobs completed per second and the latency of
//! both calls. The queue is filled beforehand (the script batch-enqueues).
//!
//! `wake`: ROUNDS times, a claim long-polls an empty QUEUE, then another
//! connection enqueues one job; prints how long after the enqueue was sent
//! the claim returned it (p50/p99), the enqueue's own reply time beside.
//! With PRODUCER_URL (another replica of a Postgres deployment) the
//! enqueue goes there, so the wake-up crosses replicas (LISTEN/NOTIFY).
//!
//! Set `CHIME_TOKEN` for a daemon with tokens.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// One connection's client: keep-alive, the token if any.
struct Api {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Api {
    fn new(base: &str) -> Res<Api> {
        let http = chime_native::worker::http::client(Duration::from_secs(30))?;
        Ok(Api {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token: std::env::var("CHIME_TOKEN").ok(),
        })
    }

    async fn post(&self, path: &str, body: &Value) -> Res<Value> {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body)?);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await?;
        let status = resp.status();
        let text = resp.text().await?;
        if !status.is_success() {
            return Err(format!("{path}: HTTP {status}: {text}").into());
        }
        Ok(serde_json::from_str(&text)?)
    }

    /// A claim of at most `max` jobs: their `{job, token}` leases.
    async fn claim(&self, queue: &str, max: u64, wait_ms: u64) -> Res<Vec<Value>> {
        let body = json!({"worker": "api_load", "max": max, "waitMs": wait_ms});
        let got = self
            .post(&format!("/v1/queues/{queue}/claim"), &body)
            .await?;
        let jobs = got["jobs"].as_array().cloned().unwrap_or_default();
        Ok(jobs
            .iter()
            .map(|j| json!({"job": j["job"], "token": j["token"]}))
            .collect())
    }
}

/// Latencies in microseconds, reported as p50/p99.
#[derive(Default)]
struct Latencies(Vec<u64>);

impl Latencies {
    fn add(&mut self, since: Instant) {
        self.0
            .push(u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX));
    }

    fn report(&mut self) -> String {
        if self.0.is_empty() {
            return "no samples".into();
        }
        self.0.sort_unstable();
        let at = |q: usize| self.0[(self.0.len() - 1) * q / 100] as f64 / 1000.0;
        format!(
            "p50 {:.2} ms, p99 {:.2} ms, n {}",
            at(50),
            at(99),
            self.0.len()
        )
    }
}

async fn work(base: &str, queue: &str, connections: usize, secs: u64, max: u64) -> Res<()> {
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (api, queue) = (Api::new(base)?, queue.to_owned());
        let (done, stop) = (done.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let (mut claims, mut completes) = (Latencies::default(), Latencies::default());
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let leases = api.claim(&queue, max, 1000).await?;
                claims.add(t);
                if leases.is_empty() {
                    continue;
                }
                let t = Instant::now();
                api.post("/v1/jobs/complete", &json!({"jobs": leases}))
                    .await?;
                completes.add(t);
                done.fetch_add(leases.len() as u64, Ordering::Relaxed);
            }
            Res::Ok((claims, completes))
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut claims, mut completes) = (Latencies::default(), Latencies::default());
    for t in tasks {
        let (c, d) = t.await??;
        claims.0.extend(c.0);
        completes.0.extend(d.0);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let n = done.load(Ordering::Relaxed);
    println!(
        "worker pool: {n} jobs completed in {elapsed:.2} s = {:.0} jobs/s ({connections} connections, claim max {max})",
        n as f64 / elapsed
    );
    println!("  claim:    {}", claims.report());
    println!("  complete: {}", completes.report());
    Ok(())
}

async fn wake(base: &str, queue: &str, rounds: usize, producer: &str) -> Res<()> {
    let producer = if producer.is_empty() { base } else { producer };
    let (waiter, producer) = (Arc::new(Api::new(base)?), Api::new(producer)?);
    let (mut woke, mut enqueued) = (Latencies::default(), Latencies::default());
    for i in 0..rounds {
        let (w, q) = (waiter.clone(), queue.to_owned());
        let poll = tokio::spawn(async move {
            let leases = w.claim(&q, 1, 5_000).await?;
            let at = Instant::now();
            if let Some(l) = leases.first() {
                w.post("/v1/jobs/complete", &json!({"jobs": [l]})).await?;
            }
            Res::Ok((leases.len(), at))
        });
        // Let the claim reach the daemon and wait there.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let sent = Instant::now();
        producer
            .post(
                &format!("/v1/queues/{queue}/jobs"),
                &json!({"payload": {"round": i}}),
            )
            .await?;
        enqueued.add(sent);
        let (got, at) = poll.await??;
        if got != 1 {
            return Err(format!("round {i}: the long-poll returned {got} jobs").into());
        }
        woke.0
            .push(u64::try_from(at.duration_since(sent).as_micros()).unwrap_or(u64::MAX));
    }
    println!(
        "long-poll wake-up, enqueue sent → claim returned: {}",
        woke.report()
    );
    println!(
        "  the enqueue's own reply (durable):   {}",
        enqueued.report()
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let num = |i: usize, default: u64| arg(i).parse().unwrap_or(default);
    match arg(0) {
        "work" => work(arg(1), arg(2), num(3, 32) as usize, num(4, 10), num(5, 100)).await,
        "wake" => wake(arg(1), arg(2), num(3, 200) as usize, arg(4)).await,
        _ => Err(
            "usage: api_load work URL QUEUE CONNECTIONS SECONDS MAX | wake URL QUEUE ROUNDS [PRODUCER_URL]"
                .into(),
        ),
    }
}
