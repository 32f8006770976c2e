//! A schedule's run history as a host reads it ([`RunRecord`] in
//! `ScheduleInfo::runs`), and how a host tells the engine the end of a job
//! it runs itself ([`JobEnd`], with `Input::FireSettled`).
//!
//! The history is built by the engine from the inputs it already sees —
//! fires, skips, claims, job outcomes, settlements — with the instants it
//! is given, so a journal replays to the same history and a snapshot
//! carries it byte for byte.

use crate::time::Timestamp;
use crate::wire::command::{FireReason, SkipReason};
use crate::wire::ids::{FireId, JobId};
use crate::wire::job::JobState;
use serde::{Deserialize, Serialize};

/// How a run ended (or that it has not yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Fired; its job has not ended (or the external fire is not settled).
    Pending,
    /// The job completed (an external fire settled `succeeded`).
    Completed,
    /// The job ran out of attempts and is a dead letter.
    Dead,
    /// The job ran out of attempts without dead letters, or was evicted.
    Dropped,
    /// The job was cancelled (`CancelJob` or `cancel_previous`).
    Cancelled,
    /// An external fire settled `failed` (no job detail given).
    Failed,
    /// An external fire was not settled within its queue's `lease_ms`.
    Unsettled,
    /// The boundaries were skipped (see `skipReason`, `count`).
    Skipped,
}

impl RunOutcome {
    /// The outcome of a job that ended in `state` (terminal).
    pub fn of_job(state: JobState) -> RunOutcome {
        match state {
            JobState::Completed => RunOutcome::Completed,
            JobState::Dead => RunOutcome::Dead,
            JobState::Dropped => RunOutcome::Dropped,
            JobState::Cancelled => RunOutcome::Cancelled,
            JobState::Scheduled | JobState::Available | JobState::Claimed => RunOutcome::Pending,
        }
    }
}

/// One run of a schedule: a fire and what became of its job, or a run of
/// consecutive boundaries skipped for one reason (merged while nothing
/// else happened in between). Absent fields are left out of the JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunRecord {
    /// The fire (its id is also its job's key); absent for skips.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fire: Option<FireId>,
    /// The boundary (for skips: the first skipped one).
    pub nominal: Timestamp,
    /// Skips only: the last skipped boundary.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_nominal: Option<Timestamp>,
    /// Fires only: why it fired.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<FireReason>,
    /// Skips only: why the boundaries were skipped.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<SkipReason>,
    /// The engine clock when it fired (for skips: when the last one was
    /// decided).
    pub at: Timestamp,
    /// Boundaries it stands for (1 for a fire).
    pub count: u64,
    /// How it ended; `pending` while the job runs.
    pub outcome: RunOutcome,
    /// The job it made in a job queue.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobId>,
    /// Attempts started (the job's `attempt`); 0 until claimed.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    /// When the last attempt was claimed.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When the job ended (or the external fire settled).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
    /// `finishedAt − startedAt`: the last attempt's run time.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// The last error text (truncated to `limits.textBytes`).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How a job that a host runs outside the engine (Postgres mode's job
/// tables) ended, sent with `Input::FireSettled` so that the run history
/// holds the same detail as for the engine's own queues.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobEnd {
    /// The job.
    pub id: JobId,
    /// Its terminal state.
    pub state: JobState,
    /// Attempts started.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub attempts: u32,
    /// When its last attempt was claimed.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it ended.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
    /// Its last error text.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
