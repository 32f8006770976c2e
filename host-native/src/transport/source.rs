//! A transport queue as a worker pool's job source: chime's command and
//! HTTP workers run a broker's jobs exactly as they run local ones.

use super::Transport;
use crate::backend::PortError;
use crate::worker::SourceError;
use chime_core::{Claimed, JobId, LeaseToken};
use std::sync::Arc;

/// The pool's side of a [`Transport`].
#[derive(Clone)]
pub struct TransportSource(pub Arc<dyn Transport>);

fn source_error(e: PortError) -> SourceError {
    match e {
        PortError::Refused(e) => SourceError::Refused(e.to_string()),
        PortError::Stopped => SourceError::Gone,
        other => SourceError::Unavailable(other.to_string()),
    }
}

impl crate::worker::JobSource for TransportSource {
    async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> Result<Vec<Claimed>, SourceError> {
        self.0
            .claim(queue, worker, max, Some(lease_ms))
            .await
            .map_err(source_error)
    }

    async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> Result<(), SourceError> {
        self.0
            .heartbeat(job, token, Some(lease_ms))
            .await
            .map(drop)
            .map_err(source_error)
    }

    async fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        outcome: Result<(), String>,
    ) -> Result<(), SourceError> {
        match outcome {
            Ok(()) => self.0.complete(job, token).await,
            Err(error) => self.0.fail(job, token, &error, None).await.map(drop),
        }
        .map_err(source_error)
    }
}
