//! The workers' port: where a pool's jobs come from and where their
//! outcomes go. The embedded engine implements it through the driver's
//! [`Handle`]; the Postgres backend through its queue tables.

use crate::driver::Handle;
use chime_core::{Claimed, Input, JobId, LeaseToken, Reply};
use std::future::Future;

/// Why a [`JobSource`] call did not go through.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Refused by the queue's rules (the lease was lost, the job is gone).
    #[error("{0}")]
    Refused(String),
    /// Not reachable now (a database error); the pool tries again later.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The source has stopped for good (the driver ended): the pool ends.
    #[error("the job source has stopped")]
    Gone,
}

/// Where a pool's jobs come from and where their outcomes go.
pub trait JobSource: Clone + Send + Sync + 'static {
    /// Claims up to `max` jobs of `queue` with a lease of `lease_ms`.
    fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> impl Future<Output = Result<Vec<Claimed>, SourceError>> + Send;
    /// Extends a held lease.
    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> impl Future<Output = Result<(), SourceError>> + Send;
    /// Reports an attempt's outcome (`Err(text)`: failed).
    fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        outcome: Result<(), String>,
    ) -> impl Future<Output = Result<(), SourceError>> + Send;
}

impl Handle {
    /// One input, its refusal or the driver's end as a [`SourceError`].
    async fn source_call(&self, input: Input) -> Result<Reply, SourceError> {
        match self.call(input).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(SourceError::Refused(e.to_string())),
            Err(_) => Err(SourceError::Gone),
        }
    }
}

/// The embedded engine's local queues, through the driver.
impl JobSource for Handle {
    async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> Result<Vec<Claimed>, SourceError> {
        let claim = Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms: Some(lease_ms),
        };
        match self.source_call(claim).await? {
            Reply::Claimed { jobs } => Ok(jobs),
            other => Err(SourceError::Refused(format!(
                "unexpected reply to claim: {other:?}"
            ))),
        }
    }

    async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> Result<(), SourceError> {
        let hb = Input::Heartbeat {
            job,
            token,
            lease_ms: Some(lease_ms),
        };
        self.source_call(hb).await.map(drop)
    }

    async fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        outcome: Result<(), String>,
    ) -> Result<(), SourceError> {
        let input = match outcome {
            Ok(()) => Input::Complete { job, token },
            Err(error) => Input::Fail {
                job,
                token,
                error,
                retry_at: None,
            },
        };
        self.source_call(input).await.map(drop)
    }
}
