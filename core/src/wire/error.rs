//! Errors returned by [`Engine::handle`](crate::Engine::handle).

use crate::spec::SpecError;
use crate::wire::ids::{FireId, JobId};

/// Why an input was rejected. A rejected input changes nothing.
///
/// Each variant has a stable [`code`](Error::code); `Display` starts with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A schedule, queue, lease or worker name breaks the naming rule.
    #[error("invalid_name: {what} {name:?} {why}")]
    InvalidName {
        /// Which kind of name.
        what: &'static str,
        /// The name given (truncated to 200 chars).
        name: String,
        /// The rule it breaks.
        why: &'static str,
    },
    /// A name with the reserved `__chime` prefix.
    #[error("reserved_name: {what} {name:?} uses the reserved prefix __chime")]
    ReservedName {
        /// Which kind of name.
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// The spec, zone or duration is invalid or never fires.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A field is out of range or inconsistent.
    #[error("invalid_input: {field}: {message}")]
    InvalidInput {
        /// The field, camelCase as on the wire.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// No schedule by that name.
    #[error("unknown_schedule: no schedule named {0:?}")]
    UnknownSchedule(String),
    /// An `api` upsert or removal of a schedule the config (or the host's
    /// code) declares: the declaration is its source of truth, and a
    /// change made around it would be undone at the next start.
    #[error(
        "schedule_declared: schedule {0:?} is declared by the config; change it there (pause, resume, trigger and backfill work through the API)"
    )]
    ScheduleDeclared(String),
    /// No queue by that name.
    #[error("unknown_queue: no queue named {0:?}")]
    UnknownQueue(String),
    /// No such job (never existed, or pruned by retention).
    #[error("unknown_job: no job {}", .0.0)]
    UnknownJob(JobId),
    /// No such fire in flight.
    #[error("unknown_fire: no fire {0} awaiting settlement")]
    UnknownFire(FireId),
    /// The token is not the job's current lease token (or the job is not claimed).
    #[error("lease_lost: job {} is not held with that token", .job.0)]
    LeaseLost {
        /// The job.
        job: JobId,
    },
    /// The job is not in a state that allows the operation.
    #[error("invalid_state: job {} is {state}, cannot {op}", .job.0)]
    InvalidState {
        /// The job.
        job: JobId,
        /// Its current state.
        state: &'static str,
        /// The attempted operation.
        op: &'static str,
    },
    /// A named lease is held by someone else, or the token is stale.
    #[error("lease_held: lease {name:?} {why}")]
    LeaseHeld {
        /// The lease.
        name: String,
        /// Why the request was refused.
        why: &'static str,
    },
    /// A configured limit would be exceeded.
    #[error("limit_exceeded: {what} limit is {limit}")]
    LimitExceeded {
        /// Which limit.
        what: &'static str,
        /// Its value.
        limit: u64,
    },
    /// The payload is larger than `Limits::payload_bytes`.
    #[error("payload_too_large: {bytes} bytes, limit {limit}")]
    PayloadTooLarge {
        /// Size given.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The engine does not hold leadership, so it may not fire
    /// (`TriggerSchedule`, `Backfill` on a non-standalone engine).
    #[error("not_leader: the engine does not hold leadership")]
    NotLeader,
    /// A graceful stop has begun (`Stop`): nothing new fires until the
    /// next start's `Recover` (`TriggerSchedule`, `Backfill`).
    #[error("stopping: the engine is stopping; nothing new fires until the next start")]
    Stopping,
    /// Too many undrained commands: call `poll_command` until `None` first.
    #[error("backpressure: {pending} commands are waiting to be drained")]
    Backpressure {
        /// Commands waiting.
        pending: usize,
    },
}

impl Error {
    /// Stable machine-readable code, e.g. `"invalid_spec"`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidName { .. } => "invalid_name",
            Error::ReservedName { .. } => "reserved_name",
            Error::Spec(e) => e.code(),
            Error::InvalidInput { .. } => "invalid_input",
            Error::UnknownSchedule(_) => "unknown_schedule",
            Error::ScheduleDeclared(_) => "schedule_declared",
            Error::UnknownQueue(_) => "unknown_queue",
            Error::UnknownJob(_) => "unknown_job",
            Error::UnknownFire(_) => "unknown_fire",
            Error::LeaseLost { .. } => "lease_lost",
            Error::InvalidState { .. } => "invalid_state",
            Error::LeaseHeld { .. } => "lease_held",
            Error::LimitExceeded { .. } => "limit_exceeded",
            Error::PayloadTooLarge { .. } => "payload_too_large",
            Error::NotLeader => "not_leader",
            Error::Stopping => "stopping",
            Error::Backpressure { .. } => "backpressure",
        }
    }

    /// The input field the error is about, camelCase as on the wire, when
    /// there is one: bindings and HTTP hosts put it beside [`code`](Error::code)
    /// so a form can mark the offending field without parsing the message.
    /// For a name error it is the kind of name (`schedule`, `queue`, …).
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Error::InvalidName { what, .. } | Error::ReservedName { what, .. } => Some(what),
            Error::Spec(e) => Some(e.field()),
            Error::InvalidInput { field, .. } => Some(field),
            Error::PayloadTooLarge { .. } => Some("payload"),
            // The thing that was not found or not held: the JS binding's
            // `ChimeError.field` and the HTTP error body name it, so a caller
            // can tell "no such schedule" from "no such queue" by field alone.
            Error::UnknownSchedule(_) | Error::ScheduleDeclared(_) => Some("schedule"),
            Error::UnknownQueue(_) => Some("queue"),
            Error::UnknownJob(_) | Error::InvalidState { .. } => Some("job"),
            Error::UnknownFire(_) => Some("fire"),
            Error::LeaseLost { .. } => Some("token"),
            Error::LeaseHeld { .. } => Some("lease"),
            Error::LimitExceeded { .. }
            | Error::NotLeader
            | Error::Stopping
            | Error::Backpressure { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every "not found / not held" error names what was not found.
    #[test]
    fn lookup_errors_name_their_field() {
        assert_eq!(Error::UnknownSchedule("a".into()).field(), Some("schedule"));
        assert_eq!(Error::UnknownQueue("q".into()).field(), Some("queue"));
        assert_eq!(Error::UnknownJob(JobId(1)).field(), Some("job"));
        assert_eq!(Error::LeaseLost { job: JobId(1) }.field(), Some("token"));
        assert_eq!(Error::NotLeader.field(), None);
    }
}
