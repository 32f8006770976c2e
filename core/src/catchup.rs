//! Catch-up: which due boundaries of a schedule may fire at an advance.
//!
//! Boundaries whose nominal time is older than `now - catchup.window_ms`
//! are skipped (`too_old`); of the rest that are due, at most `catchup.max`
//! — the most recent — stay selected and the older ones are skipped
//! (`catchup_cap`). A paused schedule skips every due boundary (`paused`).
//! Skips are counted exactly: `@every` grids arithmetically (a backlog of
//! 10^9 boundaries costs O(1)); other specs are walked with `next_after`,
//! at most [`SCAN_BUDGET`] steps per advance, and a longer walk continues
//! on the next advance (`poll_timeout` then returns the clock).

use crate::command::{Output, SkipReason};
use crate::schedule::Schedule;
use crate::schedule_def::ScheduleStatus;
use crate::skips::Skips;
use crate::time::Timestamp;
use std::collections::VecDeque;

/// Most boundaries walked one by one (non-`@every` specs) per advance.
pub(crate) const SCAN_BUDGET: u64 = 1_000_000;

/// A run of consecutive boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// How many.
    pub count: u64,
    /// First (meaningless when `count == 0`).
    pub first: Timestamp,
    /// Last (meaningless when `count == 0`).
    pub last: Timestamp,
    /// The boundary after the run (`None`: none left).
    pub next: Option<Timestamp>,
    /// `false` when the walk stopped for lack of budget.
    pub complete: bool,
}

/// What planning did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Planned {
    /// The cursor is a selected boundary (or not due): go on.
    Ready,
    /// The scan budget ran out; continue on the next advance.
    OutOfBudget,
}

/// The cadence of an `@every` spec (its grid is arithmetic).
pub(crate) fn every_ms(s: &Schedule) -> Option<i64> {
    s.grid.spec.every_ms()
}

/// The boundaries from `from` (a boundary of `s`) with nominal `<= until`
/// that are due at `now`.
pub(crate) fn walk_due(
    s: &Schedule,
    seed: u64,
    from: Timestamp,
    until: Timestamp,
    now: Timestamp,
    budget: &mut u64,
) -> Span {
    let empty = Span {
        count: 0,
        first: from,
        last: from,
        next: Some(from),
        complete: true,
    };
    let until = match s.end_at() {
        Some(end) if end <= until => match Timestamp::from_millis(end.as_millis() - 1) {
            Ok(t) => t,
            Err(_) => return empty,
        },
        _ => until,
    };
    if from > until || s.due_of(seed, from) > now {
        return empty;
    }
    if let Some(step) = every_ms(s) {
        let mut count = (until.as_millis() - from.as_millis()) / step + 1;
        let at = |k: i64| Timestamp::from_millis(from.as_millis() + k * step).expect("on grid");
        if s.due_of(seed, at(count - 1)) > now {
            count -= 1;
        }
        let last = at(count - 1);
        return Span {
            count: count as u64,
            first: from,
            last,
            next: s.next_boundary(last),
            complete: true,
        };
    }
    let mut span = empty;
    let mut b = from;
    loop {
        if b > until || s.due_of(seed, b) > now {
            span.next = Some(b);
            return span;
        }
        if *budget == 0 {
            span.next = Some(b);
            span.complete = false;
            return span;
        }
        *budget -= 1;
        span.count += 1;
        span.last = b;
        match s.next_boundary(b) {
            Some(n) => b = n,
            None => {
                span.next = None;
                return span;
            }
        }
    }
}

/// Records a skipped span and moves the cursor past it. Returns whether the
/// schedule completed.
fn skip(
    s: &mut Schedule,
    span: Span,
    reason: SkipReason,
    seed: u64,
    sk: &mut Skips,
    out: &mut Output,
) -> bool {
    if span.count == 0 {
        return false;
    }
    s.n.skipped += span.count;
    s.n.processed += span.count;
    sk.add(&s.name, reason, span.count, span.first, span.last);
    s.move_cursor(span.last, span.next, seed, out)
}

/// Applies pause, the catch-up window and the catch-up cap to the due
/// boundaries of `s` (cursor due at `now`). Afterwards the cursor is the
/// first boundary that may fire, or past `now`, or the schedule completed.
pub(crate) fn plan(
    s: &mut Schedule,
    seed: u64,
    now: Timestamp,
    budget: &mut u64,
    sk: &mut Skips,
    out: &mut Output,
) -> Planned {
    let Some(c) = s.cursor else {
        return Planned::Ready;
    };
    if s.status == ScheduleStatus::Paused {
        let span = walk_due(s, seed, c, now, now, budget);
        skip(s, span, SkipReason::Paused, seed, sk, out);
        return if span.complete {
            Planned::Ready
        } else {
            Planned::OutOfBudget
        };
    }
    let cutoff = now.as_millis().saturating_sub(s.catchup().window_ms);
    if c.as_millis() < cutoff {
        let until = Timestamp::from_millis(cutoff - 1).expect("cutoff > cursor >= 0");
        let span = walk_due(s, seed, c, until, now, budget);
        if skip(s, span, SkipReason::TooOld, seed, sk, out) {
            return Planned::Ready;
        }
        if !span.complete {
            return Planned::OutOfBudget;
        }
    }
    cap(s, seed, now, budget, sk, out)
}

/// Skips all but the `catchup.max` most recent due boundaries.
fn cap(
    s: &mut Schedule,
    seed: u64,
    now: Timestamp,
    budget: &mut u64,
    sk: &mut Skips,
    out: &mut Output,
) -> Planned {
    let Some(c) = s.cursor else {
        return Planned::Ready;
    };
    let max = u64::from(s.catchup().max);
    if let Some(step) = every_ms(s) {
        let span = walk_due(s, seed, c, now, now, budget);
        if span.count > max {
            let k = (span.count - max) as i64;
            let at = |k: i64| Timestamp::from_millis(c.as_millis() + k * step).expect("on grid");
            let capped = Span {
                count: k as u64,
                first: c,
                last: at(k - 1),
                next: Some(at(k)),
                complete: true,
            };
            skip(s, capped, SkipReason::CatchupCap, seed, sk, out);
        }
        return Planned::Ready;
    }
    let mut ring: VecDeque<Timestamp> = VecDeque::new();
    let mut capped = Span {
        count: 0,
        first: c,
        last: c,
        next: None,
        complete: true,
    };
    let mut b = Some(c);
    let mut planned = Planned::Ready;
    while let Some(x) = b {
        if x > now || s.due_of(seed, x) > now {
            break;
        }
        if *budget == 0 {
            planned = Planned::OutOfBudget;
            break;
        }
        *budget -= 1;
        ring.push_back(x);
        if ring.len() as u64 > max {
            let y = ring.pop_front().expect("non-empty");
            if capped.count == 0 {
                capped.first = y;
            }
            capped.count += 1;
            capped.last = y;
        }
        b = s.next_boundary(x);
    }
    if capped.count > 0 {
        capped.next = ring.front().copied().or(b);
        skip(s, capped, SkipReason::CatchupCap, seed, sk, out);
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Command, Event};
    use crate::schedule::{Grid, GridKey};
    use crate::schedule_def::{Catchup, ScheduleDef, Target};
    use crate::spec::{Spec, SpecOptions};
    use std::sync::Arc;

    fn sched(spec: &str, catchup: Catchup) -> Schedule {
        let def = ScheduleDef {
            name: "s".into(),
            spec: spec.into(),
            tz: None,
            dst: Default::default(),
            target: Target {
                queue: "q".into(),
                payload: Default::default(),
                priority: 0,
                max_attempts: None,
                headers: Default::default(),
            },
            jitter_ms: 0,
            start_at: None,
            end_at: None,
            max_fires: None,
            paused: false,
            overlap: Default::default(),
            catchup,
        };
        let spec = Spec::parse(spec, &SpecOptions::default()).unwrap();
        let grid = Arc::new(Grid::new(GridKey::of(&def), spec));
        Schedule::new(def, grid, "q".into())
    }

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    #[test]
    fn every_backlog_is_capped_arithmetically() {
        let mut s = sched("@every 2s", Catchup::default());
        s.cursor = Some(t(2000));
        s.due_at = t(2000);
        let (mut sk, mut out, mut budget) = (Skips::default(), Output::default(), SCAN_BUDGET);
        // 10^6 boundaries due.
        let now = t(2_000_000_000);
        assert_eq!(
            plan(&mut s, 0, now, &mut budget, &mut sk, &mut out),
            Planned::Ready
        );
        assert_eq!(budget, SCAN_BUDGET, "no walking");
        assert_eq!(s.n.skipped, 1_000_000 - 64);
        assert_eq!(s.cursor, Some(t(2_000_000_000 - 63 * 2000)));
        sk.flush(&mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn window_then_cap() {
        let catchup = Catchup {
            window_ms: 10_000,
            max: 2,
        };
        let mut s = sched("@every 1s", catchup);
        s.cursor = Some(t(1000));
        let (mut sk, mut out, mut budget) = (Skips::default(), Output::default(), SCAN_BUDGET);
        plan(&mut s, 0, t(100_000), &mut budget, &mut sk, &mut out);
        // 1..=89 s too old, 90..=98 capped, 99 and 100 selected.
        assert_eq!(s.n.skipped, 98);
        assert_eq!(s.cursor, Some(t(99_000)));
        sk.flush(&mut out);
        let reasons: Vec<_> = std::iter::from_fn(|| out.pop())
            .map(|c| match c {
                Command::Event(Event::FireSkipped { reason, count, .. }) => (reason, count),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            reasons,
            [(SkipReason::TooOld, 89), (SkipReason::CatchupCap, 9)]
        );
    }

    #[test]
    fn paused_skips_everything_due() {
        let mut s = sched("@every 1s", Catchup::default());
        s.status = ScheduleStatus::Paused;
        s.cursor = Some(t(1000));
        let (mut sk, mut out, mut budget) = (Skips::default(), Output::default(), SCAN_BUDGET);
        plan(&mut s, 0, t(5500), &mut budget, &mut sk, &mut out);
        assert_eq!(
            (s.n.skipped, s.n.processed, s.cursor),
            (5, 5, Some(t(6000)))
        );
    }
}
