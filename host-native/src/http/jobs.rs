//! Job routes: enqueue (one, or a batch all or none), get, list, cancel,
//! redrive and purge dead letters.

use super::App;
use super::auth::{Principal, Scope};
use super::body::{self, Object};
use super::error::ApiError;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use chime_core::{EnqueueRequest, JobId, JobInfo, JobPage, JobQuery, JobState, Timestamp};
use serde::{Deserialize, Serialize};

/// Most jobs one batch enqueue takes.
pub const MAX_BATCH: usize = 1_000;

/// What one enqueue did.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EnqueuedBody {
    id: JobId,
    deduplicated: bool,
}

/// `{"jobs": [...]}`: what a batch enqueue did, in request order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BatchBody {
    jobs: Vec<EnqueuedBody>,
}

/// `POST /v1/queues/{queue}/jobs`: the body is core's `EnqueueRequest`
/// without `queue` (the path's), or `{"jobs": [those]}` for a batch,
/// applied all or none.
pub(super) async fn enqueue(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(queue): Path<String>,
    body: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    who.require(Scope::Enqueue, "queue", &queue)?;
    let bytes = app.body(body).await?;
    let mut object: Object = body::decode(&bytes)?;
    let Some(jobs) = object.remove("jobs") else {
        let request: EnqueueRequest = body::with_path_field(object, "queue", &queue)?;
        let e = app.call(app.ports.queues.enqueue(&request)).await?;
        return Ok(Json(json(&EnqueuedBody {
            id: e.job,
            deduplicated: e.deduplicated,
        })));
    };
    if let Some(other) = object.keys().next() {
        return Err(ApiError::bad(
            Some("jobs"),
            format!("a batch body has only `jobs` (found {other:?})"),
        ));
    }
    let items: Vec<Object> = serde_json::from_str(jobs.get()).map_err(body::json_error)?;
    if items.is_empty() || items.len() > MAX_BATCH {
        return Err(ApiError::bad(
            Some("jobs"),
            format!("a batch has 1 to {MAX_BATCH} jobs, not {}", items.len()),
        ));
    }
    let requests = items
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            body::with_path_field::<EnqueueRequest>(o, "queue", &queue).map_err(|e| match e {
                ApiError::BadRequest { message, .. } => {
                    ApiError::bad(Some("jobs"), format!("jobs[{i}]: {message}"))
                }
                other => other,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let done = app
        .call(app.ports.queues.enqueue_batch(&requests))
        .await?
        .map_err(|(index, error)| ApiError::CoreItem { index, error })?;
    Ok(Json(json(&BatchBody {
        jobs: done
            .into_iter()
            .map(|e| EnqueuedBody {
                id: e.job,
                deduplicated: e.deduplicated,
            })
            .collect(),
    })))
}

fn json<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
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
    Path(id): Path<u64>,
) -> Result<Json<JobInfo>, ApiError> {
    let id = JobId(id);
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
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ListQuery {
    state: Option<JobState>,
    key: Option<String>,
    after: Option<u64>,
    before: Option<u64>,
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
    Path(id): Path<u64>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = JobId(id);
    job_queue(&app, &who, Scope::Manage, id).await?;
    app.call(app.ports.queues.cancel(id)).await?;
    Ok(Json(serde_json::json!({ "id": id, "cancelled": true })))
}

/// `{"job": id}` (one) or `{}` (all).
#[derive(Deserialize)]
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
) -> Result<Json<serde_json::Value>, ApiError> {
    who.require(Scope::Manage, "queue", &queue)?;
    let b: RedriveBody = body::decode(&app.body(body).await?)?;
    let r = app.call(app.ports.queues.redrive(&queue, b.job)).await?;
    Ok(Json(
        serde_json::json!({ "count": r.count, "keysDropped": r.keys_dropped }),
    ))
}

/// `{"before": ms}` or `{}` (all).
#[derive(Deserialize)]
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
) -> Result<Json<serde_json::Value>, ApiError> {
    who.require(Scope::Manage, "queue", &queue)?;
    let b: PurgeBody = body::decode(&app.body(body).await?)?;
    let count = app
        .call(app.ports.queues.purge_dead(&queue, b.before))
        .await?;
    Ok(Json(serde_json::json!({ "count": count })))
}
