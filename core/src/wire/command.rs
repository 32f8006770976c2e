//! Commands: everything the engine asks of its host, drained with
//! [`Engine::poll_command`](crate::Engine::poll_command).

use crate::time::Timestamp;
use crate::wire::ids::{Epoch, FireId, JobId};
use crate::wire::payload::{Headers, Payload};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// One output. Serialized externally tagged, camelCase.
///
/// Serialized through `CommandWire` (crate-private), which adds the fields a command
/// does not store because they repeat another (`Enqueue.key` is the fire
/// id): a burst writes millions of commands, and their size is most of
/// its memory traffic. Deserializing ignores the repeated fields.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Command {
    /// A schedule fired.
    Fire(Fire),
    /// Deliver a fire to an external queue, de-duplicated by `key`.
    #[serde(rename_all = "camelCase")]
    Enqueue {
        /// The fire.
        fire: FireId,
        /// External queue.
        queue: Arc<str>,
        /// Payload.
        payload: Payload,
        /// Headers.
        headers: Headers,
        /// Leader epoch; stores reject a stale one.
        epoch: Epoch,
        /// The target's job priority (higher first); on the wire only
        /// when not 0.
        #[serde(default)]
        priority: i32,
        /// The target's override of the queue's `max_attempts`; on the
        /// wire only when set.
        #[serde(default)]
        max_attempts: Option<u32>,
    },
    /// A local queue has claimable work: wake idle workers.
    #[serde(rename_all = "camelCase")]
    Wake {
        /// Queue.
        queue: Arc<str>,
    },
    /// Ask the worker holding this job to stop.
    #[serde(rename_all = "camelCase")]
    Cancel {
        /// Job.
        job: JobId,
        /// Why.
        reason: CancelReason,
    },
    /// Something worth observing.
    Event(Event),
}

/// A fire of a schedule.
///
/// The schedule's name and the grid boundary are parts of the fire id
/// ([`Fire::schedule`], [`Fire::nominal`]); the wire form (see
/// `FireWire`) spells them out as `schedule` and `nominal` as well.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fire {
    /// Deterministic id (`<schedule>@<nominal_ms>` for scheduled fires).
    pub fire_id: FireId,
    /// Definition version that fired.
    pub version: u64,
    /// Nominal plus jitter.
    pub due_at: Timestamp,
    /// Engine clock at firing (≥ `due_at`).
    pub fired_at: Timestamp,
    /// Why it fired.
    pub reason: FireReason,
    /// Leader epoch (0 standalone).
    pub epoch: Epoch,
    /// Target queue.
    pub queue: Arc<str>,
    /// The job created in a local queue (`None` for external queues).
    pub job: Option<JobId>,
}

impl Fire {
    fn wire(&self) -> FireWire<'_> {
        FireWire {
            fire_id: &self.fire_id,
            schedule: &self.fire_id.schedule,
            version: self.version,
            nominal: self.fire_id.nominal,
            due_at: self.due_at,
            fired_at: self.fired_at,
            reason: self.reason,
            epoch: self.epoch,
            queue: &self.queue,
            job: self.job,
        }
    }

    /// The TypeScript declaration of the wire form (`type Fire = …`).
    #[cfg(feature = "ts")]
    #[doc(hidden)]
    pub fn ts_decl(cfg: &ts_rs::Config) -> String {
        <FireWire<'static> as ts_rs::TS>::decl(cfg)
    }

    /// Schedule name (shared as `fire_id.schedule`).
    pub fn schedule(&self) -> &str {
        &self.fire_id.schedule
    }

    /// The grid boundary.
    pub fn nominal(&self) -> Timestamp {
        self.fire_id.nominal
    }
}

/// The wire form of a [`Fire`]: its fields in wire order, with the
/// schedule name and the nominal time taken from the fire id.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "Fire"))]
#[serde(rename_all = "camelCase")]
pub(crate) struct FireWire<'a> {
    /// Deterministic id (`<schedule>@<nominal_ms>` for scheduled fires).
    fire_id: &'a FireId,
    /// Schedule name.
    schedule: &'a str,
    /// Definition version that fired.
    version: u64,
    /// The grid boundary.
    nominal: Timestamp,
    /// Nominal plus jitter.
    due_at: Timestamp,
    /// Engine clock at firing (≥ `due_at`).
    fired_at: Timestamp,
    /// Why it fired.
    reason: FireReason,
    /// Leader epoch (0 standalone).
    epoch: Epoch,
    /// Target queue.
    queue: &'a str,
    /// The job created in a local queue (`None` for external queues).
    job: Option<JobId>,
}

impl Serialize for Fire {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.wire().serialize(s)
    }
}

/// The wire form of a [`Command`]: `Enqueue` carries its idempotency
/// `key`, which is the fire id.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "Command"))]
#[serde(rename_all = "camelCase")]
pub(crate) enum CommandWire<'a> {
    Fire(FireWire<'a>),
    #[serde(rename_all = "camelCase")]
    Enqueue {
        /// The fire.
        fire: &'a FireId,
        /// External queue.
        queue: &'a str,
        /// Payload.
        payload: &'a Payload,
        /// Idempotency key: the fire id (serialized as its string).
        key: &'a FireId,
        /// Headers.
        headers: &'a Headers,
        /// Leader epoch; stores reject a stale one.
        epoch: Epoch,
        /// The target's job priority, when not 0.
        #[serde(skip_serializing_if = "is_zero")]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        priority: i32,
        /// The target's override of the queue's `max_attempts`, when set.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        max_attempts: Option<u32>,
    },
    #[serde(rename_all = "camelCase")]
    Wake {
        /// Queue.
        queue: &'a str,
    },
    #[serde(rename_all = "camelCase")]
    Cancel {
        /// Job.
        job: JobId,
        /// Why.
        reason: CancelReason,
    },
    Event(&'a Event),
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl Command {
    /// The TypeScript declaration of the wire form (`type Command = …`).
    #[cfg(feature = "ts")]
    #[doc(hidden)]
    pub fn ts_decl(cfg: &ts_rs::Config) -> String {
        <CommandWire<'static> as ts_rs::TS>::decl(cfg)
    }
}

impl Serialize for Command {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Command::Fire(f) => CommandWire::Fire(f.wire()),
            Command::Enqueue {
                fire,
                queue,
                payload,
                headers,
                epoch,
                priority,
                max_attempts,
            } => CommandWire::Enqueue {
                fire,
                queue,
                payload,
                key: fire,
                headers,
                epoch: *epoch,
                priority: *priority,
                max_attempts: *max_attempts,
            },
            Command::Wake { queue } => CommandWire::Wake { queue },
            Command::Cancel { job, reason } => CommandWire::Cancel {
                job: *job,
                reason: *reason,
            },
            Command::Event(e) => CommandWire::Event(e),
        }
        .serialize(s)
    }
}

/// Why a fire happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FireReason {
    /// On time (the boundary was due at this advance's clock within the catch-up-free path).
    Scheduled,
    /// A missed boundary fired late after downtime.
    Catchup,
    /// `TriggerSchedule`.
    Manual,
    /// `Backfill`.
    Backfill,
    /// A `buffer_one` fire released when the previous one ended.
    Buffered,
}

/// Why a job is being cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CancelReason {
    /// `CancelJob`.
    Requested,
    /// A newer fire of the schedule under `cancel_previous`.
    Superseded,
}

/// Why boundaries were skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Older than the catch-up window.
    TooOld,
    /// Beyond the catch-up cap (`catchup.max`).
    CatchupCap,
    /// The previous fire was in flight (`skip`, or `buffer_one` with one already buffered).
    Overlap,
    /// A more recent due boundary of the same backlog was chosen instead:
    /// under any overlap policy but `allow`, a backlog collapses to its most
    /// recent boundary.
    Superseded,
    /// The schedule was paused at the boundary's nominal time.
    Paused,
    /// The target queue is full (`live_jobs` limit) or rejected the job.
    QueueFull,
    /// The schedule's spec, zone, DST policy or start was changed while the
    /// boundary was due or pending (the cursor moved to the new grid).
    Redefined,
}

/// Observability events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum Event {
    /// Boundaries skipped: one aggregated event per schedule, reason and advance.
    #[serde(rename_all = "camelCase")]
    FireSkipped {
        /// Schedule.
        schedule: String,
        /// Why.
        reason: SkipReason,
        /// How many boundaries.
        count: u64,
        /// First skipped boundary.
        first: Timestamp,
        /// Last skipped boundary.
        last: Timestamp,
    },
    /// A buffered fire is waiting (`buffer_one`).
    #[serde(rename_all = "camelCase")]
    FireBuffered {
        /// Schedule.
        schedule: String,
        /// The boundary.
        nominal: Timestamp,
    },
    /// An external fire was not settled within the queue's `lease_ms`; it now counts as settled.
    #[serde(rename_all = "camelCase")]
    FireUnsettled {
        /// The fire.
        fire: FireId,
    },
    /// A buffered fire was dropped before it fired because its schedule
    /// was removed (`removed`).
    #[serde(rename_all = "camelCase")]
    FireDropped {
        /// The buffered fire.
        fire: FireId,
        /// `removed`.
        reason: String,
    },
    /// The schedule will not fire again (end reached, max fires, one-shot done).
    #[serde(rename_all = "camelCase")]
    ScheduleCompleted {
        /// Schedule.
        schedule: String,
        /// `end_at`, `max_fires` or `exhausted`.
        reason: String,
    },
    /// A failed attempt will be retried.
    #[serde(rename_all = "camelCase")]
    JobRetried {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
        /// The attempt that failed.
        attempt: u32,
        /// When it runs again.
        run_at: Timestamp,
        /// The failure text.
        error: String,
    },
    /// A lease ran out: counted as a failed attempt.
    #[serde(rename_all = "camelCase")]
    LeaseExpired {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
        /// The attempt whose lease expired.
        attempt: u32,
    },
    /// Out of attempts, or interrupted more than `maxInterruptions`
    /// times; kept as a dead letter.
    #[serde(rename_all = "camelCase")]
    JobDead {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
        /// Attempts made.
        attempts: u32,
        /// `exhausted` (out of attempts) or `interrupted` (beyond the
        /// queue's `maxInterruptions`).
        reason: String,
    },
    /// Dropped: out of attempts without dead-lettering, or evicted beyond a bound.
    #[serde(rename_all = "camelCase")]
    JobDropped {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
        /// `exhausted`, `interrupted` or `dead_letter_limit`.
        reason: String,
    },
    /// A claimed job's attempt was interrupted by its host (the process
    /// crashed, or stopped past its grace period), released by `Recover`.
    /// Not a failure: the attempt does not count and no backoff applies;
    /// the job is available again at once, unless this was one
    /// interruption more than the queue's `maxInterruptions` (then a
    /// `job_dead` or `job_dropped` with reason `interrupted` follows).
    #[serde(rename_all = "camelCase")]
    JobInterrupted {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
        /// The attempt that was running (the next claim runs it again
        /// under the same number).
        attempt: u32,
        /// Interruptions of this job so far, this one included.
        interruptions: u32,
    },
    /// A job completed.
    #[serde(rename_all = "camelCase")]
    JobCompleted {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
    },
    /// A job was cancelled.
    #[serde(rename_all = "camelCase")]
    JobCancelled {
        /// Job.
        job: JobId,
        /// Queue.
        queue: String,
        /// Why.
        reason: CancelReason,
    },
    /// Leadership ended (expired or revoked); nothing fires until it returns.
    #[serde(rename_all = "camelCase")]
    LeadershipLost {
        /// The epoch that ended.
        epoch: crate::wire::ids::Epoch,
    },
    /// A named lease expired without renewal.
    #[serde(rename_all = "camelCase")]
    NamedLeaseExpired {
        /// Lease name.
        name: String,
        /// Its last token.
        token: crate::wire::ids::LeaseToken,
    },
    /// `now` was earlier than the engine clock and was clamped to it.
    #[serde(rename_all = "camelCase")]
    ClockClamped {
        /// The `now` given.
        given: Timestamp,
        /// The engine clock used instead.
        clock: Timestamp,
    },
    /// A queue was declared implicitly with defaults.
    #[serde(rename_all = "camelCase")]
    QueueCreated {
        /// Queue.
        queue: String,
    },
    /// A restore under another tz database moved a zoned schedule's
    /// unprocessed boundary: same civil time, new instant (one event per
    /// moved boundary, emitted by the restore itself).
    #[serde(rename_all = "camelCase")]
    TzRulesChanged {
        /// Schedule.
        schedule: String,
        /// The zone.
        zone: String,
        /// The civil date-time the boundary stands for.
        civil: String,
        /// Its instant under the snapshot's database.
        old_at: Timestamp,
        /// Its instant under this engine's.
        new_at: Timestamp,
        /// The snapshot's release (`None`: not recorded).
        old_tzdb: Option<String>,
        /// This engine's release.
        new_tzdb: String,
    },
}

/// The engine's pending commands, in emission order.
#[derive(Debug, Default)]
pub(crate) struct Output {
    queue: VecDeque<Command>,
}

impl Output {
    /// Appends a command.
    pub(crate) fn push(&mut self, cmd: Command) {
        self.queue.push_back(cmd);
    }

    /// Appends an event.
    pub(crate) fn event(&mut self, ev: Event) {
        self.queue.push_back(Command::Event(ev));
    }

    /// Takes the oldest command.
    pub(crate) fn pop(&mut self) -> Option<Command> {
        self.queue.pop_front()
    }

    /// Moves every command, oldest first, to the end of `into`.
    ///
    /// When `into` is empty (a host reusing one batch buffer) the two
    /// buffers are exchanged instead of copied: converting between
    /// `VecDeque` and `Vec` is free while the ring has not wrapped, which
    /// it has not unless `poll_command` interleaved with emission. Each
    /// command is 100+ bytes, and the copy was a fifth of a burst
    /// advance; the engine keeps the host's old buffer and its capacity.
    pub(crate) fn drain_into(&mut self, into: &mut Vec<Command>) {
        if into.is_empty() {
            let mut taken = Vec::from(std::mem::take(&mut self.queue));
            std::mem::swap(into, &mut taken);
            self.queue = VecDeque::from(taken);
        } else {
            into.extend(self.queue.drain(..));
        }
    }

    /// Commands waiting.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Appends commands in order (`Option` for a command that may not be).
    pub(crate) fn extend(&mut self, cmds: impl IntoIterator<Item = Command>) {
        self.queue.extend(cmds);
    }
}
