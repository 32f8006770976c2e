//! The control port: schedule and queue writes, the inputs only the
//! engine that owns the schedules may apply. The HTTP API's
//! `PUT /v1/schedules/{name}`, pause, resume, trigger, backfill and
//! `PUT /v1/queues/{name}` go through it, so the same routes serve the
//! embedded daemon (the driver [`Handle`]: applied and committed in a
//! driver turn) and a Postgres replica (handed to the leader's engine,
//! `PortError::Unavailable` while no leader is elected).

use super::{PortError, PortFuture};
use crate::driver::Handle;
use chime_core::{Input, Reply};

/// Hands schedule and queue inputs to the engine that owns schedules.
pub trait ControlBackend: Send + Sync {
    /// A short name for messages and metrics labels (`engine`,
    /// `postgres`).
    fn backend(&self) -> &'static str;

    /// Hands a schedule or queue input — `UpsertSchedule`,
    /// `RemoveSchedule`, `PauseSchedule`, `ResumeSchedule`,
    /// `TriggerSchedule`, `Backfill`, `DeclareQueue` — to the engine that
    /// owns schedules and returns its reply once durable. Refusals are
    /// [`PortError::Refused`] with core's error, and change nothing.
    fn submit(&self, input: Input) -> PortFuture<'_, Reply>;
}

/// Whether `input` is one a [`ControlBackend`] takes: the rest
/// (jobs, leases, leadership, `Advance`) go through their own ports or
/// are the host's alone.
pub fn is_control(input: &Input) -> bool {
    matches!(
        input,
        Input::UpsertSchedule(_)
            | Input::RemoveSchedule { .. }
            | Input::PauseSchedule { .. }
            | Input::ResumeSchedule { .. }
            | Input::TriggerSchedule { .. }
            | Input::Backfill { .. }
            | Input::DeclareQueue(_)
    )
}

/// The embedded engine: the input is journaled and committed in a driver
/// turn before the reply comes back.
impl ControlBackend for Handle {
    fn backend(&self) -> &'static str {
        "engine"
    }

    fn submit(&self, input: Input) -> PortFuture<'_, Reply> {
        Box::pin(async move {
            if !is_control(&input) {
                return Err(PortError::Refused(chime_core::Error::InvalidInput {
                    field: "input",
                    message: "not a schedule or queue input".to_owned(),
                }));
            }
            self.port_call(input).await
        })
    }
}
