//! Schedule and queue writes, through the control port: each route is
//! one core input, answered with core's reply (externally tagged,
//! camelCase: `{"scheduleUpserted": {"version", "nextFire", "changed"}}`).
//! `manage` on the schedule's name; an upsert also needs `manage` on the
//! queue it targets (a token only touches what it owns). Schedules
//! written here are `origin: api`: a start or reload never prunes them,
//! and core refuses (409 `schedule_declared`) an upsert or removal of one
//! the config declares.

use super::App;
use super::auth::{Principal, Scope};
use super::body::{self, Object};
use super::error::ApiError;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::{Extension, Json};
use chime_core::{Input, Origin, Overlap, QueueConfig, Reply, ScheduleDef, Timestamp};
use serde::Deserialize;
use utoipa::ToSchema;

async fn submit(app: &App, input: Input) -> Result<Json<Reply>, ApiError> {
    Ok(Json(app.call(app.ports.control.submit(input)).await?))
}

/// `PUT /v1/schedules/{name}`: core's `ScheduleDef` without `name`.
pub(super) async fn upsert(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "schedule", &name)?;
    let object: Object = body::decode(&app.body(body).await?)?;
    let mut def: ScheduleDef = body::with_path_field(object, "name", &name)?;
    // Whatever the body says: a schedule made here is the API's, kept
    // across restarts and reloads; core refuses it over a declared one.
    def.origin = Origin::Api;
    who.require(Scope::Manage, "queue", &def.target.queue)?;
    submit(&app, Input::UpsertSchedule(def)).await
}

/// `DELETE /v1/schedules/{name}`.
pub(super) async fn remove(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "schedule", &name)?;
    let origin = Origin::Api;
    submit(&app, Input::RemoveSchedule { name, origin }).await
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct PauseBody {
    note: Option<String>,
}

/// `POST /v1/schedules/{name}/pause` `{"note"?}`.
pub(super) async fn pause(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "schedule", &name)?;
    let b: PauseBody = body::decode(&app.body(body).await?)?;
    submit(&app, Input::PauseSchedule { name, note: b.note }).await
}

/// No fields (an empty body is `{}` too).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Empty {}

/// `POST /v1/schedules/{name}/resume`.
pub(super) async fn resume(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "schedule", &name)?;
    let Empty {} = body::decode(&app.body(body).await?)?;
    submit(&app, Input::ResumeSchedule { name }).await
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct TriggerBody {
    overlap: Option<Overlap>,
}

/// `POST /v1/schedules/{name}/trigger` `{"overlap"?}`.
pub(super) async fn trigger(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "schedule", &name)?;
    let b: TriggerBody = body::decode(&app.body(body).await?)?;
    submit(
        &app,
        Input::TriggerSchedule {
            name,
            overlap: b.overlap,
        },
    )
    .await
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct BackfillBody {
    from: Timestamp,
    to: Timestamp,
    overlap: Option<Overlap>,
}

/// `POST /v1/schedules/{name}/backfill` `{"from", "to", "overlap"?}`.
pub(super) async fn backfill(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "schedule", &name)?;
    let b: BackfillBody = body::decode(&app.body(body).await?)?;
    submit(
        &app,
        Input::Backfill {
            name,
            from: b.from,
            to: b.to,
            overlap: b.overlap,
        },
    )
    .await
}

/// `PUT /v1/queues/{name}`: core's `QueueConfig` without `name`.
pub(super) async fn declare(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Reply>, ApiError> {
    who.require(Scope::Manage, "queue", &name)?;
    let object: Object = body::decode(&app.body(body).await?)?;
    let config: QueueConfig = body::with_path_field(object, "name", &name)?;
    submit(&app, Input::DeclareQueue(config)).await
}
