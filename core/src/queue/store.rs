//! What the queues hold: the canonical job records (serialized in the
//! snapshot) and the derived indexes over them (never serialized, rebuilt on
//! restore), plus the two functions that keep one in step with the other.
//!
//! Every state change of a job goes through [`unindex`] → mutate → [`index`],
//! so the indexes can only disagree with the records through a bug, which
//! `Queues::check_invariants` detects by rebuilding them from scratch.

use crate::time::Timestamp;
use crate::wire::ids::{FireId, JobId, LeaseToken};
use crate::wire::job::{JobInfo, JobState};
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::{QueueConfig, QueueTotals};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// One job as the engine holds it. Canonical: part of the snapshot.
///
/// Fields that are usually empty are skipped when serializing so snapshots
/// of large queues stay small; deserialization restores the defaults, so the
/// round trip is byte-identical.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Job {
    /// Queue the job belongs to (always a declared local queue).
    pub queue: String,
    /// Current state.
    pub state: JobState,
    /// Opaque JSON, kept verbatim.
    pub payload: Payload,
    /// String headers.
    #[serde(default, skip_serializing_if = "Headers::is_empty")]
    pub headers: Headers,
    /// Higher is claimed first.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub priority: i32,
    /// Idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The schedule fire that created the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fire: Option<FireId>,
    /// Attempts started (incremented on claim; reset by redrive).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub attempt: u32,
    /// Attempts interrupted by the host (`Recover`), which do not count
    /// as attempts; reset by redrive.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub interruptions: u32,
    /// Per-job override of the queue's `max_attempts`. Kept as an override
    /// (not resolved at enqueue) so `DeclareQueue` applies to later attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// When the job becomes (or became) available.
    pub run_at: Timestamp,
    /// The current lease; `Some` exactly while claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<JobLease>,
    /// Last failure text (already truncated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the job reached a terminal state; `Some` exactly while terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
    /// When retention forgets the job; `Some` exactly while completed,
    /// cancelled or dropped (dead letters are kept until redrive/purge).
    /// Fixed when the job finishes, so a later `DeclareQueue` changes the
    /// retention of jobs that finish afterwards only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retain_until: Option<Timestamp>,
}

/// A claimed job's lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JobLease {
    /// Fencing token; only this one may heartbeat/complete/fail.
    pub token: LeaseToken,
    /// The lease ends at this instant (expired when `deadline <= now`).
    pub deadline: Timestamp,
    /// The worker that claimed it.
    pub worker: String,
    /// Released by `Recover`: its holder's process is gone. The deadline
    /// was cut to the recovery (the token is void from then on), and the
    /// budgeted lease pass of the advance ends the attempt as an
    /// interruption instead of a `lease_expired` failure.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl Job {
    /// The attempts allowed under the queue's current config.
    pub(super) fn max_attempts(&self, config: &QueueConfig) -> u32 {
        self.max_attempts.unwrap_or(config.max_attempts)
    }

    /// The read-only view handed out by getters.
    pub(super) fn info(&self, id: JobId, config: &QueueConfig) -> JobInfo {
        JobInfo {
            id,
            queue: self.queue.clone(),
            state: self.state,
            payload: self.payload.clone(),
            headers: self.headers.clone(),
            priority: self.priority,
            key: self.key.clone(),
            fire: self.fire.clone(),
            attempt: self.attempt,
            max_attempts: self.max_attempts(config),
            run_at: self.run_at,
            lease_deadline: self.lease.as_ref().map(|l| l.deadline),
            worker: self.lease.as_ref().map(|l| l.worker.clone()),
            last_error: self.last_error.clone(),
            finished_at: self.finished_at,
        }
    }

    /// Checks that the optional fields agree with the state.
    pub(super) fn check_shape(&self) -> Result<(), &'static str> {
        let terminal = self.state.is_terminal();
        if self.lease.is_some() != (self.state == JobState::Claimed) {
            return Err("a job has a lease exactly while claimed");
        }
        if self.finished_at.is_some() != terminal {
            return Err("a job has finishedAt exactly while terminal");
        }
        let retained = terminal && self.state != JobState::Dead;
        if self.retain_until.is_some() != retained {
            return Err("a job has retainUntil exactly while completed/cancelled/dropped");
        }
        if self.state == JobState::Claimed && self.attempt == 0 {
            return Err("a claimed job has started an attempt");
        }
        if self.max_attempts == Some(0) {
            return Err("maxAttempts is at least 1");
        }
        Ok(())
    }
}

/// An idempotency key's memory. Canonical.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DedupEntry {
    /// The job enqueued with the key.
    pub job: JobId,
    /// `None` while the job is live (the key never expires then); the job's
    /// finish time plus the queue's `dedup_window_ms` once it is terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
}

impl DedupEntry {
    /// Whether an enqueue at `now` with this key returns the remembered job.
    pub(super) fn is_active(&self, now: Timestamp) -> bool {
        super::rules::key_is_active(self.expires_at, now)
    }
}

/// One queue: config, totals and remembered keys (canonical), plus its
/// derived index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct QueueState {
    /// Current config (applies to new attempts).
    pub config: QueueConfig,
    /// Monotonic counters.
    pub totals: QueueTotals,
    /// Idempotency keys of `Enqueue` inputs remembered for this queue.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dedup: BTreeMap<String, DedupEntry>,
    /// Keys of schedule fires (the fire id) remembered for this queue: a
    /// separate table, so a user key in the fire-id format never captures
    /// a fire and a fire never answers a user's enqueue.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fire_keys: BTreeMap<String, DedupEntry>,
    /// Derived; rebuilt on restore.
    #[serde(skip)]
    pub idx: QueueIndex,
}

impl QueueState {
    /// A fresh queue with this config.
    pub(super) fn new(config: QueueConfig) -> QueueState {
        QueueState {
            config,
            totals: QueueTotals::default(),
            dedup: BTreeMap::new(),
            fire_keys: BTreeMap::new(),
            idx: QueueIndex::default(),
        }
    }

    /// The key table of `space`.
    pub(super) fn keys(&self, space: KeySpace) -> &BTreeMap<String, DedupEntry> {
        match space {
            KeySpace::User => &self.dedup,
            KeySpace::Fire => &self.fire_keys,
        }
    }

    /// The key table of `space`, mutably.
    pub(super) fn keys_mut(&mut self, space: KeySpace) -> &mut BTreeMap<String, DedupEntry> {
        match space {
            KeySpace::User => &mut self.dedup,
            KeySpace::Fire => &mut self.fire_keys,
        }
    }
}

/// The namespace of an idempotency key: given with an `Enqueue` input, or
/// the fire id of a schedule fire. The two never match each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum KeySpace {
    /// Keys of `Enqueue` inputs.
    User,
    /// Fire ids of schedule fires.
    Fire,
}

impl KeySpace {
    /// The namespace of a job's key: a job made by a fire has a fire key.
    pub(super) fn of(fire: bool) -> KeySpace {
        if fire { KeySpace::Fire } else { KeySpace::User }
    }
}

/// Claim order: higher priority first, then earlier available time, then id.
pub(crate) type AvailableKey = (Reverse<i32>, Timestamp, JobId);

/// Per-queue derived index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueueIndex {
    /// Available jobs in claim order.
    pub available: BTreeSet<AvailableKey>,
    /// Available jobs by available time (oldest-available age for stats).
    pub available_by_time: BTreeSet<(Timestamp, JobId)>,
    /// Completed, cancelled and dropped jobs by `(finished_at, id)`: the
    /// retention count bound drops from the front.
    pub finished: BTreeSet<(Timestamp, JobId)>,
    /// Dead letters by `(finished_at, id)`: the dead-letter bound drops from the front.
    pub dead: BTreeSet<(Timestamp, JobId)>,
    /// Jobs waiting for `run_at`.
    pub scheduled: u64,
    /// Jobs under lease.
    pub claimed: u64,
    /// Retained completed jobs.
    pub completed: u64,
    /// Retained cancelled jobs.
    pub cancelled: u64,
    /// Retained dropped jobs.
    pub dropped: u64,
}

impl QueueIndex {
    /// Live jobs plus dead letters: what makes a queue "in use".
    pub(super) fn holds_work(&self) -> bool {
        !self.available.is_empty()
            || self.scheduled > 0
            || self.claimed > 0
            || !self.dead.is_empty()
    }
}

/// Engine-wide derived index (everything `advance` walks in time order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Index {
    /// Scheduled jobs by `(run_at, id)`.
    pub scheduled: BTreeSet<(Timestamp, JobId)>,
    /// Claimed jobs by `(deadline, id)`.
    pub claimed: BTreeSet<(Timestamp, JobId)>,
    /// Retained finished jobs by `(retain_until, id)`.
    pub retention: BTreeSet<(Timestamp, JobId)>,
    /// Expiring idempotency keys by `(expires_at, queue, space, key)`.
    pub dedup_expiry: BTreeSet<(Timestamp, String, KeySpace, String)>,
    /// Non-terminal jobs.
    pub live: usize,
    /// Remembered idempotency keys (all queues).
    pub dedup_keys: usize,
}

fn put<T: Ord>(set: &mut BTreeSet<T>, v: T) {
    assert!(set.insert(v), "job indexed twice");
}

fn take<T: Ord>(set: &mut BTreeSet<T>, v: &T) {
    assert!(set.remove(v), "job missing from its index");
}

fn bump(n: &mut u64, up: bool) {
    if up {
        *n += 1;
    } else {
        assert!(*n > 0, "index count underflow");
        *n -= 1;
    }
}

/// Adds (or, with `add = false`, removes) `job` to the indexes of its state.
fn apply(idx: &mut Index, q: &mut QueueIndex, id: JobId, job: &Job, add: bool) {
    fn set<T: Ord>(s: &mut BTreeSet<T>, v: T, add: bool) {
        if add { put(s, v) } else { take(s, &v) }
    }
    if !job.state.is_terminal() {
        if add {
            idx.live += 1;
        } else {
            assert!(idx.live > 0, "live count underflow");
            idx.live -= 1;
        }
    }
    let finished_at = || job.finished_at.expect("terminal job has finishedAt");
    let retained = |idx: &mut Index, q: &mut QueueIndex| {
        let until = job.retain_until.expect("retained job has retainUntil");
        set(&mut idx.retention, (until, id), add);
        set(&mut q.finished, (finished_at(), id), add);
    };
    match job.state {
        JobState::Scheduled => {
            set(&mut idx.scheduled, (job.run_at, id), add);
            bump(&mut q.scheduled, add);
        }
        JobState::Available => {
            set(
                &mut q.available,
                super::rules::claim_key(job.priority, job.run_at, id),
                add,
            );
            set(&mut q.available_by_time, (job.run_at, id), add);
        }
        JobState::Claimed => {
            let lease = job.lease.as_ref().expect("claimed job has a lease");
            set(&mut idx.claimed, (lease.deadline, id), add);
            bump(&mut q.claimed, add);
        }
        JobState::Completed => {
            retained(idx, q);
            bump(&mut q.completed, add);
        }
        JobState::Cancelled => {
            retained(idx, q);
            bump(&mut q.cancelled, add);
        }
        JobState::Dropped => {
            retained(idx, q);
            bump(&mut q.dropped, add);
        }
        JobState::Dead => set(&mut q.dead, (finished_at(), id), add),
    }
}

/// Adds `job` to the indexes of its current state.
pub(crate) fn index(idx: &mut Index, q: &mut QueueIndex, id: JobId, job: &Job) {
    apply(idx, q, id, job, true);
}

/// Removes `job` from the indexes of its current state (call before mutating it).
pub(crate) fn unindex(idx: &mut Index, q: &mut QueueIndex, id: JobId, job: &Job) {
    apply(idx, q, id, job, false);
}

/// Adds a remembered key to the global counters/expiry index.
pub(crate) fn index_key(idx: &mut Index, queue: &str, space: KeySpace, key: &str, e: &DedupEntry) {
    idx.dedup_keys += 1;
    if let Some(t) = e.expires_at {
        let entry = (t, queue.to_owned(), space, key.to_owned());
        put(&mut idx.dedup_expiry, entry);
    }
}

/// Removes a remembered key from the global counters/expiry index.
pub(crate) fn unindex_key(
    idx: &mut Index,
    queue: &str,
    space: KeySpace,
    key: &str,
    e: &DedupEntry,
) {
    assert!(idx.dedup_keys > 0, "dedup key count underflow");
    idx.dedup_keys -= 1;
    if let Some(t) = e.expires_at {
        let entry = (t, queue.to_owned(), space, key.to_owned());
        take(&mut idx.dedup_expiry, &entry);
    }
}
