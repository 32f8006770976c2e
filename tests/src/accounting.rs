//! An independent check of the accounting identity and of fire-id
//! uniqueness, reconstructed only from the command stream and the public
//! getters (never from engine internals).
//!
//! The observer is told when a schedule starts a grid (creation, or an
//! upsert that recomputes the cursor) and when it is removed; it then
//! watches every `Fire` and `FireSkipped`. [`Accounting::check`] asserts,
//! for every schedule, that every grid boundary from the start of each grid
//! up to the cursor was fired or skipped **exactly once** (a buffered grid
//! fire is the one allowed gap while it waits), and that no fire id was
//! emitted twice. Grid boundaries come from the independent oracle
//! ([`crate::oracle`]), never from chime's own spec code.

use crate::oracle::{Kind, Oracle};
use chime_core::{Command, EngineConfig, Event, ScheduleDef, ScheduleStatus};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// The boundaries of one spec, from the independent oracle
/// ([`crate::oracle`]): never from chime's own parser or walk.
#[derive(Clone, Debug)]
pub enum Grid {
    /// `@every`: `offset + k · period`.
    Every {
        /// Cadence (ms).
        period: i64,
        /// Phase (ms, `0..period`).
        offset: i64,
    },
    /// Anything else (cron, `@at`): enumerated by the oracle.
    Walk(Box<Walk>),
}

/// A cron or `@at` grid: the oracle and a cache of the boundaries it
/// enumerated last, so walking boundary by boundary stays cheap.
#[derive(Clone, Debug)]
pub struct Walk {
    oracle: Oracle,
    /// Every boundary in `(lo, hi]`, ascending.
    cache: RefCell<(i64, i64, Vec<i64>)>,
}

impl Walk {
    fn first_after(&self, x: i64) -> i64 {
        {
            let c = self.cache.borrow();
            if c.0 <= x && x < c.1 {
                let i = c.2.partition_point(|&b| b <= x);
                if let Some(&b) = c.2.get(i) {
                    return b;
                }
            }
        }
        let Some(n) = self.oracle.next_after(x) else {
            return i64::MAX;
        };
        let hi = n.saturating_add(DAY_MS);
        let all = self.oracle.between(x, hi);
        debug_assert_eq!(all.first(), Some(&n));
        *self.cache.borrow_mut() = (x, hi, all);
        n
    }
}

const DAY_MS: i64 = 86_400_000;

impl Grid {
    /// The grid of a definition under `config`, from the spec text.
    pub fn of(def: &ScheduleDef, config: &EngineConfig) -> Grid {
        let oracle = Oracle::parse(&def.spec, def.tz.as_deref(), def.dst, config.horizon_years)
            .unwrap_or_else(|e| panic!("the oracle rejects {:?}: {e}", def.spec));
        if let Kind::Every { interval, offset } = oracle.kind {
            return Grid::Every {
                period: interval,
                offset,
            };
        }
        Grid::Walk(Box::new(Walk {
            oracle,
            cache: RefCell::new((0, 0, Vec::new())),
        }))
    }

    fn on_grid(&self, b: i64) -> bool {
        match self {
            Grid::Every { period, offset } => (b - offset).rem_euclid(*period) == 0,
            Grid::Walk(w) => w.first_after(b - 1) == b,
        }
    }

    fn next(&self, b: i64) -> i64 {
        self.first_after(b)
    }

    /// Boundaries in `[from, to)` (any instants).
    pub fn count_range(&self, from: i64, to: i64) -> u64 {
        if to <= from {
            return 0;
        }
        match self {
            Grid::Every { period, offset } => {
                let below = |x: i64| (x - 1 - offset).div_euclid(*period);
                (below(to) - below(from)) as u64
            }
            Grid::Walk(w) => w.oracle.count_between(from - 1, to - 1),
        }
    }

    /// The first boundary strictly after `x` (`i64::MAX` if none).
    pub fn first_after(&self, x: i64) -> i64 {
        match self {
            Grid::Every { period, offset } => {
                offset + ((x - offset).div_euclid(*period) + 1) * period
            }
            Grid::Walk(w) => w.first_after(x),
        }
    }

    /// Boundaries in `[from, to]` (both on the grid, `from <= to`).
    fn count_incl(&self, from: i64, to: i64) -> u64 {
        match self {
            Grid::Every { period, .. } => ((to - from) / period + 1) as u64,
            Grid::Walk(w) => w.oracle.count_between(from - 1, to),
        }
    }
}

/// One grid of one schedule: from `start` to `end` (exclusive; `None` =
/// the current cursor).
#[derive(Debug)]
struct Segment {
    grid: Grid,
    start: i64,
    /// Set when the grid was replaced while it had a cursor.
    end: Option<i64>,
    /// Replaced (by a regrid) or ended.
    closed: bool,
    /// Exactly known boundary runs `[first, last]` (fires are `[b, b]`).
    runs: Vec<(i64, i64, u64)>,
    /// Skips whose run was not contiguous: only their count is known.
    loose: u64,
    /// The latest `last` of those skips (`i64::MIN` without any).
    loose_last: i64,
    /// Boundaries counted in `[start, memo.0)`.
    memo: (i64, u64),
    /// The engine clock when a redefinition replaced this grid.
    replaced_at: Option<i64>,
}

#[derive(Debug)]
struct Sched {
    segments: Vec<Segment>,
    grid_fires: u64,
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct Accounting {
    schedules: BTreeMap<String, Sched>,
    grid_ids: BTreeSet<String>,
    /// Manual/backfill ids per incarnation of a name.
    extra_ids: BTreeSet<(String, u64, String)>,
    incarnation: BTreeMap<String, u64>,
    /// Fires seen (all kinds).
    pub fires: u64,
    /// Grid boundaries seen skipped.
    pub skipped: u64,
}

impl Accounting {
    /// A schedule was created, or an upsert recomputed its cursor: a new
    /// grid starts at `start` (the reply's `nextFire`). `old_cursor` is the
    /// cursor just before the upsert (ends the previous grid).
    pub fn start_grid(&mut self, name: &str, grid: Grid, start: i64, old_cursor: Option<i64>) {
        let s = self.schedules.entry(name.to_owned()).or_insert(Sched {
            segments: Vec::new(),
            grid_fires: 0,
        });
        if let Some(last) = s.segments.last_mut() {
            // Without a cursor (completed) the grid ends after its last
            // accounted boundary, which a buffered fire may still extend.
            last.closed = true;
            last.end = last.end.or(old_cursor);
        }
        assert!(grid.on_grid(start), "{name}: start {start} not on its grid");
        s.segments.push(Segment {
            grid,
            start,
            end: None,
            closed: false,
            runs: Vec::new(),
            loose: 0,
            loose_last: i64::MIN,
            memo: (start, 0),
            replaced_at: None,
        });
    }

    /// An upsert completed the schedule while recomputing its grid: the
    /// current grid ends at `old_cursor` (or after its last boundary).
    pub fn end_grid(&mut self, name: &str, old_cursor: Option<i64>) {
        if let Some(last) = self
            .schedules
            .get_mut(name)
            .and_then(|s| s.segments.last_mut())
        {
            last.closed = true;
            last.end = last.end.or(old_cursor);
        }
    }

    /// A redefinition at engine clock `now` replaced the grid of `name`
    /// (`new`: the new grid and its first boundary; `None` when the
    /// redefinition completed the schedule). Unlike [`Accounting::start_grid`]
    /// the old grid is closed *after* every boundary whose nominal time is
    /// at or before `now` (and before `end_at`): a boundary that was due or
    /// pending (jittered) when its grid was replaced must still be fired or
    /// reported skipped — it never simply vanishes.
    pub fn regrid(
        &mut self,
        name: &str,
        new: Option<(Grid, i64)>,
        old_cursor: Option<i64>,
        now: i64,
        old_end_at: Option<i64>,
    ) {
        if let Some(last) = self
            .schedules
            .get_mut(name)
            .and_then(|s| s.segments.last_mut())
            && let Some(c) = old_cursor
            && !last.closed
        {
            let mut end = c.max(last.grid.first_after(now).min(i64::MAX - 1));
            if let Some(e) = old_end_at {
                end = end.min(e.max(c));
            }
            last.end = Some(end);
            last.closed = true;
            last.replaced_at = Some(now);
        }
        match new {
            Some((grid, start)) => self.start_grid(name, grid, start, old_cursor),
            None => self.end_grid(name, old_cursor),
        }
    }

    /// The schedule was removed: forget it (a later one of the same name
    /// is a new incarnation).
    pub fn removed(&mut self, name: &str) {
        self.schedules.remove(name);
        *self.incarnation.entry(name.to_owned()).or_default() += 1;
    }

    /// Whether `name` is tracked.
    pub fn tracks(&self, name: &str) -> bool {
        self.schedules.contains_key(name)
    }

    fn segment(&mut self, name: &str, b: i64) -> &mut Segment {
        let s = self
            .schedules
            .get_mut(name)
            .unwrap_or_else(|| panic!("{name}: command for an untracked schedule"));
        s.segments
            .iter_mut()
            .rev()
            .find(|g| g.start <= b)
            .unwrap_or_else(|| panic!("{name}: boundary {b} before its first grid"))
    }

    /// Watches one command.
    pub fn observe(&mut self, cmd: &Command) {
        match cmd {
            Command::Fire(f) => {
                self.fires += 1;
                let id = f.fire_id.to_string();
                assert!(
                    f.due_at >= f.nominal() && f.fired_at >= f.due_at,
                    "{id}: times"
                );
                if f.fire_id.extra.is_some() {
                    let inc = self.incarnation.get(f.schedule()).copied().unwrap_or(0);
                    let fresh = self
                        .extra_ids
                        .insert((f.schedule().to_string(), inc, id.clone()));
                    assert!(fresh, "fire id {id} emitted twice");
                    return;
                }
                assert!(
                    self.grid_ids.insert(id.clone()),
                    "fire id {id} emitted twice"
                );
                let b = f.nominal().as_millis();
                self.schedules.get_mut(f.schedule()).unwrap().grid_fires += 1;
                let seg = self.segment(f.schedule(), b);
                assert!(seg.grid.on_grid(b), "{id}: not on the grid");
                seg.runs.push((b, b, 1));
            }
            Command::Event(Event::FireSkipped {
                schedule,
                count,
                first,
                last,
                ..
            }) => {
                self.skipped += count;
                let (first, last) = (first.as_millis(), last.as_millis());
                let seg = self.segment(schedule, first);
                assert!(seg.grid.on_grid(first) && seg.grid.on_grid(last));
                assert!(first <= last && *count >= 1);
                let span = seg.grid.count_incl(first, last);
                assert!(
                    *count <= span,
                    "{schedule}: {count} skips in a run of {span}"
                );
                if *count == span {
                    seg.runs.push((first, last, span));
                } else {
                    seg.loose += count;
                    seg.loose_last = seg.loose_last.max(last);
                }
            }
            _ => {}
        }
    }

    /// Checks every tracked schedule against the engine's cursor.
    pub fn check(&mut self, engine: &chime_core::Engine) {
        for (name, s) in &mut self.schedules {
            let info = engine
                .schedule(name)
                .unwrap_or_else(|| panic!("{name}: tracked but missing"));
            let mut missing = 0u64;
            let n_seg = s.segments.len();
            for (i, seg) in s.segments.iter_mut().enumerate() {
                seg.runs.sort_unstable();
                for w in seg.runs.windows(2) {
                    assert!(
                        w[1].0 > w[0].1,
                        "{name}: boundaries {:?} and {:?} accounted twice",
                        w[0],
                        w[1]
                    );
                }
                let open = i + 1 == n_seg && !seg.closed;
                let end = match (seg.end, open, info.next_nominal) {
                    (Some(e), _, _) => e,
                    (None, true, Some(c)) => c.as_millis(),
                    // Completed: everything up to the last accounted
                    // boundary, whether in an exact run or a loose skip.
                    _ => {
                        let last = seg.runs.last().map(|r| r.1).into_iter();
                        last.chain((seg.loose > 0).then_some(seg.loose_last))
                            .max()
                            .map_or(seg.start, |b| seg.grid.next(b))
                    }
                };
                if let Some(r) = seg.runs.last() {
                    assert!(r.1 < end, "{name}: boundary {} at/after cursor {end}", r.1);
                }
                if let Some(r) = seg.runs.first() {
                    assert!(r.0 >= seg.start);
                }
                if end < seg.memo.0 {
                    seg.memo = (seg.start, 0);
                }
                let more = seg.grid.count_range(seg.memo.0, end);
                seg.memo = (end.max(seg.memo.0), seg.memo.1 + more);
                let expected = seg.memo.1;
                let got: u64 = seg.runs.iter().map(|r| r.2).sum::<u64>() + seg.loose;
                assert!(
                    got <= expected,
                    "{name}: {got} accounted for {expected} boundaries in [{}, {end})",
                    seg.start
                );
                if let Some(at) = seg.replaced_at {
                    assert!(
                        expected - got <= u64::from(info.buffered),
                        "G: {name}: a redefinition at {at} dropped {} due or pending boundaries \
                         of the old grid [{}, {end}) with no fire and no skip",
                        expected - got,
                        seg.start
                    );
                }
                missing += expected - got;
            }
            let buffered = u64::from(info.buffered);
            assert!(
                missing <= buffered,
                "{name}: {missing} boundaries before the cursor neither fired nor skipped \
                 (buffered: {}) status {:?}",
                info.buffered,
                info.status
            );
            let every = info.def.spec.trim_start().starts_with("@every");
            if info.status == ScheduleStatus::Completed
                && info.def.end_at.is_none()
                && every
                && let Some(max) = info.def.max_fires
            {
                // A grid fire waiting in the `buffer_one` slot counts: it fires
                // when the running job ends.
                assert!(
                    s.grid_fires + buffered >= max,
                    "{name}: completed before max_fires"
                );
            }
        }
    }
}
