//! [`Engine`]: the sans-I/O state machine, the only place that knows both
//! schedules and queues. This module only dispatches; the logic lives in
//! `validate` (every input's stateless checks, before the advance),
//! `advance` (time passing), `fire` (making fires), `schedule_inputs` (the
//! handlers of schedule inputs), `leadership`, `snapshot`, `journal` and
//! `outbox`.

mod advance;
mod fire;
pub mod journal;
mod leadership;
pub(crate) mod outbox;
#[cfg(feature = "testing")]
pub(crate) mod planted;
mod schedule_inputs;
mod search;
pub(crate) mod snapshot;
pub(crate) mod tzdb;
#[cfg(test)]
mod tzdb_tests;
pub(crate) mod validate;

use crate::lease::Leases;
use crate::queue::Queues;
use crate::schedule::Schedules;
use crate::schedule::skips::Skips;
use crate::spec::TzDatabase;
use crate::time::Timestamp;
use crate::wire::command::{CancelReason, Command, Output};
use crate::wire::config::EngineConfig;
use crate::wire::error::Error;
use crate::wire::ids::JobId;
use crate::wire::input::Input;
use crate::wire::job::JobInfo;
use crate::wire::queue_config::{QueueConfig, QueueStats};
use crate::wire::reply::Reply;
use crate::wire::schedule_def::ScheduleInfo;
use leadership::Leadership;
use validate::Prepared;
pub use validate::validate_input;

/// The engine: schedules, queues, leases and leadership in one
/// deterministic value that never reads a clock and never performs I/O.
///
/// Methods come in four groups:
/// - **getters** ([`Engine::schedule`], [`Engine::queue_stats`],
///   [`Engine::job`], [`Engine::clock`], …): read-only;
/// - **[`Engine::handle`]**: the single mutator; `(now, input)` pairs are
///   the journal;
/// - **`poll_*`** ([`Engine::poll_command`], [`Engine::poll_timeout`]):
///   what the host must do next; drain commands after every `handle`;
/// - **persistence** ([`Engine::snapshot`], [`Engine::restore`]).
///
/// See the crate docs for the drain loop and `docs/semantics.md` for every
/// decision the design left open.
#[derive(Debug)]
pub struct Engine {
    pub(crate) config: EngineConfig,
    pub(crate) clock: Timestamp,
    pub(crate) schedules: Schedules,
    pub(crate) queues: Queues,
    pub(crate) leases: Leases,
    pub(crate) leadership: Leadership,
    pub(crate) out: Output,
    /// Commands of a local enqueue, moved behind the `Fire` that caused them.
    pub(crate) skips: Skips,
    /// A per-advance budget left due work behind: `poll_timeout` = clock.
    pub(crate) backlog: bool,
    /// A graceful stop has begun (`Input::Stop`) and no `Input::Recover`
    /// has ended it: nothing fires (part of the snapshot).
    pub(crate) stopping: bool,
    /// The tz database specs are evaluated with (the bundled one but in
    /// tests and `tzdb_diff`); its release is part of the snapshot.
    pub(crate) tzdb: TzDatabase,
    /// The planted bug, if any (tests only; never serialized).
    #[cfg(feature = "testing")]
    pub(crate) planted: Option<planted::PlantedBug>,
}

/// Getters.
impl Engine {
    /// A new engine at clock 0 (the first `handle` moves it to `now`).
    pub fn new(config: EngineConfig) -> Engine {
        Engine::with_tzdb(config, TzDatabase::bundled())
    }

    /// A new engine that evaluates specs with `tzdb` instead of the bundled
    /// database: what tests of a tz database upgrade write their old
    /// snapshot with. Hosts use [`Engine::new`].
    pub fn with_tzdb(config: EngineConfig, tzdb: TzDatabase) -> Engine {
        Engine {
            config,
            clock: Timestamp::MIN,
            schedules: Schedules::default(),
            queues: Queues::default(),
            leases: Leases::default(),
            leadership: Leadership::default(),
            out: Output::default(),
            skips: Skips::default(),
            backlog: false,
            stopping: false,
            tzdb,
            #[cfg(feature = "testing")]
            planted: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The engine clock: the latest `now` handled (never goes back).
    pub fn clock(&self) -> Timestamp {
        self.clock
    }

    /// Whether the engine may fire at its clock (always when standalone).
    pub fn is_leader(&self) -> bool {
        #[cfg(feature = "testing")]
        if self.planted(planted::PlantedBug::LeadershipNeverExpires)
            && self.leadership.grant.is_some()
        {
            return true;
        }
        self.leadership
            .is_leader(self.config.standalone, self.clock)
    }

    /// Whether a graceful stop has begun ([`Input::Stop`]) and no
    /// [`Input::Recover`] has ended it: nothing fires meanwhile.
    pub fn is_stopping(&self) -> bool {
        self.stopping
    }

    /// Whether boundaries and buffered fires may fire now: the engine
    /// leads and is not stopping. Otherwise cursors stay put (nothing
    /// fires, nothing is skipped) until both hold again.
    pub(crate) fn fires(&self) -> bool {
        !self.stopping && self.is_leader()
    }

    /// A schedule's definition, state and counters.
    pub fn schedule(&self, name: &str) -> Option<ScheduleInfo> {
        self.schedules.get(name).map(|s| s.info())
    }

    /// Schedule names in order.
    pub fn schedule_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.schedules.iter().map(|s| &*s.name)
    }

    /// Number of schedules.
    pub fn schedule_count(&self) -> usize {
        self.schedules.len()
    }

    /// Counts and totals of a queue, as of the engine clock.
    pub fn queue_stats(&self, queue: &str) -> Option<QueueStats> {
        self.queues.stats(queue, self.clock)
    }

    /// The config of a declared queue (`None` for an implicit one).
    pub fn queue_config(&self, queue: &str) -> Option<&QueueConfig> {
        self.queues.config(queue)
    }

    /// Every queue name (declared or implicit), in order.
    pub fn queue_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.queues.queue_names()
    }

    /// Up to `limit` dead letters of `queue`, oldest death first (what
    /// `Redrive` and `PurgeDead` act on).
    pub fn dead_letters(&self, queue: &str, limit: usize) -> Vec<JobInfo> {
        self.queues.dead_letters(queue, limit)
    }

    /// Jobs not yet terminal, over all queues (bounded by `Limits::live_jobs`).
    pub fn live_jobs(&self) -> usize {
        self.queues.live_jobs()
    }

    /// A job (until pruned by retention).
    pub fn job(&self, id: JobId) -> Option<JobInfo> {
        self.queues.job(id)
    }

    /// Commands waiting to be drained.
    pub fn pending_commands(&self) -> usize {
        self.out.len()
    }

    /// Checks every internal invariant, panicking on the first broken one.
    /// Meant for tests and simulations; O(state).
    pub fn check_invariants(&self) {
        self.schedules.check_invariants(self.config.seed);
        self.queues.check_invariants();
        self.leases.check_invariants();
        if self.fires() {
            assert!(
                self.schedules.ready.is_empty(),
                "a leader keeps no releasable buffered fire"
            );
            if !self.backlog {
                let due = self.schedules.next_due();
                assert!(
                    due.is_none_or(|d| d > self.clock),
                    "a due schedule was left behind"
                );
            }
        }
    }
}

/// The mutator.
impl Engine {
    /// Applies one input at `now`.
    ///
    /// First the engine advances to `now` exactly as [`Input::Advance`]
    /// would (a `now` before the clock is clamped to it and reported with
    /// `Event::ClockClamped`); then the input is validated and applied.
    /// Checks that need no state (names, ranges, sizes, spec syntax) run
    /// before the advance, so such an input changes nothing at all; any
    /// other rejected input changes nothing beyond that advance.
    ///
    /// Refused with [`Error::Backpressure`] (changing nothing) while
    /// `limits.pending_commands` or more commands wait to be drained.
    pub fn handle(&mut self, now: Timestamp, input: Input) -> Result<Reply, Error> {
        let pending = self.out.len();
        if pending >= self.config.limits.pending_commands {
            return Err(Error::Backpressure { pending });
        }
        // Stateless checks see the `now` the input will be applied at.
        let at = now.max(self.clock);
        let prepared = validate::prepare(&input, &self.config, &self.tzdb, at)?;
        let reply = if let Input::Recover = input {
            // Before the advance: a lease that ran out while the host was
            // down is an interruption, not a `lease_expired` failure, and
            // the advance then fires the backlog of the stop (catch-up).
            let interrupted = self.recover(at);
            self.advance_to(now);
            Ok(Reply::Recovered { interrupted })
        } else {
            self.advance_to(now);
            self.apply(input, prepared)
        };
        self.after_input();
        reply
    }

    /// `Recover` at `now`: releases every claim as interrupted (ended by
    /// the advance's budgeted lease pass, which follows at once) and ends
    /// a stop. Returns how many claims were released.
    fn recover(&mut self, now: Timestamp) -> u64 {
        self.stopping = false;
        self.queues.interrupt_claimed(now)
    }

    fn apply(&mut self, input: Input, prepared: Prepared) -> Result<Reply, Error> {
        let now = self.clock;
        let limits = &self.config.limits;
        let seed = self.config.seed;
        let out = &mut self.out;
        match input {
            Input::Advance => Ok(Reply::Advanced),
            Input::Recover => unreachable!("`Recover` is applied before the advance"),
            Input::Stop => {
                self.stopping = true;
                Ok(Reply::Stopping {
                    claimed: self.queues.claimed_count(),
                })
            }
            Input::UpsertSchedule(def) => self.upsert(def, prepared.into_spec()),
            Input::RemoveSchedule { name, origin } => self.remove(&name, origin),
            Input::PauseSchedule { name, note } => self.pause(&name, note),
            Input::ResumeSchedule { name } => self.resume(&name),
            Input::TriggerSchedule { name, overlap } => self.trigger(&name, overlap),
            Input::Backfill {
                name,
                from,
                to,
                overlap,
            } => self.backfill(&name, from, to, overlap),
            Input::FireSettled { fire, outcome, job } => self.fire_settled(fire, outcome, job),
            Input::Leadership(grant) => {
                self.leadership.check(now, grant)?;
                let standalone = self.config.standalone;
                let leader = self.leadership.apply(standalone, now, grant, out);
                if leader && !self.stopping {
                    // The backlog of the leadership gap is handled at once,
                    // by catch-up, as after any downtime.
                    self.catch_up_now();
                }
                Ok(Reply::Leadership { leader })
            }
            Input::DeclareQueue(cfg) => {
                let (created, changed) = self.queues.declare(cfg, limits)?;
                Ok(Reply::QueueDeclared { created, changed })
            }
            Input::Enqueue(req) | Input::EnqueueOutbox(req) => {
                let done = self.queues.enqueue(now, req, None, limits, out)?;
                out.extend(done.wake);
                Ok(Reply::Enqueued {
                    job: done.job,
                    deduplicated: done.deduplicated,
                })
            }
            Input::Claim {
                queue,
                worker,
                max,
                lease_ms,
            } => {
                // A stop lets running jobs finish; it starts none.
                if self.stopping {
                    return Ok(Reply::Claimed { jobs: Vec::new() });
                }
                let jobs = self.queues.claim(now, &queue, &worker, max, lease_ms)?;
                self.runs_claimed(now, &jobs);
                Ok(Reply::Claimed { jobs })
            }
            Input::Heartbeat {
                job,
                token,
                lease_ms,
            } => {
                let deadline = self.queues.heartbeat(now, job, token, lease_ms)?;
                Ok(Reply::LeaseExtended { deadline })
            }
            Input::Complete { job, token } => {
                let state = self.queues.complete(now, job, token, out)?;
                Ok(Reply::Job {
                    job,
                    state,
                    run_at: None,
                })
            }
            Input::Fail {
                job,
                token,
                error,
                retry_at,
            } => {
                let q = &mut self.queues;
                let (state, run_at) =
                    q.fail(now, job, token, error, retry_at, limits, seed, out)?;
                Ok(Reply::Job { job, state, run_at })
            }
            Input::CancelJob { job } => {
                let state = self.queues.cancel(now, job, CancelReason::Requested, out)?;
                Ok(Reply::Job {
                    job,
                    state,
                    run_at: None,
                })
            }
            Input::Redrive { queue, job } => {
                let (count, keys_dropped) = self.queues.redrive(now, &queue, job, limits, out)?;
                Ok(Reply::Count {
                    count,
                    keys_dropped,
                })
            }
            Input::PurgeDead { queue, before } => {
                let count = self.queues.purge_dead(&queue, before)?;
                Ok(Reply::Count {
                    count,
                    keys_dropped: 0,
                })
            }
            Input::AcquireLease {
                name,
                owner,
                ttl_ms,
            } => {
                let (token, expires_at) = self.leases.acquire(now, &name, &owner, ttl_ms)?;
                Ok(Reply::Lease { token, expires_at })
            }
            Input::RenewLease {
                name,
                token,
                ttl_ms,
            } => {
                let (token, expires_at) = self.leases.renew(now, &name, token, ttl_ms)?;
                Ok(Reply::Lease { token, expires_at })
            }
            Input::ReleaseLease { name, token } => {
                self.leases.release(now, &name, token)?;
                Ok(Reply::LeaseReleased)
            }
        }
    }
}

/// Polling: what the host must do next.
impl Engine {
    /// Takes the oldest pending command. Call until `None` after every
    /// [`Engine::handle`].
    #[must_use]
    pub fn poll_command(&mut self) -> Option<Command> {
        self.out.pop()
    }

    /// Moves every pending command, oldest first, to the end of `into`:
    /// the batch form of [`Engine::poll_command`] (one call per drain, for
    /// bindings that cross a language boundary once per batch). Returns
    /// how many were moved.
    pub fn drain_commands(&mut self, into: &mut Vec<Command>) -> usize {
        let before = into.len();
        self.out.drain_into(into);
        into.len() - before
    }

    /// When the engine next has work: call `handle(t, Input::Advance)` at
    /// that instant. Never earlier than the clock; equal to the clock when a
    /// per-advance limit left due work behind. `None`: nothing is pending
    /// (only an input can create work).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let clock = self.clock;
        let mut t = [
            self.queues.next_deadline(),
            self.leases.next_deadline(),
            self.schedules.unsettled.first().map(|e| e.0),
        ]
        .into_iter()
        .flatten()
        .min();
        let mut merge = |x: Option<Timestamp>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        if !self.config.standalone {
            merge(self.leadership.next_deadline());
        }
        if self.fires() {
            merge(self.schedules.next_due());
            if !self.schedules.ready.is_empty() || self.backlog {
                merge(Some(clock));
            }
        }
        t.map(|t| t.max(clock))
    }
}
