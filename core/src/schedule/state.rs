//! Runtime state of one schedule: its definition (kept compactly: see
//! [`Schedule`]), parsed spec, cursor, counters, in-flight fires and
//! buffered fire.
//!
//! The cursor is the next unprocessed boundary. Everything before it was
//! fired or skipped exactly once (the accounting identity); `processed`
//! counts the boundaries the cursor has passed, independently of the
//! counters that record what happened to them, so
//! [`Schedule::check_invariants`] can compare the two.

use crate::det;
use crate::spec::{DstPolicy, Spec};
use crate::time::Timestamp;
use crate::wire::command::{Event, Output};
use crate::wire::ids::{Epoch, FireId, JobId};
use crate::wire::payload::{Headers, Payload};
use crate::wire::run::RunRecord;
use crate::wire::schedule_def::{
    Catchup, Origin, Overlap, ScheduleDef, ScheduleInfo, ScheduleStatus, Target,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
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

/// [`Counters`] without the rarely used `seq` (kept in [`Extras`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Fires of every reason.
    pub fires: u64,
    /// Fires of grid boundaries.
    pub grid_fires: u64,
    /// Grid boundaries skipped, all reasons.
    pub skipped: u64,
    /// Grid boundaries the cursor has passed.
    pub processed: u64,
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

/// A parsed spec with the text, zone and DST policy it came from. Interned
/// by [`Schedules`](crate::schedule::Schedules): schedules with the same
/// `(spec, tz, dst)` share one, so the common case pays a pointer for it.
#[derive(Debug)]
pub(crate) struct Grid {
    /// What it was parsed from (the interning key).
    pub key: GridKey,
    /// The parsed spec.
    pub spec: Spec,
}

/// `(spec text, tz, dst)` as given in the definition, ordered field by field (spec text, zone, then the DST policy's gap and
/// fold sides), so grids that differ in any of them are interned apart.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GridKey {
    /// `ScheduleDef::spec`, verbatim.
    pub text: Box<str>,
    /// `ScheduleDef::tz`, verbatim.
    pub tz: Option<Box<str>>,
    /// `ScheduleDef::dst`.
    pub dst: DstPolicy,
}

impl GridKey {
    /// The key of a definition.
    pub(crate) fn of(def: &ScheduleDef) -> GridKey {
        GridKey {
            text: def.spec.as_str().into(),
            tz: def.tz.as_deref().map(Into::into),
            dst: def.dst,
        }
    }

    /// Whether `def` has this spec, zone and DST policy.
    pub(crate) fn matches(&self, def: &ScheduleDef) -> bool {
        *self.text == *def.spec && self.tz.as_deref() == def.tz.as_deref() && self.dst == def.dst
    }
}

impl Grid {
    /// A grid for `key`, parsed as `spec`.
    pub(crate) fn new(key: GridKey, spec: Spec) -> Grid {
        Grid { key, spec }
    }
}

/// The parts of a schedule most never set, boxed together so that most
/// schedules pay one pointer for all of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Extras {
    /// `ScheduleDef::start_at`.
    pub start_at: Option<Timestamp>,
    /// `ScheduleDef::end_at`.
    pub end_at: Option<Timestamp>,
    /// `ScheduleDef::max_fires`.
    pub max_fires: Option<u64>,
    /// `ScheduleDef::target.max_attempts`.
    pub max_attempts: Option<u32>,
    /// `ScheduleDef::target.headers`.
    pub headers: Headers,
    /// `ScheduleDef::catchup` when not the default.
    pub catchup: Option<Catchup>,
    /// Note given with `PauseSchedule`.
    pub pause_note: Option<String>,
    /// The `buffer_one` fire waiting for the running one to end.
    pub buffered: Option<Buffered>,
    /// Pause changes that unprocessed boundaries still depend on: see
    /// [`Schedule::segment_at`].
    pub pause_log: Vec<PauseChange>,
    /// Fires in flight (only tracked for policies other than `allow`, and
    /// for fires whose own policy was not `allow`).
    pub in_flight: Vec<InFlight>,
    /// `Counters::seq`.
    pub seq: u64,
    /// The run history, oldest first (see `runs.rs`).
    pub runs: VecDeque<RunRecord>,
}

/// A change of the runtime pause state at `at`: it decides the fate of
/// boundaries with a nominal time after `at` (a boundary at `at` itself
/// was processed by the advance that precedes every input, so it belongs
/// to the state before).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PauseChange {
    /// When the change happened (the engine clock).
    pub at: Timestamp,
    /// The state from then on.
    pub paused: bool,
}

/// What a fire hands its job: taken from the definition when the fire is
/// made, and kept with a buffered fire so that it is released as it was
/// created, whatever upserts happen meanwhile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FireTarget {
    /// Definition version the fire was made under.
    pub version: u64,
    /// Target queue.
    pub queue: Arc<str>,
    /// Job payload.
    pub payload: Payload,
    /// Job priority.
    #[serde(default)]
    pub priority: i32,
    /// Attempts before dead-lettering (queue default when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Job headers.
    #[serde(default, skip_serializing_if = "Headers::is_empty")]
    pub headers: Headers,
}

/// A `buffer_one` fire waiting for the running one to end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Buffered {
    /// Its id.
    pub fire: FireId,
    /// When it was due (nominal + jitter for a grid boundary, the trigger
    /// time or boundary for manual and backfill fires); never after it fires.
    pub due_at: Timestamp,
    /// What its job carries, as of when it was buffered.
    pub target: FireTarget,
}

static NO_HEADERS: Headers = Headers::new();

/// One schedule. The definition is not stored as a [`ScheduleDef`]: its
/// parts are kept once (names and specs shared, rare parts boxed) and
/// [`Schedule::def`] rebuilds it for getters and snapshots.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    /// Shared with the name index and every fire id.
    pub name: Arc<str>,
    /// Spec, zone and DST policy (interned).
    pub grid: Arc<Grid>,
    /// Target queue (interned), shared with every fire.
    pub queue: Arc<str>,
    /// Target payload, shared with every fire.
    pub payload: Payload,
    /// Definition version.
    pub version: u64,
    /// Next unprocessed boundary; `None` once completed.
    pub cursor: Option<Timestamp>,
    /// When the cursor is due (cursor + jitter); meaningless without a cursor.
    pub due_at: Timestamp,
    /// Position of the name in name order (for the due index).
    pub rank: u64,
    /// Counters (but `seq`).
    pub n: Tally,
    /// Epoch of the last fire, if `fired`.
    epoch: u64,
    /// Whether `epoch` is set.
    fired: bool,
    /// `ScheduleDef::jitter_ms` (validated to `0..=86_400_000`).
    pub jitter_ms: u32,
    /// `ScheduleDef::target.priority`.
    pub priority: i32,
    /// `ScheduleDef::overlap`.
    pub overlap: Overlap,
    /// `ScheduleDef::paused` (the definition, not the runtime status).
    pub paused: bool,
    /// Active, paused or completed.
    pub status: ScheduleStatus,
    /// `ScheduleDef::origin`.
    pub origin: Origin,
    /// Rarely set parts.
    pub x: Option<Box<Extras>>,
}

/// Definition and runtime parts of [`Schedule`] that live in [`Extras`].
impl Schedule {
    /// A new schedule (version 1, no cursor yet) from a validated
    /// definition and its interned grid and queue name.
    pub(crate) fn new(def: ScheduleDef, grid: Arc<Grid>, queue: Arc<str>) -> Schedule {
        let mut s = Schedule {
            name: def.name.as_str().into(),
            grid,
            queue,
            payload: Payload::null(),
            version: 1,
            cursor: None,
            due_at: Timestamp::MIN,
            rank: 0,
            n: Tally::default(),
            epoch: 0,
            fired: false,
            jitter_ms: 0,
            priority: 0,
            overlap: Overlap::default(),
            paused: false,
            origin: Origin::Declared,
            status: if def.paused {
                ScheduleStatus::Paused
            } else {
                ScheduleStatus::Active
            },
            x: None,
        };
        s.set_def(def, s.grid.clone(), s.queue.clone());
        s
    }

    /// Replaces the definition parts (not the runtime state).
    pub(crate) fn set_def(&mut self, def: ScheduleDef, grid: Arc<Grid>, queue: Arc<str>) {
        debug_assert!(grid.key.matches(&def) && *queue == *def.target.queue);
        self.grid = grid;
        self.queue = queue;
        self.payload = def.target.payload;
        self.jitter_ms = u32::try_from(def.jitter_ms).expect("validated jitter");
        self.priority = def.target.priority;
        self.overlap = def.overlap;
        self.paused = def.paused;
        self.origin = def.origin;
        let x = self.x.get_or_insert_with(Box::default);
        x.start_at = def.start_at;
        x.end_at = def.end_at;
        x.max_fires = def.max_fires;
        x.max_attempts = def.target.max_attempts;
        x.headers = def.target.headers;
        x.catchup = (def.catchup != Catchup::default()).then_some(def.catchup);
        self.shrink_extras();
    }

    /// The definition as last upserted (rebuilt from its parts).
    pub(crate) fn def(&self) -> ScheduleDef {
        let key = &self.grid.key;
        ScheduleDef {
            name: self.name.to_string(),
            spec: key.text.to_string(),
            tz: key.tz.as_deref().map(str::to_owned),
            dst: key.dst,
            target: Target {
                queue: self.queue.to_string(),
                payload: self.payload.clone(),
                priority: self.priority,
                max_attempts: self.max_attempts(),
                headers: self.headers().clone(),
            },
            jitter_ms: i64::from(self.jitter_ms),
            start_at: self.start_at(),
            end_at: self.end_at(),
            max_fires: self.max_fires(),
            paused: self.paused,
            overlap: self.overlap,
            catchup: self.catchup(),
            origin: self.origin,
        }
    }

    /// Whether `def` is the definition as last upserted.
    pub(crate) fn same_def(&self, def: &ScheduleDef) -> bool {
        *self.name == *def.name
            && self.grid.key.matches(def)
            && *self.queue == *def.target.queue
            && self.payload == def.target.payload
            && self.priority == def.target.priority
            && self.max_attempts() == def.target.max_attempts
            && *self.headers() == def.target.headers
            && i64::from(self.jitter_ms) == def.jitter_ms
            && self.start_at() == def.start_at
            && self.end_at() == def.end_at
            && self.max_fires() == def.max_fires
            && self.paused == def.paused
            && self.overlap == def.overlap
            && self.catchup() == def.catchup
            && self.origin == def.origin
    }

    /// Epoch of the last fire.
    pub(crate) fn last_epoch(&self) -> Option<Epoch> {
        self.fired.then_some(Epoch(self.epoch))
    }

    /// Sets the epoch of the last fire.
    pub(crate) fn set_last_epoch(&mut self, epoch: Option<Epoch>) {
        self.fired = epoch.is_some();
        self.epoch = epoch.map_or(0, |e| e.0);
    }

    /// Sequence of manual and backfill fire ids.
    pub(crate) fn seq(&self) -> u64 {
        self.x.as_ref().map_or(0, |x| x.seq)
    }

    /// Sets the sequence of manual and backfill fire ids.
    pub(crate) fn set_seq(&mut self, seq: u64) {
        self.x.get_or_insert_with(Box::default).seq = seq;
        self.shrink_extras();
    }

    /// The counters, as in a snapshot.
    pub(crate) fn counters(&self) -> Counters {
        let n = self.n;
        Counters {
            fires: n.fires,
            grid_fires: n.grid_fires,
            skipped: n.skipped,
            processed: n.processed,
            seq: self.seq(),
        }
    }

    /// Sets the counters (from a snapshot).
    pub(crate) fn set_counters(&mut self, c: Counters) {
        self.n = Tally {
            fires: c.fires,
            grid_fires: c.grid_fires,
            skipped: c.skipped,
            processed: c.processed,
        };
        self.set_seq(c.seq);
    }

    /// What a fire made now hands its job (the current definition).
    pub(crate) fn fire_target(&self) -> FireTarget {
        FireTarget {
            version: self.version,
            queue: self.queue.clone(),
            payload: self.payload.clone(),
            priority: self.priority,
            max_attempts: self.max_attempts(),
            headers: self.headers().clone(),
        }
    }

    /// The parsed spec.
    pub(crate) fn spec(&self) -> &Spec {
        &self.grid.spec
    }

    /// `ScheduleDef::start_at`.
    pub(crate) fn start_at(&self) -> Option<Timestamp> {
        self.x.as_ref().and_then(|x| x.start_at)
    }

    /// `ScheduleDef::end_at`.
    pub(crate) fn end_at(&self) -> Option<Timestamp> {
        self.x.as_ref().and_then(|x| x.end_at)
    }

    /// `ScheduleDef::max_fires`.
    pub(crate) fn max_fires(&self) -> Option<u64> {
        self.x.as_ref().and_then(|x| x.max_fires)
    }

    /// `ScheduleDef::target.max_attempts`.
    pub(crate) fn max_attempts(&self) -> Option<u32> {
        self.x.as_ref().and_then(|x| x.max_attempts)
    }

    /// `ScheduleDef::target.headers`.
    pub(crate) fn headers(&self) -> &Headers {
        self.x.as_ref().map_or(&NO_HEADERS, |x| &x.headers)
    }

    /// `ScheduleDef::catchup`.
    pub(crate) fn catchup(&self) -> Catchup {
        self.x.as_ref().and_then(|x| x.catchup).unwrap_or_default()
    }

    /// Fires in flight.
    pub(crate) fn in_flight(&self) -> &[InFlight] {
        self.x.as_ref().map_or(&[], |x| &x.in_flight)
    }

    /// Adds an in-flight fire.
    pub(crate) fn push_in_flight(&mut self, f: InFlight) {
        self.x.get_or_insert_with(Box::default).in_flight.push(f);
    }

    /// Removes and returns the in-flight fire at `pos`.
    pub(crate) fn remove_in_flight(&mut self, pos: usize) -> InFlight {
        let x = self.x.as_mut().expect("in-flight fires live in extras");
        let f = x.in_flight.remove(pos);
        self.shrink_extras();
        f
    }

    /// Removes and returns the first `n` in-flight fires.
    pub(crate) fn drain_in_flight(&mut self, n: usize) -> Vec<InFlight> {
        let Some(x) = self.x.as_mut() else {
            return Vec::new();
        };
        let old = x.in_flight.drain(..n).collect();
        self.shrink_extras();
        old
    }

    /// Puts an in-flight fire first.
    pub(crate) fn insert_in_flight_first(&mut self, f: InFlight) {
        self.x
            .get_or_insert_with(Box::default)
            .in_flight
            .insert(0, f);
    }

    /// The buffered fire, if any.
    pub(crate) fn buffered(&self) -> Option<&Buffered> {
        self.x.as_ref().and_then(|x| x.buffered.as_ref())
    }

    /// Takes the buffered fire.
    pub(crate) fn take_buffered(&mut self) -> Option<Buffered> {
        let fire = self.x.as_mut()?.buffered.take();
        self.shrink_extras();
        fire
    }

    /// Sets the buffered fire.
    pub(crate) fn set_buffered(&mut self, fire: Buffered) {
        self.x.get_or_insert_with(Box::default).buffered = Some(fire);
    }

    /// Pause changes that unprocessed boundaries still depend on.
    pub(crate) fn pause_log(&self) -> &[PauseChange] {
        self.x.as_ref().map_or(&[], |x| &x.pause_log)
    }

    /// Sets the runtime pause state at `now`. When boundaries with a
    /// nominal time at or before `now` are still unprocessed (a leadership
    /// gap, jitter, or a backlog held back by a per-advance limit), the
    /// change is logged so that each of them keeps the state it had at its
    /// nominal time. Returns whether the state changed.
    pub(crate) fn set_paused_at(&mut self, now: Timestamp, paused: bool) -> bool {
        if self.status == ScheduleStatus::Completed || self.is_paused() == paused {
            return false;
        }
        self.prune_pause_log();
        self.status = if paused {
            ScheduleStatus::Paused
        } else {
            ScheduleStatus::Active
        };
        if self.cursor.is_some_and(|c| c <= now) {
            let x = self.x.get_or_insert_with(Box::default);
            match x.pause_log.last() {
                // Paused and resumed at one instant: no boundary lies in
                // between, so the two changes cancel out.
                Some(last) if last.at == now => {
                    x.pause_log.pop();
                }
                _ => x.pause_log.push(PauseChange { at: now, paused }),
            }
            self.shrink_extras();
        }
        true
    }

    /// Appends a logged pause change (from a snapshot, already checked).
    pub(crate) fn push_pause_change(&mut self, p: PauseChange) {
        self.x.get_or_insert_with(Box::default).pause_log.push(p);
    }

    /// Whether the runtime state is paused.
    pub(crate) fn is_paused(&self) -> bool {
        self.status == ScheduleStatus::Paused
    }

    /// The pause state of boundary `b` (at or after the cursor) and the
    /// last nominal time with that state (`None`: unbounded). Changes are
    /// alternating, so the state before the first logged change is the
    /// opposite of it.
    pub(crate) fn segment_at(&self, b: Timestamp) -> (bool, Option<Timestamp>) {
        match self.pause_log().iter().find(|p| b <= p.at) {
            Some(p) => (!p.paused, Some(p.at)),
            None => (self.is_paused(), None),
        }
    }

    /// Forgets pause changes that no unprocessed boundary depends on.
    pub(crate) fn prune_pause_log(&mut self) {
        let Some(x) = self.x.as_deref_mut() else {
            return;
        };
        let keep = match self.cursor {
            Some(c) => x.pause_log.iter().position(|p| c <= p.at),
            None => None,
        };
        match keep {
            Some(0) => return,
            Some(k) => {
                x.pause_log.drain(..k);
            }
            None if x.pause_log.is_empty() => return,
            None => x.pause_log.clear(),
        }
        self.shrink_extras();
    }

    /// Sets or clears the pause note.
    pub(crate) fn set_pause_note(&mut self, note: Option<String>) {
        self.x.get_or_insert_with(Box::default).pause_note = note;
        self.shrink_extras();
    }

    /// The pause note.
    pub(crate) fn pause_note(&self) -> Option<&String> {
        self.x.as_ref().and_then(|x| x.pause_note.as_ref())
    }

    pub(super) fn shrink_extras(&mut self) {
        if let Some(x) = self.x.as_deref_mut() {
            if *x == Extras::default() {
                self.x = None;
            } else {
                if x.in_flight.is_empty() && x.in_flight.capacity() > 0 {
                    x.in_flight = Vec::new();
                }
                if x.pause_log.is_empty() && x.pause_log.capacity() > 0 {
                    x.pause_log = Vec::new();
                }
                if x.runs.is_empty() && x.runs.capacity() > 0 {
                    x.runs = VecDeque::new();
                }
            }
        }
    }
}

impl Schedule {
    /// The boundary after `b` that belongs to the schedule (before `end_at`).
    pub(crate) fn next_boundary(&self, b: Timestamp) -> Option<Timestamp> {
        let next = self.spec().next_after(b)?;
        match self.end_at() {
            Some(end) if next >= end => None,
            _ => Some(next),
        }
    }

    /// The first boundary strictly after `t` and not before `start_at`.
    pub(crate) fn first_boundary_after(&self, t: Timestamp) -> Option<Timestamp> {
        // Searching strictly after `start_at − 1` finds `start_at` itself.
        let before_start = self.start_at().and_then(|start| start.checked_add_ms(-1));
        let from = before_start.map_or(t, |b| b.max(t));
        let next = self.spec().next_after(from)?;
        match self.end_at() {
            Some(end) if next >= end => None,
            _ => Some(next),
        }
    }

    /// When boundary `b` is due: `b` plus a deterministic jitter in
    /// `[0, jitter_ms]`, clamped to stay before the following boundary.
    pub(crate) fn due_of(&self, seed: u64, b: Timestamp) -> Timestamp {
        due_of(self.spec(), &self.name, i64::from(self.jitter_ms), seed, b)
    }

    /// Moves the cursor to `next` (the boundary after `from`, or `None` when
    /// there is no more) and completes the schedule when `max_fires` is
    /// reached or no boundary is left. Emits `ScheduleCompleted`. Returns
    /// whether the schedule completed.
    pub(crate) fn move_cursor(
        &mut self,
        from: Timestamp,
        next: Option<Timestamp>,
        seed: u64,
        out: &mut Output,
    ) -> bool {
        let reason = if self.max_fires_reached() {
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
                self.prune_pause_log();
                false
            }
        }
    }

    /// Whether `max_fires` grid fires were made or are committed: a grid
    /// fire waiting in the `buffer_one` slot counts, since it fires when the
    /// running job ends (otherwise the schedule would make one too many).
    pub(crate) fn max_fires_reached(&self) -> bool {
        let buffered = u64::from(self.buffered().is_some_and(|b| b.fire.extra.is_none()));
        self.max_fires()
            .is_some_and(|max| self.n.grid_fires + buffered >= max)
    }

    /// Why there is no boundary after `from`: `end_at` or `exhausted`.
    pub(crate) fn end_reason(&self, from: Timestamp) -> &'static str {
        if self.end_at().is_some() && self.spec().next_after(from).is_some() {
            "end_at"
        } else {
            "exhausted"
        }
    }

    /// Marks the schedule completed.
    pub(crate) fn complete(&mut self, reason: &str, out: &mut Output) {
        self.status = ScheduleStatus::Completed;
        self.cursor = None;
        self.prune_pause_log();
        out.event(Event::ScheduleCompleted {
            schedule: self.name.to_string(),
            reason: reason.to_owned(),
        });
    }

    /// A fire id for grid boundary `b`.
    pub(crate) fn grid_fire_id(&self, b: Timestamp) -> FireId {
        FireId {
            schedule: self.name.clone(),
            nominal: b,
            extra: None,
        }
    }

    /// The getter view.
    pub(crate) fn info(&self) -> ScheduleInfo {
        ScheduleInfo {
            def: self.def(),
            version: self.version,
            status: self.status,
            pause_note: self.pause_note().cloned(),
            next_nominal: self.cursor,
            next_due_at: self.cursor.map(|_| self.due_at),
            fires: self.n.fires,
            skipped: self.n.skipped,
            in_flight: self.in_flight().iter().map(|f| f.fire.clone()).collect(),
            buffered: self.buffered().is_some(),
            last_epoch: self.last_epoch(),
            runs: self.runs().iter().rev().cloned().collect(),
        }
    }

    /// Checks the per-schedule invariants (panics when one is broken).
    pub(crate) fn check_invariants(&self, seed: u64) {
        let buffered_grid = u64::from(self.buffered().is_some_and(|b| b.fire.extra.is_none()));
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
                if let Some(end) = self.end_at() {
                    assert!(c < end, "cursor at or past end_at");
                }
            }
        }
        if let Some(x) = &self.x {
            assert!(**x != Extras::default(), "empty extras are dropped");
        }
        let log = self.pause_log();
        if let Some(first) = log.first() {
            let c = self
                .cursor
                .expect("a pause log only while boundaries are pending");
            assert!(c <= first.at, "pause log not pruned");
        }
        for w in log.windows(2) {
            assert!(
                w[0].at < w[1].at && w[0].paused != w[1].paused,
                "pause log order"
            );
        }
        if let Some(last) = log.last() {
            assert_eq!(last.paused, self.is_paused(), "pause log ends in the state");
        }
        if let Some(b) = self.buffered() {
            assert_eq!(b.fire.schedule, self.name);
            assert!(b.due_at >= b.fire.nominal, "buffered due before nominal");
        }
        for f in self.in_flight() {
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
mod tests;
