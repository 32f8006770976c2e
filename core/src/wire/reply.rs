//! Replies: what `handle` returns for each input.

use crate::time::Timestamp;
use crate::wire::ids::{FireId, JobId, LeaseToken};
use crate::wire::job::{Claimed, JobState};
use crate::wire::schedule_def::ScheduleStatus;
use serde::{Deserialize, Serialize};

/// The answer to one input. Serialized externally tagged, camelCase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Reply {
    /// `Advance` done.
    Advanced,
    /// `DeclareQueue`.
    #[serde(rename_all = "camelCase")]
    QueueDeclared {
        /// `true` if it did not exist.
        created: bool,
        /// `false` if the config was identical.
        changed: bool,
    },
    /// `UpsertSchedule`.
    #[serde(rename_all = "camelCase")]
    ScheduleUpserted {
        /// Definition version (unchanged on a no-op).
        version: u64,
        /// Next boundary, if any.
        next_fire: Option<Timestamp>,
        /// Whether anything changed.
        changed: bool,
    },
    /// `RemoveSchedule`.
    #[serde(rename_all = "camelCase")]
    ScheduleRemoved {
        /// Whether it existed.
        existed: bool,
    },
    /// `PauseSchedule` / `ResumeSchedule`.
    #[serde(rename_all = "camelCase")]
    ScheduleStatus {
        /// The resulting status.
        status: ScheduleStatus,
    },
    /// `TriggerSchedule`: the manual fire, or `None` if the overlap policy
    /// skipped or buffered it (see the events).
    #[serde(rename_all = "camelCase")]
    Triggered {
        /// The fire id.
        fire: Option<FireId>,
        /// `true` if it was buffered (`buffer_one`).
        buffered: bool,
    },
    /// `Backfill`.
    #[serde(rename_all = "camelCase")]
    Backfilled {
        /// Fire ids, in time order.
        fires: Vec<FireId>,
        /// Boundaries skipped by the overlap policy.
        skipped: u64,
    },
    /// `Enqueue`.
    #[serde(rename_all = "camelCase")]
    Enqueued {
        /// The job (an existing one if de-duplicated).
        job: JobId,
        /// `true` if an existing job with the same key was returned.
        deduplicated: bool,
    },
    /// `Claim`.
    #[serde(rename_all = "camelCase")]
    Claimed {
        /// Leased jobs (possibly none).
        jobs: Vec<Claimed>,
    },
    /// `Heartbeat`.
    #[serde(rename_all = "camelCase")]
    LeaseExtended {
        /// New deadline.
        deadline: Timestamp,
    },
    /// `Complete`, `Fail`, `CancelJob`.
    #[serde(rename_all = "camelCase")]
    Job {
        /// Job.
        job: JobId,
        /// Its state now.
        state: JobState,
        /// For a retried job, when it runs again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_at: Option<Timestamp>,
    },
    /// `Redrive` / `PurgeDead`.
    #[serde(rename_all = "camelCase")]
    Count {
        /// Jobs affected.
        count: u64,
        /// `Redrive`: jobs redriven without their idempotency key because
        /// another live job holds it now (two live jobs never share a
        /// key). Omitted when zero, so the reply is unchanged otherwise.
        #[serde(default, skip_serializing_if = "is_zero")]
        keys_dropped: u64,
    },
    /// `FireSettled`.
    FireSettled,
    /// `Leadership`.
    #[serde(rename_all = "camelCase")]
    Leadership {
        /// Whether the engine may fire now.
        leader: bool,
    },
    /// `AcquireLease` / `RenewLease`.
    #[serde(rename_all = "camelCase")]
    Lease {
        /// Fencing token (strictly increasing per lease name on acquire).
        token: LeaseToken,
        /// Expiry.
        expires_at: Timestamp,
    },
    /// `ReleaseLease`.
    LeaseReleased,
    /// `Recover`: how many claims of the previous incarnation were
    /// released as interrupted (retried, or dead beyond `maxInterruptions`).
    #[serde(rename_all = "camelCase")]
    Recovered {
        /// Claims released.
        interrupted: u64,
    },
    /// `Stop`: nothing new fires from now on; `claimed` jobs are still
    /// running (those still claimed at the next start are interrupted).
    #[serde(rename_all = "camelCase")]
    Stopping {
        /// Jobs claimed at the moment the stop began.
        claimed: u64,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
