//! The queue port a replica's listener serves: [`PgQueues`] on a
//! connection of its own, opened on the first call and again after it
//! closes (the server restarted), so the listener outlives the replica's
//! sessions. Every verb is `PgQueues`'s own, forwarded; completions are
//! coalesced into `complete_many` (`api_complete.rs`) and single enqueues
//! into `enqueue_batch` (`api_enqueue.rs`).

use super::api_complete::Completer;
use super::api_enqueue::Enqueuer;
use super::connection::PgConfig;
use super::notify::PgListener;
use super::queue::PgQueues;
use crate::backend::{Enqueued, Failed, PortError, PortFuture, QueueBackend, Redriven};
use chime_core::{
    Claimed, EngineConfig, EnqueueRequest, Error, JobId, JobInfo, JobPage, JobQuery, LeaseToken,
    QueueConfig, Timestamp,
};
use std::sync::Arc;

/// [`PgQueues`] that reconnects (see the module docs).
pub struct PgApiQueues {
    pg: PgConfig,
    engine: EngineConfig,
    listener: Option<Arc<PgListener>>,
    current: tokio::sync::Mutex<Option<Arc<PgQueues>>>,
    completer: Arc<Completer>,
    enqueuer: Arc<Enqueuer>,
}

impl std::fmt::Debug for PgApiQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgApiQueues")
            .field("schema", &self.pg.schema)
            .finish_non_exhaustive()
    }
}

impl PgApiQueues {
    /// The job tables of `pg`'s schema, checked with `engine`'s limits
    /// (the replicas' engine config). Opens nothing yet.
    pub fn new(pg: PgConfig, engine: EngineConfig) -> PgApiQueues {
        PgApiQueues {
            pg,
            engine,
            listener: None,
            current: tokio::sync::Mutex::new(None),
            completer: Arc::default(),
            enqueuer: Arc::default(),
        }
    }

    /// Long-poll claims wake on `listener`'s notifications (any
    /// replica's enqueue, retry, redrive) instead of re-polling.
    pub fn with_listener(mut self, listener: Arc<PgListener>) -> PgApiQueues {
        self.listener = Some(listener);
        self
    }

    /// The open queues, connected (and the schema migrated) if needed.
    async fn queues(&self) -> Result<Arc<PgQueues>, PortError> {
        let mut slot = self.current.lock().await;
        if let Some(q) = slot.as_ref()
            && !q.is_closed()
        {
            return Ok(q.clone());
        }
        let q = PgQueues::connect(&self.pg, self.engine.clone())
            .await
            .map_err(|e| PortError::Unavailable(Box::new(e)))?;
        let q = Arc::new(match &self.listener {
            Some(l) => q.with_listener(l.clone()),
            None => q,
        });
        *slot = Some(q.clone());
        Ok(q)
    }
}

impl QueueBackend for PgApiQueues {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        Box::pin(async move { QueueBackend::declare(&*self.queues().await?, config).await })
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        Box::pin(async move {
            let queues = self.queues().await?;
            self.enqueuer.enqueue(queues, &self.engine, request).await
        })
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        Box::pin(async move {
            QueueBackend::claim(&*self.queues().await?, queue, worker, max, lease_ms).await
        })
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        Box::pin(async move {
            QueueBackend::heartbeat(&*self.queues().await?, job, token, lease_ms).await
        })
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        Box::pin(async move {
            let queues = self.queues().await?;
            self.completer.complete(queues, job, token).await
        })
    }

    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        Box::pin(async move {
            QueueBackend::fail(&*self.queues().await?, job, token, error, retry_at).await
        })
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        Box::pin(async move { QueueBackend::cancel(&*self.queues().await?, job).await })
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        Box::pin(async move { QueueBackend::redrive(&*self.queues().await?, queue, job).await })
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        Box::pin(
            async move { QueueBackend::purge_dead(&*self.queues().await?, queue, before).await },
        )
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        Box::pin(async move { QueueBackend::job(&*self.queues().await?, job).await })
    }

    /// All or none: `PgQueues`'s batch, one transaction.
    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, Error)>> {
        Box::pin(async move { QueueBackend::enqueue_batch(&*self.queues().await?, requests).await })
    }

    fn availability(&self, queue: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.listener.as_ref().map(|l| l.availability(queue))
    }

    fn search<'a>(&'a self, query: &'a JobQuery) -> PortFuture<'a, JobPage> {
        Box::pin(async move { QueueBackend::search(&*self.queues().await?, query).await })
    }

    fn maintain(&self) -> PortFuture<'_, ()> {
        Box::pin(async move { QueueBackend::maintain(&*self.queues().await?).await })
    }
}
