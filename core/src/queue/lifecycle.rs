//! State transitions shared by several inputs: finishing a job, a failed
//! attempt (from `Fail` or a lease expiry), the retention and dead-letter
//! bounds, and `advance`.

use super::Queues;
use super::backoff::{AfterFailure, after_failure};
use super::rules;
use super::store::{self, Job};
use crate::time::Timestamp;
use crate::wire::command::{Command, Event, Output};
use crate::wire::config::Limits;
use crate::wire::ids::JobId;
use crate::wire::job::JobState;
use crate::wire::run::JobEnd;

impl Queues {
    /// Applies `f` to job `id`, keeping the indexes in step. If the job
    /// becomes available in a queue that had nothing available, the queue is
    /// woken through `out` (which must then be given): one `Wake` per
    /// transition from "nothing claimable" to "claimable".
    pub(super) fn transition(
        &mut self,
        id: JobId,
        out: Option<&mut Output>,
        f: impl FnOnce(&mut Job),
    ) {
        let job = self.jobs.get_mut(&id).expect("job exists");
        let q = self.queues.get_mut(&job.queue).expect("job's queue exists");
        store::unindex(&mut self.idx, &mut q.idx, id, job);
        f(job);
        if let Err(why) = job.check_shape() {
            panic!("job {} after a transition: {why}", id.0);
        }
        store::index(&mut self.idx, &mut q.idx, id, job);
        if job.state == JobState::Available && q.idx.available.len() == 1 {
            let out = out.expect("a transition to available has an output");
            out.push(Command::Wake {
                queue: job.queue.as_str().into(),
            });
        }
    }

    /// Moves a live job to a terminal `state` at `now`: fixes its retention
    /// and key expiry, reports it to [`Queues::take_finished`] and applies
    /// the retention count bound. The job may be gone afterwards (a
    /// retention of zero), so callers take what they need first.
    pub(super) fn finish(&mut self, now: Timestamp, id: JobId, state: JobState, out: &mut Output) {
        assert!(state.is_terminal(), "finish to a live state");
        let job = &self.jobs[&id];
        assert!(!job.state.is_terminal(), "job {} finished twice", id.0);
        let cfg = &self.queues[&job.queue].config;
        let retain_until = state.is_pruned().then(|| rules::retained_until(now, cfg));
        let key_until = rules::key_expires_at(now, cfg);
        let queue = job.queue.clone();
        self.finished.push((id, job.fire.clone()));
        if let Some(fire) = &job.fire {
            let end = JobEnd {
                id,
                state,
                attempts: job.attempt,
                started_at: None,
                finished_at: Some(now),
                error: job.last_error.clone(),
            };
            self.ended.push((fire.clone(), end));
        }
        self.transition(id, Some(out), |job| {
            job.state = state;
            job.lease = None;
            job.finished_at = Some(now);
            job.retain_until = retain_until;
        });
        self.dedup_finished(id, key_until);
        if state != JobState::Dead {
            self.trim_finished(&queue);
        }
    }

    /// A failed attempt of claimed job `id` (from `Fail` or a lease expiry):
    /// retry while attempts remain, else dead-letter or drop.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn failed_attempt(
        &mut self,
        now: Timestamp,
        id: JobId,
        error: String,
        retry_at: Option<Timestamp>,
        limits: &Limits,
        seed: u64,
        out: &mut Output,
    ) -> (JobState, Option<Timestamp>) {
        let job = &self.jobs[&id];
        assert_eq!(job.state, JobState::Claimed, "only a claimed job can fail");
        let cfg = &self.queues[&job.queue].config;
        let (attempt, queue) = (job.attempt, job.queue.clone());
        let delay_ms = match after_failure(cfg, job.max_attempts, seed, id, attempt) {
            AfterFailure::Retry { delay_ms } => delay_ms,
            AfterFailure::Exhausted { dead_letter } => {
                let state = self.give_up(now, id, error, dead_letter, "exhausted", limits, out);
                return (state, None);
            }
        };
        let run_at = match retry_at {
            Some(at) => at.max(now),
            None => now.saturating_add_ms(delay_ms),
        };
        let state = if run_at <= now {
            JobState::Available
        } else {
            JobState::Scheduled
        };
        self.totals(&queue).retried += 1;
        out.event(Event::JobRetried {
            job: id,
            queue,
            attempt,
            run_at,
            error: error.clone(),
        });
        self.transition(id, Some(out), |job| {
            job.state = state;
            job.lease = None;
            job.run_at = run_at;
            job.last_error = Some(error);
        });
        (state, Some(run_at))
    }

    /// Ends live job `id` for good: dead (kept) or, without dead letters,
    /// dropped, with `reason` (`exhausted`, `interrupted`) on the event.
    /// Returns where it ended up (the dead-letter bound may drop it at once).
    #[allow(clippy::too_many_arguments)]
    fn give_up(
        &mut self,
        now: Timestamp,
        id: JobId,
        error: String,
        dead_letter: bool,
        reason: &str,
        limits: &Limits,
        out: &mut Output,
    ) -> JobState {
        let job = self.jobs.get_mut(&id).expect("job exists");
        job.last_error = Some(error);
        let (attempt, queue) = (job.attempt, job.queue.clone());
        let state = if dead_letter {
            JobState::Dead
        } else {
            JobState::Dropped
        };
        self.finish(now, id, state, out);
        let q = self.queues.get_mut(&queue).expect("queue exists");
        if dead_letter {
            q.totals.dead += 1;
            out.event(Event::JobDead {
                job: id,
                queue: queue.clone(),
                attempts: attempt,
                reason: reason.into(),
            });
            self.trim_dead(&queue, now, limits, out);
        } else {
            q.totals.dropped += 1;
            out.event(Event::JobDropped {
                job: id,
                queue,
                reason: reason.into(),
            });
        }
        // The dead-letter bound may have dropped it at once (and
        // retention forgotten it): report where it ended up.
        self.jobs.get(&id).map_or(JobState::Dropped, |j| j.state)
    }

    /// `Recover` at `now`: every claimed job's attempt was interrupted by
    /// the host (the process that claimed it is gone). Each lease is
    /// marked interrupted and its deadline cut to `now` (at the latest),
    /// so its token is void at once and the budgeted lease pass of
    /// [`Queues::advance`] ends it — as an interruption, whatever its
    /// deadline: a lease that ran out while the host was down was not the
    /// worker's fault. Returns how many.
    pub(crate) fn interrupt_claimed(&mut self, now: Timestamp) -> u64 {
        let ids: Vec<JobId> = self.idx.claimed.iter().map(|&(_, id)| id).collect();
        for &id in &ids {
            self.transition(id, None, |job| {
                let lease = job.lease.as_mut().expect("claimed job has a lease");
                lease.deadline = lease.deadline.min(now);
                lease.interrupted = true;
            });
        }
        ids.len() as u64
    }

    /// An attempt of claimed job `id` that its host interrupted (see
    /// [`Queues::interrupt_claimed`]), reported `job_interrupted`: the job
    /// is available again at once with its attempt number given back (an
    /// interruption is not a failure: no attempt used, no backoff, `run_at`
    /// kept so it keeps its place in claim order), unless it has now been
    /// interrupted more than its queue's `max_interruptions` times: then
    /// it is dead (or dropped) with reason `interrupted`. At most three
    /// commands, as a lease expiry.
    fn interrupted_attempt(
        &mut self,
        now: Timestamp,
        id: JobId,
        limits: &Limits,
        out: &mut Output,
    ) {
        let job = &self.jobs[&id];
        let cfg = &self.queues[&job.queue].config;
        let (attempt, queue) = (job.attempt, job.queue.clone());
        let interruptions = job.interruptions.saturating_add(1);
        let beyond = interruptions > cfg.max_interruptions;
        let dead_letter = cfg.dead_letter;
        self.totals(&queue).interrupted += 1;
        out.event(Event::JobInterrupted {
            job: id,
            queue,
            attempt,
            interruptions,
        });
        if beyond {
            self.jobs.get_mut(&id).expect("job exists").interruptions = interruptions;
            let error = "interrupted".to_owned();
            self.give_up(now, id, error, dead_letter, "interrupted", limits, out);
            return;
        }
        self.transition(id, Some(out), |job| {
            job.interruptions = interruptions;
            job.state = JobState::Available;
            job.lease = None;
            // The interrupted attempt is given back: the next claim runs
            // it again under the same number.
            job.attempt -= 1;
        });
    }

    /// How many jobs are claimed now.
    pub(crate) fn claimed_count(&self) -> u64 {
        self.idx.claimed.len() as u64
    }

    /// Forgets the oldest retained finished jobs of `queue` beyond its
    /// `retention.completed_max`.
    pub(super) fn trim_finished(&mut self, queue: &str) {
        loop {
            let q = &self.queues[queue];
            if q.idx.finished.len() <= q.config.retention.completed_max as usize {
                return;
            }
            let &(_, id) = q.idx.finished.first().expect("non-empty");
            self.remove_job(id);
        }
    }

    /// Drops the oldest dead letters of `queue` beyond the per-queue bound,
    /// each reported as `JobDropped{reason: "dead_letter_limit"}`.
    fn trim_dead(&mut self, queue: &str, now: Timestamp, limits: &Limits, out: &mut Output) {
        loop {
            let q = &self.queues[queue];
            if q.idx.dead.len() <= limits.dead_letters_per_queue {
                break;
            }
            let &(_, id) = q.idx.dead.first().expect("non-empty");
            let retain_until = rules::retained_until(now, &q.config);
            self.transition(id, Some(out), |job| {
                job.state = JobState::Dropped;
                job.retain_until = Some(retain_until);
            });
            self.queues
                .get_mut(queue)
                .expect("queue exists")
                .totals
                .dropped += 1;
            out.event(Event::JobDropped {
                job: id,
                queue: queue.to_owned(),
                reason: "dead_letter_limit".into(),
            });
        }
        self.trim_finished(queue);
    }

    /// Deletes a terminal job (retention, purge). Its key stays remembered.
    pub(super) fn remove_job(&mut self, id: JobId) {
        let job = self.jobs.remove(&id).expect("job exists");
        assert!(job.state.is_terminal(), "removing live job {}", id.0);
        let q = self.queues.get_mut(&job.queue).expect("job's queue exists");
        store::unindex(&mut self.idx, &mut q.idx, id, &job);
    }

    /// Brings the queues to `now`: expired leases become failed attempts
    /// (`LeaseExpired`, then retry or dead letter, error `lease_expired`)
    /// and leases released by `Recover` interrupted ones (`JobInterrupted`),
    /// due scheduled jobs become available (one `Wake` per queue that gains
    /// claimable work), retention forgets old finished jobs, and expired
    /// idempotency keys are forgotten.
    ///
    /// Each of the four kinds of work is budgeted like fires: at most
    /// `limits.fires_per_advance` items of each per call, in time order, so
    /// one advance emits a bounded number of commands (a lease expiry emits
    /// at most three, a promotion at most one `Wake`) and does bounded work
    /// however much came due at once. Separate budgets keep a flood of one
    /// kind from starving another. What is left stays due:
    /// [`Queues::next_deadline`] is then at or before `now`, so the engine's
    /// `poll_timeout` returns its clock and the next advance goes on.
    pub(crate) fn advance(&mut self, now: Timestamp, limits: &Limits, seed: u64, out: &mut Output) {
        // At least one, so that a zero limit still makes progress.
        let budget = limits.fires_per_advance.max(1);
        for _ in 0..budget {
            let Some(&(deadline, id)) = self.idx.claimed.first() else {
                break;
            };
            if !deadline.lease_ended(now) {
                break;
            }
            let job = &self.jobs[&id];
            if job.lease.as_ref().is_some_and(|l| l.interrupted) {
                self.interrupted_attempt(now, id, limits, out);
                continue;
            }
            let (queue, attempt) = (job.queue.clone(), job.attempt);
            self.totals(&queue).expired += 1;
            out.event(Event::LeaseExpired {
                job: id,
                queue,
                attempt,
            });
            self.failed_attempt(now, id, "lease_expired".into(), None, limits, seed, out);
        }
        for _ in 0..budget {
            let Some(&(run_at, id)) = self.idx.scheduled.first() else {
                break;
            };
            if run_at > now {
                break;
            }
            self.transition(id, Some(out), |job| job.state = JobState::Available);
        }
        for _ in 0..budget {
            let Some(&(until, id)) = self.idx.retention.first() else {
                break;
            };
            if until > now {
                break;
            }
            self.remove_job(id);
        }
        self.dedup_expire(now, budget);
    }

    /// The earliest instant at which [`Queues::advance`] has work: a delayed
    /// job's `run_at`, a lease deadline, a retention expiry or a key expiry.
    /// O(log n): the first entry of four ordered indexes.
    pub(crate) fn next_deadline(&self) -> Option<Timestamp> {
        let firsts = [
            self.idx.scheduled.first().map(|e| e.0),
            // A lease ending at `Timestamp::MAX` never ends: no work there.
            self.idx
                .claimed
                .first()
                .map(|e| e.0)
                .filter(|&d| d < Timestamp::MAX),
            self.idx.retention.first().map(|e| e.0),
            self.idx.dedup_expiry.first().map(|e| e.0),
        ];
        firsts.into_iter().flatten().min()
    }
}
