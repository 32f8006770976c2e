//! Runtime state of one schedule: its definition, parsed spec, cursor,
//! counters, in-flight fires and buffered fire.
//!
//! The cursor is the next unprocessed boundary. Everything before it was
//! fired or skipped exactly once (the accounting identity); `processed`
//! counts the boundaries the cursor has passed, independently of the
//! counters that record what happened to them, so
//! [`Schedule::check_invariants`] can compare the two.

use crate::command::{Event, Output};
use crate::det;
use crate::ids::{Epoch, FireId, JobId};
use crate::schedule_def::{ScheduleDef, ScheduleInfo, ScheduleStatus};
use crate::spec::Spec;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Counters of one schedule (part of the snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Counters {
    /// Fires of every reason.
    pub fires: u64,
    /// Fires of grid boundaries (scheduled, catch-up, buffered): what
    /// `max_fires` counts.
    pub grid_fires: u64,
    /// Grid boundaries skipped, all reasons.
    pub skipped: u64,
    /// Grid boundaries the cursor has passed.
    pub processed: u64,
    /// Sequence of manual (`#m<n>`) and backfill (`#b<n>`) fire ids.
    pub seq: u64,
}

/// A fire whose job is not terminal yet (local queue) or that the external
/// transport has not settled (external queue).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct InFlight {
    /// The fire.
    pub fire: FireId,
    /// Its job in a local queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobId>,
    /// For an external fire: when it counts as settled without `FireSettled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Timestamp>,
}

/// Rarely set state, boxed so that most schedules pay one pointer for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rare {
    /// Note given with `PauseSchedule`.
    pub pause_note: Option<String>,
    /// The `buffer_one` fire waiting for the running one to end.
    pub buffered: Option<FireId>,
}

/// One schedule.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    /// Shared with fire ids and the due index.
    pub name: Arc<str>,
    /// `def.target.queue`, shared with every fire.
    pub queue: Arc<str>,
    /// The definition as last upserted.
    pub def: ScheduleDef,
    /// Parsed from `def` (never serialized).
    pub spec: Spec,
    /// Definition version.
    pub version: u64,
    /// Active, paused or completed.
    pub status: ScheduleStatus,
    /// Next unprocessed boundary; `None` once completed.
    pub cursor: Option<Timestamp>,
    /// When the cursor is due (cursor + jitter); meaningless without a cursor.
    pub due_at: Timestamp,
    /// Counters.
    pub n: Counters,
    /// Epoch of the last fire.
    pub last_epoch: Option<Epoch>,
    /// Fires in flight (only tracked for policies other than `allow`, and
    /// for fires whose own policy was not `allow`).
    pub in_flight: Vec<InFlight>,
    /// Pause note and buffered fire.
    pub rare: Option<Box<Rare>>,
}

impl Schedule {
    /// The boundary after `b` that belongs to the schedule (before `end_at`).
    pub fn next_boundary(&self, b: Timestamp) -> Option<Timestamp> {
        let next = self.spec.next_after(b)?;
        match self.def.end_at {
            Some(end) if next >= end => None,
            _ => Some(next),
        }
    }

    /// The first boundary strictly after `t` and not before `start_at`.
    pub fn first_boundary_after(&self, t: Timestamp) -> Option<Timestamp> {
        let from = match self.def.start_at {
            Some(start) if start.as_millis() - 1 > t.as_millis() => {
                Timestamp::from_millis(start.as_millis() - 1).unwrap_or(t)
            }
            _ => t,
        };
        let next = self.spec.next_after(from)?;
        match self.def.end_at {
            Some(end) if next >= end => None,
            _ => Some(next),
        }
    }

    /// When boundary `b` is due: `b` plus a deterministic jitter in
    /// `[0, jitter_ms]`, clamped to stay before the following boundary.
    pub fn due_of(&self, seed: u64, b: Timestamp) -> Timestamp {
        due_of(&self.spec, &self.name, self.def.jitter_ms, seed, b)
    }

    /// Whether the buffered slot holds a fire.
    pub fn buffered(&self) -> Option<&FireId> {
        self.rare.as_ref().and_then(|r| r.buffered.as_ref())
    }

    /// Takes the buffered fire.
    pub fn take_buffered(&mut self) -> Option<FireId> {
        let fire = self.rare.as_mut()?.buffered.take();
        self.shrink_rare();
        fire
    }

    /// Sets the buffered fire.
    pub fn set_buffered(&mut self, fire: FireId) {
        self.rare.get_or_insert_with(Box::default).buffered = Some(fire);
    }

    /// Sets or clears the pause note.
    pub fn set_pause_note(&mut self, note: Option<String>) {
        self.rare.get_or_insert_with(Box::default).pause_note = note;
        self.shrink_rare();
    }

    /// The pause note.
    pub fn pause_note(&self) -> Option<&String> {
        self.rare.as_ref().and_then(|r| r.pause_note.as_ref())
    }

    fn shrink_rare(&mut self) {
        if self.rare.as_deref().is_some_and(|r| *r == Rare::default()) {
            self.rare = None;
        }
    }

    /// Moves the cursor to `next` (the boundary after `from`, or `None` when
    /// there is no more) and completes the schedule when `max_fires` is
    /// reached or no boundary is left. Emits `ScheduleCompleted`. Returns
    /// whether the schedule completed.
    pub fn move_cursor(
        &mut self,
        from: Timestamp,
        next: Option<Timestamp>,
        seed: u64,
        out: &mut Output,
    ) -> bool {
        let reason = if self
            .def
            .max_fires
            .is_some_and(|max| self.n.grid_fires >= max)
        {
            Some("max_fires")
        } else if next.is_none() {
            Some(self.end_reason(from))
        } else {
            None
        };
        match reason {
            Some(reason) => {
                self.complete(reason, out);
                true
            }
            None => {
                let next = next.expect("checked above");
                self.cursor = Some(next);
                self.due_at = self.due_of(seed, next);
                false
            }
        }
    }

    /// Why there is no boundary after `from`: `end_at` or `exhausted`.
    pub fn end_reason(&self, from: Timestamp) -> &'static str {
        if self.def.end_at.is_some() && self.spec.next_after(from).is_some() {
            "end_at"
        } else {
            "exhausted"
        }
    }

    /// Marks the schedule completed.
    pub fn complete(&mut self, reason: &str, out: &mut Output) {
        self.status = ScheduleStatus::Completed;
        self.cursor = None;
        out.event(Event::ScheduleCompleted {
            schedule: self.name.to_string(),
            reason: reason.to_owned(),
        });
    }

    /// A fire id for grid boundary `b`.
    pub fn grid_fire_id(&self, b: Timestamp) -> FireId {
        FireId {
            schedule: self.name.clone(),
            nominal: b,
            extra: None,
        }
    }

    /// The getter view.
    pub fn info(&self) -> ScheduleInfo {
        ScheduleInfo {
            def: self.def.clone(),
            version: self.version,
            status: self.status,
            pause_note: self.pause_note().cloned(),
            next_nominal: self.cursor,
            next_due_at: self.cursor.map(|_| self.due_at),
            fires: self.n.fires,
            skipped: self.n.skipped,
            in_flight: self.in_flight.iter().map(|f| f.fire.clone()).collect(),
            buffered: self.buffered().is_some(),
            last_epoch: self.last_epoch,
        }
    }

    /// Checks the per-schedule invariants (panics when one is broken).
    pub fn check_invariants(&self, seed: u64) {
        assert_eq!(&*self.name, self.def.name, "name and def disagree");
        let buffered_grid = u64::from(self.buffered().is_some_and(|f| f.extra.is_none()));
        assert_eq!(
            self.n.processed,
            self.n.grid_fires + self.n.skipped + buffered_grid,
            "accounting identity broken for schedule {:?}",
            self.name
        );
        assert!(self.n.fires >= self.n.grid_fires, "fires < grid fires");
        match self.status {
            ScheduleStatus::Completed => assert!(self.cursor.is_none()),
            _ => {
                let c = self
                    .cursor
                    .expect("an active or paused schedule has a cursor");
                assert_eq!(self.due_at, self.due_of(seed, c), "stale due time");
                assert!(self.due_at >= c);
                if let Some(end) = self.def.end_at {
                    assert!(c < end, "cursor at or past end_at");
                }
            }
        }
        for f in &self.in_flight {
            assert_eq!(f.fire.schedule, self.name);
            assert!(f.job.is_some() != f.deadline.is_some(), "in-flight kind");
        }
    }
}

/// See [`Schedule::due_of`].
pub(crate) fn due_of(
    spec: &Spec,
    name: &str,
    jitter_ms: i64,
    seed: u64,
    b: Timestamp,
) -> Timestamp {
    if jitter_ms <= 0 {
        return b;
    }
    let room = match spec.next_after(b) {
        Some(next) => (next.as_millis() - b.as_millis() - 1).min(jitter_ms),
        None => jitter_ms,
    };
    let room = room.max(0) as u64;
    let offset = det::pick(seed, det::hash_str(name), b.as_millis() as u64, room);
    b.saturating_add_ms(offset as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SpecOptions;

    #[test]
    fn jitter_stays_before_the_next_boundary() {
        let spec = Spec::parse("@every 2s", &SpecOptions::default()).unwrap();
        for b in (0..200).map(|k| Timestamp::from_millis(k * 2000).unwrap()) {
            let due = due_of(&spec, "x", 10_000, 7, b);
            assert!(due >= b && due.as_millis() < b.as_millis() + 2000);
            assert_eq!(due, due_of(&spec, "x", 10_000, 7, b), "deterministic");
        }
        let t = Timestamp::from_millis(4000).unwrap();
        assert_eq!(due_of(&spec, "x", 0, 7, t), t);
    }
}
