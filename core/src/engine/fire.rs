//! Making fires: the overlap decision, the `Fire` command, the job in a
//! local queue or the `Enqueue` command for an external one, and in-flight
//! tracking (which ends when the job is terminal, the fire is settled, or
//! the external queue's `lease_ms` passes).

use crate::engine::Engine;
#[cfg(feature = "testing")]
use crate::engine::planted::PlantedBug;
use crate::schedule::{Buffered, FireTarget, InFlight};
use crate::time::Timestamp;
use crate::wire::command::{CancelReason, Command, Event, Fire, FireReason, SkipReason};
use crate::wire::error::Error;
use crate::wire::ids::{FireId, JobId};
use crate::wire::input::EnqueueRequest;
use crate::wire::queue_config::QueueMode;
use crate::wire::schedule_def::Overlap;

/// What happened to an offered fire.
#[derive(Debug)]
pub(crate) enum Offer {
    /// Fired.
    Fired,
    /// Skipped by the overlap policy.
    Skipped,
    /// Put in the `buffer_one` slot.
    Buffered,
    /// The target queue refused the job (e.g. the live-job limit).
    Refused(Error),
}

impl Engine {
    /// Offers fire `id` of schedule `idx` under `overlap`: fires, skips or
    /// buffers it. Does not touch the cursor or the skip counters.
    pub(crate) fn offer(
        &mut self,
        idx: u32,
        id: FireId,
        due_at: Timestamp,
        reason: FireReason,
        overlap: Overlap,
    ) -> Offer {
        // Planted (tests only): `allow` and `cancel_previous` act as `skip`.
        #[cfg(feature = "testing")]
        let overlap = match overlap {
            Overlap::Allow | Overlap::CancelPrevious
                if self.planted(PlantedBug::OverlapAlwaysSkip) =>
            {
                Overlap::Skip
            }
            other => other,
        };
        let (now, runs) = (self.clock, self.config.limits.runs_per_schedule);
        let s = self.schedules.at_mut(idx);
        if !s.in_flight().is_empty() {
            // A grid boundary's skip is recorded by the caller (with its
            // event); a manual or backfill fire's only here.
            let manual_skip = |s: &mut crate::schedule::Schedule| {
                if id.extra.is_some() {
                    let span = (id.nominal, id.nominal);
                    s.record_skip(SkipReason::Overlap, 1, span, now, runs);
                }
                Offer::Skipped
            };
            match overlap {
                Overlap::Skip => return manual_skip(s),
                Overlap::BufferOne if s.buffered().is_some() => return manual_skip(s),
                Overlap::BufferOne => {
                    let ev = Event::FireBuffered {
                        schedule: s.name.to_string(),
                        nominal: id.nominal,
                    };
                    let target = s.fire_target();
                    s.set_buffered(Buffered {
                        fire: id,
                        due_at,
                        target,
                    });
                    self.out.event(ev);
                    return Offer::Buffered;
                }
                Overlap::Allow | Overlap::CancelPrevious => {}
            }
        }
        let s = self.schedules.at(idx);
        let (previous, target) = (s.in_flight().len(), s.fire_target());
        match self.emit_fire(idx, id, due_at, reason, overlap != Overlap::Allow, target) {
            Ok(job) => {
                if overlap == Overlap::CancelPrevious {
                    self.cancel_previous(idx, previous, job);
                }
                Offer::Fired
            }
            Err(e) => Offer::Refused(e),
        }
    }

    /// Ends the first `previous` in-flight fires of schedule `idx`: local
    /// jobs are cancelled (`Superseded`), external fires stop counting.
    fn cancel_previous(&mut self, idx: u32, previous: usize, new_job: Option<JobId>) {
        let now = self.clock;
        let s = self.schedules.at_mut(idx);
        let old = s.drain_in_flight(previous);
        for f in old {
            match (f.job, f.deadline) {
                (Some(job), _) if Some(job) != new_job => {
                    // A job that already ended cannot be cancelled: nothing to do.
                    let _ = self
                        .queues
                        .cancel(now, job, CancelReason::Superseded, &mut self.out);
                }
                (Some(job), _) => self
                    .schedules
                    .at_mut(idx)
                    .insert_in_flight_first(f_with(job, f.fire)),
                (None, Some(d)) => {
                    self.schedules.unsettled.remove(&(d, f.fire));
                }
                (None, None) => unreachable!("in-flight fire without job or deadline"),
            }
        }
    }

    /// Emits fire `id` of schedule `idx` with `target` (the definition's,
    /// or a buffered fire's own): the `Fire` command and the job or
    /// `Enqueue`. Fails only when the local queue refuses the job, in which
    /// case nothing changed: a missing target queue (only a restored
    /// snapshot can lack it) is declared by the enqueue itself, once the
    /// job is accepted, and its `queue_created` still precedes the `Fire`.
    pub(crate) fn emit_fire(
        &mut self,
        idx: u32,
        id: FireId,
        due_at: Timestamp,
        reason: FireReason,
        track: bool,
        target: FireTarget,
    ) -> Result<Option<JobId>, Error> {
        let now = self.clock;
        let epoch = self.leadership.epoch(self.config.standalone);
        let limits = &self.config.limits;
        let cfg = self.queues.config(&target.queue);
        let (mode, lease_ms) = cfg.map_or((QueueMode::Local, 0), |c| (c.mode, c.lease_ms));
        let mut fire = Fire {
            fire_id: id.clone(),
            version: target.version,
            due_at,
            fired_at: now,
            reason,
            epoch,
            queue: target.queue.clone(),
            job: None,
        };
        let grid = id.extra.is_none();
        let recorded = id.clone();
        let mut tracked = None;
        let mut job = None;
        if mode == QueueMode::External {
            let kept = track.then(|| id.clone());
            let enqueue = Command::Enqueue {
                fire: id,
                queue: target.queue,
                payload: target.payload,
                headers: target.headers,
                epoch,
                priority: target.priority,
                max_attempts: target.max_attempts,
            };
            self.out.push(Command::Fire(fire));
            self.out.push(enqueue);
            if let Some(id) = kept {
                let deadline = now.saturating_add_ms(lease_ms);
                self.schedules.unsettled.insert((deadline, id.clone()));
                tracked = Some(InFlight {
                    fire: id,
                    job: None,
                    deadline: Some(deadline),
                });
            }
        } else {
            let req = EnqueueRequest {
                queue: target.queue.to_string(),
                payload: target.payload,
                key: Some(id.to_string()),
                run_at: None,
                delay_ms: None,
                priority: target.priority,
                max_attempts: target.max_attempts,
                headers: target.headers,
            };
            // An implicit queue is announced before the fire, the wake after.
            let done = self
                .queues
                .enqueue(now, req, Some(id.clone()), limits, &mut self.out)?;
            let j = done.job;
            fire.job = Some(j);
            job = Some(j);
            self.out.push(Command::Fire(fire));
            self.out.extend(done.wake);
            let live = self.queues.job_state(j).is_some_and(|st| !st.is_terminal());
            let s = self.schedules.at(idx);
            if track && live && !s.in_flight().iter().any(|f| f.job == Some(j)) {
                tracked = Some(f_with(j, id));
            }
        }
        let s = self.schedules.at_mut(idx);
        s.n.fires += 1;
        s.n.grid_fires += u64::from(grid);
        s.set_last_epoch(Some(epoch));
        if let Some(f) = tracked {
            s.push_in_flight(f);
        }
        let runs = self.config.limits.runs_per_schedule;
        s.record_fire(&recorded, reason, now, job, runs);
        Ok(job)
    }
}

fn f_with(job: JobId, fire: FireId) -> InFlight {
    InFlight {
        fire,
        job: Some(job),
        deadline: None,
    }
}

#[cfg(test)]
mod tests {
    use crate::{Command, Engine, EngineConfig, Event, Input, ScheduleDef, Snapshot, Timestamp};

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    /// An engine whose schedule `s` targets queue `q`, restored from a
    /// snapshot that lacks the queue (the only way a target can be missing).
    fn without_queue(live_jobs: usize) -> Engine {
        let mut e = Engine::new(EngineConfig::default());
        let def: ScheduleDef = serde_json::from_value(serde_json::json!({
            "name": "s", "spec": "@every 1h", "target": {"queue": "q"}
        }))
        .unwrap();
        e.handle(t(1000), Input::UpsertSchedule(def)).unwrap();
        while e.poll_command().is_some() {}
        let mut snap: serde_json::Value = serde_json::from_str(&e.snapshot().to_json()).unwrap();
        let queues = snap["queues"]["queues"].as_object_mut().unwrap();
        assert!(queues.remove("q").is_some());
        snap["config"]["limits"]["liveJobs"] = live_jobs.into();
        Engine::restore(Snapshot::from_json(&snap.to_string()).unwrap()).unwrap()
    }

    fn trigger() -> Input {
        Input::TriggerSchedule {
            name: "s".into(),
            overlap: None,
        }
    }

    #[test]
    fn a_refused_trigger_declares_no_queue() {
        let mut e = without_queue(0);
        let err = e.handle(t(2000), trigger()).unwrap_err();
        assert_eq!(err.code(), "limit_exceeded");
        assert!(e.queue_stats("q").is_none(), "no queue created");
        assert!(e.poll_command().is_none(), "no queue_created event");
        e.check_invariants();
    }

    #[test]
    fn an_implicit_queue_is_announced_before_the_fire() {
        let mut e = without_queue(10);
        e.handle(t(2000), trigger()).unwrap();
        let cmds: Vec<Command> = std::iter::from_fn(|| e.poll_command()).collect();
        assert!(
            matches!(
                &cmds[..],
                [
                    Command::Event(Event::QueueCreated { queue }),
                    Command::Fire(_),
                    Command::Wake { .. }
                ] if queue == "q"
            ),
            "{cmds:?}"
        );
        assert!(e.queue_stats("q").is_some());
        e.check_invariants();
    }
}
