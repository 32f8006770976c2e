//! Schedule inputs: upsert, remove, pause, resume, trigger, backfill, and
//! settlement of external fires. Each validates everything before it
//! mutates anything.

use crate::engine::Engine;
use crate::engine::fire::Offer;
use crate::schedule::Span;
use crate::schedule::{Grid, GridKey, Schedule};
use crate::spec::Spec;
use crate::time::Timestamp;
use crate::wire::command::{Event, FireReason, SkipReason};
use crate::wire::config::truncate;
use crate::wire::error::Error;
use crate::wire::ids::{FireId, FireKind};
use crate::wire::input::FireOutcome;
use crate::wire::reply::Reply;
use crate::wire::run::{JobEnd, RunOutcome};
use crate::wire::schedule_def::{Origin, Overlap, ScheduleDef, ScheduleStatus};
use std::sync::Arc;

impl Engine {
    fn known(&self, name: &str) -> Result<u32, Error> {
        self.schedules
            .idx(name)
            .ok_or_else(|| Error::UnknownSchedule(name.to_owned()))
    }

    /// Refuses a pause change that would have to be logged (boundaries up
    /// to now still unprocessed) when the log is full.
    fn pause_room(&self, s: &Schedule) -> Result<(), Error> {
        let limit = self.config.limits.pause_changes;
        if s.cursor.is_some_and(|c| c <= self.clock) && s.pause_log().len() >= limit {
            return Err(Error::LimitExceeded {
                what: "pause_changes",
                limit: limit as u64,
            });
        }
        Ok(())
    }

    /// `UpsertSchedule` (the def is validated and its spec parsed).
    pub(crate) fn upsert(&mut self, def: ScheduleDef, spec: Spec) -> Result<Reply, Error> {
        let (now, seed) = (self.clock, self.config.seed);
        self.owned_by(&def.name, def.origin)?;
        let Some(idx) = self.schedules.idx(&def.name) else {
            return self.create(def, spec);
        };
        let old = self.schedules.at(idx);
        if old.same_def(&def) {
            return Ok(Reply::ScheduleUpserted {
                version: old.version,
                next_fire: old.cursor,
                changed: false,
            });
        }
        let regrid = !old.grid.key.matches(&def)
            || old.start_at() != def.start_at
            || old.status == ScheduleStatus::Completed;
        let old_paused = old.paused;
        if !regrid && old_paused != def.paused {
            self.pause_room(old)?;
        }
        // Boundaries of the old grid up to now that were not processed yet
        // (a leadership gap, jitter, a held-back backlog) are dropped by a
        // regrid: each is reported as skipped, never lost silently.
        let redefined = match old.cursor {
            Some(c) if regrid => old.span(seed, c, now, Timestamp::MAX),
            _ => Span::EMPTY,
        };
        let grid = match old.grid.key.matches(&def) {
            true => old.grid.clone(),
            false => Arc::new(Grid::new(GridKey::of(&def), spec)),
        };
        let queue = match *old.queue == *def.target.queue {
            true => old.queue.clone(),
            false => def.target.queue.as_str().into(),
        };
        let mut s = old.clone();
        s.set_def(def, grid, queue);
        let first = if regrid {
            let from = start_from(&s, now);
            if s.spec().next_after(from).is_none() {
                return Err(Error::Spec(s.spec().no_occurrence_after(from)));
            }
            Some(s.first_boundary_after(now))
        } else {
            None
        };
        self.queues
            .ensure(&s.queue, &self.config.limits, &mut self.out)?;
        // Validated: from here on nothing fails.
        s.grid = self.schedules.intern(s.grid);
        s.queue = self.schedules.queue_name(&s.queue);
        self.schedules.unindex(idx);
        s.version += 1;
        if redefined.count > 0 {
            s.n.skipped += redefined.count;
            s.n.processed += redefined.count;
            let (first, last) = (redefined.first, redefined.last);
            let (skips, runs) = (&mut self.skips, self.config.limits.runs_per_schedule);
            let n = redefined.count;
            s.note_skip(skips, SkipReason::Redefined, n, first, last, now, runs);
        }
        match first {
            Some(first) => {
                if s.status == ScheduleStatus::Completed {
                    s.status = if s.paused {
                        ScheduleStatus::Paused
                    } else {
                        ScheduleStatus::Active
                    };
                }
                s.cursor = first;
                s.prune_pause_log();
                match first {
                    Some(c) => {
                        let max = s.max_fires_reached();
                        if max {
                            s.complete("max_fires", &mut self.out);
                        } else {
                            s.due_at = s.due_of(seed, c);
                        }
                    }
                    None => {
                        let reason = s.end_reason(start_from(&s, now));
                        s.complete(reason, &mut self.out);
                    }
                }
            }
            None => {
                if let Some(c) = s.cursor {
                    let past_end = s.end_at().is_some_and(|end| c >= end);
                    let max = s.max_fires_reached();
                    if past_end {
                        s.complete("end_at", &mut self.out);
                    } else if max {
                        s.complete("max_fires", &mut self.out);
                    } else {
                        s.due_at = s.due_of(seed, c);
                    }
                }
            }
        }
        if s.paused != old_paused {
            s.set_paused_at(now, s.paused);
        }
        let reply = Reply::ScheduleUpserted {
            version: s.version,
            next_fire: s.cursor,
            changed: true,
        };
        self.schedules.replace(idx, s);
        self.schedules.index(idx);
        if self.schedules.at(idx).in_flight().is_empty() {
            self.note_released(idx);
        }
        Ok(reply)
    }

    fn create(&mut self, def: ScheduleDef, spec: Spec) -> Result<Reply, Error> {
        let (now, seed) = (self.clock, self.config.seed);
        let limits = &self.config.limits;
        if self.schedules.len() >= limits.schedules {
            return Err(Error::LimitExceeded {
                what: "schedules",
                limit: limits.schedules as u64,
            });
        }
        let grid = Arc::new(Grid::new(GridKey::of(&def), spec));
        let queue = def.target.queue.as_str().into();
        let mut s = Schedule::new(def, grid, queue);
        // A re-created name continues above every version and fire id
        // sequence its earlier incarnations used.
        s.version = self.schedules.version_floor + 1;
        s.set_seq(self.schedules.seq_floor);
        let from = start_from(&s, now);
        if s.spec().next_after(from).is_none() {
            return Err(Error::Spec(s.spec().no_occurrence_after(from)));
        }
        self.queues.ensure(&s.queue, limits, &mut self.out)?;
        // Validated: from here on nothing fails.
        s.grid = self.schedules.intern(s.grid);
        s.queue = self.schedules.queue_name(&s.queue);
        match s.first_boundary_after(now) {
            Some(c) => {
                s.cursor = Some(c);
                s.due_at = s.due_of(seed, c);
            }
            None => {
                let reason = s.end_reason(from);
                s.complete(reason, &mut self.out);
            }
        }
        let reply = Reply::ScheduleUpserted {
            version: s.version,
            next_fire: s.cursor,
            changed: true,
        };
        self.schedules.insert(s);
        Ok(reply)
    }

    /// `RemoveSchedule`: in-flight jobs are left alone; a buffered fire is
    /// dropped (`fire_dropped`, reason `removed`).
    pub(crate) fn remove(&mut self, name: &str, by: Origin) -> Result<Reply, Error> {
        self.owned_by(name, by)?;
        let removed = self.schedules.remove(name);
        if let Some(b) = removed.as_ref().and_then(|s| s.buffered()) {
            self.out.event(Event::FireDropped {
                fire: b.fire.clone(),
                reason: "removed".into(),
            });
        }
        Ok(Reply::ScheduleRemoved {
            existed: removed.is_some(),
        })
    }

    /// Refuses an `api` change of a declared schedule: the declaration
    /// would undo it at the next start, so it is made there instead.
    fn owned_by(&self, name: &str, by: Origin) -> Result<(), Error> {
        match self.schedules.idx(name) {
            Some(idx) if by == Origin::Api && self.schedules.at(idx).origin == Origin::Declared => {
                Err(Error::ScheduleDeclared(name.to_owned()))
            }
            _ => Ok(()),
        }
    }

    /// `PauseSchedule`. A completed schedule stays completed; a buffered
    /// fire is dropped (skipped, reason `paused`).
    pub(crate) fn pause(&mut self, name: &str, note: Option<String>) -> Result<Reply, Error> {
        let idx = self.known(name)?;
        let now = self.clock;
        self.pause_room(self.schedules.at(idx))?;
        let text_bytes = self.config.limits.text_bytes;
        let s = self.schedules.at_mut(idx);
        if s.status != ScheduleStatus::Completed {
            s.set_paused_at(now, true);
            s.set_pause_note(note.map(|n| truncate(n, text_bytes)));
        }
        Ok(Reply::ScheduleStatus {
            status: self.schedules.at(idx).status,
        })
    }

    /// `ResumeSchedule`: boundaries after now fire again; those whose
    /// nominal time fell inside the pause are still skipped (`paused`)
    /// when they are processed, even if their due time is after now.
    pub(crate) fn resume(&mut self, name: &str) -> Result<Reply, Error> {
        let idx = self.known(name)?;
        let now = self.clock;
        if self.schedules.at(idx).is_paused() {
            self.pause_room(self.schedules.at(idx))?;
            let s = self.schedules.at_mut(idx);
            s.set_paused_at(now, false);
            s.set_pause_note(None);
        }
        Ok(Reply::ScheduleStatus {
            status: self.schedules.at(idx).status,
        })
    }

    fn leader_or_err(&self) -> Result<(), Error> {
        if self.stopping {
            Err(Error::Stopping)
        } else if self.is_leader() {
            Ok(())
        } else {
            Err(Error::NotLeader)
        }
    }

    /// `TriggerSchedule`: a manual fire `<name>@<now>#m<n>`.
    pub(crate) fn trigger(&mut self, name: &str, overlap: Option<Overlap>) -> Result<Reply, Error> {
        let idx = self.known(name)?;
        self.leader_or_err()?;
        let now = self.clock;
        let s = self.schedules.at(idx);
        let seq = s.seq() + 1;
        let overlap = overlap.unwrap_or(s.overlap);
        let id = FireId {
            schedule: s.name.clone(),
            nominal: now,
            extra: Some((FireKind::Manual, seq)),
        };
        let offer = self.offer(idx, id.clone(), now, FireReason::Manual, overlap);
        if let Offer::Refused(e) = offer {
            return Err(e);
        }
        self.schedules.at_mut(idx).set_seq(seq);
        Ok(match offer {
            Offer::Fired => Reply::Triggered {
                fire: Some(id),
                buffered: false,
            },
            Offer::Buffered => Reply::Triggered {
                fire: None,
                buffered: true,
            },
            _ => Reply::Triggered {
                fire: None,
                buffered: false,
            },
        })
    }

    /// `Backfill`: fires `<name>@<boundary>#b<n>` for the boundaries in
    /// `[from, to)` (default overlap `allow`).
    pub(crate) fn backfill(
        &mut self,
        name: &str,
        from: Timestamp,
        to: Timestamp,
        overlap: Option<Overlap>,
    ) -> Result<Reply, Error> {
        let idx = self.known(name)?;
        self.leader_or_err()?;
        let limit = self.config.limits.backfill_fires;
        let s = self.schedules.at(idx);
        let mut boundaries = Vec::new();
        let mut b = s.spec().first_at_or_after(from);
        while let Some(x) = b.filter(|&x| x < to) {
            if boundaries.len() >= limit as usize {
                return Err(Error::LimitExceeded {
                    what: "backfill_fires",
                    limit: u64::from(limit),
                });
            }
            boundaries.push(x);
            b = s.spec().next_after(x);
        }
        let (seq, name) = (s.seq() + 1, s.name.clone());
        if !boundaries.is_empty() {
            self.schedules.at_mut(idx).set_seq(seq);
        }
        let overlap = overlap.unwrap_or(Overlap::Allow);
        let (mut fires, mut skipped) = (Vec::new(), 0);
        for nominal in boundaries {
            let id = FireId {
                schedule: name.clone(),
                nominal,
                extra: Some((FireKind::Backfill, seq)),
            };
            match self.offer(idx, id.clone(), nominal, FireReason::Backfill, overlap) {
                Offer::Fired => fires.push(id),
                Offer::Buffered => {}
                Offer::Skipped | Offer::Refused(_) => skipped += 1,
            }
        }
        Ok(Reply::Backfilled { fires, skipped })
    }

    /// `FireSettled`: ends an external fire's in-flight state. Settling a
    /// fire that already counts as settled (late, duplicate, or untracked
    /// under `allow`) is accepted and changes nothing; a fire that was never
    /// made is `UnknownFire`.
    pub(crate) fn fire_settled(
        &mut self,
        fire: FireId,
        outcome: FireOutcome,
        job: Option<JobEnd>,
    ) -> Result<Reply, Error> {
        let Some(idx) = self.schedules.idx(&fire.schedule) else {
            return Err(Error::UnknownFire(fire));
        };
        let (now, text_bytes) = (self.clock, self.config.limits.text_bytes);
        let s = self.schedules.at_mut(idx);
        // The run's outcome, whatever the in-flight state says (an `allow`
        // fire is not tracked, a late settlement still tells how it ended).
        match &job {
            Some(end) => s.run_ended(&fire, end, text_bytes),
            None => {
                let o = match outcome {
                    FireOutcome::Succeeded => RunOutcome::Completed,
                    FireOutcome::Failed => RunOutcome::Failed,
                };
                s.run_settled(&fire, o, now);
            }
        }
        let Some(pos) = s.in_flight().iter().position(|f| f.fire == fire) else {
            let never = match fire.extra {
                None => s.cursor.is_some_and(|c| fire.nominal >= c),
                Some((_, n)) => n > s.seq(),
            };
            return if never {
                Err(Error::UnknownFire(fire))
            } else {
                Ok(Reply::FireSettled)
            };
        };
        if s.in_flight()[pos].deadline.is_none() {
            // A local job's fire ends with its job, not with FireSettled.
            return Ok(Reply::FireSettled);
        }
        let f = s.remove_in_flight(pos);
        let deadline = f.deadline.expect("external in-flight fire has a deadline");
        self.schedules.unsettled.remove(&(deadline, f.fire));
        self.note_released(idx);
        Ok(Reply::FireSettled)
    }
}

/// The instant after which the first boundary is searched: `now`, or just
/// before `start_at` when that is later.
fn start_from(s: &Schedule, now: Timestamp) -> Timestamp {
    match s.start_at() {
        Some(start) if start > now => Timestamp::from_millis(start.as_millis() - 1).unwrap_or(now),
        _ => now,
    }
}
