//! The read routes: `/healthz`, `/metrics`, schedules, queues, dead
//! letters and `/v1/inspect`, through the read port
//! ([`ReadBackend`](crate::backend::ReadBackend)) within the listener's
//! read bounds; what a token limited to some names may not read is left
//! out of lists (so payloads are shown only to a `read` grant that covers
//! their queue).

use super::auth::{Principal, Scope};
use super::error::ApiError;
use super::{App, MAX_DEAD_LIMIT};
use crate::backend::fires::{FireWindow, MAX_FIRES};
use crate::backend::inspection::{self, Inspection};
use crate::backend::views::{
    DeadLetters, Health, QueueList, ScheduleDetail, ScheduleFilter, ScheduleList,
};
use crate::driver;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use std::sync::Arc;

/// 200 when the backend answers a probe within the read timeout and is
/// well (the driver's last commit succeeded; a replica's database
/// answered); 503 with the reason otherwise. Needs no token: a load
/// balancer probes it.
pub(super) async fn healthz(State(app): State<App>) -> (StatusCode, Json<Health>) {
    let health = match app.reads.clone().try_acquire_owned() {
        Ok(_permit) => {
            let wait = app.options.read_timeout;
            // The backend answers within `wait`; the margin covers its own
            // bookkeeping.
            match tokio::time::timeout(wait * 2, app.ports.reads.health(wait)).await {
                Ok(Ok(h)) => h,
                _ => Health::busy(),
            }
        }
        Err(_) => Health::busy(),
    };
    let status = if health.status == "ok" {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health))
}

pub(super) async fn metrics_text(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> Result<Response, ApiError> {
    who.require_all(Scope::Read)?;
    let text = app.read(app.ports.reads.metrics()).await?;
    Ok(([(header::CONTENT_TYPE, driver::CONTENT_TYPE)], text).into_response())
}

/// Most schedules one page of `GET /v1/schedules` holds.
pub const MAX_SCHEDULE_PAGE: usize = 1_000;

/// Longest `q` of `GET /v1/schedules`, in bytes (longer than any name,
/// spec, queue or zone it could be found in).
pub const MAX_SCHEDULE_TEXT: usize = 256;

/// `GET /v1/schedules?limit=&after=&q=&status=`: every field optional;
/// without `limit` the answer is the whole (filtered) list, as before
/// the API had pages.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct SchedulesQuery {
    /// Page size, 1 to 1,000 (absent: every matching schedule, `next` null).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<usize>,
    /// Names after this one: the `next` of the previous page.
    after: Option<String>,
    /// Only schedules with this text in their name, spec, queue or zone
    /// (ignoring case; at most 256 bytes).
    #[param(max_length = 256)]
    q: Option<String>,
    /// Only schedules in this state.
    status: Option<chime_core::ScheduleStatus>,
}

/// The schedules the token may read that the query selects, by name; a
/// token limited to some names pages through its own only.
pub(super) async fn schedules(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    q: Result<Query<SchedulesQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ScheduleList>, ApiError> {
    who.require_some(Scope::Read)?;
    let Query(q) = q.map_err(|e| ApiError::bad(Some("query"), e.body_text()))?;
    if q.limit
        .is_some_and(|n| !(1..=MAX_SCHEDULE_PAGE).contains(&n))
    {
        return Err(ApiError::bad(
            Some("limit"),
            format!("limit is 1 to {MAX_SCHEDULE_PAGE}"),
        ));
    }
    if q.q.as_ref().is_some_and(|t| t.len() > MAX_SCHEDULE_TEXT) {
        return Err(ApiError::bad(
            Some("q"),
            format!("q is at most {MAX_SCHEDULE_TEXT} bytes"),
        ));
    }
    let visible: Arc<dyn Fn(&str) -> bool + Send + Sync> = if who.may_all(Scope::Read) {
        Arc::new(|_| true)
    } else {
        Arc::new(move |name| who.may(Scope::Read, Some(name)))
    };
    let filter = ScheduleFilter {
        text: q.q.filter(|t| !t.is_empty()),
        status: q.status,
        after: q.after,
        limit: q.limit,
        visible,
    };
    Ok(Json(app.read(app.ports.reads.schedules(filter)).await?))
}

pub(super) async fn schedule(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<Json<ScheduleDetail>, ApiError> {
    who.require(Scope::Read, "schedule", &name)?;
    let found = app.read(app.ports.reads.schedule(&name)).await?;
    Ok(Json(found.ok_or_else(|| {
        ApiError::NotFound(format!("schedule {name:?}"))
    })?))
}

pub(super) async fn queues(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> Result<Json<QueueList>, ApiError> {
    who.require_some(Scope::Read)?;
    let mut list = app.read(app.ports.reads.queues()).await?;
    list.queues.retain(|q| who.may(Scope::Read, Some(&q.queue)));
    Ok(Json(list))
}

/// `?dead=N`: dead letters per queue in `/v1/inspect`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InspectQuery {
    dead: Option<usize>,
}

/// Everything `chime inspect` shows, in the struct it prints (so
/// `chime inspect --url` and `--data` give the same output).
pub(super) async fn inspect(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    q: Result<Query<InspectQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Inspection>, ApiError> {
    who.require_some(Scope::Read)?;
    let Query(q) = q.map_err(|e| ApiError::bad(Some("query"), e.body_text()))?;
    let dead = q.dead.unwrap_or(inspection::DEAD_LIMIT).min(MAX_DEAD_LIMIT);
    let mut view = app.read(app.ports.reads.inspect(dead)).await?;
    view.schedules
        .retain(|s| who.may(Scope::Read, Some(&s.def.name)));
    view.queues
        .retain(|q| who.may(Scope::Read, Some(&q.stats.queue)));
    Ok(Json(view))
}

/// `?limit=N` for dead letters (default 100, at most [`MAX_DEAD_LIMIT`]).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeadQuery {
    limit: Option<usize>,
}

pub(super) async fn dead_letters(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    q: Result<Query<DeadQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<DeadLetters>, ApiError> {
    who.require(Scope::Read, "queue", &name)?;
    let Query(q) = q.map_err(|e| ApiError::bad(Some("query"), e.body_text()))?;
    let limit = q.limit.unwrap_or(100).min(MAX_DEAD_LIMIT);
    let found = app.read(app.ports.reads.dead_letters(&name, limit)).await?;
    Ok(Json(found.ok_or_else(|| {
        ApiError::NotFound(format!("queue {name:?}"))
    })?))
}

/// `GET /v1/whoami`: the caller's token name and scopes (never the
/// token), so a client (the dashboard) shows only the controls it may
/// use. Any valid token; without tokens configured, `auth: false` and
/// `admin`.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(super) struct WhoAmI {
    /// Whether the listener checks tokens at all.
    auth: bool,
    /// The token's name (`None` without authentication).
    name: Option<String>,
    /// Its grants, `scope` or `scope:pattern`.
    scopes: Vec<String>,
}

pub(super) async fn whoami(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> Json<WhoAmI> {
    Json(WhoAmI {
        auth: app.options.tokens.enabled(),
        name: who.name.clone(),
        scopes: who.scopes(),
    })
}

/// `?from=MS&count=N` for a schedule's fires.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FiresQuery {
    from: Option<i64>,
    count: Option<usize>,
}

/// `GET /v1/schedules/{name}/fires`: up to `count` (default 20, at most
/// 500) boundaries at or after `from` (default: the schedule's cursor),
/// with civil time and DST notes.
pub(super) async fn fires(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    q: Result<Query<FiresQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<FireWindow>, ApiError> {
    who.require(Scope::Read, "schedule", &name)?;
    let Query(q) = q.map_err(|e| ApiError::bad(Some("query"), e.body_text()))?;
    let from = q
        .from
        .map(chime_core::Timestamp::from_millis)
        .transpose()
        .map_err(|e| ApiError::bad(Some("from"), e.to_string()))?;
    let n = q.count.unwrap_or(20).min(MAX_FIRES);
    let found = app
        .read(app.ports.reads.schedule_fires(&name, from, n))
        .await?;
    Ok(Json(found.ok_or_else(|| {
        ApiError::NotFound(format!("schedule {name:?}"))
    })?))
}
