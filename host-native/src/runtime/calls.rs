//! Typed calls on a [`Handle`]: one method per input an embedding service
//! commonly sends, each returning the part of the reply it needs. They are
//! sugar over [`Handle::call`], which takes any core `Input`; the engine
//! still decides everything (and refuses bad input with a typed error).

use crate::backend::Enqueued;
use crate::driver::{DriverError, Handle};
use chime_core::{EnqueueRequest, FireId, Input, Reply, ScheduleDef, Timestamp};

/// Why a typed call did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The engine refused the input (bad input, unknown name, limits): it
    /// changed nothing. `code()` is stable.
    #[error(transparent)]
    Rejected(#[from] chime_core::Error),
    /// The driver is gone (stopped, or a store failure ended it); the input
    /// may or may not have been committed.
    #[error(transparent)]
    Driver(#[from] DriverError),
}

impl CallError {
    /// The engine's stable error code, or `driver_stopped`.
    pub fn code(&self) -> &str {
        match self {
            CallError::Rejected(e) => e.code(),
            CallError::Driver(_) => "driver_stopped",
        }
    }
}

impl Handle {
    async fn reply(&self, input: Input) -> Result<Reply, CallError> {
        Ok(self.call(input).await??)
    }

    /// Enqueues a job; durable when this returns.
    pub async fn enqueue(&self, request: EnqueueRequest) -> Result<Enqueued, CallError> {
        match self.reply(Input::Enqueue(request)).await? {
            Reply::Enqueued { job, deduplicated } => Ok(Enqueued { job, deduplicated }),
            other => unreachable!("enqueue replied {other:?}"),
        }
    }

    /// Creates or updates a schedule; returns its next fire time (`None`
    /// when it has none left).
    pub async fn upsert_schedule(&self, def: ScheduleDef) -> Result<Option<Timestamp>, CallError> {
        match self.reply(Input::UpsertSchedule(def)).await? {
            Reply::ScheduleUpserted { next_fire, .. } => Ok(next_fire),
            other => unreachable!("upsert replied {other:?}"),
        }
    }

    /// Removes a schedule (its in-flight jobs run on).
    /// Returns whether it existed (removing an unknown name is not an
    /// error: the engine says `existed: false`, and so does this).
    pub async fn remove_schedule(&self, name: &str) -> Result<bool, CallError> {
        let name = name.to_owned();
        match self.reply(Input::remove_schedule(name)).await? {
            Reply::ScheduleRemoved { existed } => Ok(existed),
            other => unreachable!("remove replied {other:?}"),
        }
    }

    /// Pauses a schedule: boundaries while paused are skipped (reason
    /// `paused`), never fired late.
    pub async fn pause(&self, name: &str, note: Option<String>) -> Result<(), CallError> {
        let name = name.to_owned();
        self.reply(Input::PauseSchedule { name, note })
            .await
            .map(drop)
    }

    /// Resumes a paused schedule from its next boundary after now.
    pub async fn resume(&self, name: &str) -> Result<(), CallError> {
        let name = name.to_owned();
        self.reply(Input::ResumeSchedule { name }).await.map(drop)
    }

    /// Fires a schedule now, under its overlap policy: the fire id, or
    /// `None` when the policy skipped or buffered it.
    pub async fn trigger(&self, name: &str) -> Result<Option<FireId>, CallError> {
        let name = name.to_owned();
        match self
            .reply(Input::TriggerSchedule {
                name,
                overlap: None,
            })
            .await?
        {
            Reply::Triggered { fire, .. } => Ok(fire),
            other => unreachable!("trigger replied {other:?}"),
        }
    }
}
