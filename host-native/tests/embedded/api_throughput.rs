//! A throughput measurement of the API on a real daemon (redb data dir,
//! fsync per driver turn), loopback, the load generator in this process:
//! single-job enqueue with keep-alive connections, batch enqueue, and an
//! HTTP worker pool (batch claim + batch complete). It prints numbers and
//! asserts only that the work was done, so it is `#[ignore]`d: run it with
//! `cargo test -p chime-native --test embedded api_throughput -- --ignored --nocapture`.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use common::start_instance;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 32;

async fn post(client: &reqwest::Client, url: &str, body: &serde_json::Value) -> serde_json::Value {
    let r = client
        .post(url)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    serde_json::from_str(&r.text().await.unwrap()).unwrap()
}

/// Runs `CONNECTIONS` loops of `each` for `secs`; how many units they did.
async fn for_a_while<F, Fut>(secs: u64, each: F) -> (u64, Duration)
where
    F: Fn(reqwest::Client) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = u64> + Send,
{
    let each = Arc::new(each);
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (each, done) = (each.clone(), done.clone());
            tokio::spawn(async move {
                let client = chime_native::worker::http::client(Duration::from_secs(30)).unwrap();
                while Instant::now() < until {
                    done.fetch_add(each(client.clone()).await, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    (done.load(Ordering::Relaxed), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn enqueue_and_work_throughput() {
    let inst = start_instance(Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    })
    .await;
    let jobs_url = Arc::new(format!("{}/v1/queues/q/jobs", inst.base()));

    let url = jobs_url.clone();
    let (n, took) = for_a_while(3, move |c| {
        let url = url.clone();
        async move {
            post(&c, &url, &json!({"payload": {"n": 1}})).await;
            1
        }
    })
    .await;
    eprintln!(
        "single enqueue, {CONNECTIONS} connections: {n} in {took:?} = {:.0} req/s",
        n as f64 / took.as_secs_f64()
    );

    let url = jobs_url.clone();
    let batch = json!({"jobs": (0..500).map(|i| json!({"payload": i})).collect::<Vec<_>>()});
    let (n, took) = for_a_while(3, move |c| {
        let (url, batch) = (url.clone(), batch.clone());
        async move {
            let r = post(&c, &url, &batch).await;
            r["jobs"].as_array().unwrap().len() as u64
        }
    })
    .await;
    eprintln!(
        "batch enqueue (500 per request), {CONNECTIONS} connections: {n} jobs in {took:?} = {:.0} jobs/s",
        n as f64 / took.as_secs_f64()
    );

    let claim = Arc::new(format!("{}/v1/queues/q/claim", inst.base()));
    let complete = Arc::new(format!("{}/v1/jobs/complete", inst.base()));
    let (n, took) = for_a_while(3, move |c| {
        let (claim, complete) = (claim.clone(), complete.clone());
        async move {
            let got = post(&c, &claim, &json!({"worker": "bench", "max": 100})).await;
            let items: Vec<_> = got["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| json!({"job": j["job"], "token": j["token"]}))
                .collect();
            if items.is_empty() {
                return 0;
            }
            let r = post(&c, &complete, &json!({ "jobs": items })).await;
            let results = r["results"].as_array().unwrap();
            assert!(results.iter().all(|r| r["ok"] == true), "{r}");
            results.len() as u64
        }
    })
    .await;
    eprintln!(
        "worker pool (claim 100 + batch complete), {CONNECTIONS} connections: {n} jobs in {took:?} = {:.0} jobs/s",
        n as f64 / took.as_secs_f64()
    );
    inst.stop().await;
}
