//! [`QueueBackend`] for [`PgQueues`]: the verbs map one to one, refusals
//! keep core's errors, database failures are `unavailable`.

use super::{PgQueues, QueueError};
use crate::backend::{Enqueued, Failed, PortError, PortFuture, QueueBackend, Redriven};
use chime_core::{
    Claimed, EnqueueRequest, Error as CoreError, JobId, JobInfo, JobPage, JobQuery, LeaseToken,
    QueueConfig, Timestamp,
};

impl From<QueueError> for PortError {
    fn from(e: QueueError) -> PortError {
        match e {
            QueueError::Refused(e) => PortError::Refused(e),
            QueueError::Db(e) => PortError::Unavailable(Box::new(e)),
        }
    }
}

/// Boxes a [`PgQueues`] call as a port future.
fn port<'a, T: Send + 'a>(
    f: impl Future<Output = Result<T, QueueError>> + Send + 'a,
) -> PortFuture<'a, T> {
    Box::pin(async move { Ok(f.await?) })
}

impl QueueBackend for PgQueues {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        port(PgQueues::declare(self, config))
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        port(PgQueues::enqueue(self, request))
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        port(PgQueues::claim(self, queue, worker, max, lease_ms))
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        port(PgQueues::heartbeat(self, job, token, lease_ms))
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        port(PgQueues::complete(self, job, token))
    }

    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        port(PgQueues::fail(self, job, token, error, retry_at))
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        port(PgQueues::cancel(self, job))
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        port(PgQueues::redrive(self, queue, job))
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        port(PgQueues::purge_dead(self, queue, before))
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        port(PgQueues::job(self, job))
    }

    /// One statement, one commit: all or none ([`PgQueues::enqueue_batch`]).
    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, CoreError)>> {
        port(PgQueues::enqueue_batch(self, requests))
    }

    fn search<'a>(&'a self, query: &'a JobQuery) -> PortFuture<'a, JobPage> {
        port(PgQueues::search(self, query))
    }

    /// From the replica's listener, if it was given one
    /// ([`PgQueues::with_listener`]).
    fn availability(&self, queue: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        PgQueues::availability(self, queue)
    }

    /// Rescues up to `limits.firesPerAdvance` expired leases (the engine's
    /// per-advance budget), then prunes and forgets expired keys.
    fn maintain(&self) -> PortFuture<'_, ()> {
        let budget = self.engine.limits.fires_per_advance.max(1);
        port(async move { PgQueues::maintain(self, budget).await.map(drop) })
    }
}
