//! Worker routes (pull): claim with long-poll, heartbeat, complete,
//! fail, one or a batch. A stale token is core's `lease_lost` (409) and
//! changes nothing.
//!
//! # Long-poll
//!
//! A claim with `waitMs` claims at once; if nothing was available it
//! waits for the backend's availability signal (the engine's `Wake`,
//! published by the driver after the commit that made a job claimable:
//! an enqueue, a retry or delay coming due, a redrive, an expired lease)
//! and claims again, until it has jobs or the wait is over. Nothing is
//! claimed while it waits, so a worker that disconnects mid-poll leaves
//! nothing claimed: hyper drops the request when the connection closes,
//! and a `Claim` whose caller is gone by the time the driver journals it
//! is dropped unjournaled. What remains is the moment between the
//! claim's commit and the response's write: a job claimed for a client
//! that vanished just then comes back when its lease runs out (core's
//! `lease_expired`), as for a worker that crashed.

use super::App;
use super::auth::{Principal, Scope};
use super::body;
use super::error::ApiError;
use super::jobs::{job_id, job_queue};
use super::views::ErrorBody;
use crate::backend::Failed;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::{Extension, Json};
use chime_core::{Claimed, JobId, LeaseToken, Timestamp};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::time::Instant;
use utoipa::ToSchema;

/// Longest a claim may wait for a job.
pub const MAX_WAIT_MS: u64 = 25_000;

/// How often a claim re-polls a backend without an availability signal.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// `POST /v1/queues/{queue}/claim`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ClaimBody {
    /// Who claims (shown in `GET /v1/jobs/{id}` while it holds the job):
    /// core's naming rule.
    #[schema(pattern = "^[A-Za-z0-9._:/-]+$", max_length = 128)]
    worker: String,
    /// Most jobs to lease (default 1; core's `claimBatch` limit bounds it).
    #[serde(default = "one")]
    #[schema(minimum = 1)]
    max: u32,
    /// Lease length (default the queue's `leaseMs`).
    #[schema(minimum = 1)]
    lease_ms: Option<i64>,
    /// Long-poll: how long to wait for a job when none is available (at
    /// most 25,000 ms; default 0, answer at once).
    #[serde(default)]
    #[schema(maximum = 25_000)]
    wait_ms: u64,
}

fn one() -> u32 {
    1
}

/// The jobs leased (none if the wait ended first).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct ClaimReply {
    jobs: Vec<Claimed>,
}

pub(super) async fn claim(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(queue): Path<String>,
    body: Body,
) -> Result<Json<ClaimReply>, ApiError> {
    who.require(Scope::Work, "queue", &queue)?;
    let b: ClaimBody = body::decode(&app.body(body).await?)?;
    if b.wait_ms > MAX_WAIT_MS {
        return Err(ApiError::bad(
            Some("waitMs"),
            format!("waitMs is at most {MAX_WAIT_MS}"),
        ));
    }
    let queues = &app.ports.queues;
    let claim = || app.call(queues.claim(&queue, &b.worker, b.max, b.lease_ms));
    if b.wait_ms == 0 {
        return Ok(Json(ClaimReply {
            jobs: claim().await?,
        }));
    }
    let _slot = app.poll_slot(&who)?;
    let deadline = Instant::now() + Duration::from_millis(b.wait_ms);
    let mut signal = queues.availability(&queue);
    loop {
        // Seen before the claim: a wake after it is not missed.
        if let Some(s) = signal.as_mut() {
            s.borrow_and_update();
        }
        let jobs = claim().await?;
        if !jobs.is_empty() || Instant::now() >= deadline {
            return Ok(Json(ClaimReply { jobs }));
        }
        let woke = match signal.as_mut() {
            Some(s) => tokio::select! {
                r = s.changed() => r.is_ok(),
                () = tokio::time::sleep_until(deadline) => false,
            },
            None => {
                tokio::time::sleep_until(deadline.min(Instant::now() + POLL_EVERY)).await;
                true
            }
        };
        if !woke && Instant::now() >= deadline {
            return Ok(Json(ClaimReply { jobs: Vec::new() }));
        }
        if !woke {
            // The signal's sender is gone (the driver stopped): the next
            // claim says so.
            signal = None;
        }
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct HeartbeatBody {
    token: LeaseToken,
    lease_ms: Option<i64>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct CompleteBody {
    token: LeaseToken,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct FailBody {
    token: LeaseToken,
    #[serde(default)]
    error: String,
    retry_at: Option<Timestamp>,
}

/// What a failed attempt led to.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct FailReply {
    /// `retry`, `dead` or `dropped`.
    #[schema(value_type = String, pattern = "^(retry|dead|dropped)$")]
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_ms: Option<i64>,
}

impl From<Failed> for FailReply {
    fn from(f: Failed) -> FailReply {
        match f {
            Failed::Retry { run_at, delay_ms } => FailReply {
                outcome: "retry",
                run_at: Some(run_at),
                delay_ms: Some(delay_ms),
            },
            Failed::Dead => FailReply {
                outcome: "dead",
                run_at: None,
                delay_ms: None,
            },
            Failed::Dropped => FailReply {
                outcome: "dropped",
                run_at: None,
                delay_ms: None,
            },
        }
    }
}

/// `POST /v1/jobs/{id}/heartbeat`: the new lease deadline.
#[derive(Serialize, ToSchema)]
pub(super) struct HeartbeatReply {
    deadline: Timestamp,
}

/// `POST /v1/jobs/{id}/complete`: always `true`.
#[derive(Serialize, ToSchema)]
pub(super) struct CompleteReply {
    completed: bool,
}

async fn do_heartbeat(
    app: &App,
    who: &Principal,
    id: JobId,
    b: HeartbeatBody,
) -> Result<HeartbeatReply, ApiError> {
    job_queue(app, who, Scope::Work, id).await?;
    let deadline = app
        .call(app.ports.queues.heartbeat(id, b.token, b.lease_ms))
        .await?;
    Ok(HeartbeatReply { deadline })
}

async fn do_complete(
    app: &App,
    who: &Principal,
    id: JobId,
    b: CompleteBody,
) -> Result<CompleteReply, ApiError> {
    job_queue(app, who, Scope::Work, id).await?;
    app.call(app.ports.queues.complete(id, b.token)).await?;
    Ok(CompleteReply { completed: true })
}

async fn do_fail(
    app: &App,
    who: &Principal,
    id: JobId,
    b: FailBody,
) -> Result<FailReply, ApiError> {
    job_queue(app, who, Scope::Work, id).await?;
    let f = app
        .call(app.ports.queues.fail(id, b.token, &b.error, b.retry_at))
        .await?;
    Ok(FailReply::from(f))
}

/// `POST /v1/jobs/{id}/heartbeat` → `{"deadline"}`.
pub(super) async fn heartbeat(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    id: Result<Path<u64>, PathRejection>,
    body: Body,
) -> Result<Json<HeartbeatReply>, ApiError> {
    let id = job_id(id)?;
    let b = body::decode(&app.body(body).await?)?;
    Ok(Json(do_heartbeat(&app, &who, id, b).await?))
}

/// `POST /v1/jobs/{id}/complete`.
pub(super) async fn complete(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    id: Result<Path<u64>, PathRejection>,
    body: Body,
) -> Result<Json<CompleteReply>, ApiError> {
    let id = job_id(id)?;
    let b = body::decode(&app.body(body).await?)?;
    Ok(Json(do_complete(&app, &who, id, b).await?))
}

/// `POST /v1/jobs/{id}/fail` → `{"outcome", "runAt"?, "delayMs"?}`.
pub(super) async fn fail(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    id: Result<Path<u64>, PathRejection>,
    body: Body,
) -> Result<Json<FailReply>, ApiError> {
    let id = job_id(id)?;
    let b = body::decode(&app.body(body).await?)?;
    Ok(Json(do_fail(&app, &who, id, b).await?))
}

/// `{"jobs": [{"job": id, …the single form's body}]}` (its schema:
/// `openapi.rs`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Batch<T> {
    jobs: Vec<Item<T>>,
}

/// One item of a batch: the job and the single form's body (its schema:
/// `openapi.rs`).
#[derive(Deserialize)]
pub(super) struct Item<T> {
    pub(super) job: JobId,
    #[serde(flatten)]
    body: T,
}

/// `{"results": [...]}`, in request order (its schema: `openapi.rs`).
#[derive(Serialize)]
pub(super) struct BatchReply<R> {
    results: Vec<ItemReply<R>>,
}

/// One item's outcome: `{"job", "ok": true, …the single form's reply}`
/// or `{"job", "ok": false, "error": {error, message, field}}` (its
/// schema: `openapi.rs`).
#[derive(Serialize)]
pub(super) struct ItemReply<R> {
    job: JobId,
    ok: bool,
    #[serde(flatten)]
    reply: Option<R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody>,
}

/// Each item's outcome. Items are independent: one stale token does not
/// stop the others.
async fn batch<T, R, F, Fut>(
    app: &App,
    body: Body,
    each: F,
) -> Result<Json<BatchReply<R>>, ApiError>
where
    T: serde::de::DeserializeOwned,
    F: Fn(JobId, T) -> Fut,
    Fut: std::future::Future<Output = Result<R, ApiError>>,
{
    let b: Batch<T> = body::decode(&app.body(body).await?)?;
    if b.jobs.is_empty() || b.jobs.len() > super::MAX_BATCH {
        return Err(ApiError::bad(
            Some("jobs"),
            format!("a batch has 1 to {} jobs", super::MAX_BATCH),
        ));
    }
    // All sent at once: the driver takes them in one turn, one commit.
    let calls = b.jobs.into_iter().map(|i| {
        let job = i.job;
        let f = each(job, i.body);
        async move { (job, f.await) }
    });
    let results = futures_util::future::join_all(calls).await;
    let results = results
        .into_iter()
        .map(|(job, r)| match r {
            Ok(reply) => ItemReply {
                job,
                ok: true,
                reply: Some(reply),
                error: None,
            },
            Err(e) => ItemReply {
                job,
                ok: false,
                reply: None,
                error: Some(e.body()),
            },
        })
        .collect();
    Ok(Json(BatchReply { results }))
}

/// `POST /v1/jobs/heartbeat`.
pub(super) async fn heartbeat_batch(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    body: Body,
) -> Result<Json<BatchReply<HeartbeatReply>>, ApiError> {
    who.require_some(Scope::Work)?;
    batch(&app, body, |id, b| do_heartbeat(&app, &who, id, b)).await
}

/// `POST /v1/jobs/complete`.
pub(super) async fn complete_batch(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    body: Body,
) -> Result<Json<BatchReply<CompleteReply>>, ApiError> {
    who.require_some(Scope::Work)?;
    batch(&app, body, |id, b| do_complete(&app, &who, id, b)).await
}

/// `POST /v1/jobs/fail`.
pub(super) async fn fail_batch(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    body: Body,
) -> Result<Json<BatchReply<FailReply>>, ApiError> {
    who.require_some(Scope::Work)?;
    batch(&app, body, |id, b| do_fail(&app, &who, id, b)).await
}
