//! The driver's log lines for engine events: one per job outcome and per
//! noteworthy event (metrics count them in [`super::Metrics`]).

use chime_core::{Engine, Error, Event, Reply};

pub(super) fn log_error(r: Result<Reply, Error>) {
    if let Err(e) = r {
        tracing::error!(error = %e, "advance rejected");
    }
}

/// The wire name of a reason (`scheduled`, `overlap`, …): what the docs
/// and the JSON say, not Rust's `Debug` (`Scheduled`).
pub(super) fn name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// One log line per job outcome and per noteworthy event. A dead letter's
/// line says why (the last attempt's error: for a command, its exit
/// status) and which schedule fired the job, read from `engine`.
pub(super) fn log_event(e: &Event, engine: &Engine) {
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
        } => {
            let info = engine.job(*job);
            let error = info.as_ref().and_then(|j| j.last_error.clone());
            let schedule = info
                .as_ref()
                .and_then(|j| j.fire.as_ref())
                .map(|f| f.schedule.to_string());
            tracing::error!(
                job = job.0,
                %queue,
                attempts,
                %reason,
                schedule = schedule.as_deref().unwrap_or("-"),
                error = error.as_deref().unwrap_or("-"),
                "job dead-lettered"
            )
        }
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
        } => {
            tracing::info!(%schedule, reason = %name(reason), count, %first, %last, "boundaries skipped")
        }
        Event::JobDropped { job, queue, reason } => {
            tracing::error!(job = job.0, %queue, %reason, "job dropped")
        }
        Event::JobCancelled { job, queue, reason } => {
            tracing::info!(job = job.0, %queue, reason = %name(reason), "job cancelled")
        }
        Event::ScheduleCompleted { schedule, reason } => {
            tracing::info!(%schedule, %reason, "schedule completed")
        }
        Event::TzRulesChanged {
            schedule,
            zone,
            civil,
            old_at,
            new_at,
            old_tzdb,
            new_tzdb,
        } => tracing::warn!(
            %schedule, %zone, %civil, %old_at, %new_at,
            old_tzdb = old_tzdb.as_deref().unwrap_or("-"), %new_tzdb,
            "tz database changed: the boundary moves to its civil time's new instant"
        ),
        other => tracing::debug!(event = ?other, "event"),
    }
}
