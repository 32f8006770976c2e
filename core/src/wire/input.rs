//! Inputs: every mutation of the engine. `(now, Input)` pairs are the journal.

use crate::time::Timestamp;
use crate::wire::ids::{Epoch, FireId, JobId, LeaseToken};
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::QueueConfig;
use crate::wire::run::JobEnd;
use crate::wire::schedule_def::{Origin, Overlap, ScheduleDef};
use serde::{Deserialize, Serialize};

/// One mutation. Serialized externally tagged with camelCase names, e.g.
/// `"advance"` or `{"enqueue":{"queue":"emails","payload":{}}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Input {
    /// Fire what is due, expire leases, promote delayed jobs.
    Advance,
    /// Create or update a queue.
    DeclareQueue(QueueConfig),
    /// Create or update a schedule by name.
    UpsertSchedule(ScheduleDef),
    /// Delete a schedule (its in-flight jobs are left alone).
    #[serde(rename_all = "camelCase")]
    RemoveSchedule {
        /// Schedule name.
        name: String,
        /// Who asks: `api` may not remove a declared schedule
        /// (`schedule_declared`); the declaring host (the default) may
        /// remove any.
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        #[serde(default, skip_serializing_if = "Origin::is_declared")]
        origin: Origin,
    },
    /// Stop firing; boundaries are skipped with reason `paused`.
    #[serde(rename_all = "camelCase")]
    PauseSchedule {
        /// Schedule name.
        name: String,
        /// Why (shown in the schedule's info).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Resume firing from the next boundary after now.
    #[serde(rename_all = "camelCase")]
    ResumeSchedule {
        /// Schedule name.
        name: String,
    },
    /// Fire now, outside the grid.
    #[serde(rename_all = "camelCase")]
    TriggerSchedule {
        /// Schedule name.
        name: String,
        /// Overlap policy for this fire (default: the schedule's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overlap: Option<Overlap>,
    },
    /// Fire the boundaries in `[from, to)` now (bounded by `Limits::backfill_fires`).
    #[serde(rename_all = "camelCase")]
    Backfill {
        /// Schedule name.
        name: String,
        /// First boundary considered (inclusive).
        from: Timestamp,
        /// End (exclusive).
        to: Timestamp,
        /// Overlap policy for these fires (default: `allow`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overlap: Option<Overlap>,
    },
    /// Add a job to a queue.
    Enqueue(EnqueueRequest),
    /// Lease up to `max` available jobs.
    #[serde(rename_all = "camelCase")]
    Claim {
        /// Queue name.
        queue: String,
        /// Worker name (naming rule), recorded on the job.
        worker: String,
        /// Most jobs to take (1..=`Limits::claim_batch`).
        max: u32,
        /// Lease length (default: the queue's `lease_ms`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lease_ms: Option<i64>,
    },
    /// Extend a lease.
    #[serde(rename_all = "camelCase")]
    Heartbeat {
        /// Job.
        job: JobId,
        /// Current lease token.
        token: LeaseToken,
        /// New lease length from now (default: the queue's `lease_ms`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lease_ms: Option<i64>,
    },
    /// Finish a claimed job successfully.
    #[serde(rename_all = "camelCase")]
    Complete {
        /// Job.
        job: JobId,
        /// Current lease token.
        token: LeaseToken,
    },
    /// Report a failed attempt; retried with backoff or dead-lettered.
    #[serde(rename_all = "camelCase")]
    Fail {
        /// Job.
        job: JobId,
        /// Current lease token.
        token: LeaseToken,
        /// Failure text (truncated to `Limits::text_bytes`).
        error: String,
        /// Retry at this time instead of the backoff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_at: Option<Timestamp>,
    },
    /// Cancel a job that is not terminal (a claimed one also gets `Cancel`).
    #[serde(rename_all = "camelCase")]
    CancelJob {
        /// Job.
        job: JobId,
    },
    /// Move dead letters back to available (one job, or all in the queue).
    #[serde(rename_all = "camelCase")]
    Redrive {
        /// Queue name.
        queue: String,
        /// One job, or all when `None`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<JobId>,
    },
    /// Delete dead letters (finished before `before`, or all).
    #[serde(rename_all = "camelCase")]
    PurgeDead {
        /// Queue name.
        queue: String,
        /// Only those that died before this instant.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<Timestamp>,
    },
    /// The external transport finished a fire (ends "in flight" for overlap).
    #[serde(rename_all = "camelCase")]
    FireSettled {
        /// Fire.
        fire: FireId,
        /// How it ended.
        outcome: FireOutcome,
        /// How its job ended, when the host runs the job itself (Postgres
        /// mode's job tables): recorded in the schedule's run history.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<JobEnd>,
    },
    /// Grant (or, with `None`, revoke) leadership.
    Leadership(Option<LeadershipGrant>),
    /// Take a named lease.
    #[serde(rename_all = "camelCase")]
    AcquireLease {
        /// Lease name (naming rule).
        name: String,
        /// Who asks.
        owner: String,
        /// Lease length.
        ttl_ms: i64,
    },
    /// Extend a held named lease.
    #[serde(rename_all = "camelCase")]
    RenewLease {
        /// Lease name.
        name: String,
        /// Holder's fencing token.
        token: LeaseToken,
        /// New length from now.
        ttl_ms: i64,
    },
    /// Give up a held named lease.
    #[serde(rename_all = "camelCase")]
    ReleaseLease {
        /// Lease name.
        name: String,
        /// Holder's fencing token.
        token: LeaseToken,
    },
    /// A new incarnation of the host starts on a store it owns alone (the
    /// daemon's data directory, the npm package's `FileStore`): every job
    /// still claimed was claimed by a process that is gone, so each claim
    /// is released as *interrupted* (not a failed attempt; see
    /// `QueueConfig::max_interruptions`), and a stop begun by the previous
    /// incarnation ([`Input::Stop`]) ends. Applied before the advance to
    /// `now`, so a lease that ran out while the host was down is an
    /// interruption too, not a `lease_expired` failure. A store shared by
    /// several processes (Postgres) must not send it: their claims may be
    /// alive, and lease expiry decides.
    Recover,
    /// A graceful stop begins: from now on nothing new fires (no boundary
    /// fires and none is skipped: cursors stay put, as in a leadership
    /// gap; buffered fires wait), `TriggerSchedule` and `Backfill` are
    /// `stopping`, and `Claim` returns no jobs. Running jobs may still
    /// heartbeat, complete and fail. The next [`Input::Recover`] ends it.
    Stop,
    /// Records an outbox message: an enqueue to a derived
    /// `__chime_outbox:<name>` queue (built by `Outbox::enqueue`). Only this
    /// input may add jobs there: a plain [`Input::Enqueue`] to a reserved
    /// queue is `reserved_name`, so user code cannot slip jobs into an
    /// outbox by its name; workers claim from it like from any queue.
    EnqueueOutbox(EnqueueRequest),
}

/// Arguments of [`Input::Enqueue`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnqueueRequest {
    /// Queue (declared implicitly with defaults if new).
    pub queue: String,
    /// Opaque JSON.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub payload: Payload,
    /// Idempotency key: a live or recently finished job with it is returned instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Not before this instant (exclusive with `delay_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<Timestamp>,
    /// Not before now + this (exclusive with `run_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<i64>,
    /// Higher first.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub priority: i32,
    /// Override of the queue's `max_attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// String headers.
    #[serde(default, skip_serializing_if = "Headers::is_empty")]
    pub headers: Headers,
}

impl Input {
    /// `RemoveSchedule` by the declaring host (config or code), which may
    /// remove any schedule.
    pub fn remove_schedule(name: impl Into<String>) -> Input {
        Input::RemoveSchedule {
            name: name.into(),
            origin: Origin::Declared,
        }
    }
}

impl EnqueueRequest {
    /// A request with only queue and payload set.
    pub fn new(queue: impl Into<String>, payload: Payload) -> EnqueueRequest {
        EnqueueRequest {
            queue: queue.into(),
            payload,
            key: None,
            run_at: None,
            delay_ms: None,
            priority: 0,
            max_attempts: None,
            headers: Headers::new(),
        }
    }
}

/// How an externally delivered fire ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FireOutcome {
    /// Delivered and processed.
    Succeeded,
    /// Processing failed for good.
    Failed,
}

/// A leadership grant from the host's distributed lease backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeadershipGrant {
    /// Strictly increases on every takeover.
    pub epoch: Epoch,
    /// Firing stops at this instant unless renewed.
    pub valid_until: Timestamp,
}

/// One journal line: `{"now": <ms>, "input": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct JournalEntry {
    /// The host's clock when the input was handled.
    pub now: Timestamp,
    /// The input.
    pub input: Input,
}
