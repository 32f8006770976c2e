//! Checks that need no engine state, run before the engine advances: a
//! rejected input then changes nothing at all, not even the clock.
//! Checks that need state (unknown job, stale token, stale epoch) happen
//! where the input is applied, still before anything is mutated.

use crate::lease;
use crate::queue::{
    check_claim, check_config, check_enqueue, check_headers, check_lease_ms, check_queue_name,
};
use crate::spec::{Spec, SpecOptions};
use crate::time::Timestamp;
use crate::wire::config::EngineConfig;
use crate::wire::error::Error;
use crate::wire::input::Input;
use crate::wire::name;
use crate::wire::schedule_def::ScheduleDef;

/// Largest `jitter_ms` (a day); jitter is clamped below the next boundary anyway.
pub(crate) const MAX_JITTER_MS: i64 = 86_400_000;

/// What stateless validation produced for the apply step.
pub(crate) enum Prepared {
    /// Nothing.
    Nothing,
    /// The parsed spec of an `UpsertSchedule`.
    Spec(Box<Spec>),
}

impl Prepared {
    /// The parsed spec (only for `UpsertSchedule`).
    pub fn into_spec(self) -> Spec {
        match self {
            Prepared::Spec(spec) => *spec,
            Prepared::Nothing => unreachable!("UpsertSchedule is always prepared with its spec"),
        }
    }
}

fn invalid(field: &'static str, message: impl Into<String>) -> Error {
    Error::InvalidInput {
        field,
        message: message.into(),
    }
}

/// Stateless checks of one input at `now` (the effective now: the host's
/// `now`, clamped to the engine clock). Everything that can be decided from
/// the input, the config and `now` alone is decided here, for every input
/// kind, before the engine advances: a refused input then changes nothing,
/// not even the clock. What needs state (unknown names and jobs, tokens,
/// limits on what is held) is checked where the input is applied.
pub(crate) fn prepare(
    input: &Input,
    config: &EngineConfig,
    now: Timestamp,
) -> Result<Prepared, Error> {
    let limits = &config.limits;
    let schedule_name = |n: &str| name::validate("schedule", n, limits.name_chars);
    match input {
        Input::Advance | Input::CancelJob { .. } | Input::Complete { .. } => {}
        // `error` is truncated, `retry_at` is any valid instant: nothing to refuse.
        Input::Fail { .. } => {}
        Input::UpsertSchedule(def) => return Ok(Prepared::Spec(Box::new(check_def(def, config)?))),
        Input::RemoveSchedule { name }
        | Input::PauseSchedule { name, .. }
        | Input::ResumeSchedule { name }
        | Input::TriggerSchedule { name, .. } => schedule_name(name)?,
        Input::Backfill { name, from, to, .. } => {
            schedule_name(name)?;
            if from >= to {
                return Err(invalid("to", "must be after `from`"));
            }
            // A boundary after `now` would fire now under a backfill id and
            // again later on the grid: one boundary, two runs.
            if *to > now {
                return Err(invalid(
                    "to",
                    format!("{to} is after now ({now}): backfill is for the past"),
                ));
            }
        }
        Input::FireSettled { fire, .. } => schedule_name(&fire.schedule)?,
        Input::Leadership(grant) => {
            if let Some(g) = grant
                && g.valid_until <= now
            {
                return Err(invalid(
                    "validUntil",
                    format!("{} is not after the engine clock {now}", g.valid_until),
                ));
            }
        }
        Input::DeclareQueue(cfg) => check_config(cfg, limits)?,
        Input::Enqueue(req) => check_enqueue(req, limits)?,
        Input::Claim {
            queue,
            worker,
            max,
            lease_ms,
        } => check_claim(queue, worker, *max, *lease_ms, limits)?,
        Input::Heartbeat { lease_ms, .. } => check_lease_ms(*lease_ms)?,
        Input::Redrive { queue, .. } | Input::PurgeDead { queue, .. } => {
            check_queue_name(queue, limits)?
        }
        Input::AcquireLease {
            name,
            owner,
            ttl_ms,
        } => lease::check(name, Some(owner), Some(*ttl_ms), limits)?,
        Input::RenewLease { name, ttl_ms, .. } => lease::check(name, None, Some(*ttl_ms), limits)?,
        Input::ReleaseLease { name, .. } => lease::check(name, None, None, limits)?,
    }
    Ok(Prepared::Nothing)
}

/// Validates a schedule definition and parses its spec.
pub(crate) fn check_def(def: &ScheduleDef, config: &EngineConfig) -> Result<Spec, Error> {
    let limits = &config.limits;
    name::validate("schedule", &def.name, limits.name_chars)?;
    name::validate("queue", &def.target.queue, limits.name_chars)?;
    if def.spec.len() > limits.text_bytes {
        return Err(invalid(
            "spec",
            format!("longer than {} bytes", limits.text_bytes),
        ));
    }
    if !(0..=MAX_JITTER_MS).contains(&def.jitter_ms) {
        return Err(invalid(
            "jitterMs",
            format!("must be in 0..={MAX_JITTER_MS}"),
        ));
    }
    if let (Some(start), Some(end)) = (def.start_at, def.end_at)
        && start >= end
    {
        return Err(invalid("endAt", "must be after startAt"));
    }
    if def.max_fires == Some(0) {
        return Err(invalid("maxFires", "must be at least 1"));
    }
    if def.catchup.window_ms < 0 {
        return Err(invalid("catchup", "windowMs must not be negative"));
    }
    if def.catchup.max == 0 {
        return Err(invalid("catchup", "max must be at least 1"));
    }
    if def.catchup.max > limits.catchup_fires {
        return Err(Error::LimitExceeded {
            what: "catchup_fires",
            limit: u64::from(limits.catchup_fires),
        });
    }
    let bytes = def.target.payload.len_bytes();
    if bytes > limits.payload_bytes {
        return Err(Error::PayloadTooLarge {
            bytes,
            limit: limits.payload_bytes,
        });
    }
    if def.target.max_attempts == Some(0) {
        return Err(invalid("maxAttempts", "must be at least 1"));
    }
    check_headers(&def.target.headers, limits)?;
    let opts = SpecOptions {
        tz: def.tz.clone(),
        dst: def.dst,
        min_interval_ms: config.min_interval_ms,
        horizon_years: config.horizon_years,
    };
    Ok(Spec::parse(&def.spec, &opts)?)
}
