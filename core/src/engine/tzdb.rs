//! Tz database upgrades: what a snapshot keeps of each zoned cursor's
//! meaning, how a restore under another release finds the boundary again,
//! and [`tzdb_diff`], which says beforehand what an upgrade would move.
//!
//! A cron cursor is an instant computed from a civil time with the rules of
//! one tz release. When a government changes its rules, the next release
//! puts the same civil time at another instant; a restore that kept the
//! old instant would fire at a time the spec no longer means, or (if it
//! only snapped the cursor to the new grid) skip a boundary without a word.
//! So a snapshot records its release and, per zoned schedule, the cursor's
//! civil time, zone and offset, and the boundary before the cursor; a
//! restore under another release looks the civil time up again.

use crate::engine::Engine;
use crate::engine::snapshot::Snapshot;
use crate::schedule::Schedule;
use crate::spec::TzDatabase;
use crate::spec::meaning::CivilTime;
use crate::time::Timestamp;
use crate::wire::command::Event;
use crate::wire::error::Error;
use crate::wire::tz_change::TzRuleChange;
use serde::{Deserialize, Serialize};

/// What a zoned cursor means, kept beside it in the snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CivilRecord {
    /// The civil date-time, e.g. `2025-04-02T09:00:00` (for a boundary
    /// shifted out of a spring-forward gap, the start of the gap).
    pub(crate) time: String,
    /// The zone it is read in.
    pub(crate) zone: String,
    /// Seconds east of UTC that map `time` to the cursor.
    pub(crate) offset_seconds: i32,
    /// The schedule's boundary before the cursor under the same rules: no
    /// processed boundary is later, so a moved cursor stays after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) after: Option<Timestamp>,
}

// The compact decoder's record (see `wire::decode`).
#[cfg(any(feature = "compact-decode", test))]
mod decode {
    use super::CivilRecord;
    use crate::time::Timestamp;
    use crate::wire::decode::record_decoder;

    record_decoder! {
        CivilRecordB => CivilRecord, "CivilRecord", "4 elements", deny_unknown: true;
        time: String, "time", req;
        zone: String, "zone", req;
        offset_seconds: i32, "offsetSeconds", req;
        after: Option<Timestamp>, "after", def;
    }
}

/// The record of `s`'s cursor, for a zoned schedule that has one.
pub(crate) fn record_of(s: &Schedule) -> Option<CivilRecord> {
    let c = s.cursor?;
    let spec = s.spec();
    let civil = spec.civil_of(c)?;
    Some(CivilRecord {
        time: civil.text(),
        zone: spec.zone_name().to_string(),
        offset_seconds: civil.offset_s,
        after: spec.prev_before(c),
    })
}

/// What [`Engine::restore_with`] gives back.
#[derive(Debug)]
#[non_exhaustive]
pub struct Restored {
    /// The engine (the same events wait in its command queue).
    pub engine: Engine,
    /// Every cursor the restore moved, in schedule order; empty when the
    /// snapshot was computed with the same release.
    pub tz_changes: Vec<TzRuleChange>,
}

/// The releases a restore goes between.
pub(crate) struct TzContext {
    old: Option<String>,
    new: String,
}

impl TzContext {
    pub(crate) fn new(old: Option<String>, db: &TzDatabase) -> TzContext {
        TzContext {
            old,
            new: db.version().to_string(),
        }
    }

    /// Whether cursors must be looked up again: the snapshot names another
    /// release (one that names none predates the record, and keeps its
    /// cursors as before).
    fn changed(&self) -> bool {
        self.old.as_deref().is_some_and(|v| v != self.new)
    }

    /// The move of `s`'s cursor `c`, parsed under the new rules, if it
    /// moves. `Err` for a record that does not describe `c`.
    pub(crate) fn recompute(
        &self,
        s: &Schedule,
        c: Timestamp,
        rec: &CivilRecord,
    ) -> Result<Option<TzRuleChange>, String> {
        let civil = CivilTime {
            local_ms: c.as_millis() + i64::from(rec.offset_seconds) * 1000,
            offset_s: rec.offset_seconds,
        };
        if civil.text() != rec.time || rec.after.is_some_and(|a| a >= c) {
            return Err(format!(
                "schedule {:?}: civil record disagrees with its cursor",
                s.name
            ));
        }
        if !self.changed() {
            return Ok(None);
        }
        let spec = s.spec();
        let mut at = spec.boundary_for(civil);
        if let (Some(b), Some(after)) = (at, rec.after)
            && b <= after
        {
            at = spec.next_after(after);
        }
        let end = s.end_at();
        let Some(new_at) = at.filter(|&b| end.is_none_or(|e| b < e)) else {
            // No boundary left under the new rules: the cursor stays, and
            // the restore's usual check decides (as without a record).
            return Ok(None);
        };
        Ok((new_at != c).then(|| TzRuleChange {
            schedule: s.name.to_string(),
            zone: rec.zone.clone(),
            civil: rec.time.clone(),
            old_at: c,
            new_at,
            old_tzdb: self.old.clone(),
            new_tzdb: self.new.clone(),
        }))
    }
}

/// Emits one event per moved cursor.
pub(crate) fn report(engine: &mut Engine, changes: &[TzRuleChange]) {
    for c in changes {
        engine.out.event(Event::TzRulesChanged {
            schedule: c.schedule.clone(),
            zone: c.zone.clone(),
            civil: c.civil.clone(),
            old_at: c.old_at,
            new_at: c.new_at,
            old_tzdb: c.old_tzdb.clone(),
            new_tzdb: c.new_tzdb.clone(),
        });
    }
}

/// What [`tzdb_diff`] finds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TzdbDiff {
    /// The snapshot's release (`None`: not recorded).
    pub snapshot_tzdb: Option<String>,
    /// The release compared with (this binary's).
    pub tzdb: String,
    /// The release the later fires' old instants come from, when one was
    /// given (`old` of [`tzdb_diff`]).
    pub compared_tzdb: Option<String>,
    /// Zoned schedules with a cursor that were looked at.
    pub schedules: u64,
    /// Every fire that moves, by schedule name, then time.
    pub moves: Vec<TzRuleChange>,
}

/// Largest `next` [`tzdb_diff`] follows per schedule.
pub const MAX_DIFF_FIRES: usize = 1000;

/// Which of the snapshot's next fires move under `new` (this binary's
/// database) compared with the snapshot's own release. Without `old`: the
/// cursor of every zoned schedule, what [`Engine::restore_with`] would
/// move, from the snapshot's record alone. With `old` holding the
/// snapshot's rules: the next `next` fires of each (at most
/// [`MAX_DIFF_FIRES`]), the k-th under `old` against the k-th under `new`
/// (the first being the cursor each restore gives).
pub fn tzdb_diff(
    snapshot: &Snapshot,
    old: Option<&TzDatabase>,
    new: &TzDatabase,
    next: usize,
) -> Result<TzdbDiff, Error> {
    let next = next.clamp(1, MAX_DIFF_FIRES);
    let restored = Engine::restore_with(snapshot.clone(), new.clone())?;
    let engine = restored.engine;
    let before = match old {
        Some(db) => Some(Engine::restore_with(snapshot.clone(), db.clone())?.engine),
        None => None,
    };
    let mut moves = Vec::new();
    let mut schedules = 0;
    for s in engine.schedules.iter() {
        let spec = s.spec();
        let Some(cursor) = s.cursor.filter(|_| spec.civil_zone().is_some()) else {
            continue;
        };
        schedules += 1;
        let Some((before, db)) = before.as_ref().zip(old) else {
            let first = restored.tz_changes.iter().find(|c| *c.schedule == *s.name);
            moves.extend(first.cloned());
            continue;
        };
        let Some(was) = before.schedules.get(&s.name) else {
            continue;
        };
        let (mut a, mut b) = (was.cursor, Some(cursor));
        let (end_a, end_b) = (was.end_at(), s.end_at());
        for _ in 0..next {
            let (Some(old_at), Some(new_at)) = (a, b) else {
                break;
            };
            if old_at != new_at {
                let civil = spec.civil_of(new_at).map(|c| c.text()).unwrap_or_default();
                moves.push(TzRuleChange {
                    schedule: s.name.to_string(),
                    zone: spec.zone_name().to_string(),
                    civil,
                    old_at,
                    new_at,
                    old_tzdb: Some(db.version().to_string()),
                    new_tzdb: new.version().to_string(),
                });
            }
            a = was
                .spec()
                .next_after(old_at)
                .filter(|&n| end_a.is_none_or(|e| n < e));
            b = spec
                .next_after(new_at)
                .filter(|&n| end_b.is_none_or(|e| n < e));
        }
    }
    Ok(TzdbDiff {
        snapshot_tzdb: snapshot.tzdb().map(str::to_string),
        tzdb: new.version().to_string(),
        compared_tzdb: old.map(|d| d.version().to_string()),
        schedules,
        moves,
    })
}
