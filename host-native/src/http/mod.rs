//! The HTTP listener: `/healthz`, `/metrics` and read-only JSON under
//! `/v1` (see `docs/http.md`). Loopback by default: it has no
//! authentication, so exposing it is an explicit choice of address.
//!
//! Handlers never touch the engine directly: they send a short read to
//! the driver task ([`Handle::inspect`]) and format the answer here, so a
//! scrape costs the driver one closure call and never holds a lock over
//! the engine. Every read has a limit: at most
//! [`HttpOptions::max_in_flight`] reads wait on the driver at once, each
//! for at most [`HttpOptions::read_timeout`].

mod inspection;
mod views;

pub use inspection::{DEAD_LIMIT, Inspection, QueueView};

use crate::driver::{self, EngineGauges, Handle};
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::task::JoinHandle;

pub use views::{
    DeadLetters, ErrorBody, Health, QueueList, ScheduleDetail, ScheduleList, ScheduleSummary,
};

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

/// Limits of the listener.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// How long a read (or the health probe) waits for the driver before
    /// the answer is 503: a driver stuck longer than this is unhealthy.
    pub read_timeout: Duration,
    /// Most reads waiting on the driver at once; more are answered 503.
    pub max_in_flight: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            read_timeout: Duration::from_secs(5),
            max_in_flight: 64,
        }
    }
}

#[derive(Clone)]
struct App {
    handle: Handle,
    options: HttpOptions,
    reads: Arc<Semaphore>,
}

/// The routes, for embedding in another axum server.
pub fn router(handle: Handle, options: HttpOptions) -> Router {
    let app = App {
        handle,
        reads: Arc::new(Semaphore::new(options.max_in_flight.max(1))),
        options,
    };
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .route("/v1/schedules", get(schedules))
        .route("/v1/schedules/{name}", get(schedule))
        .route("/v1/queues", get(queues))
        .route("/v1/queues/{name}/dead", get(dead_letters))
        .route("/v1/inspect", get(inspect))
        .fallback(|| async { ApiError::NotFound("route".into()) })
        // Without it a known path with another method (`PUT`, `DELETE`)
        // is a bare 405 with an empty body, not the JSON error promised.
        .method_not_allowed_fallback(|method: Method, uri: Uri| async move {
            ApiError::MethodNotAllowed {
                method: method.to_string(),
                path: uri.path().to_owned(),
            }
        })
        .with_state(app)
}

/// A running listener.
#[derive(Debug)]
pub struct HttpServer {
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// Binds `address` (port 0 picks a free one) and serves `handle`'s
    /// engine until [`HttpServer::shutdown`].
    pub async fn bind(
        address: SocketAddr,
        handle: Handle,
        options: HttpOptions,
    ) -> Result<HttpServer, HttpError> {
        let bind_err = |source| HttpError::Bind { address, source };
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(bind_err)?;
        let address = listener.local_addr().map_err(bind_err)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let app = router(handle, options);
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        tracing::info!(%address, "HTTP listener up (/healthz, /metrics, /v1)");
        Ok(HttpServer {
            address,
            stop,
            task,
        })
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, lets requests in progress finish, and returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "HTTP listener failed"),
            Err(e) => tracing::warn!(error = %e, "HTTP listener task failed"),
        }
    }
}

/// An error answer: status plus `{"error": code, "message": text}`.
#[derive(Debug, thiserror::Error)]
enum ApiError {
    #[error("no such {0}")]
    NotFound(String),
    #[error("the driver has stopped")]
    Stopped,
    #[error("the driver did not answer within {0:?}")]
    Timeout(Duration),
    #[error("too many requests waiting on the driver")]
    Busy,
    /// A known path asked with a method it does not serve (the API is
    /// read-only: every route is `GET`).
    #[error("{method} {path}: the API is read-only, only GET is served here")]
    MethodNotAllowed { method: String, path: String },
}

impl ApiError {
    fn code(&self) -> &'static str {
        match self {
            ApiError::NotFound(_) => "not_found",
            ApiError::Stopped => "driver_stopped",
            ApiError::Timeout(_) => "driver_timeout",
            ApiError::Busy => "busy",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        let allow = matches!(self, ApiError::MethodNotAllowed { .. });
        let body = ErrorBody {
            error: self.code().to_owned(),
            message: self.to_string(),
        };
        let mut response = (status, Json(body)).into_response();
        if allow {
            response
                .headers_mut()
                .insert(header::ALLOW, header::HeaderValue::from_static("GET,HEAD"));
        }
        response
    }
}

impl App {
    /// Runs `read` on the driver task within the listener's limits.
    async fn read<R: Send + 'static>(
        &self,
        read: impl FnOnce(&chime_core::Engine) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let _permit: OwnedSemaphorePermit = self
            .reads
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::Busy)?;
        let wait = self.options.read_timeout;
        match tokio::time::timeout(wait, self.handle.inspect(read)).await {
            Ok(Ok(r)) => Ok(r),
            // Every driver error means it is gone (a store error ended it).
            Ok(Err(_)) => Err(ApiError::Stopped),
            Err(_) => Err(ApiError::Timeout(wait)),
        }
    }
}

/// 200 when the driver answers a probe within the read timeout and its
/// last commit succeeded (a failed commit stops the driver); 503 with the
/// reason otherwise.
async fn healthz(State(app): State<App>) -> (StatusCode, Json<Health>) {
    let probe = app.read(views::Probe::read).await;
    let health = Health::new(app.handle.vitals().read(), probe.as_ref());
    let status = if health.status == "ok" {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health))
}

async fn metrics_text(State(app): State<App>) -> Result<Response, ApiError> {
    let gauges = app.read(EngineGauges::read).await?;
    let text = app.handle.metrics().render(&gauges);
    Ok(([(header::CONTENT_TYPE, driver::CONTENT_TYPE)], text).into_response())
}

async fn schedules(State(app): State<App>) -> Result<Json<ScheduleList>, ApiError> {
    Ok(Json(app.read(ScheduleList::read).await?))
}

async fn schedule(
    State(app): State<App>,
    Path(name): Path<String>,
) -> Result<Json<ScheduleDetail>, ApiError> {
    let key = name.clone();
    let (info, config) = app
        .read(move |e| (e.schedule(&key), e.config().clone()))
        .await?;
    let info = info.ok_or_else(|| ApiError::NotFound(format!("schedule {name:?}")))?;
    // Previewing runs here, off the driver task.
    Ok(Json(ScheduleDetail::new(info, &config)))
}

async fn queues(State(app): State<App>) -> Result<Json<QueueList>, ApiError> {
    Ok(Json(app.read(QueueList::read).await?))
}

/// `?dead=N`: dead letters per queue in `/v1/inspect`.
#[derive(serde::Deserialize)]
struct InspectQuery {
    dead: Option<usize>,
}

/// Everything `chime inspect` shows, in the struct it prints (so
/// `chime inspect --url` and `--data` give the same output).
async fn inspect(
    State(app): State<App>,
    Query(q): Query<InspectQuery>,
) -> Result<Json<inspection::Inspection>, ApiError> {
    let dead = q.dead.unwrap_or(inspection::DEAD_LIMIT).min(MAX_DEAD_LIMIT);
    Ok(Json(
        app.read(move |e| inspection::Inspection::of(e, dead))
            .await?,
    ))
}

/// `?limit=N` for dead letters (default 100, at most [`MAX_DEAD_LIMIT`]).
#[derive(serde::Deserialize)]
struct DeadQuery {
    limit: Option<usize>,
}

async fn dead_letters(
    State(app): State<App>,
    Path(name): Path<String>,
    Query(q): Query<DeadQuery>,
) -> Result<Json<DeadLetters>, ApiError> {
    let limit = q.limit.unwrap_or(100).min(MAX_DEAD_LIMIT);
    let key = name.clone();
    let found = app
        .read(move |e| {
            e.queue_stats(&key)
                .map(|s| (s.dead, e.dead_letters(&key, limit)))
        })
        .await?;
    let (total, jobs) = found.ok_or_else(|| ApiError::NotFound(format!("queue {name:?}")))?;
    Ok(Json(DeadLetters {
        queue: name,
        total,
        jobs,
    }))
}
