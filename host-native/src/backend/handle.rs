//! The embedded engine through its driver: the daemon's, durable path.

use super::{
    Enqueued, Failed, PortError, PortFuture, QueueBackend, Redriven, claim_input, fail_input,
    failed, purge_input, replies,
};
use crate::driver::Handle;
use chime_core::{
    Claimed, Engine, EnqueueRequest, Error, Input, JobId, JobInfo, JobPage, JobQuery, LeaseToken,
    QueueConfig, Reply, Timestamp,
};

impl Handle {
    /// One input through the driver, as a port result.
    pub(super) async fn port_call(&self, input: Input) -> Result<Reply, PortError> {
        match self.call(input).await {
            Ok(reply) => Ok(reply?),
            Err(_) => Err(PortError::Stopped),
        }
    }
}

/// The embedded engine through its driver: every call is journaled and
/// committed before it returns, as any [`Handle::call`].
impl QueueBackend for Handle {
    fn backend(&self) -> &'static str {
        "engine"
    }

    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        Box::pin(async move {
            let input = Input::DeclareQueue(config.clone());
            self.port_call(input).await.map(drop)
        })
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        let input = Input::Enqueue(request.clone());
        Box::pin(async move { replies::enqueued(self.port_call(input).await?) })
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        let input = claim_input(queue, worker, max, lease_ms);
        Box::pin(async move { replies::claimed(self.port_call(input).await?) })
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        let input = Input::Heartbeat {
            job,
            token,
            lease_ms,
        };
        Box::pin(async move { replies::extended(self.port_call(input).await?) })
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        Box::pin(async move {
            self.port_call(Input::Complete { job, token })
                .await
                .map(drop)
        })
    }

    /// The delay is measured against the engine's clock read by an
    /// `inspect` sent right behind the `Fail`: the driver handles both in
    /// the same turn (at one `now`) unless it happens to start a turn
    /// between the two sends (possible only on a multi-threaded runtime),
    /// when the delay reads short by the time between two turns.
    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        let input = fail_input(job, token, error, retry_at);
        Box::pin(async move {
            let (reply, clock) = tokio::join!(self.port_call(input), self.inspect(Engine::clock));
            failed(reply?, clock.map_err(|_| PortError::Stopped)?)
        })
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        Box::pin(async move { self.port_call(Input::CancelJob { job }).await.map(drop) })
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        let queue = queue.to_owned();
        Box::pin(
            async move { replies::redriven(self.port_call(Input::Redrive { queue, job }).await?) },
        )
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        let input = purge_input(queue, before);
        Box::pin(async move { replies::count(self.port_call(input).await?) })
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        Box::pin(async move {
            self.inspect(move |e| e.job(job))
                .await
                .map_err(|_| PortError::Stopped)
        })
    }

    /// One driver turn, one commit ([`Handle::call_batch`]).
    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, Error)>> {
        let inputs = requests.iter().cloned().map(Input::Enqueue).collect();
        Box::pin(async move {
            match self.call_batch(inputs).await {
                Err(_) => Err(PortError::Stopped),
                Ok(Err(refused)) => Ok(Err(refused)),
                Ok(Ok(replies)) => replies
                    .into_iter()
                    .map(replies::enqueued)
                    .collect::<Result<Vec<_>, _>>()
                    .map(Ok),
            }
        })
    }

    fn search<'a>(&'a self, query: &'a JobQuery) -> PortFuture<'a, JobPage> {
        let query = query.clone();
        Box::pin(async move {
            self.inspect(move |e| e.search_jobs(&query))
                .await
                .map_err(|_| PortError::Stopped)
        })
    }

    fn availability(&self, queue: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(Handle::availability(self, queue))
    }

    fn maintain(&self) -> PortFuture<'_, ()> {
        Box::pin(async move { self.port_call(Input::Advance).await.map(drop) })
    }
}
