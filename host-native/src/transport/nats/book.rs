//! What this process knows about jobs beyond what JetStream keeps: the
//! leases it handed out (JetStream does not fence an ack by delivery: an
//! old delivery's `+ACK` acknowledges the message all the same, so the
//! token check is chime's), the jobs that ended here (a WorkQueue stream
//! forgets a message once it is acknowledged, but the port answers `job`
//! and `lease_lost` for a finished job, and keeps keys active for
//! `dedupWindowMs` after the end), and the idempotency keys of live jobs
//! (JetStream's duplicate window counts from the publish, the engine's
//! from the end of the job).
//!
//! Bounded: finished jobs are forgotten by the queue's retention
//! (`retained_until`, `retention.completedMax` in `EVICTION_ORDER`), dead
//! ones beyond `limits.deadLettersPerQueue` become dropped (as the
//! dead-letter stream discards its oldest), keys when inactive; live
//! records are the leases held (at most the claims made) and the jobs
//! waiting for a retry that were claimed here.

use crate::transport::Message;
use chime_core::{
    JobEnd, JobId, JobInfo, JobState, LeaseToken, QueueConfig, Timestamp, key_expires_at,
    key_is_active, retained_until,
};
use std::collections::HashMap;

/// How long past its due time (beyond two leases) a live job's record is
/// kept when it is not claimed here.
const STALE_MS: i64 = 60_000;

/// A lease this process handed out.
#[derive(Clone, Debug)]
pub(super) struct Lease {
    /// The delivery's consumer sequence (never handed out twice).
    pub token: LeaseToken,
    /// The delivery's ack subject.
    pub reply: String,
}

/// One job this process knows.
#[derive(Clone, Debug)]
pub(super) struct Record {
    /// The job as the port shows it.
    pub info: JobInfo,
    /// Its message's sequence: in the work stream while live, in the
    /// dead-letter stream while dead.
    pub seq: u64,
    /// Its message (for dead-lettering and redrive).
    pub message: Message,
    /// The lease, while claimed here.
    pub lease: Option<Lease>,
    /// When the current (or last) attempt was claimed.
    pub started_at: Option<Timestamp>,
}

impl Record {
    /// The run history's record of its end.
    pub fn end(&self) -> JobEnd {
        JobEnd {
            id: self.info.id,
            state: self.info.state,
            attempts: self.info.attempt,
            started_at: self.started_at,
            finished_at: self.info.finished_at,
            error: self.info.last_error.clone(),
        }
    }
}

/// Why a lease check failed (the port's errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Miss {
    /// Not held with that token (or the lease ran out).
    Lost,
    /// Not known here at all (the stream may still hold it).
    Unknown,
}

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct Book {
    jobs: HashMap<JobId, Record>,
    /// `(queue, key)` → the job holding it and when it stops being active
    /// (`None` while the job is live).
    keys: HashMap<(String, String), (JobId, Option<Timestamp>)>,
}

impl Book {
    /// The record of `job`.
    pub fn get(&self, job: JobId) -> Option<&Record> {
        self.jobs.get(&job)
    }

    /// The record of `job`, to change.
    pub fn get_mut(&mut self, job: JobId) -> Option<&mut Record> {
        self.jobs.get_mut(&job)
    }

    /// The job holding `key` in `queue` at `now`, if the key is active.
    pub fn active_key(&self, queue: &str, key: &str, now: Timestamp) -> Option<JobId> {
        let (job, expires) = self.keys.get(&(queue.to_owned(), key.to_owned()))?;
        key_is_active(*expires, now).then_some(*job)
    }

    /// `key` of `queue` is held by live `job`.
    pub fn hold_key(&mut self, queue: &str, key: &str, job: JobId) {
        self.keys
            .insert((queue.to_owned(), key.to_owned()), (job, None));
    }

    /// Records a job handed out now with `lease` (a new record, or the
    /// one a retry left).
    pub fn claimed(&mut self, record: Record) {
        if let Some(key) = &record.info.key {
            self.hold_key(&record.info.queue, key, record.info.id);
        }
        self.jobs.insert(record.info.id, record);
    }

    /// The lease of `job` if `token` is its current one and it runs at
    /// `now`.
    pub fn lease(&self, job: JobId, token: LeaseToken, now: Timestamp) -> Result<&Record, Miss> {
        let r = self.jobs.get(&job).ok_or(Miss::Unknown)?;
        match (&r.lease, r.info.lease_deadline) {
            (Some(l), Some(deadline)) if l.token == token && now < deadline => Ok(r),
            _ => Err(Miss::Lost),
        }
    }

    /// Ends `job` in `state` (terminal) at `now`: the lease is void, the
    /// key expires `dedupWindowMs` from now.
    pub fn finish(
        &mut self,
        job: JobId,
        state: JobState,
        now: Timestamp,
        config: &QueueConfig,
    ) -> Option<&Record> {
        let r = self.jobs.get_mut(&job)?;
        r.info.state = state;
        r.info.finished_at = Some(now);
        r.info.lease_deadline = None;
        r.info.worker = None;
        r.lease = None;
        if let Some(key) = &r.info.key
            && let Some(k) = self.keys.get_mut(&(r.info.queue.clone(), key.clone()))
            && k.0 == job
        {
            k.1 = Some(key_expires_at(now, config));
        }
        self.jobs.get(&job)
    }

    /// Forgets `job` (purged, or its record is no longer true).
    pub fn forget(&mut self, job: JobId) -> Option<Record> {
        self.jobs.remove(&job)
    }

    /// Leases of `queue`-less bookkeeping: every held lease whose
    /// deadline passed at `now` is void (JetStream delivers the message
    /// again after its `ackWait`, which is the lease); the job shows as
    /// available again.
    pub fn expire_leases(&mut self, now: Timestamp) {
        for r in self.jobs.values_mut() {
            if r.info.state == JobState::Claimed && r.info.lease_deadline.is_some_and(|d| d <= now)
            {
                r.info.state = JobState::Available;
                r.info.lease_deadline = None;
                r.info.worker = None;
                r.lease = None;
            }
        }
    }

    /// Applies `queue`'s retention at `now` (see the module docs), with
    /// at most `dead_max` dead letters kept.
    pub fn prune(&mut self, config: &QueueConfig, dead_max: usize, now: Timestamp) {
        let mut finished: Vec<(Timestamp, JobId)> = Vec::new();
        let mut dead: Vec<(Timestamp, JobId)> = Vec::new();
        for r in self.jobs.values() {
            if r.info.queue != config.name {
                continue;
            }
            match (r.info.state, r.info.finished_at) {
                (JobState::Dead, Some(t)) => dead.push((t, r.info.id)),
                (s, Some(t)) if s.is_pruned() => finished.push((t, r.info.id)),
                _ => {}
            }
        }
        // EVICTION_ORDER: oldest finished first, then lowest id.
        dead.sort();
        let over = dead.len().saturating_sub(dead_max);
        for &(_, id) in &dead[..over] {
            if let Some(r) = self.jobs.get_mut(&id) {
                r.info.state = JobState::Dropped;
                finished.push((r.info.finished_at.unwrap_or(now), id));
            }
        }
        // A job waiting for its retry (or whose lease ran out) may be
        // delivered to another process: what this one remembers of it
        // (its last error) is dropped a while after it was due.
        let stale = config.lease_ms.saturating_mul(2).saturating_add(STALE_MS);
        self.jobs.retain(|_, r| {
            r.info.queue != config.name
                || !matches!(r.info.state, JobState::Scheduled | JobState::Available)
                || now.as_millis() - r.info.run_at.as_millis() < stale
        });
        finished.sort();
        let keep = config.retention.completed_max as usize;
        let over = finished.len().saturating_sub(keep);
        for (i, &(t, id)) in finished.iter().enumerate() {
            if i < over || now >= retained_until(t, config) {
                self.jobs.remove(&id);
            }
        }
        self.keys
            .retain(|(q, _), (_, expires)| q != &config.name || key_is_active(*expires, now));
    }

    /// The dead records of `queue`.
    #[cfg(test)]
    pub fn dead_of(&self, queue: &str) -> Vec<JobId> {
        self.jobs
            .values()
            .filter(|r| r.info.queue == queue && r.info.state == JobState::Dead)
            .map(|r| r.info.id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chime_core::{Headers, Payload};

    fn ts(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    fn record(id: u64, key: Option<&str>) -> Record {
        let message = Message {
            id: format!("~job:{id}"),
            queue: "q".into(),
            fire: None,
            priority: 0,
            max_attempts: None,
            headers: Headers::new(),
            payload: Payload::null(),
        };
        Record {
            info: JobInfo {
                id: JobId(id),
                queue: "q".into(),
                state: JobState::Claimed,
                payload: Payload::null(),
                headers: Headers::new(),
                priority: 0,
                key: key.map(str::to_owned),
                fire: None,
                attempt: 1,
                max_attempts: 3,
                run_at: ts(0),
                lease_deadline: Some(ts(100)),
                worker: Some("w".into()),
                last_error: None,
                finished_at: None,
            },
            seq: id,
            message,
            lease: Some(Lease {
                token: LeaseToken(7),
                reply: "r".into(),
            }),
            started_at: Some(ts(0)),
        }
    }

    #[test]
    fn leases_are_fenced_by_token_and_deadline() {
        let mut b = Book::default();
        b.claimed(record(1, None));
        assert!(b.lease(JobId(1), LeaseToken(7), ts(50)).is_ok());
        assert_eq!(
            b.lease(JobId(1), LeaseToken(8), ts(50)).err(),
            Some(Miss::Lost)
        );
        assert_eq!(
            b.lease(JobId(1), LeaseToken(7), ts(100)).err(),
            Some(Miss::Lost)
        );
        assert_eq!(
            b.lease(JobId(2), LeaseToken(7), ts(50)).err(),
            Some(Miss::Unknown)
        );
        let cfg = QueueConfig::new("q");
        b.finish(JobId(1), JobState::Completed, ts(60), &cfg);
        assert_eq!(
            b.lease(JobId(1), LeaseToken(7), ts(61)).err(),
            Some(Miss::Lost)
        );
    }

    #[test]
    fn keys_stay_active_for_the_window_after_the_end() {
        let mut b = Book::default();
        b.claimed(record(1, Some("k")));
        let mut cfg = QueueConfig::new("q");
        cfg.dedup_window_ms = 100;
        assert_eq!(b.active_key("q", "k", ts(10_000)), Some(JobId(1)));
        b.finish(JobId(1), JobState::Completed, ts(50), &cfg);
        assert_eq!(b.active_key("q", "k", ts(149)), Some(JobId(1)));
        assert_eq!(b.active_key("q", "k", ts(150)), None);
    }

    #[test]
    fn retention_and_the_dead_bound() {
        let mut b = Book::default();
        let mut cfg = QueueConfig::new("q");
        cfg.retention.completed_max = 1;
        cfg.retention.completed_ms = 1_000;
        for id in 1..=3 {
            b.claimed(record(id, None));
            b.finish(JobId(id), JobState::Completed, ts(id as i64), &cfg);
        }
        for id in 4..=6 {
            b.claimed(record(id, None));
            b.finish(JobId(id), JobState::Dead, ts(id as i64), &cfg);
        }
        b.prune(&cfg, 2, ts(10));
        // Job 4 was evicted from the dead letters (dropped), and only the
        // newest finished one is kept: job 3 or 4 by finish time → 4.
        assert_eq!(b.dead_of("q").len(), 2);
        assert!(
            b.get(JobId(4))
                .is_some_and(|r| r.info.state == JobState::Dropped)
        );
        assert!(b.get(JobId(3)).is_none());
        b.prune(&cfg, 2, ts(2_000));
        assert!(b.get(JobId(4)).is_none(), "older than completedMs");
        // A job waiting for a retry elsewhere is forgotten in time.
        let mut waiting = record(9, None);
        waiting.info.state = JobState::Scheduled;
        waiting.info.run_at = ts(2_000);
        b.claimed(waiting);
        b.prune(&cfg, 2, ts(2_000 + 2 * cfg.lease_ms + STALE_MS - 1));
        assert!(b.get(JobId(9)).is_some());
        b.prune(&cfg, 2, ts(2_000 + 2 * cfg.lease_ms + STALE_MS));
        assert!(b.get(JobId(9)).is_none());
        assert_eq!(b.dead_of("q").len(), 2, "dead letters are not pruned");
    }
}
