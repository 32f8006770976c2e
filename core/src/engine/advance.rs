//! Time passing: everything `Advance` does, and the bookkeeping after
//! every input (jobs that ended free their schedule's overlap slot and
//! release a buffered fire).
//!
//! Order within one advance: clock, leadership expiry, queues (promotions,
//! lease expiries, retention), named leases, ended jobs, unsettled external
//! fires, buffered releases, then due boundaries in `(due_at, name,
//! nominal)` order, then the aggregated skip events.

use crate::engine::Engine;
use crate::engine::fire::Offer;
#[cfg(feature = "testing")]
use crate::engine::planted::PlantedBug;
use crate::schedule::Tick;
use crate::time::Timestamp;
use crate::wire::command::{Event, FireReason, SkipReason};
use crate::wire::run::RunOutcome;
use crate::wire::schedule_def::Overlap;

/// How many due schedules [`Schedules::warm`](crate::schedule::Schedules::warm)
/// reads ahead of the fire loop.
const WARM_AHEAD: usize = 16;

impl Engine {
    /// Moves the clock to `now` (clamped) and does everything due.
    pub(crate) fn advance_to(&mut self, now: Timestamp) {
        let now = if now < self.clock {
            self.out.event(Event::ClockClamped {
                given: now,
                clock: self.clock,
            });
            self.clock
        } else {
            now
        };
        self.clock = now;
        // Planted (tests only): a grant that never runs out.
        #[cfg(feature = "testing")]
        let never_expires = self.planted(PlantedBug::LeadershipNeverExpires);
        #[cfg(not(feature = "testing"))]
        let never_expires = false;
        if !self.config.standalone && !never_expires {
            self.leadership.expire(now, &mut self.out);
        }
        let (limits, seed) = (&self.config.limits, self.config.seed);
        self.queues.advance(now, limits, seed, &mut self.out);
        self.leases.advance(now, &mut self.out);
        self.settle_finished();
        self.expire_unsettled();
        if self.fires() {
            self.release_ready();
            self.fire_due();
        }
        self.skips.flush(&mut self.out);
    }

    /// Fires what became due because leadership was (re)gained.
    pub(crate) fn catch_up_now(&mut self) {
        self.release_ready();
        self.fire_due();
    }

    /// Bookkeeping after an input was applied.
    pub(crate) fn after_input(&mut self) {
        // A backlog ends once nothing due is left (the input may have
        // removed, paused or re-timed the schedules that were behind): the
        // flag must be what a restore derives from the due index, or a
        // restarted engine would wake and fire at other moments than the
        // one that crashed (simulation seeds 97 and 99 at 2,000 steps).
        self.backlog &= self.schedules.next_due().is_some_and(|d| d <= self.clock);
        self.settle_finished();
        if self.fires() {
            self.release_ready();
            // An input can make a boundary due at the current clock (an
            // upsert that lowers jitter): fire it now rather than leave it
            // behind until the next advance. A pending backlog (the
            // per-advance fire limit) waits for the next advance as usual.
            if !self.backlog {
                self.fire_due();
            }
        }
        self.skips.flush(&mut self.out);
    }

    /// Jobs that became terminal end their fire's in-flight state and
    /// give their run its outcome.
    fn settle_finished(&mut self) {
        let text_bytes = self.config.limits.text_bytes;
        for (fire, end) in self.queues.take_ended() {
            if let Some(idx) = self.schedules.idx(&fire.schedule) {
                self.schedules
                    .at_mut(idx)
                    .run_ended(&fire, &end, text_bytes);
            }
        }
        for (job, fire) in self.queues.take_finished() {
            let Some(fire) = fire else { continue };
            let Some(idx) = self.schedules.idx(&fire.schedule) else {
                continue;
            };
            let s = self.schedules.at_mut(idx);
            if let Some(pos) = s.in_flight().iter().position(|f| f.job == Some(job)) {
                s.remove_in_flight(pos);
                self.note_released(idx);
            }
        }
    }

    /// External fires past their queue's `lease_ms` count as settled.
    fn expire_unsettled(&mut self) {
        let now = self.clock;
        while self.schedules.unsettled.first().is_some_and(|e| e.0 <= now) {
            let (_, fire) = self.schedules.unsettled.pop_first().expect("non-empty");
            let idx = self
                .schedules
                .idx(&fire.schedule)
                .expect("unsettled fire has a schedule");
            let s = self.schedules.at_mut(idx);
            let pos = s
                .in_flight()
                .iter()
                .position(|f| f.fire == fire && f.deadline.is_some());
            s.remove_in_flight(pos.expect("unsettled fire is in flight"));
            s.run_settled(&fire, RunOutcome::Unsettled, now);
            self.out.event(Event::FireUnsettled { fire });
            self.note_released(idx);
        }
    }

    /// Claimed jobs of fires: their run's attempt and start.
    pub(crate) fn runs_claimed(&mut self, now: Timestamp, jobs: &[crate::wire::job::Claimed]) {
        for c in jobs {
            let Some(fire) = &c.fire else { continue };
            if let Some(idx) = self.schedules.idx(&fire.schedule) {
                let s = self.schedules.at_mut(idx);
                s.run_claimed(fire, c.job, c.attempt, now);
            }
        }
    }

    /// Called when an in-flight fire of `idx` ended.
    pub(crate) fn note_released(&mut self, idx: u32) {
        let s = self.schedules.at(idx);
        if s.in_flight().is_empty() && s.buffered().is_some() {
            let name = s.name.clone();
            self.schedules.ready.insert(name);
        }
    }

    /// Fires the buffered fires whose predecessors ended (leader only).
    fn release_ready(&mut self) {
        while let Some(name) = self.schedules.ready.pop_first() {
            let idx = self.schedules.idx(&name).expect("ready schedule exists");
            let s = self.schedules.at_mut(idx);
            let b = s
                .take_buffered()
                .expect("ready schedule has a buffered fire");
            let track = s.overlap != Overlap::Allow;
            let grid = b.fire.extra.is_none();
            let nominal = b.fire.nominal;
            let fired =
                self.emit_fire(idx, b.fire, b.due_at, FireReason::Buffered, track, b.target);
            if fired.is_err() && grid {
                let s = self.schedules.at_mut(idx);
                s.n.skipped += 1;
                let (now, runs) = (self.clock, self.config.limits.runs_per_schedule);
                let skips = &mut self.skips;
                s.note_skip(skips, SkipReason::QueueFull, 1, nominal, nominal, now, runs);
            }
        }
    }

    /// Processes due boundaries within the per-advance budgets.
    fn fire_due(&mut self) {
        let now = self.clock;
        self.schedules.begin_due(now);
        let budget_hit = self.fire_due_loop();
        self.schedules.flush_due();
        self.backlog = budget_hit && self.schedules.next_due().is_some_and(|d| d <= now);
    }

    /// The loop of [`Engine::fire_due`]. Returns whether the fire budget
    /// ran out.
    fn fire_due_loop(&mut self) -> bool {
        let now = self.clock;
        let (mut fires, mut steps) = (0u32, 0usize);
        loop {
            if fires >= self.config.limits.fires_per_advance {
                return true;
            }
            if steps % WARM_AHEAD == 0 {
                std::hint::black_box(self.schedules.warm(now, WARM_AHEAD));
            }
            steps += 1;
            let Some(idx) = self.schedules.pop_due(now) else {
                return false;
            };
            if self.step(idx) {
                fires += 1;
            }
        }
    }

    /// One popped schedule (out of the due index; re-indexed here).
    /// Returns whether a boundary fired.
    fn step(&mut self, idx: u32) -> bool {
        let (now, seed) = (self.clock, self.config.seed);
        // Planted (tests only): a paused schedule on the plain path fires.
        #[cfg(feature = "testing")]
        let keep_firing = self.planted(PlantedBug::PausedKeepFiring);
        #[cfg(not(feature = "testing"))]
        let keep_firing = false;
        let s = self.schedules.at_mut(idx);
        let c = s.cursor.expect("indexed schedule has a cursor");
        let next = s.next_boundary(c);
        let backlog = next.is_some_and(|n| s.due_of(seed, n) <= now);
        let cutoff = now.as_millis().saturating_sub(s.catchup().window_ms);
        let plain = (keep_firing || !s.is_paused())
            && s.pause_log().is_empty()
            && s.due_at.as_millis() >= cutoff;
        if !plain || backlog {
            s.catch_up(&mut Tick {
                now,
                seed,
                skips: &mut self.skips,
                out: &mut self.out,
                runs: self.config.limits.runs_per_schedule,
            });
            if s.cursor != Some(c) {
                // Skipped up to a later boundary: it is popped again when due.
                self.schedules.index_after(idx, now);
                return false;
            }
        }
        assert!(
            keep_firing || !s.segment_at(c).0,
            "a paused boundary is never offered"
        );
        let reason = if backlog {
            FireReason::Catchup
        } else {
            FireReason::Scheduled
        };
        let (id, due_at, overlap) = (s.grid_fire_id(c), s.due_at, s.overlap);
        s.n.processed += 1;
        let offer = self.offer(idx, id, due_at, reason, overlap);
        let s = self.schedules.at_mut(idx);
        let skipped = match offer {
            Offer::Fired | Offer::Buffered => None,
            Offer::Skipped => Some(SkipReason::Overlap),
            Offer::Refused(_) => Some(SkipReason::QueueFull),
        };
        if let Some(reason) = skipped {
            s.n.skipped += 1;
            let runs = self.config.limits.runs_per_schedule;
            s.note_skip(&mut self.skips, reason, 1, c, c, now, runs);
        }
        s.move_cursor(c, next, seed, &mut self.out);
        self.schedules.index_after(idx, now);
        matches!(offer, Offer::Fired)
    }
}
