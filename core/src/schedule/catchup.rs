//! Catch-up: which due boundaries of a schedule may fire at an advance.
//!
//! A boundary's fate is decided by the schedule's pause state at its
//! nominal time ([`Schedule::segment_at`]): boundaries in a paused stretch
//! are skipped (`paused`). Of the others, those whose due time (nominal +
//! jitter) is older than `now - catchup.window_ms` are skipped (`too_old`);
//! of the rest that are due, at most `catchup.max` — the most recent — stay
//! selected and the older ones are skipped (`catchup_cap`). When the
//! schedule's overlap policy would collapse the selection anyway (anything
//! but `allow`), only the most recent selected boundary stays and the
//! earlier ones are skipped (`superseded`): after downtime a nightly job
//! runs for last night, as Kubernetes CronJob, systemd `Persistent=` and
//! anacron do, not for the oldest night the cap kept. Skips are counted
//! without walking the boundaries one by one.

use crate::schedule::Schedule;
use crate::schedule::skips::Skips;
use crate::time::Timestamp;
use crate::wire::command::{Output, SkipReason};
use crate::wire::schedule_def::Overlap;

/// What catch-up works with besides the schedule: the advance's clock, the
/// engine's jitter seed, and where skips and completions go. One value
/// instead of the same four parameters on every step of the walk.
pub(crate) struct Tick<'a> {
    /// The engine clock.
    pub now: Timestamp,
    /// `EngineConfig::seed` (jitter).
    pub seed: u64,
    /// Skips, aggregated into one event per run.
    pub skips: &'a mut Skips,
    /// Commands (`schedule_completed`).
    pub out: &'a mut Output,
    /// `Limits::runs_per_schedule` (skips go to the run history too).
    pub runs: usize,
}

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
}

impl Span {
    /// No boundary.
    pub(crate) const EMPTY: Span = Span {
        count: 0,
        first: Timestamp::MIN,
        last: Timestamp::MIN,
        next: None,
    };
}

impl Schedule {
    /// The boundaries from `from` (a boundary, before `end_at`) with
    /// nominal `<= until` and due at or before `due_limit`.
    pub(crate) fn span(
        &self,
        seed: u64,
        from: Timestamp,
        until: Timestamp,
        due_limit: Timestamp,
    ) -> Span {
        let empty = Span {
            count: 0,
            first: from,
            last: from,
            next: Some(from),
        };
        // A boundary is never due before its nominal time.
        let mut limit = until.min(due_limit);
        if let Some(end) = self.end_at() {
            match Timestamp::from_millis(end.as_millis() - 1) {
                Ok(before_end) => limit = limit.min(before_end),
                Err(_) => return empty,
            }
        }
        if from > limit {
            return empty;
        }
        let spec = self.spec();
        let nth = |n: u64| spec.nth_from(from, n).expect("counted boundary exists");
        let mut count = spec.count_between(from, limit);
        assert!(count >= 1, "from is a boundary within the limit");
        let mut last = nth(count - 1);
        // Due times grow with the boundaries and stay before the next one,
        // so only the last boundary can be due after `due_limit`.
        if self.due_of(seed, last) > due_limit {
            count -= 1;
            if count == 0 {
                return empty;
            }
            last = nth(count - 1);
        }
        Span {
            count,
            first: from,
            last,
            next: self.next_boundary(last),
        }
    }

    /// Applies pause stretches, the catch-up window and the catch-up cap to
    /// the due boundaries. Afterwards the cursor is the first boundary that
    /// may fire, or not due at `now`, or the schedule completed.
    pub(crate) fn catch_up(&mut self, tick: &mut Tick<'_>) {
        let (now, seed) = (tick.now, tick.seed);
        // Due before `cutoff`: too old. Measured from the due time so that a
        // jitter wider than the window never makes an on-time run too old.
        let cutoff = now.as_millis().saturating_sub(self.catchup().window_ms);
        while let Some(c) = self.cursor {
            if self.due_at > now {
                return;
            }
            let (paused, stretch) = self.stretch(seed, c, now);
            let (reason, span) = if paused {
                (SkipReason::Paused, stretch)
            } else if self.due_at.as_millis() < cutoff {
                let too_old = Timestamp::from_millis(cutoff - 1).expect("cutoff > due >= 0");
                let until = self.segment_at(c).1.map_or(now, |e| e.min(now));
                (SkipReason::TooOld, self.span(seed, c, until, too_old))
            } else {
                break;
            };
            assert!(span.count > 0, "a due boundary is in its stretch");
            if self.skip_span(span, reason, tick) {
                return;
            }
        }
        if self.cap(u64::from(self.catchup().max), SkipReason::CatchupCap, tick) {
            return;
        }
        if self.overlap != Overlap::Allow {
            self.cap(1, SkipReason::Superseded, tick);
        }
    }

    /// Records a skipped span and moves the cursor past it. Returns whether
    /// the schedule completed.
    fn skip_span(&mut self, span: Span, reason: SkipReason, tick: &mut Tick<'_>) -> bool {
        if span.count == 0 {
            return false;
        }
        self.n.skipped += span.count;
        self.n.processed += span.count;
        let (now, runs) = (tick.now, tick.runs);
        self.note_skip(
            tick.skips, reason, span.count, span.first, span.last, now, runs,
        );
        self.move_cursor(span.last, span.next, tick.seed, tick.out)
    }

    /// The due boundaries of the pause stretch that holds boundary `b`:
    /// whether it is paused, and the span.
    fn stretch(&self, seed: u64, b: Timestamp, now: Timestamp) -> (bool, Span) {
        let (paused, end) = self.segment_at(b);
        let until = end.map_or(now, |e| e.min(now));
        (paused, self.span(seed, b, until, now))
    }

    /// Visits the pause stretches of the due boundaries from the cursor, in
    /// order, until `visit` returns `false`.
    fn stretches(&self, seed: u64, now: Timestamp, mut visit: impl FnMut(bool, Span) -> bool) {
        let mut b = self.cursor;
        while let Some(x) = b.filter(|&x| self.due_of(seed, x) <= now) {
            let (paused, span) = self.stretch(seed, x, now);
            if span.count == 0 || !visit(paused, span) {
                return;
            }
            b = span.next;
        }
    }

    /// Skips, with `reason`, all but the `keep` most recent due boundaries
    /// that are not paused (paused ones in between are skipped as paused).
    /// Returns whether the schedule completed.
    fn cap(&mut self, keep: u64, reason: SkipReason, tick: &mut Tick<'_>) -> bool {
        let (now, seed) = (tick.now, tick.seed);
        let mut active = 0;
        self.stretches(seed, now, |paused, span| {
            active += u64::from(!paused) * span.count;
            true
        });
        let Some(mut excess) = active.checked_sub(keep) else {
            return false;
        };
        let mut plan = Vec::new();
        self.stretches(seed, now, |paused, span| {
            if paused {
                plan.push((SkipReason::Paused, span));
                return true;
            }
            let n = span.count.min(excess);
            if n > 0 {
                let last = self
                    .spec()
                    .nth_from(span.first, n - 1)
                    .expect("counted boundary exists");
                plan.push((
                    reason,
                    Span {
                        count: n,
                        first: span.first,
                        last,
                        next: self.next_boundary(last),
                    },
                ));
            }
            excess -= n;
            excess > 0
        });
        plan.into_iter()
            .any(|(reason, span)| self.skip_span(span, reason, tick))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Grid, GridKey};
    use crate::spec::{Spec, SpecOptions};
    use crate::wire::command::{Command, Event};
    use crate::wire::schedule_def::{Catchup, ScheduleDef, Target};
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
            // `allow`, so that the cap's own selection shows.
            overlap: Overlap::Allow,
            catchup,
            origin: Default::default(),
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
        let (mut sk, mut out) = (Skips::default(), Output::default());
        // 10^6 boundaries due.
        let now = t(2_000_000_000);
        s.catch_up(&mut Tick {
            now,
            seed: 0,
            skips: &mut sk,
            out: &mut out,
            runs: 50,
        });
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
        s.due_at = t(1000);
        let (mut sk, mut out) = (Skips::default(), Output::default());
        s.catch_up(&mut Tick {
            now: t(100_000),
            seed: 0,
            skips: &mut sk,
            out: &mut out,
            runs: 50,
        });
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
        s.status = crate::wire::schedule_def::ScheduleStatus::Paused;
        s.cursor = Some(t(1000));
        s.due_at = t(1000);
        let (mut sk, mut out) = (Skips::default(), Output::default());
        s.catch_up(&mut Tick {
            now: t(5500),
            seed: 0,
            skips: &mut sk,
            out: &mut out,
            runs: 50,
        });
        assert_eq!(
            (s.n.skipped, s.n.processed, s.cursor),
            (5, 5, Some(t(6000)))
        );
    }

    /// Paused stretches in the middle of a backlog are skipped as paused;
    /// the cap counts only the boundaries that were active.
    #[test]
    fn pause_stretches_split_the_backlog() {
        let catchup = Catchup {
            window_ms: 1_000_000,
            max: 2,
        };
        let mut s = sched("@every 1s", catchup);
        s.cursor = Some(t(1000));
        s.due_at = t(1000);
        // Paused after 3 s, resumed after 6 s: 1..=3 active, 4..=6 paused, 7..=10 active.
        assert!(s.set_paused_at(t(3000), true));
        assert!(s.set_paused_at(t(6000), false));
        let (mut sk, mut out) = (Skips::default(), Output::default());
        s.catch_up(&mut Tick {
            now: t(10_000),
            seed: 0,
            skips: &mut sk,
            out: &mut out,
            runs: 50,
        });
        // 7 active due: 5 capped (1..=3, 7, 8), 4..=6 paused, 9 and 10 selected.
        assert_eq!(s.cursor, Some(t(9000)));
        assert_eq!((s.n.skipped, s.n.processed), (8, 8));
        assert!(s.pause_log().is_empty(), "pruned once passed");
        sk.flush(&mut out);
        let reasons: Vec<_> = std::iter::from_fn(|| out.pop())
            .map(|c| match c {
                Command::Event(Event::FireSkipped {
                    reason,
                    count,
                    first,
                    last,
                    ..
                }) => (reason, count, first.as_millis(), last.as_millis()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            reasons,
            [
                (SkipReason::CatchupCap, 5, 1000, 8000),
                (SkipReason::Paused, 3, 4000, 6000)
            ]
        );
    }

    /// Under `skip` (the default) a backlog collapses to its most recent
    /// boundary: the older ones the cap kept are `superseded`, and the
    /// cursor is on the newest due boundary, so that one fires.
    #[test]
    fn a_collapsing_policy_keeps_the_most_recent() {
        for overlap in [Overlap::Skip, Overlap::BufferOne, Overlap::CancelPrevious] {
            let mut s = sched("@every 1s", Catchup::default());
            s.overlap = overlap;
            s.cursor = Some(t(1000));
            s.due_at = t(1000);
            let (mut sk, mut out) = (Skips::default(), Output::default());
            s.catch_up(&mut Tick {
                now: t(100_500),
                seed: 0,
                skips: &mut sk,
                out: &mut out,
                runs: 50,
            });
            // 100 due: 36 capped (1..=36), 63 superseded (37..=99), 100 fires.
            assert_eq!(s.cursor, Some(t(100_000)), "{overlap:?}");
            assert_eq!((s.n.skipped, s.n.processed), (99, 99));
            sk.flush(&mut out);
            let mut reasons: Vec<_> = std::iter::from_fn(|| out.pop())
                .map(|c| match c {
                    Command::Event(Event::FireSkipped {
                        reason,
                        count,
                        first,
                        last,
                        ..
                    }) => (reason, count, first.as_millis(), last.as_millis()),
                    other => panic!("{other:?}"),
                })
                .collect();
            reasons.sort();
            assert_eq!(
                reasons,
                [
                    (SkipReason::CatchupCap, 36, 1000, 36_000),
                    (SkipReason::Superseded, 63, 37_000, 99_000)
                ]
            );
        }
    }
}
