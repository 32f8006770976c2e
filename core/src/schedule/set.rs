//! The schedule collection: a slab of schedules addressed by `u32`,
//! a name index, the due index ordered by `(due_at, name)`, the index of
//! external fires awaiting settlement, the set of buffered fires ready to
//! be released once the engine leads again, and the interned grids and
//! queue names that schedules share.
//!
//! Names are `Arc<str>` shared by the name index and every fire id, so a
//! schedule's name is allocated once however many places refer to it. The
//! due index does not hold names: each schedule carries a `rank`, a `u64`
//! whose order is the order of names, so the index compares integers only
//! and its entries are 20 bytes.
//!
//! Ranks are an order-maintenance labelling (Bender et al., "Two
//! simplified algorithms for maintaining order in a list", 2002): a new
//! name takes the midpoint of its neighbours' ranks; when they touch, the
//! smallest aligned power-of-two range of ranks around the insertion point
//! that is sparse enough is re-spaced evenly, and only the schedules in it
//! move (in the due index too). The density allowed shrinks geometrically
//! with the range's size, which bounds the re-labelling to amortized
//! O(log n) schedules per insert whatever the order names arrive in
//! (always between the same two names, always first, ...): without it,
//! re-spacing every rank when two touch cost O(n log n) every ~40 inserts.

use crate::schedule::{Grid, GridKey, Schedule};
use crate::time::Timestamp;
use crate::wire::ids::FireId;
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};
use std::sync::Arc;

/// Spacing of ranks appended after the last name or before the first.
const RANK_STEP: u64 = 1 << 32;

/// `LEVEL_CAP[i]`: most names (the one being inserted included) that the
/// aligned rank range of size `2^i` may hold to be re-spaced, `⌊(2/T)^i⌋`
/// for `T = 1.4`. Smaller ranges must be sparser, so re-spacing one
/// leaves room in all its sub-ranges for many inserts before they fill
/// up again (the amortized bound). `T = 1.4` is large enough that few
/// schedules move per level and small enough that half the rank space
/// (`LEVEL_CAP[63] = (2/T)^63 ≈ 2^32.4`) takes every schedule a `u32`
/// slab can address, so `make_room` always finds a range (checked below).
/// Integer arithmetic, evaluated at compile time: deterministic.
const LEVEL_CAP: [u64; 64] = level_caps();

// More than a `u32` slab can hold, plus the name being inserted.
const _: () = assert!(LEVEL_CAP[63] > u32::MAX as u64 + 1);

const fn level_caps() -> [u64; 64] {
    let mut caps = [0; 64];
    // (10/7)^i in 64.64 fixed point: at most 2^97, no overflow.
    let mut v: u128 = 1 << 64;
    let mut i = 0;
    while i < 64 {
        caps[i] = (v >> 64) as u64;
        v = v * 10 / 7;
        i += 1;
    }
    caps
}

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

/// Slots per slab chunk.
const CHUNK: usize = 1024;

/// Schedules stored inline in fixed-size chunks, addressed by `u32`.
///
/// Inline, not boxed: firing reads the schedule straight from its slot, one
/// cache miss fewer per fire than through a `Box`. Chunked, not one `Vec`:
/// a slot is a whole schedule, so a doubling `Vec` could leave up to half
/// of its capacity empty (31 % at 100k schedules) and copied each schedule
/// on every growth; a chunk holds at most 1,023 empty slots and never moves.
#[derive(Clone, Debug, Default)]
struct Slab {
    chunks: Vec<Box<[Option<Schedule>]>>,
    len: usize,
}

impl Slab {
    fn slot(&mut self, idx: u32) -> &mut Option<Schedule> {
        let i = idx as usize;
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }

    fn get(&self, idx: u32) -> Option<&Schedule> {
        let i = idx as usize;
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)?.as_ref()
    }

    fn get_mut(&mut self, idx: u32) -> Option<&mut Schedule> {
        self.slot(idx).as_mut()
    }

    /// Stores `s` in a new slot; returns its index.
    fn push(&mut self, s: Schedule) -> u32 {
        let idx = u32::try_from(self.len).expect("fewer than 2^32 schedules");
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push((0..CHUNK).map(|_| None).collect());
        }
        self.len += 1;
        *self.slot(idx) = Some(s);
        idx
    }

    /// Slots holding a schedule.
    fn occupied(&self) -> usize {
        self.chunks.iter().flatten().filter(|s| s.is_some()).count()
    }
}

/// Every schedule of one engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct Schedules {
    slab: Slab,
    free: Vec<u32>,
    by_name: BTreeMap<Arc<str>, u32>,
    /// Active and paused schedules by `(due_at, rank)`.
    due: BTreeMap<(Timestamp, u64), u32>,
    /// Due-index entries held back during one advance's fire loop (see
    /// [`Schedules::index_after`]); always empty outside it.
    deferred: Vec<((Timestamp, u64), u32)>,
    /// The entries due at the clock when the fire loop began, split off
    /// the index in key order ([`Schedules::begin_due`]); `now_pos` is the
    /// next one. Empty outside the loop.
    now_batch: Vec<((Timestamp, u64), u32)>,
    now_pos: usize,
    /// External fires in flight by settlement deadline.
    pub unsettled: BTreeSet<(Timestamp, FireId)>,
    /// Schedules whose buffered fire waits only for leadership.
    pub ready: BTreeSet<Arc<str>>,
    /// Grids in use, each shared by every schedule with its key.
    grids: BTreeSet<Interned>,
    /// Target queue names in use (queues are never removed, so neither
    /// are these).
    queues: BTreeSet<Arc<str>>,
    /// Schedules whose rank `make_room` changed, so tests can check the
    /// re-labelling stays bounded.
    #[cfg(test)]
    relabelled: u64,
    /// Highest version of any removed schedule: a schedule created later
    /// starts above it, so `(name, version)` is unique for the engine's life.
    pub version_floor: u64,
    /// Highest manual/backfill fire sequence of any removed schedule: a
    /// schedule created later continues above it, so fire ids never repeat.
    pub seq_floor: u64,
    /// Planted bug `DueIndexMissesRemoval` (tests only, set by
    /// `Engine::plant`): `remove` leaves the due-index entry behind.
    #[cfg(feature = "testing")]
    pub keep_due_on_remove: bool,
}

impl Schedules {
    /// Number of schedules.
    pub(crate) fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Slab index of a schedule.
    pub(crate) fn idx(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// A schedule by name.
    pub(crate) fn get(&self, name: &str) -> Option<&Schedule> {
        self.idx(name).map(|i| self.at(i))
    }

    /// A schedule by slab index (must exist).
    pub(crate) fn at(&self, idx: u32) -> &Schedule {
        self.slab.get(idx).expect("live slab slot")
    }

    /// A schedule by slab index (must exist).
    pub(crate) fn at_mut(&mut self, idx: u32) -> &mut Schedule {
        self.slab.get_mut(idx).expect("live slab slot")
    }

    /// Schedules in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Schedule> + '_ {
        self.by_name.values().map(|&i| self.at(i))
    }

    /// The shared grid equal to `grid` (`grid` itself when new). Call
    /// only once the schedule is validated: the grid stays until released.
    pub(crate) fn intern(&mut self, grid: Arc<Grid>) -> Arc<Grid> {
        if let Some(g) = self.grids.get(&grid.key) {
            return g.0.clone();
        }
        self.grids.insert(Interned(grid.clone()));
        grid
    }

    /// The shared name of queue `name`.
    pub(crate) fn queue_name(&mut self, name: &str) -> Arc<str> {
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
    pub(crate) fn replace(&mut self, idx: u32, mut s: Schedule) {
        let slot = self.at_mut(idx);
        assert!(slot.name == s.name, "replace keeps the name");
        s.rank = slot.rank;
        let old = std::mem::replace(slot, s);
        self.release(&old.grid);
    }

    /// Adds a new schedule (the name must be free) and indexes it.
    pub(crate) fn insert(&mut self, mut s: Schedule) -> u32 {
        let name = s.name.clone();
        s.rank = match self.rank_for(&name) {
            Some(rank) => rank,
            None => self.make_room(&name),
        };
        let idx = match self.free.pop() {
            Some(i) => {
                *self.slab.slot(i) = Some(s);
                i
            }
            None => self.slab.push(s),
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

    /// Re-spaces the ranks around the (absent) `name`, whose neighbours'
    /// ranks touch, and returns a rank for it.
    ///
    /// Walks outward in name order from the insertion point, collecting
    /// the schedules whose ranks lie in the aligned range of size `2^i`
    /// around a neighbour's rank, for `i = 1, 2, …` (names in a range of
    /// ranks are contiguous in name order, so each step only extends the
    /// two walks), until a range holds at most `LEVEL_CAP[i]` names with
    /// the new one. Those names are spread evenly over that range and only
    /// they are re-indexed. Cost O(m log n) for the m schedules moved
    /// (amortized O(log n) per insert). The range of level 63, half the
    /// rank space, is always sparse enough (`LEVEL_CAP`).
    fn make_room(&mut self, name: &str) -> u64 {
        let (before, after, range) = {
            let rank = |(_, &i): (&Arc<str>, &u32)| (i, self.at(i).rank);
            let mut back = self
                .by_name
                .range::<str, _>((Unbounded, Excluded(name)))
                .rev()
                .map(rank)
                .peekable();
            let mut fwd = self
                .by_name
                .range::<str, _>((Excluded(name), Unbounded))
                .map(rank)
                .peekable();
            let anchor = match (back.peek(), fwd.peek()) {
                (Some(&(_, r)), _) | (None, Some(&(_, r))) => u128::from(r),
                (None, None) => unreachable!("an empty index always has room"),
            };
            // Neighbours first: `before` in descending name order.
            let mut before: Vec<(u32, u64)> = Vec::new();
            let mut after: Vec<(u32, u64)> = Vec::new();
            let mut range = None;
            for (level, &cap) in LEVEL_CAP.iter().enumerate().skip(1) {
                let size = 1u128 << level;
                let base = anchor & !(size - 1);
                while let Some(e) = back.next_if(|&(_, r)| u128::from(r) >= base) {
                    before.push(e);
                }
                while let Some(e) = fwd.next_if(|&(_, r)| u128::from(r) < base + size) {
                    after.push(e);
                }
                let count = before.len() + after.len() + 1;
                if count as u64 <= cap {
                    range = Some((base, size));
                    break;
                }
            }
            (before, after, range)
        };
        let (base, size) = range.expect("level 63 takes every schedule a u32 slab addresses");
        // Centred even spread: gaps of at least size / count ≥ 1.4^level ≥ 1.
        let count = (before.len() + after.len() + 1) as u128;
        let label = |k: usize| {
            let r = base + (2 * k as u128 + 1) * size / (2 * count);
            u64::try_from(r).expect("label within the range")
        };
        let mut moved = Vec::new();
        // Position k in name order; the new name takes `before.len()`.
        let order = before.iter().rev().enumerate().chain(
            after
                .iter()
                .enumerate()
                .map(|(k, e)| (before.len() + 1 + k, e)),
        );
        // Out of the due index first, then back in: a new key may equal
        // the old key of a schedule not yet moved.
        for (k, &(idx, old)) in order {
            let new = label(k);
            if new == old {
                continue;
            }
            let due_at = self.at(idx).due_at;
            // Only what is indexed now (a popped schedule is re-indexed
            // later with its new rank).
            let indexed = self.due.remove(&(due_at, old)).is_some();
            self.at_mut(idx).rank = new;
            moved.push((idx, indexed));
        }
        #[cfg(test)]
        {
            self.relabelled += moved.len() as u64;
        }
        for (idx, indexed) in moved {
            if indexed {
                let s = self.at(idx);
                self.due.insert((s.due_at, s.rank), idx);
            }
        }
        label(before.len())
    }

    /// Removes a schedule and every index entry of it.
    pub(crate) fn remove(&mut self, name: &str) -> Option<Schedule> {
        let idx = self.by_name.remove(name)?;
        #[cfg(feature = "testing")]
        let keep_due = self.keep_due_on_remove;
        #[cfg(not(feature = "testing"))]
        let keep_due = false;
        if !keep_due {
            self.unindex(idx);
        }
        let s = self.slab.slot(idx).take().expect("live slab slot");
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
    pub(crate) fn index(&mut self, idx: u32) {
        if let Some(key) = self.due_key(idx) {
            self.due.insert(key, idx);
        }
    }

    /// The due-index key of a schedule that belongs in the index: one with
    /// a cursor (active or paused; completing a schedule clears its cursor).
    fn due_key(&self, idx: u32) -> Option<(Timestamp, u64)> {
        let s = self.at(idx);
        s.cursor.map(|_| (s.due_at, s.rank))
    }

    /// [`Schedules::index`] for the fire loop of an advance at `now`: an
    /// entry due after `now` cannot be popped again in this advance, so it
    /// waits in a batch that [`Schedules::flush_due`] inserts at the end. A
    /// burst re-indexes every schedule it fires; inserting them one by one
    /// was the largest single cost of the burst benchmark, while the batch,
    /// already in key order when it is most of the index, is merged in one
    /// linear pass.
    pub(crate) fn index_after(&mut self, idx: u32, now: Timestamp) {
        match self.due_key(idx) {
            Some(key) if key.0 > now => self.deferred.push((key, idx)),
            Some(key) => {
                self.due.insert(key, idx);
            }
            None => {}
        }
    }

    /// Ends the fire loop: the entries [`Schedules::begin_due`] split off
    /// but the loop did not reach (a per-advance budget ran out) and the
    /// ones [`Schedules::index_after`] held back go into the index.
    pub(crate) fn flush_due(&mut self) {
        let rest = self.now_batch.drain(self.now_pos..);
        self.deferred.extend(rest);
        self.now_batch.clear();
        self.now_pos = 0;
        if self.deferred.len() >= self.due.len() / 4 {
            let mut batch: BTreeMap<_, _> = self.deferred.drain(..).collect();
            self.due.append(&mut batch);
        } else {
            for (key, idx) in self.deferred.drain(..) {
                self.due.insert(key, idx);
            }
        }
    }

    /// Takes the schedule out of the due index (before changing its cursor).
    pub(crate) fn unindex(&mut self, idx: u32) {
        let s = self.at(idx);
        if s.cursor.is_some() {
            let key = (s.due_at, s.rank);
            self.due.remove(&key);
        }
    }

    fn index_in_flight(&mut self, idx: u32) {
        let s = self.slab.get(idx).expect("live slab slot");
        for f in s.in_flight() {
            if let Some(d) = f.deadline {
                self.unsettled.insert((d, f.fire.clone()));
            }
        }
        if s.buffered().is_some() && s.in_flight().is_empty() {
            self.ready.insert(s.name.clone());
        }
    }

    /// Starts an advance's fire loop at `now`: every entry due at `now`
    /// leaves the index at once (one split of the tree) for a plain vector
    /// that [`Schedules::pop_due`] walks, instead of one `pop_first` — a
    /// walk down the tree and a rebalance — per fire.
    pub(crate) fn begin_due(&mut self, now: Timestamp) {
        if self.next_due().is_none_or(|d| d > now) {
            return;
        }
        let rest = match now.checked_add_ms(1) {
            Some(after) => self.due.split_off(&(after, 0)),
            None => BTreeMap::new(),
        };
        let due_now = std::mem::replace(&mut self.due, rest);
        self.now_batch.extend(due_now);
        self.now_pos = 0;
    }

    /// Pops the earliest due schedule if it is due at `now`: the smaller of
    /// the next entry split off by [`Schedules::begin_due`] and the index's
    /// first (a schedule re-indexed with a backlog may be due again).
    pub(crate) fn pop_due(&mut self, now: Timestamp) -> Option<u32> {
        let split = self.now_batch.get(self.now_pos).map(|e| e.0);
        let indexed = self
            .due
            .first_key_value()
            .map(|(k, _)| *k)
            .filter(|k| k.0 <= now);
        match (split, indexed) {
            (Some(a), b) if b.is_none_or(|b| a < b) => {
                self.now_pos += 1;
                Some(self.now_batch[self.now_pos - 1].1)
            }
            (_, Some(_)) => self.due.pop_first().map(|(_, idx)| idx),
            _ => None,
        }
    }

    /// Reads, changing nothing, what firing touches in the next `n`
    /// schedules due at `now`: the schedule, its name, grid and payload.
    /// With a million schedules each fire meets cold memory, and the fire
    /// path's chain of dependent cache misses (schedule, then name, then
    /// grid) dominated the spread benchmark; touched together in one loop
    /// of independent reads, the misses overlap. The returned value only
    /// keeps the reads from being optimised away.
    pub(crate) fn warm(&self, now: Timestamp, n: usize) -> u64 {
        let mut acc = 0u64;
        let split = self.now_batch.iter().skip(self.now_pos);
        for &((due, _), idx) in split.take(n) {
            if due > now {
                break;
            }
            if let Some(s) = self.slab.get(idx) {
                let name = s.name.as_bytes().first().copied().unwrap_or(0);
                let payload = s.payload.as_json().as_bytes().first().copied().unwrap_or(0);
                acc = acc.wrapping_add(s.version ^ s.grid.key.text.len() as u64)
                    ^ u64::from(name)
                    ^ u64::from(payload);
            }
        }
        acc
    }

    /// Earliest due time in the index.
    pub(crate) fn next_due(&self) -> Option<Timestamp> {
        self.due.first_key_value().map(|(k, _)| k.0)
    }

    /// Checks the indexes against the schedules (panics when broken).
    pub(crate) fn check_invariants(&self, seed: u64) {
        assert!(
            self.deferred.is_empty(),
            "due entries held back after an advance"
        );
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
        assert_eq!(self.slab.occupied(), self.by_name.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Spec, SpecOptions};
    use crate::wire::schedule_def::ScheduleDef;

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

    /// Moves the only schedule's rank to `rank` (tests of the edges of the
    /// rank space, which appends reach only after ~2^31 inserts).
    fn pin_rank(all: &mut Schedules, rank: u64) {
        let idx = *all.by_name.values().next().unwrap();
        all.unindex(idx);
        all.at_mut(idx).rank = rank;
        all.index(idx);
    }

    /// Inserts `names` in order, checking the invariants now and then;
    /// returns the number of schedules re-labelled per insert.
    fn relabels_per_insert(all: &mut Schedules, names: impl Iterator<Item = String>) -> f64 {
        let start = all.relabelled;
        let mut n = 0;
        for name in names {
            let s = sched(&name, all);
            all.insert(s);
            n += 1;
            if n % 20_000 == 0 {
                all.check_invariants(0);
            }
        }
        all.check_invariants(0);
        let per = (all.relabelled - start) as f64 / n as f64;
        println!("{n} inserts: {per:.1} relabelled per insert");
        // Every order here runs out of room between neighbours.
        assert!(all.relabelled > start, "nothing was re-labelled");
        per
    }

    const N: usize = 100_000;

    /// At most this many schedules move per insert, on average, under any
    /// of the adversarial orders below (100k inserts: a few million moves
    /// in all, where re-spacing everything would move ~10^9).
    const MAX_PER_INSERT: f64 = 30.0;

    fn with(names: &[&str]) -> Schedules {
        let mut all = Schedules::default();
        for name in names {
            let s = sched(name, &mut all);
            all.insert(s);
        }
        all
    }

    /// Every new name sorts between the same two names (each time just
    /// before the upper one, then just after the lower one).
    #[test]
    fn ranks_between_the_same_two_names() {
        let mut all = with(&["a", "c"]);
        let per = relabels_per_insert(&mut all, (0..N).map(|k| format!("b{k:06}")));
        assert!(per <= MAX_PER_INSERT, "{per}");
        let mut all = with(&["a", "c"]);
        let per = relabels_per_insert(&mut all, (0..N).rev().map(|k| format!("b{k:06}")));
        assert!(per <= MAX_PER_INSERT, "{per}");
    }

    /// Always first, with the first rank at 0 so no insert has room.
    #[test]
    fn ranks_always_at_the_front() {
        let mut all = with(&["z"]);
        pin_rank(&mut all, 0);
        let per = relabels_per_insert(&mut all, (0..N).rev().map(|k| format!("a{k:06}")));
        assert!(per <= MAX_PER_INSERT, "{per}");
    }

    /// Always last, with the last rank at `u64::MAX` so no insert has room.
    #[test]
    fn ranks_always_at_the_back() {
        let mut all = with(&["a"]);
        pin_rank(&mut all, u64::MAX);
        let per = relabels_per_insert(&mut all, (0..N).map(|k| format!("b{k:06}")));
        assert!(per <= MAX_PER_INSERT, "{per}");
    }

    /// Two hot spots in turn: the new largest and the new smallest name
    /// between the same two names, and between two other names.
    #[test]
    fn ranks_alternating() {
        let mut all = with(&["a", "c", "e"]);
        let names = (0..N).map(|k| match k % 4 {
            0 => format!("b1{k:06}"),
            1 => format!("b0{:06}", N - k),
            2 => format!("d1{k:06}"),
            _ => format!("d0{:06}", N - k),
        });
        let per = relabels_per_insert(&mut all, names);
        assert!(per <= MAX_PER_INSERT, "{per}");
        let now = Timestamp::from_millis(1000).unwrap();
        let order: Vec<u32> = std::iter::from_fn(|| all.pop_due(now)).collect();
        let popped: Vec<Arc<str>> = order.iter().map(|&i| all.at(i).name.clone()).collect();
        let names: Vec<Arc<str>> = all.by_name.keys().cloned().collect();
        assert_eq!(popped, names, "equal due times pop in name order");
    }
}
