//! The schedule collection: a slab of boxed schedules addressed by `u32`,
//! a name index, the due index ordered by `(due_at, name)`, the index of
//! external fires awaiting settlement, and the set of buffered fires ready
//! to be released once the engine leads again.
//!
//! Names are `Arc<str>` shared by every index and every fire id, so a
//! schedule's name is allocated once however many places refer to it.

use crate::ids::FireId;
use crate::schedule::Schedule;
use crate::schedule_def::ScheduleStatus;
use crate::time::Timestamp;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A due-index entry. Ordered by due time, then name (names are unique, so
/// the slab index never decides the order).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DueKey {
    pub due: Timestamp,
    pub name: Arc<str>,
    pub idx: u32,
}

/// Every schedule of one engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct Schedules {
    slab: Vec<Option<Box<Schedule>>>,
    free: Vec<u32>,
    by_name: BTreeMap<Arc<str>, u32>,
    /// Active and paused schedules by when their cursor is due.
    pub due: BTreeSet<DueKey>,
    /// External fires in flight by settlement deadline.
    pub unsettled: BTreeSet<(Timestamp, FireId)>,
    /// Schedules whose buffered fire waits only for leadership.
    pub ready: BTreeSet<Arc<str>>,
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

    /// Adds a new schedule (the name must be free) and indexes it.
    pub fn insert(&mut self, s: Schedule) -> u32 {
        let name = s.name.clone();
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

    /// Removes a schedule and every index entry of it.
    pub fn remove(&mut self, name: &str) -> Option<Box<Schedule>> {
        let idx = self.by_name.remove(name)?;
        self.unindex(idx);
        let s = self.slab[idx as usize].take().expect("live slab slot");
        for f in &s.in_flight {
            if let Some(d) = f.deadline {
                self.unsettled.remove(&(d, f.fire.clone()));
            }
        }
        self.ready.remove(&s.name);
        self.free.push(idx);
        Some(s)
    }

    /// Puts the schedule in the due index if it has a cursor.
    pub fn index(&mut self, idx: u32) {
        let s = self.at(idx);
        if s.status != ScheduleStatus::Completed && s.cursor.is_some() {
            let key = DueKey {
                due: s.due_at,
                name: s.name.clone(),
                idx,
            };
            self.due.insert(key);
        }
    }

    /// Takes the schedule out of the due index (before changing its cursor).
    pub fn unindex(&mut self, idx: u32) {
        let s = self.at(idx);
        if s.cursor.is_some() {
            let key = DueKey {
                due: s.due_at,
                name: s.name.clone(),
                idx,
            };
            self.due.remove(&key);
        }
    }

    fn index_in_flight(&mut self, idx: u32) {
        let s = self.slab[idx as usize].as_deref().expect("live slab slot");
        for f in &s.in_flight {
            if let Some(d) = f.deadline {
                self.unsettled.insert((d, f.fire.clone()));
            }
        }
        if s.buffered().is_some() && s.in_flight.is_empty() {
            self.ready.insert(s.name.clone());
        }
    }

    /// Pops the earliest due schedule if it is due at `now`.
    pub fn pop_due(&mut self, now: Timestamp) -> Option<u32> {
        let first = self.due.first()?;
        if first.due > now {
            return None;
        }
        self.due.pop_first().map(|k| k.idx)
    }

    /// Earliest due time in the index.
    pub fn next_due(&self) -> Option<Timestamp> {
        self.due.first().map(|k| k.due)
    }

    /// Checks the indexes against the schedules (panics when broken).
    pub fn check_invariants(&self, seed: u64) {
        let mut indexed = 0;
        let mut unsettled = 0;
        for (name, &idx) in &self.by_name {
            let s = self.at(idx);
            assert_eq!(&s.name, name);
            s.check_invariants(seed);
            if s.cursor.is_some() {
                indexed += 1;
                let key = DueKey {
                    due: s.due_at,
                    name: s.name.clone(),
                    idx,
                };
                assert!(
                    self.due.contains(&key),
                    "schedule {name:?} missing from the due index"
                );
            }
            for f in &s.in_flight {
                if let Some(d) = f.deadline {
                    unsettled += 1;
                    assert!(self.unsettled.contains(&(d, f.fire.clone())));
                }
            }
        }
        assert_eq!(self.due.len(), indexed, "stale due-index entries");
        assert_eq!(self.unsettled.len(), unsettled, "stale unsettled entries");
        for name in &self.ready {
            let s = self.get(name).expect("ready schedule exists");
            assert!(s.buffered().is_some() && s.in_flight.is_empty());
        }
        assert_eq!(
            self.slab.iter().filter(|s| s.is_some()).count(),
            self.by_name.len()
        );
    }
}
