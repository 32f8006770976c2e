//! What a user declares about a schedule, and what they can read back.

use crate::spec::DstPolicy;
use crate::time::Timestamp;
use crate::wire::ids::{Epoch, FireId};
use crate::wire::payload::{Headers, Payload};
use crate::wire::run::RunRecord;
use serde::{Deserialize, Serialize};

/// A schedule definition, upserted by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleDef {
    /// Unique name (naming rule).
    pub name: String,
    /// `@every …`, cron, or `@at …` (see `docs/spec.md`).
    pub spec: String,
    /// IANA zone for cron and civil `@at`; `None` = UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// DST policy (default `auto`).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub dst: DstPolicy,
    /// Where each fire goes.
    pub target: Target,
    /// Deterministic delay in `[0, jitter_ms]` added to each boundary.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub jitter_ms: i64,
    /// No boundary before this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<Timestamp>,
    /// No boundary at or after this instant; then the schedule is completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<Timestamp>,
    /// Complete after this many fires (scheduled and catch-up fires count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fires: Option<u64>,
    /// Created paused (boundaries are skipped with reason `paused`).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub paused: bool,
    /// What to do when the previous fire is still in flight.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub overlap: Overlap,
    /// How missed boundaries are handled.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub catchup: Catchup,
    /// Who owns the definition: `declared` (the config file or the
    /// host's code, the default) or `api` (created at runtime through the
    /// HTTP API). A host's start prunes only declared schedules it no
    /// longer declares, and the API may not overwrite or remove a
    /// declared one, so neither side silently undoes the other.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default, skip_serializing_if = "Origin::is_declared")]
    pub origin: Origin,
}

/// Who owns a schedule's definition (see [`ScheduleDef::origin`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Declared by the config file or the host's code: the declaration is
    /// the source of truth, and a start removes it once no longer declared.
    #[default]
    Declared,
    /// Created through the API at runtime: kept across restarts, reloads
    /// and leader changes until removed through the API.
    Api,
}

impl Origin {
    /// Whether this is the default, [`Origin::Declared`].
    pub fn is_declared(&self) -> bool {
        *self == Origin::Declared
    }
}

/// The queue and job a fire creates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Target {
    /// Queue name (declared implicitly with defaults if new).
    pub queue: String,
    /// Job payload (opaque JSON).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub payload: Payload,
    /// Job priority (higher first).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub priority: i32,
    /// Override of the queue's `max_attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Job headers.
    #[serde(default, skip_serializing_if = "Headers::is_empty")]
    pub headers: Headers,
}

/// Overlap policy: what a new fire does while the previous one is in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// Skip the new fire (event `overlap`). The default.
    #[default]
    Skip,
    /// Fire anyway.
    Allow,
    /// Keep at most one waiting fire; it fires when the running one ends.
    BufferOne,
    /// Fire, and ask the holder of the previous job to stop (`Cancel`).
    CancelPrevious,
}

/// Catch-up after downtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Catchup {
    /// Boundaries older than this at advance time are skipped (`too_old`).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub window_ms: i64,
    /// At most this many (the most recent) missed boundaries fire per advance.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub max: u32,
}

impl Default for Catchup {
    fn default() -> Self {
        Catchup {
            window_ms: 365 * 24 * 3_600_000,
            max: 64,
        }
    }
}

/// Lifecycle of a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScheduleStatus {
    /// Firing on its boundaries.
    Active,
    /// Boundaries are skipped with reason `paused`.
    Paused,
    /// Past `end_at`, after `max_fires`, or a one-shot that fired: kept for inspection.
    Completed,
}

/// A read-only view of a schedule (getter result).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleInfo {
    /// The definition as last upserted.
    pub def: ScheduleDef,
    /// Bumped on every changing upsert.
    pub version: u64,
    /// Active, paused or completed.
    pub status: ScheduleStatus,
    /// Note given with `PauseSchedule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_note: Option<String>,
    /// The cursor: next unprocessed boundary (`None` when completed).
    pub next_nominal: Option<Timestamp>,
    /// When that boundary is due (nominal + jitter).
    pub next_due_at: Option<Timestamp>,
    /// Fires so far (all reasons).
    pub fires: u64,
    /// Boundaries skipped so far (all reasons).
    pub skipped: u64,
    /// Fires currently in flight (job not terminal / external not settled).
    pub in_flight: Vec<FireId>,
    /// Whether a fire is buffered (`buffer_one`).
    pub buffered: bool,
    /// Epoch of the last fire.
    pub last_epoch: Option<Epoch>,
    /// The last runs (at most `limits.runsPerSchedule`), newest first:
    /// each fire with its job's outcome, attempts, duration and last
    /// error, and runs of skipped boundaries with their reason and count.
    #[serde(default)]
    pub runs: Vec<RunRecord>,
}
