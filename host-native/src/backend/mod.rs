//! The queue port: the job-queue verbs every backend offers, so that code
//! above it — the HTTP API, worker pools, the conformance suites — works
//! on any of them through one trait, [`QueueBackend`], as River's
//! `riverdriver` interface lets River run on several databases.
//!
//! Implementations here: the embedded engine through the driver
//! ([`Handle`](crate::driver::Handle): durable, the daemon's path) and an engine behind a mutex
//! with a [`Clock`](crate::driver::Clock) ([`EngineQueues`]: no store, for tests, simulations
//! and embedders that drive the engine themselves). The Postgres queues
//! (`PgQueues`) implement it in their own module; a NATS or Redis
//! transport would too. The port names no adapter.
//!
//! # What an implementation must do
//!
//! The rules are chime-core's, never re-derived; an implementation either
//! is the engine or applies core's functions and values (`validate_input`,
//! `after_failure`, `CLAIM_ORDER`, `key_is_active`, `QueueConfig::implicit`,
//! …). `host-native/tests/queue_conformance.rs` runs the same scenarios on
//! every implementation and requires the same results; `docs/backends.md`
//! describes the contract verb by verb. In short:
//!
//! - Inputs are checked as the engine checks them, and refusals are
//!   [`PortError::Refused`] with core's [`chime_core::Error`] (its stable
//!   [`code`](chime_core::Error::code)): a refused call changes nothing.
//! - `enqueue` creates an unknown queue with [`QueueConfig::implicit`];
//!   a key that is active returns its job (`deduplicated`).
//! - `claim` takes available jobs in core's claim order, each with a new
//!   token; a queue that does not exist gives none (and is not created).
//! - `heartbeat`, `complete` and `fail` take effect only with the job's
//!   current token while its lease runs, else `lease_lost`
//!   (`unknown_job` for a job the backend does not hold).
//! - `fail` applies `after_failure` with the queue's config and seed.
//! - `maintain` does what the engine does at an `Advance`: expired leases
//!   become failed attempts, retention and key expiry apply.
//! - A backend that cannot answer now (database down) says
//!   [`PortError::Unavailable`]; one that has stopped for good,
//!   [`PortError::Stopped`].

mod control;
mod engine;
pub mod fires;
mod handle;
pub mod inspection;
mod reads;
pub mod views;

pub use control::{ControlBackend, is_control};
pub use engine::EngineQueues;
pub use reads::ReadBackend;

use chime_core::{
    Claimed, EnqueueRequest, Error, Input, JobId, JobInfo, JobPage, JobQuery, JobState, LeaseToken,
    QueueConfig, Reply, Timestamp,
};
use std::future::Future;
use std::pin::Pin;

/// What a [`QueueBackend`] call returns: a boxed future, so the trait can
/// be used as `dyn QueueBackend` (one HTTP server or test suite for every
/// backend).
pub type PortFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, PortError>> + Send + 'a>>;

/// Why a queue call did not happen.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// Refused by the queue's rules (bad input, unknown queue or job,
    /// `lease_lost`, `invalid_state`, limits), with the engine's error:
    /// nothing changed.
    #[error(transparent)]
    Refused(#[from] Error),
    /// The backend cannot answer now (its database failed); the call may
    /// or may not have taken effect, and may be tried again.
    #[error("backend unavailable: {0}")]
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    /// The backend has stopped for good (the driver ended).
    #[error("the queue backend has stopped")]
    Stopped,
    /// This backend does not offer the verb (yet).
    #[error("not supported by the {0} backend")]
    Unsupported(&'static str),
}

impl PortError {
    /// The stable code: core's for a refusal, else `unavailable` or
    /// `stopped`.
    pub fn code(&self) -> &'static str {
        match self {
            PortError::Refused(e) => e.code(),
            PortError::Unavailable(_) => "unavailable",
            PortError::Stopped => "stopped",
            PortError::Unsupported(_) => "unsupported",
        }
    }
}

/// What an enqueue did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// The job (the existing one when the key matched).
    pub job: JobId,
    /// `true`: the key matched a job enqueued before; nothing was added.
    pub deduplicated: bool,
}

/// What a failed attempt led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// Runnable again from `run_at` (the backend's clock), `delay_ms`
    /// after the failure was recorded: core's backoff, or the failure's
    /// own `retryAt`.
    Retry {
        /// When it runs again.
        run_at: Timestamp,
        /// `run_at` minus the backend's clock at the failure.
        delay_ms: i64,
    },
    /// Out of attempts, kept as a dead letter.
    Dead,
    /// Out of attempts on a queue without dead letters (or dropped at
    /// once by the dead-letter bound).
    Dropped,
}

/// What a redrive did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redriven {
    /// Dead letters made available again.
    pub count: u64,
    /// Of those, how many lost their idempotency key because another live
    /// job holds it now.
    pub keys_dropped: u64,
}

/// The job-queue verbs of a backend (see the module docs for the
/// contract). Every method is one call on the backend; none waits for
/// jobs to arrive.
pub trait QueueBackend: Send + Sync {
    /// A short name for messages and metrics labels (`engine`,
    /// `postgres`).
    fn backend(&self) -> &'static str;

    /// Creates or updates a queue; the new config applies to later
    /// attempts.
    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()>;

    /// Adds a job (or returns the one its active key names).
    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued>;

    /// Leases up to `max` available jobs of `queue` to `worker` for
    /// `lease_ms` (default: the queue's), in claim order.
    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>>;

    /// Extends a held lease to `lease_ms` (default: the queue's) from now;
    /// the new deadline.
    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp>;

    /// Ends a held job successfully.
    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()>;

    /// Records a failed attempt of a held job: a retry at core's backoff
    /// (or at `retry_at`), else a dead letter or a drop.
    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed>;

    /// Cancels a job that has not ended (`invalid_state` if it has).
    fn cancel(&self, job: JobId) -> PortFuture<'_, ()>;

    /// Makes dead letters of `queue` available again: one, or all.
    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven>;

    /// Deletes the dead letters of `queue` that died before `before` (or
    /// all); how many.
    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64>;

    /// One job as the engine's getter shows it; `None` if the backend does
    /// not hold it (never did, or retention forgot it).
    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>>;

    /// Adds several jobs, all or none: a batch one request of which is
    /// refused adds nothing, and the error names the first refused
    /// request's index. The default enqueues one by one and is not
    /// atomic; backends override it (the driver applies a batch in one
    /// turn and one commit).
    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, Error)>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(requests.len());
            for (i, r) in requests.iter().enumerate() {
                match self.enqueue(r).await {
                    Ok(e) => out.push(e),
                    Err(PortError::Refused(e)) => return Ok(Err((i, e))),
                    Err(e) => return Err(e),
                }
            }
            Ok(Ok(out))
        })
    }

    /// One page of the jobs of a queue by state, key and id range
    /// (core's [`JobQuery`], bounded as
    /// [`Engine::search_jobs`](chime_core::Engine::search_jobs)).
    fn search<'a>(&'a self, query: &'a JobQuery) -> PortFuture<'a, JobPage> {
        let _ = query;
        Box::pin(async move { Err(PortError::Unsupported(self.backend())) })
    }

    /// A receiver that changes whenever `queue` gets claimable work after
    /// this call, for a long-poll claim to wait on between claims; `None`
    /// if the backend has no such signal (the caller then polls).
    fn availability(&self, queue: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        let _ = queue;
        None
    }

    /// Housekeeping now, as the engine's `Advance`: expired leases become
    /// failed attempts, retention and key expiry apply. A backend also
    /// does this on its own, periodically; this is for callers that need
    /// it done before they look.
    fn maintain(&self) -> PortFuture<'_, ()>;
}

/// The reply of an input as a [`Failed`], given the clock it was handled
/// at.
fn failed(reply: Reply, now: Timestamp) -> Result<Failed, PortError> {
    match reply {
        Reply::Job {
            run_at: Some(run_at),
            ..
        } => Ok(Failed::Retry {
            run_at,
            delay_ms: run_at.as_millis() - now.as_millis(),
        }),
        Reply::Job {
            state: JobState::Dead,
            ..
        } => Ok(Failed::Dead),
        Reply::Job { .. } => Ok(Failed::Dropped),
        other => unreachable!("fail replied {other:?}"),
    }
}

/// The replies the verbs expect, as their results.
mod replies {
    use super::{Enqueued, PortError, Redriven};
    use chime_core::{Claimed, Reply, Timestamp};

    pub(super) fn enqueued(r: Reply) -> Result<Enqueued, PortError> {
        match r {
            Reply::Enqueued { job, deduplicated } => Ok(Enqueued { job, deduplicated }),
            other => unreachable!("enqueue replied {other:?}"),
        }
    }

    pub(super) fn claimed(r: Reply) -> Result<Vec<Claimed>, PortError> {
        match r {
            Reply::Claimed { jobs } => Ok(jobs),
            other => unreachable!("claim replied {other:?}"),
        }
    }

    pub(super) fn extended(r: Reply) -> Result<Timestamp, PortError> {
        match r {
            Reply::LeaseExtended { deadline } => Ok(deadline),
            other => unreachable!("heartbeat replied {other:?}"),
        }
    }

    pub(super) fn redriven(r: Reply) -> Result<Redriven, PortError> {
        match r {
            Reply::Count {
                count,
                keys_dropped,
            } => Ok(Redriven {
                count,
                keys_dropped,
            }),
            other => unreachable!("redrive replied {other:?}"),
        }
    }

    pub(super) fn count(r: Reply) -> Result<u64, PortError> {
        match r {
            Reply::Count { count, .. } => Ok(count),
            other => unreachable!("purge replied {other:?}"),
        }
    }
}

fn fail_input(job: JobId, token: LeaseToken, error: &str, retry_at: Option<Timestamp>) -> Input {
    Input::Fail {
        job,
        token,
        error: error.to_owned(),
        retry_at,
    }
}

fn purge_input(queue: &str, before: Option<Timestamp>) -> Input {
    Input::PurgeDead {
        queue: queue.to_owned(),
        before,
    }
}

fn claim_input(queue: &str, worker: &str, max: u32, lease_ms: Option<i64>) -> Input {
    Input::Claim {
        queue: queue.to_owned(),
        worker: worker.to_owned(),
        max,
        lease_ms,
    }
}
