//! Jobs as seen from outside the engine.

use crate::time::Timestamp;
use crate::wire::ids::{FireId, JobId, LeaseToken};
use crate::wire::payload::{Headers, Payload};
use serde::{Deserialize, Serialize};

/// Where a job is in its life. Exactly one at any time; the last four are terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for its `run_at` (delayed or backing off).
    Scheduled,
    /// Ready to claim.
    Available,
    /// Held by a worker under lease.
    Claimed,
    /// Done. Terminal.
    Completed,
    /// Out of attempts, kept for `Redrive`. Terminal (until redriven).
    Dead,
    /// Out of attempts with `dead_letter = false`, or evicted. Terminal.
    Dropped,
    /// Cancelled by `CancelJob` or `cancel_previous`. Terminal.
    Cancelled,
}

impl JobState {
    /// Whether the job will never run again on its own.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Completed | JobState::Dead | JobState::Dropped | JobState::Cancelled
        )
    }

    /// The wire name, e.g. `"claimed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Scheduled => "scheduled",
            JobState::Available => "available",
            JobState::Claimed => "claimed",
            JobState::Completed => "completed",
            JobState::Dead => "dead",
            JobState::Dropped => "dropped",
            JobState::Cancelled => "cancelled",
        }
    }
}

/// A read-only view of a job (getter result).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    /// Id.
    pub id: JobId,
    /// Queue.
    pub queue: String,
    /// State.
    pub state: JobState,
    /// Payload.
    pub payload: Payload,
    /// Headers.
    pub headers: Headers,
    /// Priority.
    pub priority: i32,
    /// Idempotency key.
    pub key: Option<String>,
    /// The fire that created it.
    pub fire: Option<FireId>,
    /// Attempts started so far.
    pub attempt: u32,
    /// Attempts allowed.
    pub max_attempts: u32,
    /// When it becomes (or became) available.
    pub run_at: Timestamp,
    /// Lease deadline while claimed.
    pub lease_deadline: Option<Timestamp>,
    /// Worker holding it while claimed.
    pub worker: Option<String>,
    /// Last failure text.
    pub last_error: Option<String>,
    /// When it reached a terminal state.
    pub finished_at: Option<Timestamp>,
}

/// One job handed to a worker by `Claim`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Claimed {
    /// Job id.
    pub job: JobId,
    /// Present this with `Heartbeat`/`Complete`/`Fail`.
    pub token: LeaseToken,
    /// Lease deadline.
    pub deadline: Timestamp,
    /// This attempt's number (1-based).
    pub attempt: u32,
    /// Payload.
    pub payload: Payload,
    /// Headers.
    pub headers: Headers,
    /// The fire that created the job, if any.
    pub fire: Option<FireId>,
}
