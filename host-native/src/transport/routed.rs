//! The queue port of a daemon with transports: one [`QueueBackend`] over
//! the engine and each broker, so the HTTP API, the `chime` CLI and the
//! dashboard work a transport queue's jobs as they work the engine's.
//! A verb naming a queue goes to the backend that carries the queue (the
//! config's `transport`, else the engine); a verb naming a job goes to the
//! backend whose ids it is in ([`super::ids`]: the id spaces are
//! disjoint, so no job id of one backend reaches another's job).
//!
//! Until a transport queue is declared in its broker with the config's
//! settings (the daemon retries that while the broker is away), its
//! queue verbs are `unavailable` (503, try again): before, the broker
//! would hold the queue under defaults, another lease and other retries.

use super::Transport;
use super::ids::{self, Owner};
use crate::backend::{Enqueued, Failed, PortError, PortFuture, QueueBackend, Redriven};
use chime_core::{
    Claimed, EnqueueRequest, Error, JobId, JobInfo, JobPage, JobQuery, LeaseToken, QueueConfig,
    Timestamp,
};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{Notify, watch};

/// The engine's queues and the transports'.
pub struct RoutedQueues {
    engine: Arc<dyn QueueBackend>,
    by_queue: HashMap<String, Arc<dyn Transport>>,
    all: Vec<Arc<dyn Transport>>,
    declared: HashMap<String, watch::Receiver<bool>>,
    wakes: HashMap<String, Arc<Notify>>,
}

impl RoutedQueues {
    /// `engine` for every queue but those of `by_queue`, which run in
    /// their transport.
    pub fn new(
        engine: Arc<dyn QueueBackend>,
        by_queue: HashMap<String, Arc<dyn Transport>>,
    ) -> RoutedQueues {
        let mut all: Vec<Arc<dyn Transport>> = Vec::new();
        for t in by_queue.values() {
            if !all.iter().any(|a| Arc::ptr_eq(a, t)) {
                all.push(t.clone());
            }
        }
        RoutedQueues {
            engine,
            by_queue,
            all,
            declared: HashMap::new(),
            wakes: HashMap::new(),
        }
    }

    /// With the wake-ups of this daemon's pools: an enqueue or redrive
    /// through the API starts them at once, not at their next poll.
    pub fn with_wakes(mut self, wakes: HashMap<String, Arc<Notify>>) -> Self {
        self.wakes = wakes;
        self
    }

    /// Tells the pools of `queue` it has work.
    fn wake(&self, queue: &str) {
        if let Some(w) = self.wakes.get(queue) {
            w.notify_one();
        }
    }

    /// With each transport queue's declaration: `true` once declared.
    pub fn with_declared(mut self, declared: HashMap<String, watch::Receiver<bool>>) -> Self {
        self.declared = declared;
        self
    }

    /// The backend of `queue`.
    fn of_queue(&self, queue: &str) -> &dyn QueueBackend {
        match self.by_queue.get(queue) {
            Some(t) => t.as_ref(),
            None => self.engine.as_ref(),
        }
    }

    /// The backend of `queue`, once it can take the queue's verbs.
    fn ready(&self, queue: &str) -> Result<&dyn QueueBackend, PortError> {
        match self.declared.get(queue) {
            Some(d) if !*d.borrow() => Err(PortError::Unavailable(
                format!("queue {queue} is not yet declared in its broker").into(),
            )),
            _ => Ok(self.of_queue(queue)),
        }
    }

    /// The backend whose ids `job` is in; `None`: no backend here holds
    /// such a job (a NATS id without NATS, say).
    fn of_job(&self, job: JobId) -> Option<&dyn QueueBackend> {
        if ids::owner(job) == Owner::Engine {
            return Some(self.engine.as_ref());
        }
        self.all
            .iter()
            .find(|t| t.owns(job))
            .map(|t| t.as_ref() as &dyn QueueBackend)
    }

    fn job_backend(&self, job: JobId) -> Result<&dyn QueueBackend, PortError> {
        self.of_job(job)
            .ok_or(PortError::Refused(Error::UnknownJob(job)))
    }
}

impl QueueBackend for RoutedQueues {
    fn backend(&self) -> &'static str {
        self.engine.backend()
    }

    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        Box::pin(async move { self.ready(&config.name)?.declare(config).await })
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        Box::pin(async move {
            let e = self.ready(&request.queue)?.enqueue(request).await?;
            self.wake(&request.queue);
            Ok(e)
        })
    }

    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, Error)>> {
        let Some(first) = requests.first() else {
            return self.engine.enqueue_batch(requests);
        };
        let backend = match self.ready(&first.queue) {
            Ok(b) => b,
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        // All or none holds within one backend only.
        let mixed = requests
            .iter()
            .position(|r| !std::ptr::addr_eq(self.of_queue(&r.queue), backend));
        match mixed {
            None => Box::pin(async move {
                let r = backend.enqueue_batch(requests).await?;
                if r.is_ok() {
                    self.wake(&first.queue);
                }
                Ok(r)
            }),
            Some(i) => Box::pin(async move {
                Ok(Err((
                    i,
                    Error::InvalidInput {
                        field: "queue",
                        message: "a batch's jobs must all go to one backend (the engine or one transport)"
                            .to_owned(),
                    },
                )))
            }),
        }
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        Box::pin(async move { self.ready(queue)?.claim(queue, worker, max, lease_ms).await })
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        Box::pin(async move { self.job_backend(job)?.heartbeat(job, token, lease_ms).await })
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        Box::pin(async move { self.job_backend(job)?.complete(job, token).await })
    }

    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        Box::pin(async move {
            self.job_backend(job)?
                .fail(job, token, error, retry_at)
                .await
        })
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        Box::pin(async move { self.job_backend(job)?.cancel(job).await })
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        Box::pin(async move {
            let r = self.ready(queue)?.redrive(queue, job).await?;
            self.wake(queue);
            Ok(r)
        })
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        Box::pin(async move { self.ready(queue)?.purge_dead(queue, before).await })
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        match self.of_job(job) {
            Some(b) => b.job(job),
            None => Box::pin(async move { Ok(None) }),
        }
    }

    fn search<'a>(&'a self, query: &'a JobQuery) -> PortFuture<'a, JobPage> {
        Box::pin(async move { self.ready(&query.queue)?.search(query).await })
    }

    fn availability(&self, queue: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.of_queue(queue).availability(queue)
    }

    fn maintain(&self) -> PortFuture<'_, ()> {
        Box::pin(async move {
            self.engine.maintain().await?;
            for t in &self.all {
                t.maintain().await?;
            }
            Ok(())
        })
    }
}

/// The control port of a daemon with transports: the engine's, except
/// that a transport queue's settings cannot change through it. They are
/// its `[[queue]]` table's, declared in the broker at start; a
/// `PUT /v1/queues/{name}` would change only the engine's copy (or make
/// the queue local there, and its fires stop going to the broker).
pub struct RoutedControl {
    engine: Arc<dyn crate::backend::ControlBackend>,
    transports: HashMap<String, &'static str>,
}

impl RoutedControl {
    /// `engine`'s control, refusing to declare the queues of `by_queue`.
    pub fn new(
        engine: Arc<dyn crate::backend::ControlBackend>,
        by_queue: &HashMap<String, Arc<dyn Transport>>,
    ) -> RoutedControl {
        let transports = by_queue
            .iter()
            .map(|(q, t)| (q.clone(), t.backend()))
            .collect();
        RoutedControl { engine, transports }
    }
}

impl crate::backend::ControlBackend for RoutedControl {
    fn backend(&self) -> &'static str {
        self.engine.backend()
    }

    fn submit(&self, input: chime_core::Input) -> PortFuture<'_, chime_core::Reply> {
        if let chime_core::Input::DeclareQueue(c) = &input
            && let Some(t) = self.transports.get(&c.name)
        {
            let e = Error::InvalidInput {
                field: "name",
                message: format!(
                    "queue {} is in a broker (transport {t}): its settings are its [[queue]] table's, declared there at start",
                    c.name
                ),
            };
            return Box::pin(async move { Err(PortError::Refused(e)) });
        }
        self.engine.submit(input)
    }
}
