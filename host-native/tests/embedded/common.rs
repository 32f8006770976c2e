//! Shared by the HTTP tests: an instance on a real redb file with its
//! HTTP listener on 127.0.0.1 port 0, and a small HTTP client.
#![allow(dead_code)] // each test file uses part of it

use chime_core::{EnqueueRequest, Input, JobId, Payload, Reply};
use chime_native::driver::SystemClock;
use chime_native::http::{HttpOptions, HttpServer};
use chime_native::store::{RedbStore, Store};
use chime_native::{Running, Setup, start};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A running instance with its listener and data directory.
pub struct Instance {
    pub running: Running,
    pub server: HttpServer,
    pub client: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// Starts `setup` on a fresh redb store (wrapped by `wrap`) and binds the
/// listener on an ephemeral loopback port.
pub async fn start_with(
    setup: Setup,
    options: HttpOptions,
    wrap: impl FnOnce(RedbStore) -> Box<dyn Store>,
) -> Instance {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path()).unwrap();
    let running = start(setup, wrap(store), Arc::new(SystemClock))
        .await
        .unwrap();
    let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server = HttpServer::bind(loopback, running.handle().clone(), options)
        .await
        .unwrap();
    let client = chime_native::worker::http::client(Duration::from_secs(10)).unwrap();
    Instance {
        running,
        server,
        client,
        _dir: dir,
    }
}

/// [`start_with`] on a plain redb store with default limits.
pub async fn start_instance(setup: Setup) -> Instance {
    start_with(setup, HttpOptions::default(), |s| Box::new(s)).await
}

impl Instance {
    /// `GET path`: status and body text.
    pub async fn get(&self, path: &str) -> (u16, String) {
        let url = format!("http://{}{path}", self.server.local_addr());
        let resp = self.client.get(url).send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap())
    }

    /// `GET path` as JSON.
    pub async fn get_json(&self, path: &str) -> (u16, serde_json::Value) {
        let (status, body) = self.get(path).await;
        let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        (status, json)
    }

    /// Enqueues `payload` (JSON text) to `queue`.
    pub async fn enqueue(&self, queue: &str, payload: &str) -> JobId {
        self.enqueue_req(EnqueueRequest::new(
            queue,
            Payload::from_json(payload).unwrap(),
        ))
        .await
    }

    /// Enqueues `req`.
    pub async fn enqueue_req(&self, req: EnqueueRequest) -> JobId {
        match self.call(Input::Enqueue(req)).await {
            Reply::Enqueued { job, .. } => job,
            other => panic!("{other:?}"),
        }
    }

    /// Sends `input`; panics unless the engine accepts it.
    pub async fn call(&self, input: Input) -> Reply {
        self.running.handle().call(input).await.unwrap().unwrap()
    }

    /// Stops the listener, then the instance.
    pub async fn stop(self) {
        self.server.shutdown().await;
        self.running.shutdown().await.unwrap();
    }
}

/// A schedule definition from JSON.
pub fn schedule(json: &str) -> chime_core::ScheduleDef {
    serde_json::from_str(json).unwrap()
}

/// Polls `check` every 20 ms until it is true, for at most `limit`.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An instance whose listener accepts these tokens: `(name, token,
/// scopes)`.
pub async fn start_with_tokens(setup: Setup, tokens: &[(&str, &str, &[&str])]) -> Instance {
    use chime_native::http::{TokenDef, Tokens, hash_hex};
    let defs = tokens
        .iter()
        .map(|(name, token, scopes)| {
            let scopes: Vec<String> = scopes.iter().map(|s| (*s).to_owned()).collect();
            TokenDef::new(name, &hash_hex(token), &scopes).unwrap()
        })
        .collect();
    let options = HttpOptions {
        tokens: Tokens::new(defs).unwrap(),
        ..HttpOptions::default()
    };
    start_with(setup, options, |s| Box::new(s)).await
}

impl Instance {
    /// The listener's base URL.
    pub fn base(&self) -> String {
        format!("http://{}", self.server.local_addr())
    }

    /// `method path` with an optional bearer token and JSON body: status
    /// and JSON body (`Null` when empty or not JSON).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base()));
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }

    /// [`Instance::send`] without a token.
    pub async fn api(
        &self,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        self.send(method, path, None, body).await
    }

    /// The engine's state as `/v1/inspect` shows it (every dead letter)
    /// plus every job of every queue, without what moves with the clock
    /// alone: two equal fingerprints mean nothing changed in between.
    pub async fn fingerprint(&self) -> serde_json::Value {
        let handle = self.running.handle().clone();
        let mut v = handle
            .inspect(|e| {
                let mut jobs = Vec::new();
                for q in e.queue_names() {
                    let page = e.search_jobs(&chime_core::JobQuery {
                        queue: q.to_owned(),
                        limit: 1_000,
                        ..Default::default()
                    });
                    jobs.extend(page.jobs);
                }
                serde_json::json!({
                    "inspect": chime_native::http::Inspection::of(e, 1_000),
                    "jobs": jobs,
                })
            })
            .await
            .unwrap();
        strip_clock(&mut v);
        v
    }
}

fn strip_clock(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for k in ["clock", "asOf", "oldestAvailableAgeMs"] {
                m.remove(k);
            }
            m.values_mut().for_each(strip_clock);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_clock),
        _ => {}
    }
}
