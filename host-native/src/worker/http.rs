//! A job handler that POSTs each attempt to an HTTP endpoint: the
//! `[[worker]] url = "…"` of the config. 2xx completes the attempt;
//! any other status, a transport error or the timeout fails it, with the
//! status and the start of the response body as the error text (which the
//! engine records as the job's `lastError`).
//!
//! reqwest with rustls (ring provider, system roots through
//! rustls-platform-verifier) and no default features: HTTPS without
//! OpenSSL or aws-lc's C build, HTTP/1 only, no proxy discovery.

use crate::worker::{Handler, Job};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// Request timeout when the worker sets none (`timeoutMs`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Most bytes of a failed response's body kept in the error text.
pub const MAX_ERROR_BODY: usize = 512;

/// Why an HTTP worker could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HttpWorkerError {
    /// Not an `http://` or `https://` URL.
    #[error("worker url {0:?} must be an http:// or https:// URL")]
    Url(String),
    /// The HTTP client could not be built.
    #[error("building the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// The JSON body of each POST.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRequest<'a> {
    /// Job id (stable across attempts: use it to de-duplicate).
    pub id: u64,
    /// Queue.
    pub queue: &'a str,
    /// Attempt number, 1-based.
    pub attempt: u32,
    /// The job's payload, verbatim.
    pub payload: &'a chime_core::Payload,
    /// The job's headers (also sent as HTTP headers where valid).
    pub headers: &'a chime_core::Headers,
    /// The fire that made the job, if a schedule did.
    pub fire: Option<FireInfo<'a>>,
}

/// Which fire made a job.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FireInfo<'a> {
    /// Fire id, e.g. `backup@1767229200000`.
    pub id: String,
    /// Schedule name.
    pub schedule: &'a str,
    /// The nominal boundary (ms since the epoch).
    pub nominal: i64,
}

/// Job headers never copied to HTTP headers: they would change how the
/// request itself is framed or routed.
const RESERVED: [&str; 6] = [
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
    "connection",
    "expect",
];

/// A handler POSTing to `url`, each request limited to `timeout`.
pub fn http_handler(url: &str, timeout: Duration) -> Result<Handler, HttpWorkerError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| HttpWorkerError::Url(url.to_owned()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(HttpWorkerError::Url(url.to_owned()));
    }
    let client = client(timeout)?;
    let url = Arc::new(parsed);
    Ok(Arc::new(move |job: Job| {
        let (client, url) = (client.clone(), url.clone());
        Box::pin(async move { post(&client, &url, &job, timeout).await })
    }))
}

/// An HTTP client with chime's defaults: `timeout` per request, no
/// redirects (a 3xx fails the attempt rather than turning a POST into a
/// GET elsewhere).
pub fn client(timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    // reqwest is built without a rustls provider so that aws-lc is not
    // compiled; install ring's once per process (an error means one is
    // installed already, which is as good).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("chime/", env!("CARGO_PKG_VERSION")))
        .build()
}

async fn post(
    client: &reqwest::Client,
    url: &reqwest::Url,
    job: &Job,
    timeout: Duration,
) -> Result<(), String> {
    let body = JobRequest {
        id: job.id.0,
        queue: &job.queue,
        attempt: job.attempt,
        payload: &job.payload,
        headers: &job.headers,
        fire: job.fire.as_ref().map(|f| FireInfo {
            id: f.to_string(),
            schedule: &f.schedule,
            nominal: f.nominal.as_millis(),
        }),
    };
    let body = serde_json::to_vec(&body).map_err(|e| format!("encoding the job: {e}"))?;
    let mut req = client
        .post(url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("chime-job-id", job.id.0)
        .header("chime-queue", &job.queue)
        .header("chime-attempt", job.attempt);
    if let Some(f) = &job.fire {
        req = req
            .header("chime-fire-id", f.to_string())
            .header("chime-schedule", &*f.schedule);
    }
    for (name, value) in &job.headers {
        let name = name.to_ascii_lowercase();
        if RESERVED.contains(&name.as_str()) || name.starts_with("chime-") {
            continue;
        }
        match (
            reqwest::header::HeaderName::from_bytes(name.as_bytes()),
            reqwest::header::HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => req = req.header(n, v),
            _ => {
                tracing::debug!(job = job.id.0, header = %name, "header not valid in HTTP; sent in the body only")
            }
        }
    }
    let mut resp = req.body(body).send().await.map_err(|e| {
        if e.is_timeout() {
            format!("POST {url} timed out after {timeout:?}")
        } else {
            format!("POST {url} failed: {e}")
        }
    })?;
    let status = resp.status();
    if status.is_success() {
        return Ok(());
    }
    // Keep the start of the body for the error; stop reading past the cap.
    let mut text = Vec::new();
    while text.len() < MAX_ERROR_BODY {
        match resp.chunk().await {
            Ok(Some(chunk)) => text.extend_from_slice(&chunk),
            _ => break,
        }
    }
    text.truncate(MAX_ERROR_BODY);
    let text = String::from_utf8_lossy(&text);
    let text = text.trim();
    if text.is_empty() {
        Err(format!("POST {url} answered HTTP {status}"))
    } else {
        Err(format!("POST {url} answered HTTP {status}: {text}"))
    }
}
