//! The API's contract: an OpenAPI 3.1 document built from the Rust types
//! the routes read and write (their `utoipa::ToSchema` derives, core's
//! wire types through its `openapi` feature), served at
//! `GET /v1/openapi.json` to any valid token (no scope: every client may
//! know the shape of what it speaks).
//!
//! The operations are described here, on stand-in functions, not on the
//! handlers: one place lists every route, and a test
//! (`tests/embedded/api_openapi.rs`) checks it against the router's
//! `.route` calls and the live listener both ways, so a route without a
//! description (or a description without a route) fails CI. Every error
//! status a route can give is added by [`errors`] with the
//! `{"error", "message", "field"}` body ([`ErrorBody`]). Path names follow
//! core's naming rule (1 to 128 of `[A-Za-z0-9._:/-]`; `/` is left out of
//! the documented pattern, as a proxy may decode `%2F`).

#![allow(dead_code)] // The stand-ins are only read by `#[utoipa::path]`.

use super::control::{BackfillBody, Empty, PauseBody, TriggerBody};
use super::jobs::{
    Cancelled, EnqueueBody, Enqueued, ListQuery, PurgeBody, Purged, RedriveBody, RedriveReply,
};
use super::reads::{SchedulesQuery, WhoAmI};
use super::samples::History;
use super::views::ErrorBody;
use super::work::{
    ClaimBody, ClaimReply, CompleteBody, CompleteReply, FailBody, FailReply, HeartbeatBody,
    HeartbeatReply,
};
use crate::backend::fires::FireWindow;
use crate::backend::inspection::Inspection;
use crate::backend::views::{DeadLetters, Health, QueueList, ScheduleDetail, ScheduleList};
use crate::driver::StreamEvent;
use chime_core::{JobId, JobInfo, JobPage, QueueConfig, Reply, ScheduleDef};
use std::sync::OnceLock;
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, Object, ObjectBuilder, Schema, Type,
};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi, PartialSchema, ToSchema};

/// The document, built once (it never changes while the process runs).
pub fn document() -> &'static Document {
    static DOC: OnceLock<Document> = OnceLock::new();
    DOC.get_or_init(ApiDoc::openapi)
}

/// `GET /v1/openapi.json`.
pub(super) async fn serve() -> axum::Json<&'static Document> {
    axum::Json(document())
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "chime",
        description = "The HTTP API of chime: schedules, queues, jobs and workers. \
            See docs/http.md for the scopes, bounds and error codes.",
        license(name = "MIT OR Apache-2.0"),
    ),
    paths(
        healthz, metrics, openapi_json, inspect, schedules, schedule, upsert_schedule,
        remove_schedule, pause, resume, trigger, backfill, queues, declare_queue, list_jobs,
        enqueue, dead_letters, purge_dead, redrive, purge, claim, heartbeat_batch,
        complete_batch, fail_batch, get_job, cancel, heartbeat, complete, fail, events,
        dashboard_page, dashboard_asset, whoami, metrics_history, schedule_fires,
    ),
    components(schemas(ErrorBody, StreamEvent)),
    modifiers(&Security, &Errors),
    tags(
        (name = "health"), (name = "reads"), (name = "schedules"), (name = "queues"),
        (name = "jobs"), (name = "workers"), (name = "events"), (name = "dashboard"),
    ),
)]
struct ApiDoc;

/// A bearer token on every route but `/healthz`.
struct Security;

impl Modify for Security {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "`Authorization: Bearer <token>`; the token's scopes are listed per \
                         route. Not needed when the daemon has no [[token]] (loopback only).",
                    ))
                    .build(),
            ),
        );
    }
}

/// The error statuses a route can give, by its path and method.
pub fn errors(path: &str, method: &str) -> Vec<u16> {
    if path == "/healthz" || path == "/" {
        // Its 503 is a `Health` body, described on the route; the page
        // is always there.
        return Vec::new();
    }
    if path == "/ui/{file}" {
        // The page's assets need no token: an unknown name is all that fails.
        return vec![404];
    }
    // Every authenticated route: no or an unknown token, a full bound (per
    // token, in total), a stopped or stuck driver.
    let mut s = vec![401, 429, 503];
    if matches!(path, "/v1/openapi.json" | "/v1/whoami") {
        return s;
    }
    // A scope that does not cover the name.
    s.push(403);
    let writes = matches!(method, "post" | "put" | "delete");
    let named = path.contains('{');
    if writes || named || matches!(path, "/v1/inspect" | "/v1/events" | "/v1/schedules") {
        // A malformed body, query or path segment, or core's refusal.
        s.push(400);
    }
    if named {
        // No such schedule, queue or job.
        s.push(404);
    }
    if writes {
        // A body too slow or too large; core's lease_lost or
        // invalid_state; a backend that lacks the operation.
        s.extend([408, 409, 413, 501]);
    }
    if path.starts_with("/v1/jobs/{id}") {
        // Only the job routes go through the queue port for a read.
        s.push(501);
    }
    s.sort_unstable();
    s.dedup();
    s
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => {
            "Invalid request: malformed JSON, a wrong type, an unknown field, or input core refuses"
        }
        401 => "No or an unknown bearer token",
        403 => "The token's scopes do not cover this name",
        404 => "No such schedule, queue or job",
        408 => "The body did not arrive in time",
        409 => "A stale lease token or a state that no longer holds",
        413 => "The body or the payload is too large",
        429 => "Too many requests or long-polls in flight for this token, or a core limit",
        501 => "Not supported by this backend",
        503 => "Busy, or the driver stopped, did not answer in time, or may not act now",
        _ => "Error",
    }
}

/// Adds [`errors`] to every operation, each with the `ErrorBody` schema.
struct Errors;

impl Modify for Errors {
    fn modify(&self, doc: &mut Document) {
        for (path, item) in doc.paths.paths.iter_mut() {
            let ops: [(&str, &mut Option<Operation>); 4] = [
                ("get", &mut item.get),
                ("post", &mut item.post),
                ("put", &mut item.put),
                ("delete", &mut item.delete),
            ];
            for (method, op) in ops {
                let Some(op) = op else { continue };
                for status in errors(path, method) {
                    let response = ResponseBuilder::new()
                        .description(reason(status))
                        .content(
                            "application/json",
                            ContentBuilder::new()
                                .schema(Some(Ref::from_schema_name("ErrorBody")))
                                .build(),
                        )
                        .build();
                    op.responses
                        .responses
                        .insert(status.to_string(), response.into());
                }
            }
        }
    }
}

/// Every route's path and method in the document, sorted: what the
/// route test compares with the router.
pub fn operations() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, item) in &document().paths.paths {
        let ops = [
            (HttpMethod::Get, &item.get),
            (HttpMethod::Post, &item.post),
            (HttpMethod::Put, &item.put),
            (HttpMethod::Delete, &item.delete),
            (HttpMethod::Patch, &item.patch),
            (HttpMethod::Head, &item.head),
            (HttpMethod::Options, &item.options),
            (HttpMethod::Trace, &item.trace),
        ];
        for (m, op) in ops {
            if op.is_some() {
                let m = serde_json::to_value(&m)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                out.push((path.clone(), m.to_uppercase()));
            }
        }
    }
    out.sort();
    out
}

#[utoipa::path(get, path = "/healthz", tag = "health", security(()),
    description = "The driver answers a probe within the read timeout and its last commit \
        succeeded. Needs no token (a load balancer probes it).",
    responses(
        (status = 200, description = "Healthy", body = Health),
        (status = 503, description = "Stopped, stuck or failed", body = Health),
    ))]
fn healthz() {}

#[utoipa::path(get, path = "/metrics", tag = "reads",
    description = "Prometheus/OpenMetrics text. Scope: `read` for every name.",
    responses((status = 200, description = "OpenMetrics text",
        content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String)))]
fn metrics() {}

#[utoipa::path(get, path = "/", tag = "dashboard", security(()),
    description = "The dashboard page (docs/dashboard.md). Needs no token: it holds no data, \
        and asks for one to call this API.",
    responses((status = 200, description = "The page", content_type = "text/html; charset=utf-8", body = String)))]
fn dashboard_page() {}

#[utoipa::path(get, path = "/ui/{file}", tag = "dashboard", security(()),
    description = "One of the page's embedded scripts and styles. Needs no token.",
    params(("file" = String, Path, description = "File name, e.g. `app.js`")),
    responses((status = 200, description = "The file", content_type = "text/javascript; charset=utf-8", body = String)))]
fn dashboard_asset() {}

#[utoipa::path(get, path = "/v1/whoami", tag = "reads",
    description = "The calling token's name and scopes (never the token). Any valid token.",
    responses((status = 200, description = "Who is asking", body = WhoAmI)))]
fn whoami() {}

#[utoipa::path(get, path = "/v1/metrics/history", tag = "reads",
    description = "The in-process ring of metric samples (depth by state, throughput, job \
        duration, fire lateness per queue; by default one each 10 s for an hour). Scope: \
        `read` (queues it does not cover are left out).",
    responses((status = 200, description = "Samples, oldest first", body = History)))]
fn metrics_history() {}

#[utoipa::path(get, path = "/v1/schedules/{name}/fires", tag = "schedules",
    description = "Up to `count` (default 20, at most 500) boundaries at or after `from` \
        (default: the schedule's next one), with civil time and DST notes, as core computes \
        them. Scope: `read` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128),
        ("from" = Option<i64>, Query, description = "Start, ms since the epoch", minimum = 0, maximum = 253402300799999i64),
        ("count" = Option<u64>, Query, description = "How many (at most 500)")),
    responses((status = 200, description = "The fires", body = FireWindow)))]
fn schedule_fires() {}

#[utoipa::path(get, path = "/v1/openapi.json", tag = "reads",
    description = "This document. Any valid token (no scope).",
    responses((status = 200, description = "OpenAPI 3.1", body = Object)))]
fn openapi_json() {}

#[utoipa::path(get, path = "/v1/inspect", tag = "reads",
    description = "Everything `chime inspect` shows. Scope: `read` (names it does not cover \
        are left out).",
    params(("dead" = Option<u64>, Query, description = "Dead letters per queue (default 20, at most 1,000)")),
    responses((status = 200, description = "The engine's picture", body = Inspection)))]
fn inspect() {}

#[utoipa::path(get, path = "/v1/schedules", tag = "schedules",
    description = "The schedules the token may read, by name, filtered by `q` and `status`. \
        Without `limit`, every one of them (`next` null); with it, one page (`next` is the \
        `after` of the next page, null on the last; `total` counts every match). Unknown \
        query fields are 400. Scope: `read` (names it does not cover are left out before \
        the page is cut).",
    params(SchedulesQuery),
    responses((status = 200, description = "Schedules", body = ScheduleList)))]
fn schedules() {}

#[utoipa::path(get, path = "/v1/schedules/{name}", tag = "schedules",
    description = "One schedule and its next five boundaries. Scope: `read` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    responses((status = 200, description = "The schedule", body = ScheduleDetail)))]
fn schedule() {}

#[utoipa::path(put, path = "/v1/schedules/{name}", tag = "schedules",
    description = "Creates or replaces a schedule: core's `ScheduleDef` without `name` (the \
        path's; a body `name` is refused). Scope: `manage` on the schedule and its target queue.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = ScheduleBody,
    responses((status = 200, description = "`{\"scheduleUpserted\": …}`", body = Reply)))]
fn upsert_schedule() {}

#[utoipa::path(delete, path = "/v1/schedules/{name}", tag = "schedules",
    description = "Removes a schedule. Scope: `manage` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    responses((status = 200, description = "`{\"scheduleRemoved\": …}`", body = Reply)))]
fn remove_schedule() {}

#[utoipa::path(post, path = "/v1/schedules/{name}/pause", tag = "schedules",
    description = "Pauses a schedule. Scope: `manage` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = PauseBody,
    responses((status = 200, description = "`{\"scheduleStatus\": …}`", body = Reply)))]
fn pause() {}

#[utoipa::path(post, path = "/v1/schedules/{name}/resume", tag = "schedules",
    description = "Resumes a paused schedule. Scope: `manage` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = Empty,
    responses((status = 200, description = "`{\"scheduleStatus\": …}`", body = Reply)))]
fn resume() {}

#[utoipa::path(post, path = "/v1/schedules/{name}/trigger", tag = "schedules",
    description = "Fires a schedule now (a manual fire). Scope: `manage` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = TriggerBody,
    responses((status = 200, description = "`{\"triggered\": …}`", body = Reply)))]
fn trigger() {}

#[utoipa::path(post, path = "/v1/schedules/{name}/backfill", tag = "schedules",
    description = "Fires the boundaries in `[from, to)`. Scope: `manage` on the name.",
    params(("name" = String, Path, description = "Schedule name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = BackfillBody,
    responses((status = 200, description = "`{\"backfilled\": …}`", body = Reply)))]
fn backfill() {}

#[utoipa::path(get, path = "/v1/queues", tag = "queues",
    description = "Stats of every queue the token may read, by name. Scope: `read`.",
    responses((status = 200, description = "Queues", body = QueueList)))]
fn queues() {}

#[utoipa::path(put, path = "/v1/queues/{name}", tag = "queues",
    description = "Declares or reconfigures a queue: core's `QueueConfig` without `name` (the \
        path's). Scope: `manage` on the name.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = QueueBody,
    responses((status = 200, description = "`{\"queueDeclared\": …}`", body = Reply)))]
fn declare_queue() {}

#[utoipa::path(get, path = "/v1/queues/{name}/jobs", tag = "jobs",
    description = "One page of a queue's jobs, in id order (`next` is the `after` of the next \
        page). Scope: `read` on the queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128), ListQuery),
    responses((status = 200, description = "A page", body = JobPage)))]
fn list_jobs() {}

#[utoipa::path(post, path = "/v1/queues/{name}/jobs", tag = "jobs",
    description = "Enqueues one job (core's `EnqueueRequest` without `queue`, the path's), or \
        `{\"jobs\": [...]}` alone: a batch of 1 to 1,000, all or none. Scope: `enqueue` on the \
        queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = EnqueueBody,
    responses((status = 200, description = "`{id, deduplicated}`, or `{jobs: [...]}` for a batch",
        body = Enqueued)))]
fn enqueue() {}

#[utoipa::path(get, path = "/v1/queues/{name}/dead", tag = "jobs",
    description = "A queue's dead letters, oldest death first. Scope: `read` on the queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128),
        ("limit" = Option<u64>, Query, description = "At most this many (default 100, at most 1,000)")),
    responses((status = 200, description = "Dead letters", body = DeadLetters)))]
fn dead_letters() {}

#[utoipa::path(delete, path = "/v1/queues/{name}/dead", tag = "jobs",
    description = "Deletes dead letters (all, or those that died before `before`). Scope: \
        `manage` on the queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = PurgeBody,
    responses((status = 200, description = "How many", body = Purged)))]
fn purge_dead() {}

#[utoipa::path(post, path = "/v1/queues/{name}/dead/redrive", tag = "jobs",
    description = "Makes dead letters available again (one `job`, or all). Scope: `manage` on \
        the queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = RedriveBody,
    responses((status = 200, description = "How many", body = RedriveReply)))]
fn redrive() {}

#[utoipa::path(post, path = "/v1/queues/{name}/dead/purge", tag = "jobs",
    description = "As `DELETE /v1/queues/{name}/dead`. Scope: `manage` on the queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = PurgeBody,
    responses((status = 200, description = "How many", body = Purged)))]
fn purge() {}

#[utoipa::path(post, path = "/v1/queues/{name}/claim", tag = "workers",
    description = "Leases up to `max` jobs; with `waitMs`, waits for one (a long-poll). \
        Scope: `work` on the queue.",
    params(("name" = String, Path, description = "Queue name", pattern = "^[A-Za-z0-9._:-]+$", max_length = 128)),
    request_body = ClaimBody,
    responses((status = 200, description = "The jobs leased (maybe none)", body = ClaimReply)))]
fn claim() {}

#[utoipa::path(post, path = "/v1/jobs/heartbeat", tag = "workers",
    description = "Extends leases, each item on its own. Scope: `work` on each job's queue.",
    request_body = HeartbeatBatch,
    responses((status = 200, description = "Each item's outcome", body = HeartbeatResults)))]
fn heartbeat_batch() {}

#[utoipa::path(post, path = "/v1/jobs/complete", tag = "workers",
    description = "Completes jobs, each item on its own. Scope: `work` on each job's queue.",
    request_body = CompleteBatch,
    responses((status = 200, description = "Each item's outcome", body = CompleteResults)))]
fn complete_batch() {}

#[utoipa::path(post, path = "/v1/jobs/fail", tag = "workers",
    description = "Fails attempts, each item on its own. Scope: `work` on each job's queue.",
    request_body = FailBatch,
    responses((status = 200, description = "Each item's outcome", body = FailResults)))]
fn fail_batch() {}

#[utoipa::path(get, path = "/v1/jobs/{id}", tag = "jobs",
    description = "One job, payload included. Scope: `read` on its queue.",
    params(("id" = u64, Path, description = "Job id")),
    responses((status = 200, description = "The job", body = JobInfo)))]
fn get_job() {}

#[utoipa::path(post, path = "/v1/jobs/{id}/cancel", tag = "jobs",
    description = "Cancels a job that is not terminal. Scope: `manage` on its queue.",
    params(("id" = u64, Path, description = "Job id")),
    responses((status = 200, description = "Cancelled", body = Cancelled)))]
fn cancel() {}

#[utoipa::path(post, path = "/v1/jobs/{id}/heartbeat", tag = "workers",
    description = "Extends a lease. Scope: `work` on its queue.",
    params(("id" = u64, Path, description = "Job id")),
    request_body = HeartbeatBody,
    responses((status = 200, description = "The new deadline", body = HeartbeatReply)))]
fn heartbeat() {}

#[utoipa::path(post, path = "/v1/jobs/{id}/complete", tag = "workers",
    description = "Completes a claimed job. Scope: `work` on its queue.",
    params(("id" = u64, Path, description = "Job id")),
    request_body = CompleteBody,
    responses((status = 200, description = "Completed", body = CompleteReply)))]
fn complete() {}

#[utoipa::path(post, path = "/v1/jobs/{id}/fail", tag = "workers",
    description = "Fails an attempt: retried later, or dead. Scope: `work` on its queue.",
    params(("id" = u64, Path, description = "Job id")),
    request_body = FailBody,
    responses((status = 200, description = "What it led to", body = FailReply)))]
fn fail() {}

#[utoipa::path(get, path = "/v1/events", tag = "events",
    description = "Server-Sent Events of fires, skips and job outcomes; each event's `data` is a \
        `StreamEvent`, a client that falls behind gets a final `lagged` event. Scope: `read` \
        (names it does not cover are left out).",
    params(
        ("schedule" = Option<String>, Query, description = "Comma-separated schedule names"),
        ("queue" = Option<String>, Query, description = "Comma-separated queue names"),
        ("kind" = Option<String>, Query, description = "Comma-separated kinds (fire, skip, completed, …)"),
    ),
    responses((status = 200, description = "An endless event stream",
        content_type = "text/event-stream", body = String)))]
fn events() {}

/// An object schema of `T` (a derived struct's schema is its object).
fn object_of<T: ToSchema>() -> Object {
    match T::schema() {
        RefOr::T(Schema::Object(o)) => o,
        _ => Object::new(),
    }
}

/// A batch item: the single form's body with `job` added. Not an
/// `allOf` of the two: the body refuses unknown fields
/// (`additionalProperties: false`), which in an `allOf` would refuse
/// `job` too.
fn item<T: ToSchema>() -> Object {
    let mut o = object_of::<T>();
    o.properties
        .insert("job".into(), Ref::from_schema_name(JobId::name()).into());
    o.required.insert(0, "job".into());
    o
}

/// A batch item's outcome: `job`, `ok`, then the single form's reply
/// fields (present when `ok`) or `error` (when not).
fn item_reply<R: ToSchema>() -> Object {
    let mut o = object_of::<R>();
    o.properties
        .insert("job".into(), Ref::from_schema_name(JobId::name()).into());
    o.properties.insert(
        "ok".into(),
        ObjectBuilder::new().schema_type(Type::Boolean).into(),
    );
    o.properties.insert(
        "error".into(),
        Ref::from_schema_name(ErrorBody::name()).into(),
    );
    o.required = vec!["job".into(), "ok".into()];
    o
}

/// `{"<key>": [items]}`, 1 to [`MAX_BATCH`](super::MAX_BATCH) items when
/// `bounded` (a request), closed when `closed` (the request refuses
/// unknown fields).
fn list_of(key: &str, items: Object, bounded: bool, closed: bool) -> RefOr<Schema> {
    let mut array = ArrayBuilder::new().items(items);
    if bounded {
        array = array.min_items(Some(1)).max_items(Some(super::MAX_BATCH));
    }
    let mut o = ObjectBuilder::new().property(key, array).required(key);
    if closed {
        o = o.additional_properties(Some(AdditionalProperties::FreeForm(false)));
    }
    o.into()
}

/// The named schemas of a worker batch route: its body (`Batch<T>`,
/// `Item<T>`) and its reply (`BatchReply<R>`, `ItemReply<R>`).
macro_rules! batch_schemas {
    ($body:ident, $reply:ident, $t:ty, $r:ty) => {
        /// A batch body (see [`Batch`](super::work)).
        pub(super) struct $body;

        impl PartialSchema for $body {
            fn schema() -> RefOr<Schema> {
                list_of("jobs", item::<$t>(), true, true)
            }
        }

        impl ToSchema for $body {
            fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
                out.push((JobId::name().into_owned(), JobId::schema()));
                <$t>::schemas(out);
            }
        }

        /// A batch reply (see [`BatchReply`](super::work)).
        pub(super) struct $reply;

        impl PartialSchema for $reply {
            fn schema() -> RefOr<Schema> {
                list_of("results", item_reply::<$r>(), false, false)
            }
        }

        impl ToSchema for $reply {
            fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
                out.push((JobId::name().into_owned(), JobId::schema()));
                out.push((ErrorBody::name().into_owned(), ErrorBody::schema()));
                <$r>::schemas(out);
            }
        }
    };
}

batch_schemas!(
    HeartbeatBatch,
    HeartbeatResults,
    HeartbeatBody,
    HeartbeatReply
);
batch_schemas!(CompleteBatch, CompleteResults, CompleteBody, CompleteReply);
batch_schemas!(FailBatch, FailResults, FailBody, FailReply);

/// `T`'s object without `name`: the path gives it, and a body that
/// carries it is refused.
fn without_name<T: ToSchema>(description: &str) -> RefOr<Schema> {
    let mut o = object_of::<T>();
    o.properties.remove("name");
    o.required.retain(|r| r != "name");
    o.description = Some(description.to_owned());
    o.into()
}

/// `PUT /v1/schedules/{name}`: core's `ScheduleDef` without `name`.
pub(super) struct ScheduleBody;

impl PartialSchema for ScheduleBody {
    fn schema() -> RefOr<Schema> {
        without_name::<ScheduleDef>("Core's `ScheduleDef` without `name` (the path's).")
    }
}

impl ToSchema for ScheduleBody {
    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        ScheduleDef::schemas(out);
    }
}

/// `PUT /v1/queues/{name}`: core's `QueueConfig` without `name`.
pub(super) struct QueueBody;

impl PartialSchema for QueueBody {
    fn schema() -> RefOr<Schema> {
        without_name::<QueueConfig>("Core's `QueueConfig` without `name` (the path's).")
    }
}

impl ToSchema for QueueBody {
    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        QueueConfig::schemas(out);
    }
}
