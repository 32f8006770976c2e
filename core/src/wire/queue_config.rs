//! Queue configuration and statistics.

use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// A queue's configuration; `DeclareQueue` creates or updates it (changes
/// apply to new attempts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueConfig {
    /// Queue name (naming rule).
    pub name: String,
    /// Local (jobs held by the engine) or external (fires become `Enqueue` commands).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub mode: QueueMode,
    /// Claim lease; for external queues, how long a fire may stay unsettled.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default = "defaults::lease_ms")]
    pub lease_ms: i64,
    /// Attempts before dead-lettering (or dropping).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default = "defaults::max_attempts")]
    pub max_attempts: u32,
    /// Retry backoff.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub backoff: Backoff,
    /// `true`: exhausted jobs become `dead` (kept); `false`: `dropped`.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default = "defaults::yes")]
    pub dead_letter: bool,
    /// How long finished jobs are kept.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default)]
    pub retention: Retention,
    /// How long an idempotency key is remembered.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default = "defaults::dedup_window_ms")]
    pub dedup_window_ms: i64,
    /// How many times a job's attempt may be interrupted by its host (a
    /// crash, or a stop past its grace period, released by `Recover`) and
    /// still run again. Interruptions are not failures: they use no
    /// attempt and no backoff. One more makes the job dead (or dropped)
    /// with reason `interrupted`, so a job that kills its host cannot
    /// loop forever. Default 3 (like BullMQ's `maxStalledCount`, which
    /// defaults to 1, but a restart after a power cut should not kill a
    /// once-a-day job).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(default = "defaults::max_interruptions")]
    pub max_interruptions: u32,
}

mod defaults {
    pub(super) fn lease_ms() -> i64 {
        60_000
    }
    pub(super) fn max_attempts() -> u32 {
        5
    }
    pub(super) fn yes() -> bool {
        true
    }
    pub(super) fn dedup_window_ms() -> i64 {
        24 * 3_600_000
    }
    pub(super) fn max_interruptions() -> u32 {
        3
    }
}

impl QueueConfig {
    /// A queue with every default (what implicit declaration uses).
    pub fn new(name: impl Into<String>) -> QueueConfig {
        QueueConfig {
            name: name.into(),
            mode: QueueMode::Local,
            lease_ms: defaults::lease_ms(),
            max_attempts: defaults::max_attempts(),
            backoff: Backoff::default(),
            dead_letter: true,
            retention: Retention::default(),
            dedup_window_ms: defaults::dedup_window_ms(),
            max_interruptions: defaults::max_interruptions(),
        }
    }
}

/// Where a queue's jobs live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum QueueMode {
    /// Jobs are held, claimed and completed through the engine.
    #[default]
    Local,
    /// Fires are handed to an external transport (`Command::Enqueue`).
    External,
}

/// Exponential backoff with equal jitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Backoff {
    /// First retry delay scale.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub base_ms: i64,
    /// Largest delay.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub cap_ms: i64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base_ms: 5_000,
            cap_ms: 3_600_000,
        }
    }
}

/// How many finished (completed/cancelled/dropped) jobs are kept, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Retention {
    /// Most finished jobs kept per queue.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub completed_max: u32,
    /// Longest time a finished job is kept.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub completed_ms: i64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            completed_max: 1_000,
            completed_ms: 24 * 3_600_000,
        }
    }
}

/// Counts and totals for one queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueStats {
    /// Queue name.
    pub queue: String,
    /// Jobs waiting for `run_at`.
    pub scheduled: u64,
    /// Jobs ready to claim.
    pub available: u64,
    /// Jobs under lease.
    pub claimed: u64,
    /// Completed jobs still retained.
    pub completed: u64,
    /// Dead letters.
    pub dead: u64,
    /// Cancelled jobs still retained.
    pub cancelled: u64,
    /// Age of the oldest available job at the engine clock.
    pub oldest_available_age_ms: Option<i64>,
    /// Totals since creation.
    pub totals: QueueTotals,
    /// The engine clock these stats are as of.
    pub as_of: Option<Timestamp>,
}

/// Monotonic counters per queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueTotals {
    /// Jobs accepted (not counting de-duplicated enqueues).
    pub enqueued: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Attempts that failed and were retried.
    pub retried: u64,
    /// Jobs dead-lettered.
    pub dead: u64,
    /// Jobs dropped.
    pub dropped: u64,
    /// Leases that expired.
    pub expired: u64,
    /// Jobs cancelled.
    pub cancelled: u64,
    /// Attempts interrupted by the host (released by `Recover`; not
    /// failures). Absent in snapshots of format 2: 0.
    #[serde(default)]
    pub interrupted: u64,
}
