//! The read routes: `/healthz`, `/metrics`, schedules, queues, dead
//! letters and `/v1/inspect`. Reads run on the driver task
//! ([`Handle::inspect`](crate::driver::Handle::inspect)) within the
//! listener's read bounds; what a token limited to some names may not
//! read is left out of lists (so payloads are shown only to a `read`
//! grant that covers their queue).

use super::auth::{Principal, Scope};
use super::error::ApiError;
use super::inspection::{self, Inspection};
use super::views::{self, DeadLetters, Health, QueueList, ScheduleDetail, ScheduleList};
use super::{App, MAX_DEAD_LIMIT};
use crate::driver::{self, EngineGauges};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};

/// 200 when the driver answers a probe within the read timeout and its
/// last commit succeeded (a failed commit stops the driver); 503 with the
/// reason otherwise. Needs no token: a load balancer probes it.
pub(super) async fn healthz(State(app): State<App>) -> (StatusCode, Json<Health>) {
    let probe = app.read(views::Probe::read).await;
    let health = Health::new(app.handle.vitals().read(), probe.as_ref());
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
    let gauges = app.read(EngineGauges::read).await?;
    let text = app.handle.metrics().render(&gauges);
    Ok(([(header::CONTENT_TYPE, driver::CONTENT_TYPE)], text).into_response())
}

pub(super) async fn schedules(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> Result<Json<ScheduleList>, ApiError> {
    who.require_some(Scope::Read)?;
    let mut list = app.read(ScheduleList::read).await?;
    list.schedules
        .retain(|s| who.may(Scope::Read, Some(&s.name)));
    Ok(Json(list))
}

pub(super) async fn schedule(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<Json<ScheduleDetail>, ApiError> {
    who.require(Scope::Read, "schedule", &name)?;
    let key = name.clone();
    let (info, config) = app
        .read(move |e| (e.schedule(&key), e.config().clone()))
        .await?;
    let info = info.ok_or_else(|| ApiError::NotFound(format!("schedule {name:?}")))?;
    // Previewing runs here, off the driver task.
    Ok(Json(ScheduleDetail::new(info, &config)))
}

pub(super) async fn queues(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> Result<Json<QueueList>, ApiError> {
    who.require_some(Scope::Read)?;
    let mut list = app.read(QueueList::read).await?;
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
    let mut view = app.read(move |e| Inspection::of(e, dead)).await?;
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
