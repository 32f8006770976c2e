//! Snapshots: the whole engine state as plain serde data with canonical
//! JSON (ordered maps, no floats, payloads verbatim), so that
//! `to_json(restore(x)) == x` byte for byte.
//!
//! Derived data is not stored: parsed specs are re-parsed from their
//! definitions, due times recomputed, and every index rebuilt on restore.
//! Undrained commands are not part of a snapshot: drain before taking one.

use crate::engine::Engine;
pub(crate) use crate::engine::leadership::Leadership;
use crate::engine::tzdb::{self, CivilRecord, Restored, TzContext};
use crate::engine::validate;
use crate::lease::Leases;
use crate::queue::Queues;
use crate::schedule::Schedules;
use crate::schedule::{Buffered, Counters, Grid, GridKey, InFlight, PauseChange, Schedule};
use crate::spec::TzDatabase;
use crate::time::Timestamp;
use crate::wire::config::EngineConfig;
use crate::wire::error::Error;
use crate::wire::ids::Epoch;
use crate::wire::run::RunRecord;
use crate::wire::schedule_def::{ScheduleDef, ScheduleStatus};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The snapshot format this build writes and reads.
///
/// 2: a buffered fire keeps its due time and target; pause changes of
/// unprocessed boundaries; version and fire-sequence floors of removed
/// schedules; the `pauseChanges` limit.
/// Also: queues keep fire keys in their own table (`fireKeys`), apart from
/// the keys of `Enqueue` inputs (`dedup`). A format-1 snapshot held both
/// in `dedup`, so it is refused rather than misread.
///
/// 3: the engine's `stopping` state (`Input::Stop`), a job's
/// `interruptions`, a queue's `maxInterruptions` and its `interrupted`
/// total (`Input::Recover`). Each is absent or 0 in format 2, which
/// therefore reads as format 3 with nothing stopping or interrupted
/// (a daemon upgraded in place keeps its data directory).
pub const SNAPSHOT_FORMAT: u32 = 3;

/// The oldest format [`Engine::restore`] reads.
const OLDEST_FORMAT: u32 = 2;

/// The state of an engine at one instant. Opaque: serialize it
/// ([`Snapshot::to_json`]) and hand it back to [`Engine::restore`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Snapshot {
    format: u32,
    config: EngineConfig,
    clock: Timestamp,
    leadership: Leadership,
    schedules: Vec<ScheduleState>,
    #[serde(default, skip_serializing_if = "is_zero")]
    version_floor: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    seq_floor: u64,
    queues: Queues,
    leases: Leases,
    #[serde(default, skip_serializing_if = "is_false")]
    stopping: bool,
    /// The tz database release the cursors were computed with (absent in
    /// snapshots written before chime recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tzdb: Option<String>,
}

/// One schedule in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ScheduleState {
    def: ScheduleDef,
    version: u64,
    status: ScheduleStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pause_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cursor: Option<Timestamp>,
    counters: Counters,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_epoch: Option<Epoch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    in_flight: Vec<InFlight>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    buffered: Option<Buffered>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pause_log: Vec<PauseChange>,
    /// The run history, oldest first (absent in older snapshots: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    runs: Vec<RunRecord>,
    /// What a zoned cursor means: civil time, zone, offset (see
    /// `engine::tzdb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    civil: Option<CivilRecord>,
}

// The compact decoder's records of the snapshot (see `wire::decode`):
// fields in declaration order, as the derive reads them.
#[cfg(any(feature = "compact-decode", test))]
mod decode {
    use super::{CivilRecord, Leadership, ScheduleState, Snapshot};
    use crate::lease::Leases;
    use crate::queue::Queues;
    use crate::schedule::{Buffered, Counters, InFlight, PauseChange};
    use crate::time::Timestamp;
    use crate::wire::config::EngineConfig;
    use crate::wire::decode::record_decoder;
    use crate::wire::ids::Epoch;
    use crate::wire::input::LeadershipGrant;
    use crate::wire::run::RunRecord;
    use crate::wire::schedule_def::{ScheduleDef, ScheduleStatus};

    record_decoder! {
        SnapshotB => Snapshot, "Snapshot", "11 elements", deny_unknown: true;
        format: u32, "format", req;
        config: EngineConfig, "config", req;
        clock: Timestamp, "clock", req;
        leadership: Leadership, "leadership", req;
        schedules: Vec<ScheduleState>, "schedules", req;
        version_floor: u64, "versionFloor", def;
        seq_floor: u64, "seqFloor", def;
        queues: Queues, "queues", req;
        leases: Leases, "leases", req;
        stopping: bool, "stopping", def;
        tzdb: Option<String>, "tzdb", def;
    }

    record_decoder! {
        ScheduleStateB => ScheduleState, "ScheduleState", "11 elements", deny_unknown: true;
        def: ScheduleDef, "def", req;
        version: u64, "version", req;
        status: ScheduleStatus, "status", req;
        pause_note: Option<String>, "pauseNote", def;
        cursor: Option<Timestamp>, "cursor", def;
        counters: Counters, "counters", req;
        last_epoch: Option<Epoch>, "lastEpoch", def;
        in_flight: Vec<InFlight>, "inFlight", def;
        buffered: Option<Buffered>, "buffered", def;
        pause_log: Vec<PauseChange>, "pauseLog", def;
        runs: Vec<RunRecord>, "runs", def;
        civil: Option<CivilRecord>, "civil", def;
    }

    record_decoder! {
        LeadershipB => Leadership, "Leadership", "2 elements", deny_unknown: true;
        grant: Option<LeadershipGrant>, "grant", def;
        highest: Epoch, "highest", req;
    }
}

// The compact decoder against the derive, on snapshots.
#[cfg(test)]
mod decode_tests;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Snapshot {
    /// Canonical JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("snapshot serializes")
    }

    /// Parses JSON written by [`Snapshot::to_json`]; anything else is
    /// `invalid_input` on field `snapshot`, with serde's message.
    pub fn from_json(text: &str) -> Result<Snapshot, Error> {
        // The npm package reads snapshots with the smaller decoder (same
        // results and errors).
        #[cfg(feature = "compact-decode")]
        let parsed = crate::wire::decode::from_str(text);
        #[cfg(not(feature = "compact-decode"))]
        let parsed = serde_json::from_str(text);
        parsed.map_err(|e| corrupt(e.to_string()))
    }

    /// The engine clock at the snapshot.
    pub fn clock(&self) -> Timestamp {
        self.clock
    }

    /// The format version.
    pub fn format(&self) -> u32 {
        self.format
    }

    /// The tz database release the snapshot's cursors were computed with
    /// (`None` for snapshots written before chime recorded it).
    pub fn tzdb(&self) -> Option<&str> {
        self.tzdb.as_deref()
    }
}

fn corrupt(message: String) -> Error {
    Error::InvalidInput {
        field: "snapshot",
        message,
    }
}

/// Persistence.
impl Engine {
    /// The whole state (drain commands first: they are not included).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            format: SNAPSHOT_FORMAT,
            config: self.config.clone(),
            clock: self.clock,
            leadership: self.leadership.clone(),
            schedules: self.schedules.iter().map(state_of).collect(),
            version_floor: self.schedules.version_floor,
            seq_floor: self.schedules.seq_floor,
            queues: self.queues.clone(),
            leases: self.leases.clone(),
            stopping: self.stopping,
            tzdb: Some(self.tzdb.version().to_string()),
        }
    }

    /// An engine from a snapshot. Specs are re-parsed (a zone database
    /// change could make one invalid: that is an error, not a panic).
    /// Under another tz database than the snapshot's, zoned cursors move
    /// to their civil time's new instant, each reported as an
    /// [`crate::Event::TzRulesChanged`] waiting in [`Engine::poll_command`]
    /// (see [`Engine::restore_with`] for the list itself).
    pub fn restore(snapshot: Snapshot) -> Result<Engine, Error> {
        Engine::restore_with(snapshot, TzDatabase::bundled()).map(|r| r.engine)
    }

    /// [`Engine::restore`] under `tzdb`, with the boundaries it moved.
    ///
    /// When the snapshot records another release than `tzdb`'s, every
    /// zoned schedule's cursor (its next unprocessed boundary) is found
    /// again from the civil time it stands for, never at or before the
    /// boundary before it (so nothing fires twice); fires already made,
    /// in flight or buffered keep their instants, and the counters are
    /// untouched (the accounting identity holds: the cursor is still the
    /// next unprocessed boundary). Each moved cursor is a
    /// [`crate::TzRuleChange`] in the result and an event.
    pub fn restore_with(snapshot: Snapshot, tzdb: TzDatabase) -> Result<Restored, Error> {
        if !(OLDEST_FORMAT..=SNAPSHOT_FORMAT).contains(&snapshot.format) {
            return Err(corrupt(format!(
                "format {} is not in {OLDEST_FORMAT}..={SNAPSHOT_FORMAT}",
                snapshot.format
            )));
        }
        let tz = TzContext::new(snapshot.tzdb.clone(), &tzdb);
        let mut changes = Vec::new();
        let mut engine = Engine::with_tzdb(snapshot.config, tzdb);
        engine.clock = snapshot.clock;
        engine.leadership = snapshot.leadership;
        engine.queues = snapshot.queues;
        engine.leases = snapshot.leases;
        engine.stopping = snapshot.stopping;
        let mut schedules = Schedules::default();
        schedules.version_floor = snapshot.version_floor;
        schedules.seq_floor = snapshot.seq_floor;
        for st in snapshot.schedules {
            let mut s = schedule_of(st, &engine.config, &engine.tzdb, &tz, &mut changes)?;
            if schedules.idx(&s.name).is_some() {
                return Err(corrupt(format!("schedule {:?} twice", s.name)));
            }
            s.grid = schedules.intern(s.grid);
            s.queue = schedules.queue_name(&s.queue);
            schedules.insert(s);
        }
        engine.schedules = schedules;
        engine.backlog = engine
            .schedules
            .next_due()
            .is_some_and(|d| d <= engine.clock);
        tzdb::report(&mut engine, &changes);
        Ok(Restored {
            engine,
            tz_changes: changes,
        })
    }
}

fn state_of(s: &Schedule) -> ScheduleState {
    ScheduleState {
        def: s.def(),
        version: s.version,
        status: s.status,
        pause_note: s.pause_note().cloned(),
        cursor: s.cursor,
        counters: s.counters(),
        last_epoch: s.last_epoch(),
        in_flight: s.in_flight().to_vec(),
        buffered: s.buffered().cloned(),
        pause_log: s.pause_log().to_vec(),
        runs: s.runs().iter().cloned().collect(),
        civil: tzdb::record_of(s),
    }
}

fn schedule_of(
    st: ScheduleState,
    config: &EngineConfig,
    db: &TzDatabase,
    tz: &TzContext,
    changes: &mut Vec<crate::wire::tz_change::TzRuleChange>,
) -> Result<Schedule, Error> {
    let spec = validate::check_def(&st.def, config, db)?;
    let grid = Arc::new(Grid::new(GridKey::of(&st.def), spec));
    let queue = st.def.target.queue.as_str().into();
    let mut s = Schedule::new(st.def, grid, queue);
    s.version = st.version;
    s.status = st.status;
    s.cursor = st.cursor;
    s.set_counters(st.counters);
    s.set_last_epoch(st.last_epoch);
    s.set_pause_note(st.pause_note);
    // Share the name with every fire id of the schedule.
    for mut f in st.in_flight {
        if *f.fire.schedule != *s.name || f.job.is_some() == f.deadline.is_some() {
            return Err(corrupt(format!("bad in-flight fire {}", f.fire)));
        }
        f.fire.schedule = s.name.clone();
        s.push_in_flight(f);
    }
    if let Some(mut b) = st.buffered {
        if *b.fire.schedule != *s.name || b.due_at < b.fire.nominal {
            return Err(corrupt(format!("bad buffered fire {}", b.fire)));
        }
        b.fire.schedule = s.name.clone();
        s.set_buffered(b);
    }
    if !st.pause_log.is_empty() {
        let ordered = st
            .pause_log
            .windows(2)
            .all(|w| w[0].at < w[1].at && w[0].paused != w[1].paused);
        let first_ok = st.cursor.is_some_and(|c| c <= st.pause_log[0].at);
        let last_ok = st.pause_log.last().map(|p| p.paused) == Some(s.is_paused());
        if !(ordered && first_ok && last_ok) {
            return Err(corrupt(format!("schedule {:?}: bad pause log", s.name)));
        }
        for p in st.pause_log {
            s.push_pause_change(p);
        }
    }
    let mut runs = std::collections::VecDeque::with_capacity(st.runs.len());
    for mut r in st.runs {
        if let Some(f) = &mut r.fire {
            if *f.schedule != *s.name {
                return Err(corrupt(format!("schedule {:?}: bad run {f}", s.name)));
            }
            f.schedule = s.name.clone();
        }
        runs.push_back(r);
    }
    // A lowered bound keeps the newest.
    while runs.len() > config.limits.runs_per_schedule {
        runs.pop_front();
    }
    s.set_runs(runs);
    let completed = s.status == ScheduleStatus::Completed;
    if completed != s.cursor.is_none() {
        return Err(corrupt(format!(
            "schedule {:?}: cursor and status disagree",
            s.name
        )));
    }
    if let (Some(c), Some(rec)) = (s.cursor, &st.civil)
        && let Some(change) = tz.recompute(&s, c, rec).map_err(corrupt)?
    {
        s.cursor = Some(change.new_at);
        changes.push(change);
    }
    if let Some(c) = s.cursor {
        // A cursor off the spec's grid (a tz database update between builds
        // moves cron boundaries; or an edited file) continues from the first
        // boundary at or after it: no boundary before it is lost, and none
        // that is not a boundary ever fires.
        let end = s.end_at();
        let Some(b) = s
            .spec()
            .first_at_or_after(c)
            .filter(|&b| end.is_none_or(|e| b < e))
        else {
            return Err(corrupt(format!(
                "schedule {:?}: no boundary at or after its cursor {c}",
                s.name
            )));
        };
        s.cursor = Some(b);
        s.prune_pause_log();
        s.due_at = s.due_of(config.seed, b);
    }
    let buffered_grid = u64::from(s.buffered().is_some_and(|b| b.fire.extra.is_none()));
    let n = s.n;
    let sums = n
        .grid_fires
        .checked_add(n.skipped)
        .and_then(|x| x.checked_add(buffered_grid));
    if sums != Some(n.processed) || n.fires < n.grid_fires {
        return Err(corrupt(format!("schedule {:?}: counters disagree", s.name)));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::config::EngineConfig;

    #[test]
    fn bad_snapshot_text_is_a_typed_error() {
        for bad in ["", "{", "[]", r#"{"format":1}"#] {
            let err = Snapshot::from_json(bad).unwrap_err();
            assert_eq!(err.code(), "invalid_input", "{bad:?}");
            assert!(err.to_string().starts_with("invalid_input: snapshot: "));
        }
        let json = Engine::new(EngineConfig::default()).snapshot().to_json();
        let back = Snapshot::from_json(&json).unwrap();
        assert_eq!(Engine::restore(back).unwrap().snapshot().to_json(), json);
    }
}
