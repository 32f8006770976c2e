//! The driver's log lines for engine events: one per job outcome and per
//! noteworthy event (metrics count them in [`super::Metrics`]).

use chime_core::{Error, Event, Reply};

pub(super) fn log_error(r: Result<Reply, Error>) {
    if let Err(e) = r {
        tracing::error!(error = %e, "advance rejected");
    }
}

/// One log line per job outcome and per noteworthy event.
pub(super) fn log_event(e: &Event) {
    match e {
        Event::JobCompleted { job, queue } => tracing::info!(job = job.0, %queue, "job completed"),
        Event::JobRetried {
            job,
            queue,
            attempt,
            run_at,
            error,
        } => {
            tracing::warn!(job = job.0, %queue, attempt, %run_at, %error, "job failed, will retry")
        }
        Event::JobDead {
            job,
            queue,
            attempts,
            reason,
        } => tracing::error!(job = job.0, %queue, attempts, %reason, "job dead-lettered"),
        Event::JobInterrupted {
            job,
            queue,
            attempt,
            interruptions,
        } => tracing::warn!(
            job = job.0, %queue, attempt, interruptions,
            "job interrupted by the previous run; not counted as a failure"
        ),
        Event::LeaseExpired {
            job,
            queue,
            attempt,
        } => tracing::warn!(job = job.0, %queue, attempt, "lease expired"),
        Event::ClockClamped { given, clock } => {
            tracing::warn!(%given, %clock, "wall clock went backwards; engine clock held")
        }
        Event::FireSkipped {
            schedule,
            reason,
            count,
            first,
            last,
        } => tracing::info!(%schedule, ?reason, count, %first, %last, "boundaries skipped"),
        Event::JobDropped { job, queue, reason } => {
            tracing::error!(job = job.0, %queue, %reason, "job dropped")
        }
        Event::JobCancelled { job, queue, reason } => {
            tracing::info!(job = job.0, %queue, ?reason, "job cancelled")
        }
        Event::ScheduleCompleted { schedule, reason } => {
            tracing::info!(%schedule, %reason, "schedule completed")
        }
        other => tracing::debug!(event = ?other, "event"),
    }
}
