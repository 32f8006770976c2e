//! The HTTP listener: `/healthz`, `/metrics` and the JSON API under `/v1`
//! (see `docs/http.md`): reads, jobs (enqueue, list, cancel, redrive,
//! purge), workers (long-poll claim, heartbeat, complete, fail),
//! schedule and queue writes, and a Server-Sent Events stream.
//!
//! Hosts stay thin: every rule is core's. Job and worker routes go
//! through the queue port ([`QueueBackend`]), schedule and queue writes
//! through the control port ([`ControlBackend`]), whole-deployment reads
//! (health, metrics, inspect, schedules, queues, dead letters, the event
//! stream) through the read port ([`ReadBackend`]), so one router — one
//! auth guard, one set of limits, one error format — serves the embedded
//! daemon (all three ports are the driver [`Handle`]) and every replica
//! of a Postgres deployment (the ports are the replica's).
//!
//! Every request is bounded: a token ([`auth`]), a body size and time
//! (`body.rs`), header read time, requests and long-polls in flight in
//! total (503 `busy`) and per token (429 `too_many_requests`).

pub mod auth;
mod body;
mod control;
mod dashboard;
mod error;
mod events;
mod jobs;
pub mod openapi;
mod reads;
mod samples;
mod server;
pub mod tls;
mod views;
mod work;

pub use crate::backend::inspection::{DEAD_LIMIT, Inspection, QueueView};
pub use crate::backend::views::{
    DatabaseHealth, DeadLetters, Health, LeaseRow, QueueList, ReplicaHealth, ScheduleDetail,
    ScheduleFilter, ScheduleList, ScheduleSummary,
};
pub use auth::{Grant, Scope, TokenDef, TokenError, Tokens, hash_hex, new_token};
pub use body::MAX_DEPTH;
pub use dashboard::{ASSETS, Asset, CSP};
pub use jobs::MAX_BATCH;
pub use reads::{MAX_SCHEDULE_PAGE, MAX_SCHEDULE_TEXT};
pub use samples::{History, MAX_QUEUES_PER_SAMPLE, QueueSample, Sample};
pub use server::HttpServer;
pub use views::ErrorBody;
pub use work::MAX_WAIT_MS;

use crate::backend::{ControlBackend, PortError, QueueBackend, ReadBackend};
use crate::driver::Handle;
use auth::Principal;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use error::ApiError;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Where the listener binds unless told otherwise: loopback, the port
/// after Prometheus' node exporter range that no common exporter uses.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:9464";

/// Most dead letters one `GET /v1/queues/{name}/dead` returns.
pub const MAX_DEAD_LIMIT: usize = 1_000;

/// Why the listener could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Neither a socket address nor `off`/`none`.
    #[error("invalid HTTP address {0:?}: expected host:port (e.g. {DEFAULT_ADDRESS}) or `off`")]
    Address(String),
    /// The address could not be bound.
    #[error("binding the HTTP listener to {address}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// A non-loopback address without any token: anyone who can reach it
    /// could enqueue, cancel and reschedule.
    #[error(
        "refusing to serve {0} without authentication: add a [[token]] (chime token new) \
         or pass --insecure-no-auth"
    )]
    Unprotected(SocketAddr),
}

/// Parses an `--http` value or `[http] address`: `off`/`none` disable
/// the listener (`None`), anything else must be `host:port` with an IP.
pub fn parse_address(text: &str) -> Result<Option<SocketAddr>, HttpError> {
    match text.trim() {
        "off" | "none" => Ok(None),
        t => t
            .parse()
            .map(Some)
            .map_err(|_| HttpError::Address(text.to_owned())),
    }
}

/// Limits and credentials of the listener.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// How long a read (or the health probe) waits for the driver before
    /// the answer is 503: a driver stuck longer than this is unhealthy.
    pub read_timeout: Duration,
    /// Most reads waiting on the driver at once; more are answered 503.
    pub max_in_flight: usize,
    /// Accepted tokens; empty: no authentication (loopback only unless
    /// `insecure_no_auth`).
    pub tokens: Tokens,
    /// Serve a non-loopback address without tokens.
    pub insecure_no_auth: bool,
    /// Largest request body (413 beyond).
    pub body_limit: usize,
    /// Longest a request body may take to arrive (408 beyond).
    pub body_timeout: Duration,
    /// Longest a request's headers may take to arrive (the connection is
    /// closed beyond: a client that sends a byte a second is cut off).
    pub header_timeout: Duration,
    /// Longest a write (job, worker or control call) waits for its
    /// backend before the answer is 503.
    pub call_timeout: Duration,
    /// Requests in flight at once (503 `busy` beyond).
    pub max_requests: usize,
    /// Requests in flight at once per token (429 beyond).
    pub max_requests_per_token: usize,
    /// Long-polls (claims waiting, event streams) at once (503 beyond).
    pub max_polls: usize,
    /// Long-polls at once per token (429 beyond).
    pub max_polls_per_token: usize,
    /// Open connections at once (more wait to be accepted).
    pub max_connections: usize,
    /// Serve HTTPS with this certificate ([`tls::load`]); `None`: plain
    /// HTTP.
    pub tls: Option<tls::TlsConfig>,
    /// Time between two samples of the metric history
    /// (`GET /v1/metrics/history`, the dashboard's charts).
    pub sample_interval: Duration,
    /// Most samples the history keeps (older ones are dropped): with the
    /// default interval, an hour.
    pub sample_capacity: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            read_timeout: Duration::from_secs(5),
            max_in_flight: 64,
            tokens: Tokens::default(),
            insecure_no_auth: false,
            body_limit: 4 << 20,
            body_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(10),
            max_requests: 1_024,
            max_requests_per_token: 256,
            max_polls: 1_024,
            max_polls_per_token: 128,
            max_connections: 4_096,
            tls: None,
            sample_interval: Duration::from_secs(10),
            sample_capacity: 360,
        }
    }
}

/// The backends the routes act on.
#[derive(Clone)]
pub struct Ports {
    /// Jobs and workers.
    pub queues: Arc<dyn QueueBackend>,
    /// Schedule and queue writes.
    pub control: Arc<dyn ControlBackend>,
    /// Whole-deployment reads and the event stream.
    pub reads: Arc<dyn ReadBackend>,
}

impl Ports {
    /// Every port on the embedded driver.
    pub fn embedded(handle: &Handle) -> Ports {
        Ports {
            queues: Arc::new(handle.clone()),
            control: Arc::new(handle.clone()),
            reads: Arc::new(handle.clone()),
        }
    }
}

/// The bounds of one token (or of everyone, without tokens).
struct Bucket {
    requests: Arc<Semaphore>,
    polls: Arc<Semaphore>,
}

impl Bucket {
    fn new(o: &HttpOptions) -> Arc<Bucket> {
        Arc::new(Bucket {
            requests: Arc::new(Semaphore::new(o.max_requests_per_token.max(1))),
            polls: Arc::new(Semaphore::new(o.max_polls_per_token.max(1))),
        })
    }
}

#[derive(Clone)]
pub(crate) struct App {
    ports: Ports,
    options: Arc<HttpOptions>,
    reads: Arc<Semaphore>,
    requests: Arc<Semaphore>,
    polls: Arc<Semaphore>,
    /// By token name (`""`: requests without a token). A token added by
    /// a reload gets its own at its first request; those of tokens no
    /// longer configured are dropped then, so the map is bounded by the
    /// configured tokens.
    buckets: Arc<Mutex<HashMap<String, Arc<Bucket>>>>,
    samples: Arc<samples::Ring>,
}

/// The routes, for embedding in another axum server: every port on
/// `handle`'s driver.
pub fn router(handle: Handle, options: HttpOptions) -> Router {
    router_with(Ports::embedded(&handle), options)
}

/// The routes over `ports`, whichever backend they are.
pub fn router_with(ports: Ports, options: HttpOptions) -> Router {
    let mut buckets: HashMap<String, Arc<Bucket>> = options
        .tokens
        .names()
        .map(|n| (n.to_owned(), Bucket::new(&options)))
        .collect();
    buckets.insert(String::new(), Bucket::new(&options));
    let ring = samples::Ring::new(options.sample_interval, options.sample_capacity);
    samples::start(&ring, ports.reads.clone(), options.read_timeout);
    let app = App {
        samples: ring,
        ports,
        reads: Arc::new(Semaphore::new(options.max_in_flight.max(1))),
        requests: Arc::new(Semaphore::new(options.max_requests.max(1))),
        polls: Arc::new(Semaphore::new(options.max_polls.max(1))),
        buckets: Arc::new(Mutex::new(buckets)),
        options: Arc::new(options),
    };
    Router::new()
        .route("/", get(dashboard::index))
        .route("/ui/{file}", get(dashboard::asset))
        .route("/healthz", get(reads::healthz))
        .route("/metrics", get(reads::metrics_text))
        .route("/v1/openapi.json", get(openapi::serve))
        .route("/v1/whoami", get(reads::whoami))
        .route("/v1/metrics/history", get(samples::history))
        .route("/v1/inspect", get(reads::inspect))
        .route("/v1/schedules", get(reads::schedules))
        .route(
            "/v1/schedules/{name}",
            get(reads::schedule)
                .put(control::upsert)
                .delete(control::remove),
        )
        .route("/v1/schedules/{name}/fires", get(reads::fires))
        .route("/v1/schedules/{name}/pause", post(control::pause))
        .route("/v1/schedules/{name}/resume", post(control::resume))
        .route("/v1/schedules/{name}/trigger", post(control::trigger))
        .route("/v1/schedules/{name}/backfill", post(control::backfill))
        .route("/v1/queues", get(reads::queues))
        .route("/v1/queues/{name}", put(control::declare))
        .route(
            "/v1/queues/{name}/jobs",
            get(jobs::list).post(jobs::enqueue),
        )
        .route(
            "/v1/queues/{name}/dead",
            get(reads::dead_letters).delete(jobs::purge),
        )
        .route("/v1/queues/{name}/dead/redrive", post(jobs::redrive))
        .route("/v1/queues/{name}/dead/purge", post(jobs::purge))
        .route("/v1/queues/{name}/claim", post(work::claim))
        .route("/v1/jobs/heartbeat", post(work::heartbeat_batch))
        .route("/v1/jobs/complete", post(work::complete_batch))
        .route("/v1/jobs/fail", post(work::fail_batch))
        .route("/v1/jobs/{id}", get(jobs::get))
        .route("/v1/jobs/{id}/cancel", post(jobs::cancel))
        .route("/v1/jobs/{id}/heartbeat", post(work::heartbeat))
        .route("/v1/jobs/{id}/complete", post(work::complete))
        .route("/v1/jobs/{id}/fail", post(work::fail))
        .route("/v1/events", get(events::stream))
        .fallback(|| async { ApiError::NotFound("route".into()) })
        // Without it a known path with another method is a bare 405 with
        // an empty body, not the JSON error promised.
        .method_not_allowed_fallback(|method: Method, uri: Uri| async move {
            ApiError::MethodNotAllowed {
                method: method.to_string(),
                allow: allowed(uri.path()).to_owned(),
                path: uri.path().to_owned(),
            }
        })
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// The methods a path serves, for `Allow` (by its shape).
fn allowed(path: &str) -> &'static str {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        ["v1", "schedules", _] => "GET,HEAD,PUT,DELETE",
        ["v1", "queues", _] => "PUT",
        ["v1", "queues", _, "jobs"] => "GET,HEAD,POST",
        ["v1", "queues", _, "dead"] => "GET,HEAD,DELETE",
        ["v1", "jobs", _] if !matches!(parts[2], "heartbeat" | "complete" | "fail") => "GET,HEAD",
        [
            ..,
            "pause" | "resume" | "trigger" | "backfill" | "redrive" | "purge" | "claim",
        ]
        | ["v1", "jobs", ..] => "POST",
        _ => "GET,HEAD",
    }
}

/// Runs before every route: who is asking (401 without a valid token,
/// except `/healthz`) and the in-flight bounds (503 in total, 429 per
/// token). The principal goes into the request's extensions.
async fn guard(State(app): State<App>, mut req: Request, next: Next) -> Response {
    if req.uri().path() == "/healthz" || dashboard::is_page(req.uri().path()) {
        return next.run(req).await;
    }
    let header = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let who = match app.options.tokens.authenticate(header) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let Ok(_all) = app.requests.clone().try_acquire_owned() else {
        return ApiError::Busy.into_response();
    };
    let Ok(_mine) = app.bucket(&who).requests.clone().try_acquire_owned() else {
        return ApiError::TooMany("requests").into_response();
    };
    req.extensions_mut().insert(who);
    next.run(req).await
}

impl App {
    /// `who`'s bucket (see [`App::buckets`]).
    fn bucket(&self, who: &Principal) -> Arc<Bucket> {
        let name = who.name.as_deref().unwrap_or("");
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = buckets.get(name) {
            return b.clone();
        }
        // A token added by a reload (a request's principal is always a
        // configured token).
        let current: std::collections::HashSet<String> = self.options.tokens.names().collect();
        buckets.retain(|n, _| n.is_empty() || current.contains(n));
        buckets
            .entry(name.to_owned())
            .or_insert_with(|| Bucket::new(&self.options))
            .clone()
    }

    /// Takes a long-poll slot (a waiting claim, an event stream): in
    /// total (503) and for this token (429).
    fn poll_slot(&self, who: &Principal) -> Result<[OwnedSemaphorePermit; 2], ApiError> {
        let all = self
            .polls
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::Busy)?;
        let mine = self
            .bucket(who)
            .polls
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::TooMany("long-polls"))?;
        Ok([all, mine])
    }

    /// Awaits a backend call within the call timeout.
    async fn call<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, PortError>>,
    ) -> Result<T, ApiError> {
        match tokio::time::timeout(self.options.call_timeout, f).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(ApiError::Timeout(self.options.call_timeout)),
        }
    }

    /// Reads the request body within the listener's bounds.
    async fn body(&self, body: axum::body::Body) -> Result<Vec<u8>, ApiError> {
        body::read(body, self.options.body_limit, self.options.body_timeout).await
    }

    /// A read-port call within the listener's read bounds: a permit (503
    /// `busy` when all are taken) and the read timeout.
    async fn read<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, PortError>>,
    ) -> Result<T, ApiError> {
        let _permit: OwnedSemaphorePermit = self
            .reads
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::Busy)?;
        let wait = self.options.read_timeout;
        match tokio::time::timeout(wait, f).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(ApiError::Timeout(wait)),
        }
    }
}
