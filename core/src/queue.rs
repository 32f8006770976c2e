//! Local job queues: the job state machine
//! `scheduled → available → claimed → completed | dead | dropped | cancelled`,
//! with fenced leases, retries with backoff, dead letters, idempotency keys
//! and retention.
//!
//! [`Queues`] is driven by the engine: it never reads a clock (every mutator
//! takes `now`, already clamped by the engine) and reports through the
//! engine's [`Output`]. Its canonical state (queue configs, totals, jobs,
//! remembered keys, counters) is plain serde data in the engine snapshot; the
//! indexes over it are derived, skipped by serde and rebuilt on restore (so
//! snapshots stay small and cannot disagree with themselves).
//!
//! Decisions where DESIGN.md is silent (also in the doc comments below):
//! - Enqueue to an `external` queue is `InvalidInput`: external queues only
//!   receive schedule fires, as `Command::Enqueue` from the engine.
//! - `Claim` on a queue that does not exist yet returns no jobs (workers often
//!   start before producers) and does not create it.
//! - A `run_at` in the past, at enqueue or as `Fail{retry_at}`, means now.
//! - Idempotency keys of `Enqueue` inputs and of schedule fires (the fire
//!   id) live in separate namespaces: a user key never captures a fire.
//! - Idempotency keys: a key is remembered while its job is live and for
//!   `dedup_window_ms` after the job finished. When the table is full, the
//!   key expiring soonest (always a finished job's) is forgotten; if every
//!   remembered key belongs to a live job, the enqueue fails `LimitExceeded`.
//! - `Redrive` resets the attempt count (the job gets the queue's full
//!   `max_attempts` again) and makes the job available at once. It never
//!   makes two live jobs with one key: a job whose key another live job
//!   holds now is redriven without it (counted in the reply).
//! - Leases end at their deadline: a lease with `deadline <= now` has expired,
//!   just as a job with `run_at <= now` is due — except a lease cut at
//!   `Timestamp::MAX`, which never expires (the clock cannot pass `MAX`), so
//!   `Heartbeat`/`Complete`/`Fail` at `MAX` with its token succeed.

mod backoff;
// The compact decoder's records of the snapshot's queue state.
#[cfg(any(feature = "compact-decode", test))]
mod decode;
mod dedup;

pub use backoff::{AfterFailure, after_failure};
pub use search::{JobPage, JobQuery, SEARCH_LIMIT, SEARCH_SCAN};
mod lifecycle;
pub(crate) mod rules;
mod search;
mod store;
mod view;

use crate::time::Timestamp;
use crate::wire::command::{CancelReason, Command, Event, Output};
use crate::wire::config::{Limits, truncate};
use crate::wire::error::Error;
use crate::wire::ids::{FireId, JobId, LeaseToken};
use crate::wire::input::EnqueueRequest;
use crate::wire::job::{Claimed, JobState};
use crate::wire::name;
use crate::wire::queue_config::{QueueConfig, QueueMode, QueueTotals};
use crate::wire::run::JobEnd;
use serde::Serialize;
use std::collections::BTreeMap;
pub(crate) use store::{Index, Job, JobLease, KeySpace, QueueState};

/// What [`Queues::enqueue`] did.
#[derive(Debug)]
pub(crate) struct Enqueued {
    /// The new job, or the live one holding the key.
    pub job: JobId,
    /// Whether an existing job was returned.
    pub deduplicated: bool,
    /// `Wake` for the queue, which had nothing claimable before this job:
    /// the caller emits it after its own commands about the job.
    pub wake: Option<Command>,
}

/// Every queue and job of one engine. Part of the engine snapshot.
///
/// Serialized fields are the canonical state; `idx` is derived (see
/// [`Queues::rebuild_indexes`]), which `Deserialize` rebuilds and checks, so
/// a corrupt snapshot is a deserialization error rather than a later panic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Queues {
    /// Last job id handed out (ids start at 1, never reused).
    last_job: u64,
    /// Last claim token handed out (one counter for all queues, so a token
    /// is never reused, even for another job).
    last_token: u64,
    /// Queues by name.
    queues: BTreeMap<String, QueueState>,
    /// Every job still held (live, dead, or finished and retained).
    jobs: BTreeMap<JobId, Job>,
    /// Jobs that became terminal since the last [`Queues::take_finished`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    finished: Vec<(JobId, Option<FireId>)>,
    /// How the jobs of fires among `finished` ended, for their schedule's
    /// run history (taken with it, so never part of a snapshot, which is
    /// only taken between inputs).
    #[serde(skip)]
    ended: Vec<(FireId, JobEnd)>,
    /// Derived indexes.
    #[serde(skip)]
    idx: Index,
}

impl Queues {
    /// The running totals of `queue`, which must exist.
    fn totals(&mut self, queue: &str) -> &mut QueueTotals {
        &mut self.queues.get_mut(queue).expect("queue exists").totals
    }

    /// Creates or updates a queue. Returns `(created, changed)`.
    ///
    /// The config's own fields were checked by `engine::validate` before the
    /// engine advanced (a stateless refusal changes nothing, not even the
    /// clock); only the mode switch, which needs state, is checked here,
    /// before anything changes. A new config applies
    /// to later attempts, claims and finishes; jobs already scheduled keep
    /// their times. Lowering `retention.completed_max` trims retained jobs at
    /// once. Switching a local queue that still holds live jobs or dead
    /// letters to `external` is refused (those jobs could never be claimed).
    /// A new queue beyond `limits.queues` is `LimitExceeded`.
    pub(crate) fn declare(
        &mut self,
        cfg: QueueConfig,
        limits: &Limits,
    ) -> Result<(bool, bool), Error> {
        let Some(q) = self.queues.get_mut(&cfg.name) else {
            self.check_room(limits)?;
            let name = cfg.name.clone();
            self.queues.insert(name, QueueState::new(cfg));
            return Ok((true, true));
        };
        if q.config == cfg {
            return Ok((false, false));
        }
        if cfg.mode == QueueMode::External
            && q.config.mode == QueueMode::Local
            && q.idx.holds_work()
        {
            return Err(Error::InvalidInput {
                field: "mode",
                message: format!(
                    "queue {:?} still holds jobs; drain or purge it first",
                    cfg.name
                ),
            });
        }
        let name = cfg.name.clone();
        q.config = cfg;
        self.trim_finished(&name);
        Ok((false, true))
    }

    /// Declares `name` with the defaults if it does not exist (implicit
    /// declaration, reported as `Event::QueueCreated`). An existing queue,
    /// local or external, is left alone. A new queue beyond `limits.queues`
    /// is `LimitExceeded` and nothing changes.
    pub(crate) fn ensure(
        &mut self,
        name: &str,
        limits: &Limits,
        out: &mut Output,
    ) -> Result<(), Error> {
        if !self.queues.contains_key(name) {
            name::queue_name(name, limits)?;
            self.check_room(limits)?;
            self.create(name, limits, out);
        }
        Ok(())
    }

    /// Whether one more queue fits under `limits.queues` (queues are never
    /// removed, so this bounds every per-queue table in total).
    fn check_room(&self, limits: &Limits) -> Result<(), Error> {
        if self.queues.len() >= limits.queues {
            return Err(Error::LimitExceeded {
                what: "queues",
                limit: limits.queues as u64,
            });
        }
        Ok(())
    }

    /// Implicit declaration: the defaults, with the retention count clamped
    /// to `limits.completed_per_queue` so it is a config `declare` accepts.
    fn create(&mut self, name: &str, limits: &Limits, out: &mut Output) {
        let cfg = QueueConfig::implicit(name, limits);
        let fresh = self.queues.insert(name.to_owned(), QueueState::new(cfg));
        assert!(fresh.is_none(), "queue created twice");
        out.event(Event::QueueCreated {
            queue: name.to_owned(),
        });
    }

    /// A queue's config.
    pub(crate) fn config(&self, name: &str) -> Option<&QueueConfig> {
        self.queues.get(name).map(|q| &q.config)
    }

    /// Adds a job to a local queue (declared implicitly with defaults if
    /// new). Returns the job and whether it was de-duplicated: with a `key`
    /// that is remembered and active (see the module docs) the existing job
    /// is returned and nothing changes, whatever the rest of the request says.
    ///
    /// `fire` links the job to the schedule fire that created it (engine
    /// use). The job is available at once unless `run_at`/`delay_ms` put it
    /// in the future. An implicitly created queue is announced in `out`;
    /// the wake of a queue that had nothing claimable is left to the
    /// caller ([`Enqueued::wake`]), so a fire's `Fire` command can come
    /// between the two.
    ///
    /// The request's own fields were checked by `engine::validate` before the
    /// engine advanced (fires build theirs from a checked definition); the
    /// checks here need state (external queue, dedup, limits).
    pub(crate) fn enqueue(
        &mut self,
        now: Timestamp,
        req: EnqueueRequest,
        fire: Option<FireId>,
        limits: &Limits,
        out: &mut Output,
    ) -> Result<Enqueued, Error> {
        let run_at = run_at(&req, now);
        if self
            .config(&req.queue)
            .is_some_and(|c| c.mode == QueueMode::External)
        {
            return Err(Error::InvalidInput {
                field: "queue",
                message: format!(
                    "{:?} is external: it only receives schedule fires",
                    req.queue
                ),
            });
        }
        // A fire's key is its fire id, in a namespace of its own.
        let space = KeySpace::of(fire.is_some());
        if let Some(job) = req
            .key
            .as_ref()
            .and_then(|key| self.dedup_hit(&req.queue, space, key, now))
        {
            return Ok(Enqueued {
                job,
                deduplicated: true,
                wake: None,
            });
        }
        if !self.queues.contains_key(&req.queue) {
            self.check_room(limits)?;
        }
        if self.idx.live >= limits.live_jobs {
            return Err(Error::LimitExceeded {
                what: "live_jobs",
                limit: limits.live_jobs as u64,
            });
        }
        if let Some(key) = &req.key {
            self.dedup_check_room(&req.queue, space, key, limits)?;
        }
        // Validated: from here on nothing fails.
        if !self.queues.contains_key(&req.queue) {
            self.create(&req.queue, limits, out);
        }
        self.last_job = self.last_job.checked_add(1).expect("job ids exhausted");
        let id = JobId(self.last_job);
        if let Some(key) = &req.key {
            self.dedup_remember(&req.queue, space, key, id, limits);
        }
        let job = Job {
            queue: req.queue,
            state: if run_at <= now {
                JobState::Available
            } else {
                JobState::Scheduled
            },
            payload: req.payload,
            headers: req.headers,
            priority: req.priority,
            key: req.key,
            fire,
            attempt: 0,
            interruptions: 0,
            max_attempts: req.max_attempts,
            run_at,
            lease: None,
            last_error: None,
            finished_at: None,
            retain_until: None,
        };
        let q = self.queues.get_mut(&job.queue).expect("queue exists");
        q.totals.enqueued += 1;
        store::index(&mut self.idx, &mut q.idx, id, &job);
        let wake = (job.state == JobState::Available && q.idx.available.len() == 1).then(|| {
            Command::Wake {
                queue: job.queue.as_str().into(),
            }
        });
        assert!(self.jobs.insert(id, job).is_none(), "job id reused");
        Ok(Enqueued {
            job: id,
            deduplicated: false,
            wake,
        })
    }

    /// Leases up to `max` available jobs of `queue` to `worker`, in claim
    /// order (priority, then available time, then id). Each gets a fresh
    /// token and `deadline = now + lease_ms` (default: the queue's), and its
    /// attempt count goes up by one. A queue that does not exist yet gives no
    /// jobs; an external queue is `InvalidInput`. The arguments were checked
    /// by `engine::validate` before the engine advanced.
    pub(crate) fn claim(
        &mut self,
        now: Timestamp,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, Error> {
        let Some(q) = self.queues.get_mut(queue) else {
            return Ok(Vec::new());
        };
        if q.config.mode == QueueMode::External {
            return Err(Error::InvalidInput {
                field: "queue",
                message: format!("{queue:?} is external: claim from its transport"),
            });
        }
        let deadline = now.saturating_add_ms(lease_ms.unwrap_or(q.config.lease_ms));
        let mut claimed = Vec::new();
        while claimed.len() < max as usize {
            let Some(&(_, _, id)) = q.idx.available.first() else {
                break;
            };
            let job = self.jobs.get_mut(&id).expect("indexed job exists");
            assert_eq!(
                job.state,
                JobState::Available,
                "claimed a job that is not available"
            );
            store::unindex(&mut self.idx, &mut q.idx, id, job);
            self.last_token = self.last_token.checked_add(1).expect("tokens exhausted");
            let token = LeaseToken(self.last_token);
            job.state = JobState::Claimed;
            job.attempt = job.attempt.checked_add(1).expect("attempt count overflow");
            job.lease = Some(JobLease {
                token,
                deadline,
                worker: worker.to_owned(),
                interrupted: false,
            });
            store::index(&mut self.idx, &mut q.idx, id, job);
            claimed.push(Claimed {
                job: id,
                token,
                deadline,
                attempt: job.attempt,
                payload: job.payload.clone(),
                headers: job.headers.clone(),
                fire: job.fire.clone(),
            });
        }
        Ok(claimed)
    }

    /// The job if it is claimed with `token`: `UnknownJob` if it is not held
    /// at all, `LeaseLost` if it is not claimed or the token is stale.
    ///
    /// A lease whose deadline has passed is lost even while a per-advance
    /// budget has not reported its expiry yet: a lease is never honoured
    /// past its deadline, however much else expired at the same time.
    fn held(&self, now: Timestamp, id: JobId, token: LeaseToken) -> Result<&Job, Error> {
        let job = self.jobs.get(&id).ok_or(Error::UnknownJob(id))?;
        match &job.lease {
            Some(lease) if lease.token == token && !lease.deadline.lease_ended(now) => Ok(job),
            _ => Err(Error::LeaseLost { job: id }),
        }
    }

    /// Extends a lease to `now + lease_ms` (default: the queue's), returning
    /// the new deadline. A stale token is `LeaseLost` and changes nothing.
    /// `lease_ms` was checked by `engine::validate` before the engine advanced.
    pub(crate) fn heartbeat(
        &mut self,
        now: Timestamp,
        id: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> Result<Timestamp, Error> {
        let job = self.held(now, id, token)?;
        let lease_ms = lease_ms.unwrap_or(self.queues[&job.queue].config.lease_ms);
        let deadline = now.saturating_add_ms(lease_ms);
        self.transition(id, None, |job| {
            job.lease.as_mut().expect("held job has a lease").deadline = deadline;
        });
        Ok(deadline)
    }

    /// Finishes a claimed job successfully. A stale token is `LeaseLost`.
    pub(crate) fn complete(
        &mut self,
        now: Timestamp,
        id: JobId,
        token: LeaseToken,
        out: &mut Output,
    ) -> Result<JobState, Error> {
        let queue = self.held(now, id, token)?.queue.clone();
        self.finish(now, id, JobState::Completed, out);
        self.totals(&queue).completed += 1;
        out.event(Event::JobCompleted { job: id, queue });
        Ok(JobState::Completed)
    }

    /// Reports a failed attempt: retried (at `retry_at`, clamped to now, or
    /// after the backoff) while attempts remain, else dead-lettered or
    /// dropped. Returns the new state and, for a retry, when it runs again.
    /// `error` is truncated to `limits.text_bytes`. A stale token is
    /// `LeaseLost` and changes nothing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fail(
        &mut self,
        now: Timestamp,
        id: JobId,
        token: LeaseToken,
        error: String,
        retry_at: Option<Timestamp>,
        limits: &Limits,
        seed: u64,
        out: &mut Output,
    ) -> Result<(JobState, Option<Timestamp>), Error> {
        self.held(now, id, token)?;
        let error = truncate(error, limits.text_bytes);
        Ok(self.failed_attempt(now, id, error, retry_at, limits, seed, out))
    }

    /// Cancels a job that is not terminal. A claimed job also gets
    /// `Command::Cancel` (its worker's token is void from now on).
    pub(crate) fn cancel(
        &mut self,
        now: Timestamp,
        id: JobId,
        reason: CancelReason,
        out: &mut Output,
    ) -> Result<JobState, Error> {
        let job = self.jobs.get(&id).ok_or(Error::UnknownJob(id))?;
        if job.state.is_terminal() {
            return Err(Error::InvalidState {
                job: id,
                state: job.state.as_str(),
                op: "cancel",
            });
        }
        let queue = job.queue.clone();
        if job.state == JobState::Claimed {
            out.push(Command::Cancel { job: id, reason });
        }
        self.finish(now, id, JobState::Cancelled, out);
        self.totals(&queue).cancelled += 1;
        out.event(Event::JobCancelled {
            job: id,
            queue,
            reason,
        });
        Ok(JobState::Cancelled)
    }

    /// Makes dead letters available again (one job, or every dead letter of
    /// the queue, oldest first), with their attempt count reset. Returns how
    /// many, and how many of them lost their idempotency key. Refused as a
    /// whole (`LimitExceeded`) if the live-job limit would be passed. A
    /// redriven job takes its key back unless another live job holds it now
    /// (see `dedup_revive`): two live jobs never share a key.
    pub(crate) fn redrive(
        &mut self,
        now: Timestamp,
        queue: &str,
        job: Option<JobId>,
        limits: &Limits,
        out: &mut Output,
    ) -> Result<(u64, u64), Error> {
        let q = self
            .queues
            .get(queue)
            .ok_or_else(|| Error::UnknownQueue(queue.to_owned()))?;
        let ids: Vec<JobId> = match job {
            Some(id) => {
                let job = self.jobs.get(&id).filter(|j| j.queue == queue);
                let job = job.ok_or(Error::UnknownJob(id))?;
                if job.state != JobState::Dead {
                    return Err(Error::InvalidState {
                        job: id,
                        state: job.state.as_str(),
                        op: "redrive",
                    });
                }
                vec![id]
            }
            None => q.idx.dead.iter().map(|&(_, id)| id).collect(),
        };
        if self.idx.live.saturating_add(ids.len()) > limits.live_jobs {
            return Err(Error::LimitExceeded {
                what: "live_jobs",
                limit: limits.live_jobs as u64,
            });
        }
        let mut dropped = 0;
        for &id in &ids {
            self.transition(id, Some(out), |job| {
                job.state = JobState::Available;
                job.finished_at = None;
                job.attempt = 0;
                job.interruptions = 0;
                job.run_at = now;
            });
            dropped += u64::from(!self.dedup_revive(id, limits));
        }
        Ok((ids.len() as u64, dropped))
    }

    /// Deletes dead letters of `queue` that died before `before` (or all).
    /// Returns how many. Their idempotency keys stay remembered until expiry.
    pub(crate) fn purge_dead(
        &mut self,
        queue: &str,
        before: Option<Timestamp>,
    ) -> Result<u64, Error> {
        let q = self
            .queues
            .get(queue)
            .ok_or_else(|| Error::UnknownQueue(queue.to_owned()))?;
        let ids: Vec<JobId> = q
            .idx
            .dead
            .iter()
            .take_while(|&&(died, _)| before.is_none_or(|b| died < b))
            .map(|&(_, id)| id)
            .collect();
        for &id in &ids {
            self.remove_job(id);
        }
        Ok(ids.len() as u64)
    }

    /// Jobs that reached a terminal state (by any path: complete, fail,
    /// lease expiry, cancel) since the last call, in the order they did,
    /// with the fire that created them. The engine drains this after every
    /// input to end "in flight" for schedule overlap. A redriven dead letter
    /// is live again but is not reported back; a dead letter later dropped by
    /// the dead-letter bound is not reported twice.
    #[must_use]
    pub(crate) fn take_finished(&mut self) -> Vec<(JobId, Option<FireId>)> {
        std::mem::take(&mut self.finished)
    }

    /// How the jobs of fires that became terminal since the last call
    /// ended (`finished_at` the engine clock; the claim time is the
    /// engine's to remember), in the order they did.
    #[must_use]
    pub(crate) fn take_ended(&mut self) -> Vec<(FireId, JobEnd)> {
        std::mem::take(&mut self.ended)
    }
}

/// When a checked enqueue request's job becomes available: `run_at` (a
/// past one means now) or `now + delay_ms`.
fn run_at(req: &EnqueueRequest, now: Timestamp) -> Timestamp {
    match (req.run_at, req.delay_ms) {
        (Some(at), _) => at.max(now),
        (None, Some(ms)) => now.saturating_add_ms(ms.max(0)),
        (None, None) => now,
    }
}
