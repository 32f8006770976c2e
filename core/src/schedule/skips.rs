//! Aggregation of skipped boundaries: one `FireSkipped` event per schedule
//! per reason per advance (or per input), never one per boundary.

use crate::time::Timestamp;
use crate::wire::command::{Event, Output, SkipReason};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Skips collected during one advance (or one input), flushed as events.
#[derive(Clone, Debug, Default)]
pub(crate) struct Skips {
    map: BTreeMap<(Arc<str>, SkipReason), Run>,
}

#[derive(Clone, Copy, Debug)]
struct Run {
    count: u64,
    first: Timestamp,
    last: Timestamp,
}

impl Skips {
    /// Records `count` boundaries `first..=last` of `schedule` skipped for `reason`.
    pub(crate) fn add(
        &mut self,
        schedule: &Arc<str>,
        reason: SkipReason,
        count: u64,
        first: Timestamp,
        last: Timestamp,
    ) {
        if count == 0 {
            return;
        }
        assert!(first <= last, "skip run out of order");
        let run = self.map.entry((schedule.clone(), reason)).or_insert(Run {
            count: 0,
            first,
            last,
        });
        run.count += count;
        run.first = run.first.min(first);
        run.last = run.last.max(last);
    }

    /// Emits one event per (schedule, reason), in that order, and clears.
    pub(crate) fn flush(&mut self, out: &mut Output) {
        for ((schedule, reason), run) in std::mem::take(&mut self.map) {
            out.event(Event::FireSkipped {
                schedule: schedule.to_string(),
                reason,
                count: run.count,
                first: run.first,
                last: run.last,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::command::Command;

    #[test]
    fn aggregates_per_schedule_and_reason() {
        let mut skips = Skips::default();
        let a: Arc<str> = "a".into();
        let t = |ms| Timestamp::from_millis(ms).unwrap();
        skips.add(&a, SkipReason::Overlap, 1, t(10), t(10));
        skips.add(&a, SkipReason::Overlap, 2, t(20), t(30));
        skips.add(&a, SkipReason::TooOld, 5, t(1), t(5));
        skips.add(&a, SkipReason::Paused, 0, t(1), t(5));
        let mut out = Output::default();
        skips.flush(&mut out);
        assert_eq!(out.len(), 2);
        let Some(Command::Event(Event::FireSkipped { reason, count, .. })) = out.pop() else {
            panic!()
        };
        assert_eq!((reason, count), (SkipReason::TooOld, 5));
        let Some(Command::Event(Event::FireSkipped {
            count, first, last, ..
        })) = out.pop()
        else {
            panic!()
        };
        assert_eq!((count, first, last), (3, t(10), t(30)));
    }
}
