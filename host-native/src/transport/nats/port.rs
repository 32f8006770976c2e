//! [`QueueBackend`] for [`NatsQueues`]: each verb one of the methods of
//! `consume` or `dead`.

use super::NatsQueues;
use crate::backend::{Enqueued, Failed, PortFuture, QueueBackend, Redriven};
use chime_core::{
    Claimed, EnqueueRequest, Input, JobId, JobInfo, LeaseToken, QueueConfig, Timestamp,
};

impl QueueBackend for NatsQueues {
    fn backend(&self) -> &'static str {
        super::NAME
    }

    /// Creates or checks the queue's streams and consumer (`setup`).
    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        Box::pin(async move {
            let input = Input::DeclareQueue(config.clone());
            chime_core::validate_input(&input, &self.engine, self.now())?;
            self.ensure(config).await.map(drop)
        })
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        Box::pin(self.enqueue_job(request))
    }

    /// Every request checked before any is published (all or none
    /// refused).
    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, chime_core::Error)>> {
        Box::pin(self.enqueue_jobs(requests))
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        Box::pin(self.claim_jobs(queue, worker, max, lease_ms))
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        Box::pin(self.extend(job, token, lease_ms))
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        Box::pin(self.complete_job(job, token))
    }

    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        Box::pin(self.fail_job(job, token, error, retry_at))
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        Box::pin(self.cancel_job(job))
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        Box::pin(self.redrive_dead(queue, job))
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        Box::pin(self.purge_letters(queue, before))
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        Box::pin(self.job_info(job))
    }

    fn maintain(&self) -> PortFuture<'_, ()> {
        Box::pin(self.maintain_book())
    }
}
