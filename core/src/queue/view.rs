//! Getters, index rebuilding (restore) and the invariant check.

use super::Queues;
use super::store::{self, DedupEntry, Index, Job, KeySpace, QueueState};
use crate::time::Timestamp;
use crate::wire::ids::{FireId, JobId};
use crate::wire::job::{JobInfo, JobState};
use crate::wire::queue_config::{QueueMode, QueueStats};
use serde::{Deserialize, Deserializer};
use std::collections::{BTreeMap, BTreeSet};

impl Queues {
    /// A job's state, if it is still held.
    pub(crate) fn job_state(&self, id: JobId) -> Option<JobState> {
        self.jobs.get(&id).map(|j| j.state)
    }

    /// A job, if it is still held (finished jobs disappear with retention).
    pub(crate) fn job(&self, id: JobId) -> Option<JobInfo> {
        let job = self.jobs.get(&id)?;
        Some(job.info(id, &self.queues[&job.queue].config))
    }

    /// Counts and totals of one queue as of `now` (the engine clock).
    pub(crate) fn stats(&self, queue: &str, now: Timestamp) -> Option<QueueStats> {
        let q = self.queues.get(queue)?;
        let oldest = q.idx.available_by_time.first();
        Some(QueueStats {
            queue: queue.to_owned(),
            scheduled: q.idx.scheduled,
            available: q.idx.available.len() as u64,
            claimed: q.idx.claimed,
            completed: q.idx.completed,
            dead: q.idx.dead.len() as u64,
            cancelled: q.idx.cancelled,
            oldest_available_age_ms: oldest
                .map(|&(t, _)| now.as_millis().saturating_sub(t.as_millis()).max(0)),
            totals: q.totals.clone(),
            as_of: Some(now),
        })
    }

    /// Up to `limit` dead letters of `queue`, oldest death first.
    pub(crate) fn dead_letters(&self, queue: &str, limit: usize) -> Vec<JobInfo> {
        let Some(q) = self.queues.get(queue) else {
            return Vec::new();
        };
        let info = |&(_, id): &(Timestamp, JobId)| self.jobs[&id].info(id, &q.config);
        q.idx.dead.iter().take(limit).map(info).collect()
    }

    /// Every queue name, in order.
    pub(crate) fn queue_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.queues.keys().map(String::as_str)
    }

    /// Jobs not yet terminal (what `Limits::live_jobs` bounds).
    pub(crate) fn live_jobs(&self) -> usize {
        self.idx.live
    }

    /// Rebuilds every derived index from the canonical state, checking that
    /// the state is coherent (jobs in known local queues, fields that agree
    /// with states, ids and tokens below their counters, keys that point at
    /// jobs carrying them, live jobs that hold their keys). Used on restore;
    /// an error means a corrupt snapshot.
    pub(crate) fn rebuild_indexes(&mut self) -> Result<(), String> {
        self.idx = build_indexes(
            &mut self.queues,
            &self.jobs,
            &self.finished,
            self.last_job,
            self.last_token,
        )?;
        Ok(())
    }

    /// Asserts that the derived indexes are exactly what a rebuild from the
    /// canonical state gives, and that the state is coherent. For tests and
    /// the simulation.
    pub(crate) fn check_invariants(&self) {
        // Only the queue table is copied: the jobs are read in place, so
        // the simulation can afford this after every input.
        let mut queues = self.queues.clone();
        let idx = build_indexes(
            &mut queues,
            &self.jobs,
            &self.finished,
            self.last_job,
            self.last_token,
        )
        .unwrap_or_else(|why| panic!("queue state incoherent: {why}"));
        assert_eq!(idx, self.idx, "global queue index out of step");
        for (name, q) in &self.queues {
            assert_eq!(
                queues[name].idx, q.idx,
                "index of queue {name:?} out of step"
            );
        }
        let live = self
            .jobs
            .values()
            .filter(|j| !j.state.is_terminal())
            .count();
        assert_eq!(live, self.idx.live, "live job count");
    }
}

/// The derived indexes of a queue state, built from its canonical parts
/// (each queue's own index is written into `queues`): see
/// [`Queues::rebuild_indexes`].
fn build_indexes(
    queues: &mut BTreeMap<String, QueueState>,
    jobs: &BTreeMap<JobId, Job>,
    finished: &[(JobId, Option<FireId>)],
    last_job: u64,
    last_token: u64,
) -> Result<Index, String> {
    let mut idx = Index::default();
    for (name, q) in queues.iter_mut() {
        if *name != q.config.name {
            return Err(format!(
                "queue {name:?} holds the config of {:?}",
                q.config.name
            ));
        }
        q.idx = Default::default();
    }
    let mut tokens = BTreeSet::new();
    for (&id, job) in jobs {
        let bad = |why: &str| format!("job {}: {why}", id.0);
        if id.0 == 0 || id.0 > last_job {
            return Err(bad("id not issued yet"));
        }
        job.check_shape().map_err(bad)?;
        let q = queues
            .get_mut(&job.queue)
            .ok_or_else(|| bad("unknown queue"))?;
        // Retained history may outlive a switch to external; work may not.
        let work = !job.state.is_terminal() || job.state == JobState::Dead;
        if work && q.config.mode == QueueMode::External {
            return Err(bad("live or dead job in an external queue"));
        }
        let token = job.lease.as_ref().map(|l| l.token);
        if token.is_some_and(|t| t.0 == 0 || t.0 > last_token || !tokens.insert(t)) {
            return Err(bad("token not issued or not unique"));
        }
        store::index(&mut idx, &mut q.idx, id, job);
    }
    for (name, q) in queues.iter() {
        for space in [KeySpace::User, KeySpace::Fire] {
            for (key, entry) in q.keys(space) {
                check_key(jobs, name, space, key, entry, last_job)?;
                store::index_key(&mut idx, name, space, key, entry);
            }
        }
    }
    // Every live job with a key holds it, so two live jobs never share one.
    // (`check_key` has refused a key that expires while its job is live.)
    for (&id, job) in jobs {
        let Some(key) = job.key.as_deref().filter(|_| !job.state.is_terminal()) else {
            continue;
        };
        let space = KeySpace::of(job.fire.is_some());
        let entry = queues[&job.queue].keys(space).get(key);
        if entry.is_none_or(|e| e.job != id) {
            return Err(format!("live job {} does not hold its key {key:?}", id.0));
        }
    }
    if let Some((id, _)) = finished.iter().find(|(id, _)| id.0 == 0 || id.0 > last_job) {
        return Err(format!("finished job {} not issued yet", id.0));
    }
    Ok(idx)
}

/// A remembered key points at a job id already issued; a live key (no
/// expiry) points at a live job of this queue that carries the key in the
/// key's namespace (a fire's job for a fire key, any other for a user key).
fn check_key(
    jobs: &BTreeMap<JobId, Job>,
    queue: &str,
    space: KeySpace,
    key: &str,
    entry: &DedupEntry,
    last_job: u64,
) -> Result<(), String> {
    let id = entry.job;
    if id.0 == 0 || id.0 > last_job {
        return Err(format!(
            "key {key:?} of queue {queue:?} points at an unissued job"
        ));
    }
    let carries = |j: &Job| {
        j.queue == queue && j.key.as_deref() == Some(key) && KeySpace::of(j.fire.is_some()) == space
    };
    match (entry.expires_at, jobs.get(&id)) {
        (None, Some(j)) if !j.state.is_terminal() && carries(j) => Ok(()),
        (None, _) => Err(format!(
            "live {space:?} key {key:?} of queue {queue:?} without its live job"
        )),
        (Some(_), Some(j)) if !j.state.is_terminal() && carries(j) => Err(format!(
            "{space:?} key {key:?} of queue {queue:?} expires while its job is live"
        )),
        (Some(_), _) => Ok(()),
    }
}

/// The serialized fields of [`Queues`]; restore rebuilds the rest (read by
/// `Deserialize` and by the compact decoder, `queue/decode.rs`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct QueuesData {
    pub(super) last_job: u64,
    pub(super) last_token: u64,
    pub(super) queues: BTreeMap<String, QueueState>,
    pub(super) jobs: BTreeMap<JobId, Job>,
    #[serde(default)]
    pub(super) finished: Vec<(JobId, Option<FireId>)>,
}

impl<'de> Deserialize<'de> for Queues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let data = QueuesData::deserialize(d)?;
        Queues::restored(
            data.last_job,
            data.last_token,
            data.queues,
            data.jobs,
            data.finished,
        )
        .map_err(serde::de::Error::custom)
    }
}

impl Queues {
    /// Queues from their serialized fields, with every index rebuilt and
    /// checked (shared by `Deserialize` and the compact decoder).
    pub(crate) fn restored(
        last_job: u64,
        last_token: u64,
        queues: BTreeMap<String, QueueState>,
        jobs: BTreeMap<JobId, Job>,
        finished: Vec<(JobId, Option<FireId>)>,
    ) -> Result<Queues, String> {
        let mut restored = Queues {
            last_job,
            last_token,
            queues,
            jobs,
            finished,
            ended: Vec::new(),
            idx: Index::default(),
        };
        restored.rebuild_indexes()?;
        Ok(restored)
    }
}
