//! Idempotency keys: remembered per queue while the job is live and for
//! `dedup_window_ms` after it finished, bounded by `Limits::dedup_keys`.
//! Two namespaces per queue ([`KeySpace`]): keys of `Enqueue` inputs and
//! fire ids of schedule fires; a key only ever matches a key of its own
//! namespace, so a user key written like a fire id never captures a fire.
//! Both count against the one bound.

use super::Queues;
use super::store::{self, DedupEntry, KeySpace};
use crate::time::Timestamp;
use crate::wire::config::Limits;
use crate::wire::error::Error;
use crate::wire::ids::JobId;

impl Queues {
    /// The job an enqueue with `key` (in `space`) at `now` returns instead of a new one.
    pub(super) fn dedup_hit(
        &self,
        queue: &str,
        space: KeySpace,
        key: &str,
        now: Timestamp,
    ) -> Option<JobId> {
        let entry = self.queues.get(queue)?.keys(space).get(key)?;
        entry.is_active(now).then_some(entry.job)
    }

    /// Whether remembering a new `key` is possible: it reuses a stale entry
    /// of the same key, fits under the bound, or can evict a finished job's
    /// key. If every remembered key belongs to a live job: `LimitExceeded`.
    pub(super) fn dedup_check_room(
        &self,
        queue: &str,
        space: KeySpace,
        key: &str,
        limits: &Limits,
    ) -> Result<(), Error> {
        let reuses = self
            .queues
            .get(queue)
            .is_some_and(|q| q.keys(space).contains_key(key));
        if reuses || self.idx.dedup_keys < limits.dedup_keys || !self.idx.dedup_expiry.is_empty() {
            Ok(())
        } else {
            Err(Error::LimitExceeded {
                what: "dedup_keys",
                limit: limits.dedup_keys as u64,
            })
        }
    }

    /// Remembers `key` for live job `id` (after [`Queues::dedup_check_room`]),
    /// replacing a stale entry or, at the bound, forgetting the key that
    /// expires soonest.
    pub(super) fn dedup_remember(
        &mut self,
        queue: &str,
        space: KeySpace,
        key: &str,
        id: JobId,
        limits: &Limits,
    ) {
        let q = self.queues.get_mut(queue).expect("queue exists");
        if let Some(old) = q.keys_mut(space).remove(key) {
            assert!(old.expires_at.is_some(), "replacing the key of a live job");
            store::unindex_key(&mut self.idx, queue, space, key, &old);
        } else if self.idx.dedup_keys >= limits.dedup_keys {
            self.dedup_forget_first();
        }
        let entry = DedupEntry {
            job: id,
            expires_at: None,
        };
        store::index_key(&mut self.idx, queue, space, key, &entry);
        self.queues
            .get_mut(queue)
            .expect("queue exists")
            .keys_mut(space)
            .insert(key.to_owned(), entry);
    }

    /// Forgets the key expiring soonest (a finished job's).
    fn dedup_forget_first(&mut self) {
        let (until, queue, space, key) =
            self.idx.dedup_expiry.pop_first().expect("an expiring key");
        let q = self.queues.get_mut(&queue).expect("key's queue exists");
        let entry = q.keys_mut(space).remove(&key).expect("indexed key exists");
        assert_eq!(
            entry.expires_at,
            Some(until),
            "key expiry index out of step"
        );
        assert!(self.idx.dedup_keys > 0, "dedup key count underflow");
        self.idx.dedup_keys -= 1;
    }

    /// Job `id` finished: its key (if it still points at it) now expires at `until`.
    pub(super) fn dedup_finished(&mut self, id: JobId, until: Timestamp) {
        let job = &self.jobs[&id];
        let Some(key) = &job.key else { return };
        let space = KeySpace::of(job.fire.is_some());
        let q = self.queues.get_mut(&job.queue).expect("job's queue exists");
        let Some(entry) = q.keys_mut(space).get_mut(key) else {
            return;
        };
        if entry.job != id {
            return;
        }
        store::unindex_key(&mut self.idx, &job.queue, space, key, entry);
        entry.expires_at = Some(until);
        store::index_key(&mut self.idx, &job.queue, space, key, entry);
    }

    /// Job `id` was redriven (it is live again). It takes its key back
    /// unless another live job holds the key now (it was reused after the
    /// window): then the job loses its key, so two live jobs never share
    /// one, and `false` is returned. Otherwise the key is remembered for it
    /// anew: an entry still in the table (pointing at this job, expiring
    /// since it finished, or at another finished job) is replaced; a
    /// forgotten key needs room in the table, else the job loses it.
    pub(super) fn dedup_revive(&mut self, id: JobId, limits: &Limits) -> bool {
        let job = &self.jobs[&id];
        assert!(!job.state.is_terminal(), "revive the key of a live job");
        let Some(key) = job.key.clone() else {
            return true;
        };
        let (space, queue) = (KeySpace::of(job.fire.is_some()), job.queue.clone());
        let entry = self.queues[&queue].keys(space).get(&key);
        match entry {
            Some(e) if e.expires_at.is_none() => {}
            _ if self.dedup_check_room(&queue, space, &key, limits).is_ok() => {
                self.dedup_remember(&queue, space, &key, id, limits);
                return true;
            }
            _ => {}
        }
        // The key is in no index: dropping it needs no re-indexing.
        self.jobs.get_mut(&id).expect("job exists").key = None;
        false
    }

    /// Forgets up to `budget` keys that expired at or before `now`, oldest
    /// first (the rest on the next advance; an expired key is inactive
    /// whether or not it was forgotten yet, see `DedupEntry::is_active`).
    pub(super) fn dedup_expire(&mut self, now: Timestamp, budget: u32) {
        for _ in 0..budget {
            if self.idx.dedup_expiry.first().is_none_or(|e| e.0 > now) {
                return;
            }
            self.dedup_forget_first();
        }
    }
}
