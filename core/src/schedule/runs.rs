//! A schedule's run history: its last `limits.runsPerSchedule` runs (a
//! fire and what became of its job, or a run of skipped boundaries), kept
//! in the schedule's extras and its snapshot, oldest first inside, newest
//! first in [`ScheduleInfo::runs`](crate::ScheduleInfo::runs).
//!
//! Everything here is driven by inputs the engine already handles: a fire
//! records a `pending` run, a claim its attempt and start, a job's end (or
//! an external settlement) its outcome, a skip a `skipped` run. Only the
//! instants the engine is given are used, so a journal replays to the same
//! history. A run that fell off the bound is not updated any more: its
//! job's end is simply not recorded.

use crate::schedule::Schedule;
use crate::time::Timestamp;
use crate::wire::command::{FireReason, SkipReason};
use crate::wire::config::truncate_text;
use crate::wire::ids::{FireId, JobId};
use crate::wire::run::{JobEnd, RunOutcome, RunRecord};
use std::collections::VecDeque;

static NO_RUNS: VecDeque<RunRecord> = VecDeque::new();

impl Schedule {
    /// The history, oldest first.
    pub(crate) fn runs(&self) -> &VecDeque<RunRecord> {
        self.x.as_ref().map_or(&NO_RUNS, |x| &x.runs)
    }

    /// Replaces the run history (from a snapshot).
    pub(crate) fn set_runs(&mut self, runs: VecDeque<RunRecord>) {
        self.x.get_or_insert_with(Box::default).runs = runs;
        self.shrink_extras();
    }

    /// Appends `run`, forgetting the oldest beyond `bound` (0: none kept).
    /// The deque grows by doubling only while that stays within `bound`,
    /// then to exactly `bound` (a full history of the default 50 runs
    /// takes 50 slots, not 64: 14 unused records are ~2 KB a schedule).
    pub(crate) fn push_run(&mut self, run: RunRecord, bound: usize) {
        if bound == 0 {
            return;
        }
        let runs = &mut self.x.get_or_insert_with(Box::default).runs;
        while runs.len() >= bound {
            runs.pop_front();
        }
        if runs.len() == runs.capacity() && runs.capacity().saturating_mul(2).max(4) > bound {
            runs.reserve_exact(bound - runs.len());
        }
        runs.push_back(run);
    }

    /// A fire was made: a `pending` run.
    pub(crate) fn record_fire(
        &mut self,
        fire: &FireId,
        reason: FireReason,
        at: Timestamp,
        job: Option<JobId>,
        bound: usize,
    ) {
        let run = RunRecord {
            fire: Some(fire.clone()),
            nominal: fire.nominal,
            last_nominal: None,
            reason: Some(reason),
            skip_reason: None,
            at,
            count: 1,
            outcome: RunOutcome::Pending,
            job,
            attempts: 0,
            started_at: None,
            finished_at: None,
            duration_ms: None,
            error: None,
        };
        self.push_run(run, bound);
    }

    /// `count` boundaries `first..=last` were skipped for `reason` at
    /// `at`: merged into the newest run when that is a skip of the same
    /// reason (nothing else happened in between), else a new run.
    pub(crate) fn record_skip(
        &mut self,
        reason: SkipReason,
        count: u64,
        (first, last): (Timestamp, Timestamp),
        at: Timestamp,
        bound: usize,
    ) {
        if count == 0 || bound == 0 {
            return;
        }
        if let Some(newest) = self.x.as_mut().and_then(|x| x.runs.back_mut()) {
            let end = newest.last_nominal.unwrap_or(newest.nominal);
            if newest.outcome == RunOutcome::Skipped
                && newest.skip_reason == Some(reason)
                && end < first
            {
                newest.count = newest.count.saturating_add(count);
                newest.last_nominal = Some(last);
                newest.at = at;
                return;
            }
        }
        let run = RunRecord {
            fire: None,
            nominal: first,
            last_nominal: Some(last),
            reason: None,
            skip_reason: Some(reason),
            at,
            count,
            outcome: RunOutcome::Skipped,
            job: None,
            attempts: 0,
            started_at: None,
            finished_at: None,
            duration_ms: None,
            error: None,
        };
        self.push_run(run, bound);
    }

    /// The run of `fire`, newest first (`None`: never recorded or gone).
    fn run_mut(&mut self, fire: &FireId) -> Option<&mut RunRecord> {
        let x = self.x.as_mut()?;
        x.runs
            .iter_mut()
            .rev()
            .find(|r| r.fire.as_ref() == Some(fire))
    }

    /// The job of `fire` was claimed at `at` for attempt `attempt`.
    pub(crate) fn run_claimed(&mut self, fire: &FireId, job: JobId, attempt: u32, at: Timestamp) {
        if let Some(r) = self.run_mut(fire) {
            r.job = Some(job);
            r.attempts = attempt;
            r.started_at = Some(at);
            r.outcome = RunOutcome::Pending;
            r.finished_at = None;
            r.duration_ms = None;
        }
    }

    /// The job of `fire` ended as `end` says. A start the end does not
    /// carry is the one recorded at its last claim.
    pub(crate) fn run_ended(&mut self, fire: &FireId, end: &JobEnd, text_bytes: usize) {
        let Some(r) = self.run_mut(fire) else {
            return;
        };
        r.job = Some(end.id);
        r.outcome = RunOutcome::of_job(end.state);
        r.attempts = end.attempts.max(r.attempts);
        if end.started_at.is_some() {
            r.started_at = end.started_at;
        }
        r.finished_at = end.finished_at;
        r.duration_ms = match (r.started_at, r.finished_at) {
            (Some(s), Some(f)) if r.attempts > 0 => Some((f.as_millis() - s.as_millis()).max(0)),
            _ => None,
        };
        r.error = end
            .error
            .as_deref()
            .map(|e| truncate_text(e, text_bytes).to_owned());
    }

    /// An external fire settled (or ran out of time) at `at` with no job
    /// detail: `outcome` only.
    pub(crate) fn run_settled(&mut self, fire: &FireId, outcome: RunOutcome, at: Timestamp) {
        if let Some(r) = self.run_mut(fire)
            && r.outcome == RunOutcome::Pending
        {
            r.outcome = outcome;
            r.finished_at = Some(at);
        }
    }
}

impl Schedule {
    /// Reports `count` skipped boundaries `first..=last` for `reason`:
    /// in the advance's aggregated event and in the run history.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn note_skip(
        &mut self,
        skips: &mut crate::schedule::skips::Skips,
        reason: SkipReason,
        count: u64,
        first: Timestamp,
        last: Timestamp,
        now: Timestamp,
        bound: usize,
    ) {
        skips.add(&self.name, reason, count, first, last);
        self.record_skip(reason, count, (first, last), now, bound);
    }
}

#[cfg(test)]
mod tests {
    use crate::schedule::{Grid, GridKey, Schedule};
    use crate::spec::{Spec, SpecOptions};
    use crate::time::Timestamp;
    use crate::wire::command::FireReason;
    use crate::wire::ids::FireId;
    use crate::wire::schedule_def::ScheduleDef;
    use std::sync::Arc;

    fn schedule() -> Schedule {
        let def: ScheduleDef = serde_json::from_value(serde_json::json!({
            "name": "s", "spec": "@every 1s", "target": {"queue": "q"}
        }))
        .unwrap();
        let spec = Spec::parse(&def.spec, &SpecOptions::default()).unwrap();
        let grid = Arc::new(Grid::new(GridKey::of(&def), spec));
        Schedule::new(def, grid, Arc::from("q"))
    }

    /// A full history holds exactly its bound of slots (the deque's
    /// doubling would give 64 for 50), and keeps the newest runs.
    #[test]
    fn a_full_history_takes_exactly_its_bound() {
        for bound in [1, 3, 4, 5, 50, 64, 100] {
            let mut s = schedule();
            for k in 0..(3 * bound as i64) {
                let at = Timestamp::from_millis(1000 * (k + 1)).unwrap();
                let fire = FireId {
                    schedule: Arc::from("s"),
                    nominal: at,
                    extra: None,
                };
                s.record_fire(&fire, FireReason::Scheduled, at, None, bound);
                assert!(s.runs().len() <= bound);
            }
            assert_eq!(s.runs().len(), bound);
            assert_eq!(s.runs().capacity(), bound, "bound {bound}");
            let newest = s.runs().back().unwrap().nominal.as_millis();
            assert_eq!(newest, 1000 * 3 * bound as i64, "bound {bound}");
        }
    }
}
