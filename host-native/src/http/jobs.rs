//! Job routes: enqueue (one, or a batch all or none), get, list, cancel,
//! redrive and purge dead letters.

use super::App;
use super::auth::{Principal, Scope};
use super::body;
use super::error::ApiError;
use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use chime_core::{
    EnqueueRequest, Headers, JobId, JobInfo, JobPage, JobQuery, JobState, Payload, Timestamp,
};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Most jobs one batch enqueue takes.
pub const MAX_BATCH: usize = 1_000;

/// What one enqueue did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct EnqueuedBody {
    id: JobId,
    deduplicated: bool,
}

/// `{"jobs": [...]}`: what a batch enqueue did, in request order.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct BatchBody {
    jobs: Vec<EnqueuedBody>,
}

/// One job of an enqueue body: core's `EnqueueRequest` without `queue`
/// (the path's), decoded in one pass (no intermediate map: a batch of a
/// thousand jobs is parsed once).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct JobBody {
    /// Refused when present: the path names the queue.
    #[serde(default)]
    #[schema(ignore)]
    queue: Option<IgnoredAny>,
    #[serde(default)]
    payload: Option<Payload>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    run_at: Option<Timestamp>,
    #[serde(default)]
    delay_ms: Option<i64>,
    #[serde(default)]
    priority: Option<i32>,
    #[serde(default)]
    max_attempts: Option<u32>,
    #[serde(default)]
    headers: Option<Headers>,
}

impl JobBody {
    fn into_request(self, queue: &str) -> Result<EnqueueRequest, ApiError> {
        if self.queue.is_some() {
            return Err(ApiError::bad(
                Some("queue"),
                "queue is given by the path, not the body",
            ));
        }
        Ok(EnqueueRequest {
            queue: queue.to_owned(),
            payload: self.payload.unwrap_or_default(),
            key: self.key,
            run_at: self.run_at,
            delay_ms: self.delay_ms,
            priority: self.priority.unwrap_or(0),
            max_attempts: self.max_attempts,
            headers: self.headers.unwrap_or_default(),
        })
    }
}

/// An enqueue body: one job (the fields of [`JobBody`]), or
/// `{"jobs": [...]}` and nothing else. One flat struct, not a
/// `#[serde(flatten)]`: flatten would buffer the payload (which must
/// stay verbatim) and let unknown fields through.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct EnqueueBody {
    /// A batch (then no other field): 1 to 1,000 jobs, all or none.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 1000)]
    jobs: Option<Vec<JobBody>>,
    #[serde(default)]
    #[schema(ignore)]
    queue: Option<IgnoredAny>,
    #[serde(default)]
    payload: Option<Payload>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    run_at: Option<Timestamp>,
    #[serde(default)]
    delay_ms: Option<i64>,
    #[serde(default)]
    priority: Option<i32>,
    #[serde(default)]
    max_attempts: Option<u32>,
    #[serde(default)]
    headers: Option<Headers>,
}

impl EnqueueBody {
    fn is_empty(&self) -> bool {
        self.queue.is_none()
            && self.payload.is_none()
            && self.key.is_none()
            && self.run_at.is_none()
            && self.delay_ms.is_none()
            && self.priority.is_none()
            && self.max_attempts.is_none()
            && self.headers.is_none()
    }

    fn into_job(self) -> JobBody {
        JobBody {
            queue: self.queue,
            payload: self.payload,
            key: self.key,
            run_at: self.run_at,
            delay_ms: self.delay_ms,
            priority: self.priority,
            max_attempts: self.max_attempts,
            headers: self.headers,
        }
    }
}

/// `POST /v1/queues/{queue}/jobs`: the body is core's `EnqueueRequest`
/// without `queue` (the path's), or `{"jobs": [those]}` for a batch,
/// applied all or none.
pub(super) async fn enqueue(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(queue): Path<String>,
    body: Body,
) -> Result<Json<Enqueued>, ApiError> {
    who.require(Scope::Enqueue, "queue", &queue)?;
    let bytes = app.body(body).await?;
    let mut parsed: EnqueueBody = body::decode(&bytes)?;
    let Some(jobs) = parsed.jobs.take() else {
        let request = parsed.into_job().into_request(&queue)?;
        let e = app.call(app.ports.queues.enqueue(&request)).await?;
        return Ok(Json(Enqueued::One(EnqueuedBody {
            id: e.job,
            deduplicated: e.deduplicated,
        })));
    };
    if !parsed.is_empty() {
        return Err(ApiError::bad(Some("jobs"), "a batch body has only `jobs`"));
    }
    if jobs.is_empty() || jobs.len() > MAX_BATCH {
        return Err(ApiError::bad(
            Some("jobs"),
            format!("a batch has 1 to {MAX_BATCH} jobs, not {}", jobs.len()),
        ));
    }
    let requests = jobs
        .into_iter()
        .enumerate()
        .map(|(i, j)| {
            j.into_request(&queue).map_err(|_| {
                ApiError::bad(
                    Some("jobs"),
                    format!("jobs[{i}]: queue is given by the path"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let done = app
        .call(app.ports.queues.enqueue_batch(&requests))
        .await?
        .map_err(|(index, error)| ApiError::CoreItem { index, error })?;
    Ok(Json(Enqueued::Batch(BatchBody {
        jobs: done
            .into_iter()
            .map(|e| EnqueuedBody {
                id: e.job,
                deduplicated: e.deduplicated,
            })
            .collect(),
    })))
}

/// What an enqueue did: one job's, or a batch's in request order.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub(super) enum Enqueued {
    One(EnqueuedBody),
    Batch(BatchBody),
}

/// A `{id}` path segment as a job id (400, not axum's plain-text
/// rejection, for one that is not a `u64`).
pub(super) fn job_id(id: Result<Path<u64>, PathRejection>) -> Result<JobId, ApiError> {
    id.map(|Path(id)| JobId(id))
        .map_err(|e| ApiError::bad(Some("id"), e.body_text()))
}

/// A job's queue, for authorization by name: 404 if the backend does not
/// hold it. Skipped (`None`) when `who` holds `scope` for every queue.
pub(super) async fn job_queue(
    app: &App,
    who: &Principal,
    scope: Scope,
    id: JobId,
) -> Result<Option<JobInfo>, ApiError> {
    who.require_some(scope)?;
    if who.may_all(scope) {
        return Ok(None);
    }
    let info = app
        .call(app.ports.queues.job(id))
        .await?
        .ok_or(ApiError::Core(chime_core::Error::UnknownJob(id)))?;
    who.require(scope, "queue", &info.queue)?;
    Ok(Some(info))
}

/// `GET /v1/jobs/{id}`: core's `JobInfo` (payload included: `read` on its
/// queue).
pub(super) async fn get(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    id: Result<Path<u64>, PathRejection>,
) -> Result<Json<JobInfo>, ApiError> {
    let id = job_id(id)?;
    if let Some(info) = job_queue(&app, &who, Scope::Read, id).await? {
        return Ok(Json(info));
    }
    let info = app
        .call(app.ports.queues.job(id))
        .await?
        .ok_or(ApiError::Core(chime_core::Error::UnknownJob(id)))?;
    Ok(Json(info))
}

/// `GET /v1/queues/{queue}/jobs?state=&key=&after=&before=&limit=`.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct ListQuery {
    /// Only jobs in this state.
    state: Option<JobState>,
    /// Only the job with this idempotency key.
    key: Option<String>,
    /// Ids above this (the `next` of the previous page).
    after: Option<u64>,
    /// Ids below this.
    before: Option<u64>,
    /// Page size (0 or absent: 100; at most 1,000).
    limit: Option<usize>,
}

/// One page of a queue's jobs, in id order; `next` is the `after` of the
/// next page (core's [`JobQuery`]).
pub(super) async fn list(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(queue): Path<String>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<JobPage>, ApiError> {
    who.require(Scope::Read, "queue", &queue)?;
    let Query(q) = q.map_err(|e| ApiError::bad(Some("query"), e.body_text()))?;
    let query = JobQuery {
        queue,
        state: q.state,
        key: q.key,
        after: q.after.map(JobId),
        before: q.before.map(JobId),
        limit: q.limit.unwrap_or(0),
    };
    Ok(Json(app.call(app.ports.queues.search(&query)).await?))
}

/// `POST /v1/jobs/{id}/cancel` (`manage` on its queue).
pub(super) async fn cancel(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    id: Result<Path<u64>, PathRejection>,
) -> Result<Json<Cancelled>, ApiError> {
    let id = job_id(id)?;
    job_queue(&app, &who, Scope::Manage, id).await?;
    app.call(app.ports.queues.cancel(id)).await?;
    Ok(Json(Cancelled {
        id,
        cancelled: true,
    }))
}

/// `POST /v1/jobs/{id}/cancel`: always `cancelled: true`.
#[derive(Serialize, ToSchema)]
pub(super) struct Cancelled {
    id: JobId,
    cancelled: bool,
}

/// `{"job": id}` (one) or `{}` (all).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct RedriveBody {
    job: Option<JobId>,
}

/// `POST /v1/queues/{queue}/dead/redrive`.
pub(super) async fn redrive(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(queue): Path<String>,
    body: Body,
) -> Result<Json<RedriveReply>, ApiError> {
    who.require(Scope::Manage, "queue", &queue)?;
    let b: RedriveBody = body::decode(&app.body(body).await?)?;
    let r = app.call(app.ports.queues.redrive(&queue, b.job)).await?;
    Ok(Json(RedriveReply {
        count: r.count,
        keys_dropped: r.keys_dropped,
    }))
}

/// What a redrive did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct RedriveReply {
    /// Jobs redriven.
    count: u64,
    /// Of those, redriven without their key (another live job holds it).
    keys_dropped: u64,
}

/// `{"before": ms}` or `{}` (all).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct PurgeBody {
    before: Option<Timestamp>,
}

/// `POST /v1/queues/{queue}/dead/purge` or `DELETE /v1/queues/{queue}/dead`.
pub(super) async fn purge(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(queue): Path<String>,
    body: Body,
) -> Result<Json<Purged>, ApiError> {
    who.require(Scope::Manage, "queue", &queue)?;
    let b: PurgeBody = body::decode(&app.body(body).await?)?;
    let count = app
        .call(app.ports.queues.purge_dead(&queue, b.before))
        .await?;
    Ok(Json(Purged { count }))
}

/// What a purge did: dead letters removed.
#[derive(Serialize, ToSchema)]
pub(super) struct Purged {
    count: u64,
}
