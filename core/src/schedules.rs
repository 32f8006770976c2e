//! The schedule collection: a slab of boxed schedules addressed by `u32`,
//! a name index, the due index ordered by `(due_at, name)`, the index of
//! external fires awaiting settlement, the set of buffered fires ready to
//! be released once the engine leads again, and the interned grids and
//! queue names that schedules share.
//!
//! Names are `Arc<str>` shared by the name index and every fire id, so a
//! schedule's name is allocated once however many places refer to it. The
//! due index does not hold names: each schedule carries a `rank`, a `u64`
//! whose order is the order of names (assigned between the neighbours'
//! ranks on insert, all re-spaced in the rare case there is no room), so
//! the index compares integers only and its entries are 20 bytes.

use crate::ids::FireId;
use crate::schedule::{Grid, GridKey, Schedule};
use crate::schedule_def::ScheduleStatus;
use crate::time::Timestamp;
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};
use std::sync::Arc;

/// Spacing of ranks appended after the last name or before the first.
const RANK_STEP: u64 = 1 << 32;

/// An interned grid, ordered by its key.
#[derive(Clone, Debug)]
struct Interned(Arc<Grid>);

impl PartialEq for Interned {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl Eq for Interned {}
impl PartialOrd for Interned {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Interned {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.key.cmp(&other.0.key)
    }
}
impl Borrow<GridKey> for Interned {
    fn borrow(&self) -> &GridKey {
        &self.0.key
    }
}

/// Every schedule of one engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct Schedules {
    slab: Vec<Option<Box<Schedule>>>,
    free: Vec<u32>,
    by_name: BTreeMap<Arc<str>, u32>,
    /// Active and paused schedules by `(due_at, rank)`.
    due: BTreeMap<(Timestamp, u64), u32>,
    /// External fires in flight by settlement deadline.
    pub unsettled: BTreeSet<(Timestamp, FireId)>,
    /// Schedules whose buffered fire waits only for leadership.
    pub ready: BTreeSet<Arc<str>>,
    /// Grids in use, each shared by every schedule with its key.
    grids: BTreeSet<Interned>,
    /// Target queue names in use (queues are never removed, so neither
    /// are these).
    queues: BTreeSet<Arc<str>>,
    /// Highest version of any removed schedule: a schedule created later
    /// starts above it, so `(name, version)` is unique for the engine's life.
    pub version_floor: u64,
    /// Highest manual/backfill fire sequence of any removed schedule: a
    /// schedule created later continues above it, so fire ids never repeat.
    pub seq_floor: u64,
}

impl Schedules {
    /// Number of schedules.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Slab index of a schedule.
    pub fn idx(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// A schedule by name.
    pub fn get(&self, name: &str) -> Option<&Schedule> {
        self.idx(name).map(|i| self.at(i))
    }

    /// A schedule by slab index (must exist).
    pub fn at(&self, idx: u32) -> &Schedule {
        self.slab[idx as usize].as_deref().expect("live slab slot")
    }

    /// A schedule by slab index (must exist).
    pub fn at_mut(&mut self, idx: u32) -> &mut Schedule {
        self.slab[idx as usize]
            .as_deref_mut()
            .expect("live slab slot")
    }

    /// Schedules in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Schedule> + '_ {
        self.by_name.values().map(|&i| self.at(i))
    }

    /// The shared grid equal to `grid` (`grid` itself when new). Call
    /// only once the schedule is validated: the grid stays until released.
    pub fn intern(&mut self, grid: Arc<Grid>) -> Arc<Grid> {
        if let Some(g) = self.grids.get(&grid.key) {
            return g.0.clone();
        }
        self.grids.insert(Interned(grid.clone()));
        grid
    }

    /// The shared name of queue `name`.
    pub fn queue_name(&mut self, name: &str) -> Arc<str> {
        if let Some(q) = self.queues.get(name) {
            return q.clone();
        }
        let q: Arc<str> = name.into();
        self.queues.insert(q.clone());
        q
    }

    /// Forgets `grid`, the grid of a schedule about to be dropped, unless
    /// another schedule uses it.
    fn release(&mut self, grid: &Arc<Grid>) {
        // Held by the set and by the dropped schedule: nobody else.
        if Arc::strong_count(grid) == 2 {
            self.grids.remove(&grid.key);
        }
    }

    /// Replaces schedule `idx` (same name; out of the due index) by `s`.
    pub fn replace(&mut self, idx: u32, mut s: Schedule) {
        let slot = self.at_mut(idx);
        assert!(slot.name == s.name, "replace keeps the name");
        s.rank = slot.rank;
        let old = std::mem::replace(slot, s);
        self.release(&old.grid);
    }

    /// Adds a new schedule (the name must be free) and indexes it.
    pub fn insert(&mut self, mut s: Schedule) -> u32 {
        let name = s.name.clone();
        s.rank = match self.rank_for(&name) {
            Some(rank) => rank,
            None => {
                self.respace();
                self.rank_for(&name).expect("room after re-spacing")
            }
        };
        let idx = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(Box::new(s));
                i
            }
            None => {
                let i = u32::try_from(self.slab.len()).expect("fewer than 2^32 schedules");
                self.slab.push(Some(Box::new(s)));
                i
            }
        };
        let old = self.by_name.insert(name, idx);
        assert!(old.is_none(), "schedule inserted twice");
        self.index(idx);
        self.index_in_flight(idx);
        idx
    }

    /// A rank between the ranks of the neighbours of `name`, if there is room.
    fn rank_for(&self, name: &str) -> Option<u64> {
        let before = self
            .by_name
            .range::<str, _>((Unbounded, Excluded(name)))
            .next_back();
        let after = self
            .by_name
            .range::<str, _>((Excluded(name), Unbounded))
            .next();
        let rank = |e: Option<(&Arc<str>, &u32)>| e.map(|(_, &i)| self.at(i).rank);
        match (rank(before), rank(after)) {
            (None, None) => Some(u64::MAX / 2),
            (Some(lo), None) => lo
                .checked_add(RANK_STEP)
                .or_else(|| (lo < u64::MAX).then(|| lo + (u64::MAX - lo).div_ceil(2))),
            (None, Some(hi)) => hi
                .checked_sub(RANK_STEP)
                .or_else(|| (hi > 0).then_some(hi / 2)),
            (Some(lo), Some(hi)) => (hi - lo >= 2).then(|| lo + (hi - lo) / 2),
        }
    }

    /// Spreads all ranks evenly (keeping name order) and rebuilds the due
    /// index. O(n log n); only when two neighbours' ranks touch.
    fn respace(&mut self) {
        let n = self.by_name.len() as u64;
        let step = u64::MAX / (n + 2);
        let order: Vec<u32> = self.by_name.values().copied().collect();
        for (k, &idx) in order.iter().enumerate() {
            self.at_mut(idx).rank = (k as u64 + 1) * step;
        }
        let entries: Vec<u32> = self.due.values().copied().collect();
        self.due.clear();
        for idx in entries {
            let s = self.at(idx);
            self.due.insert((s.due_at, s.rank), idx);
        }
    }

    /// Removes a schedule and every index entry of it.
    pub fn remove(&mut self, name: &str) -> Option<Box<Schedule>> {
        let idx = self.by_name.remove(name)?;
        self.unindex(idx);
        let s = self.slab[idx as usize].take().expect("live slab slot");
        for f in s.in_flight() {
            if let Some(d) = f.deadline {
                self.unsettled.remove(&(d, f.fire.clone()));
            }
        }
        self.ready.remove(&s.name);
        self.version_floor = self.version_floor.max(s.version);
        self.seq_floor = self.seq_floor.max(s.seq());
        self.free.push(idx);
        self.release(&s.grid);
        Some(s)
    }

    /// Puts the schedule in the due index if it has a cursor.
    pub fn index(&mut self, idx: u32) {
        let s = self.at(idx);
        if s.status != ScheduleStatus::Completed && s.cursor.is_some() {
            let key = (s.due_at, s.rank);
            self.due.insert(key, idx);
        }
    }

    /// Takes the schedule out of the due index (before changing its cursor).
    pub fn unindex(&mut self, idx: u32) {
        let s = self.at(idx);
        if s.cursor.is_some() {
            let key = (s.due_at, s.rank);
            self.due.remove(&key);
        }
    }

    fn index_in_flight(&mut self, idx: u32) {
        let s = self.slab[idx as usize].as_deref().expect("live slab slot");
        for f in s.in_flight() {
            if let Some(d) = f.deadline {
                self.unsettled.insert((d, f.fire.clone()));
            }
        }
        if s.buffered().is_some() && s.in_flight().is_empty() {
            self.ready.insert(s.name.clone());
        }
    }

    /// Pops the earliest due schedule if it is due at `now`.
    pub fn pop_due(&mut self, now: Timestamp) -> Option<u32> {
        let (&(due, _), _) = self.due.first_key_value()?;
        if due > now {
            return None;
        }
        self.due.pop_first().map(|(_, idx)| idx)
    }

    /// Earliest due time in the index.
    pub fn next_due(&self) -> Option<Timestamp> {
        self.due.first_key_value().map(|(k, _)| k.0)
    }

    /// Checks the indexes against the schedules (panics when broken).
    pub fn check_invariants(&self, seed: u64) {
        let mut indexed = 0;
        let mut unsettled = 0;
        let mut last_rank = None;
        for (name, &idx) in &self.by_name {
            let s = self.at(idx);
            assert_eq!(&s.name, name);
            assert!(last_rank < Some(s.rank), "ranks follow name order");
            last_rank = Some(s.rank);
            s.check_invariants(seed);
            let grid = self.grids.get(&s.grid.key).expect("grid interned");
            assert!(Arc::ptr_eq(&grid.0, &s.grid), "grid shared");
            assert!(self.queues.contains(&s.queue), "queue name interned");
            if s.cursor.is_some() {
                indexed += 1;
                assert_eq!(
                    self.due.get(&(s.due_at, s.rank)),
                    Some(&idx),
                    "schedule {name:?} missing from the due index"
                );
            }
            for f in s.in_flight() {
                if let Some(d) = f.deadline {
                    unsettled += 1;
                    assert!(self.unsettled.contains(&(d, f.fire.clone())));
                }
            }
        }
        assert_eq!(self.due.len(), indexed, "stale due-index entries");
        assert_eq!(self.unsettled.len(), unsettled, "stale unsettled entries");
        for g in &self.grids {
            assert!(Arc::strong_count(&g.0) > 1, "unused grid kept");
        }
        for name in &self.ready {
            let s = self.get(name).expect("ready schedule exists");
            assert!(s.buffered().is_some() && s.in_flight().is_empty());
        }
        assert_eq!(
            self.slab.iter().filter(|s| s.is_some()).count(),
            self.by_name.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule_def::ScheduleDef;
    use crate::spec::{Spec, SpecOptions};

    fn sched(name: &str, all: &mut Schedules) -> Schedule {
        let def: ScheduleDef = serde_json::from_value(serde_json::json!({
            "name": name, "spec": "@every 1s", "target": {"queue": "q"}
        }))
        .unwrap();
        let spec = Spec::parse(&def.spec, &SpecOptions::default()).unwrap();
        let grid = all.intern(Arc::new(Grid::new(GridKey::of(&def), spec)));
        let queue = all.queue_name("q");
        let mut s = Schedule::new(def, grid, queue);
        s.cursor = Some(Timestamp::from_millis(1000).unwrap());
        s.due_at = Timestamp::from_millis(1000).unwrap();
        s
    }

    /// Ranks follow name order whatever the insertion order, including
    /// the worst case for midpoints (always between the same two names),
    /// and equal due times pop in name order.
    #[test]
    fn ranks_keep_name_order() {
        let mut all = Schedules::default();
        let mut names: Vec<String> = (0..200).map(|i| format!("b{i:03}")).rev().collect();
        names.extend((0..100).map(|i| format!("a{}", "z".repeat(i))));
        names.extend((0..100).map(|i| format!("c{}", "0".repeat(i))));
        for name in &names {
            let s = sched(name, &mut all);
            all.insert(s);
            all.check_invariants(0);
        }
        let now = Timestamp::from_millis(1000).unwrap();
        let order: Vec<u32> = std::iter::from_fn(|| all.pop_due(now)).collect();
        let popped: Vec<Arc<str>> = order.iter().map(|&i| all.at(i).name.clone()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(popped.iter().map(|n| &**n).collect::<Vec<_>>(), sorted);
        assert_eq!(all.grids.len(), 1, "one shared grid");
    }
}
