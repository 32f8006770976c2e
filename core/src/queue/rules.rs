//! The queue rules a backend that keeps jobs outside the engine applies
//! as they are written here, never re-derived: claim order and the order
//! in which bounds evict, when an idempotency key expires and whether it
//! is still active, how long retention keeps a finished job, the config of
//! an implicitly created queue and the names of job states (the cut of
//! error texts is `truncate_text`, beside the limits). The engine's own queues use these same items, so a rule
//! changed here changes for every backend at once. (What a failed attempt
//! leads to is [`after_failure`](crate::after_failure), in `backoff.rs`.)
//!
//! Orders are data ([`CLAIM_ORDER`], [`EVICTION_ORDER`],
//! [`LEASE_EXPIRY_ORDER`]) so that a SQL backend can build its `ORDER BY`
//! from them, and a test of the engine pins each to the key its indexes
//! sort by.

use crate::time::Timestamp;
use crate::wire::config::Limits;
use crate::wire::ids::JobId;
use crate::wire::job::JobState;
use crate::wire::queue_config::QueueConfig;
use std::cmp::Reverse;

/// A property of a job that an order sorts by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobField {
    /// `priority` (higher is claimed first).
    Priority,
    /// `run_at`: when the job became (or becomes) available.
    RunAt,
    /// When the job reached a terminal state.
    FinishedAt,
    /// The deadline of the job's lease, while claimed.
    LeaseDeadline,
    /// The job id (ids grow in enqueue order, so this breaks ties by age).
    Id,
}

/// Which way a [`JobField`] sorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Smallest first.
    Ascending,
    /// Largest first.
    Descending,
}

/// The order in which `Claim` hands out available jobs: higher priority
/// first, then earlier available time, then lower id (enqueue order).
/// [`claim_key`] is the same order as a sort key.
pub const CLAIM_ORDER: [(JobField, Direction); 3] = [
    (JobField::Priority, Direction::Descending),
    (JobField::RunAt, Direction::Ascending),
    (JobField::Id, Direction::Ascending),
];

/// The order in which a bound on finished jobs drops them, first dropped
/// first: the oldest finished, then the lowest id. Both the retention
/// count (`retention.completedMax`) and the dead-letter bound
/// (`limits.deadLettersPerQueue`) keep the newest and drop from the front.
pub const EVICTION_ORDER: [(JobField, Direction); 2] = [
    (JobField::FinishedAt, Direction::Ascending),
    (JobField::Id, Direction::Ascending),
];

/// The order in which expired leases are reconciled (each a failed
/// attempt, `lease_expired`): the earliest deadline first, then the lowest
/// id, so a budgeted pass always makes progress on the oldest.
pub const LEASE_EXPIRY_ORDER: [(JobField, Direction); 2] = [
    (JobField::LeaseDeadline, Direction::Ascending),
    (JobField::Id, Direction::Ascending),
];

/// Claim order ([`CLAIM_ORDER`]) as a sort key: sorting available jobs by
/// it, ascending, gives the order `Claim` takes them in.
#[must_use]
pub fn claim_key(priority: i32, run_at: Timestamp, id: JobId) -> (Reverse<i32>, Timestamp, JobId) {
    (Reverse(priority), run_at, id)
}

/// Whether a remembered idempotency key still answers an enqueue at
/// `now` with its job: while the job is live (`expires_at` is `None`) and
/// until `expires_at` (exclusive) after it finished. An inactive key may
/// be taken by a new job, and forgotten.
#[must_use]
pub fn key_is_active(expires_at: Option<Timestamp>, now: Timestamp) -> bool {
    expires_at.is_none_or(|t| now < t)
}

/// When the key of a job that finished at `finished_at` stops being
/// active: the queue's `dedupWindowMs` later.
#[must_use]
pub fn key_expires_at(finished_at: Timestamp, config: &QueueConfig) -> Timestamp {
    finished_at.saturating_add_ms(config.dedup_window_ms)
}

/// When retention forgets a job that finished at `finished_at` in a
/// state retention applies to ([`JobState::is_pruned`]): the queue's
/// `retention.completedMs` later (the count bound,
/// `retention.completedMax`, may forget it sooner, in
/// [`EVICTION_ORDER`]).
#[must_use]
pub fn retained_until(finished_at: Timestamp, config: &QueueConfig) -> Timestamp {
    finished_at.saturating_add_ms(config.retention.completed_ms)
}

impl QueueConfig {
    /// The config of a queue created implicitly (by the first `Enqueue`
    /// or schedule fire that names it): every default, with the retention
    /// count clamped to `limits.completedPerQueue` so that it is a config
    /// `DeclareQueue` would accept.
    #[must_use]
    pub fn implicit(name: impl Into<String>, limits: &Limits) -> QueueConfig {
        let mut config = QueueConfig::new(name);
        let max = u32::try_from(limits.completed_per_queue).unwrap_or(u32::MAX);
        config.retention.completed_max = config.retention.completed_max.min(max);
        config
    }
}

impl JobState {
    /// Every state, in lifecycle order.
    pub const ALL: [JobState; 7] = [
        JobState::Scheduled,
        JobState::Available,
        JobState::Claimed,
        JobState::Completed,
        JobState::Dead,
        JobState::Dropped,
        JobState::Cancelled,
    ];

    /// The state named `name` ([`JobState::as_str`]), if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Whether retention forgets jobs in this state (completed, cancelled
    /// and dropped jobs); dead letters stay until `Redrive` or `PurgeDead`.
    #[must_use]
    pub fn is_pruned(self) -> bool {
        self.is_terminal() && self != JobState::Dead
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    /// A comparator built from an order's description.
    fn by(order: &[(JobField, Direction)], a: &Row, b: &Row) -> Ordering {
        for &(field, dir) in order {
            let o = match field {
                JobField::Priority => a.priority.cmp(&b.priority),
                JobField::RunAt => a.run_at.cmp(&b.run_at),
                JobField::FinishedAt => a.finished_at.cmp(&b.finished_at),
                JobField::LeaseDeadline => a.deadline.cmp(&b.deadline),
                JobField::Id => a.id.cmp(&b.id),
            };
            let o = if dir == Direction::Descending {
                o.reverse()
            } else {
                o
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    #[derive(Clone, Debug, PartialEq)]
    struct Row {
        priority: i32,
        run_at: Timestamp,
        finished_at: Timestamp,
        deadline: Timestamp,
        id: JobId,
    }

    fn rows() -> Vec<Row> {
        let mut rows = Vec::new();
        let mut id = 0;
        for priority in [-3, 0, 0, 7] {
            for t in [5, 1, 5, 3] {
                id += 1;
                let at = |ms: i64| Timestamp::from_millis(ms).unwrap();
                rows.push(Row {
                    priority,
                    run_at: at(t),
                    finished_at: at(10 - t),
                    deadline: at(t * 2 % 7),
                    id: JobId(id * 37 % 17),
                });
            }
        }
        rows
    }

    #[test]
    fn claim_key_sorts_as_claim_order_says() {
        let mut by_key = rows();
        by_key.sort_by_key(|r| claim_key(r.priority, r.run_at, r.id));
        let mut by_order = rows();
        by_order.sort_by(|a, b| by(&CLAIM_ORDER, a, b));
        assert_eq!(by_key, by_order);
    }

    #[test]
    fn the_engine_indexes_sort_as_the_orders_say() {
        // The engine's indexes of finished jobs and leases are sets of
        // `(time, id)`: ascending, as EVICTION_ORDER and LEASE_EXPIRY_ORDER.
        let mut evict = rows();
        evict.sort_by_key(|r| (r.finished_at, r.id));
        let mut described = rows();
        described.sort_by(|a, b| by(&EVICTION_ORDER, a, b));
        assert_eq!(evict, described);
        let mut expiry = rows();
        expiry.sort_by_key(|r| (r.deadline, r.id));
        let mut described = rows();
        described.sort_by(|a, b| by(&LEASE_EXPIRY_ORDER, a, b));
        assert_eq!(expiry, described);
    }

    #[test]
    fn keys_are_active_until_their_expiry() {
        let t = Timestamp::from_millis(1_000).unwrap();
        assert!(key_is_active(None, t));
        assert!(key_is_active(Some(t), Timestamp::from_millis(999).unwrap()));
        assert!(!key_is_active(Some(t), t));
        let mut q = QueueConfig::new("q");
        q.dedup_window_ms = 250;
        assert_eq!(key_expires_at(t, &q).as_millis(), 1_250);
        q.retention.completed_ms = 40;
        assert_eq!(retained_until(t, &q).as_millis(), 1_040);
    }

    #[test]
    fn state_names_round_trip_and_match_serde() {
        for s in JobState::ALL {
            assert_eq!(JobState::from_name(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::from(s.as_str())
            );
        }
        assert_eq!(JobState::from_name("pending"), None);
        let pruned: Vec<JobState> = JobState::ALL
            .into_iter()
            .filter(|s| s.is_pruned())
            .collect();
        assert_eq!(
            pruned,
            [JobState::Completed, JobState::Dropped, JobState::Cancelled]
        );
    }

    #[test]
    fn implicit_queues_fit_the_limits() {
        let mut limits = Limits::default();
        assert_eq!(QueueConfig::implicit("q", &limits), QueueConfig::new("q"));
        limits.completed_per_queue = 10;
        assert_eq!(
            QueueConfig::implicit("q", &limits).retention.completed_max,
            10
        );
    }
}
