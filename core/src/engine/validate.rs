//! Checks that need no engine state, run before the engine advances: a
//! rejected input then changes nothing at all, not even the clock.
//! Checks that need state (unknown job, stale token, stale epoch) happen
//! where the input is applied, still before anything is mutated.

use crate::spec::{Spec, SpecOptions, TzDatabase};
use crate::time::Timestamp;
use crate::wire::config::{EngineConfig, Limits};
use crate::wire::error::Error;
use crate::wire::input::{EnqueueRequest, Input};
use crate::wire::name;
use crate::wire::payload::Headers;
use crate::wire::queue_config::QueueConfig;
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
    pub(crate) fn into_spec(self) -> Spec {
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
/// Checks `input` exactly as [`Engine::handle`](crate::Engine::handle)
/// does before it changes anything: the same checks, the same error codes
/// and fields. For backends that apply some inputs outside the engine (the
/// Postgres job queues), so a bad input gets the same answer whichever
/// backend holds the queue. State-dependent refusals (an unknown queue, a
/// stale token) are the backend's to give.
pub fn validate_input(input: &Input, config: &EngineConfig, now: Timestamp) -> Result<(), Error> {
    prepare(input, config, &TzDatabase::bundled(), now).map(drop)
}

pub(crate) fn prepare(
    input: &Input,
    config: &EngineConfig,
    tzdb: &TzDatabase,
    now: Timestamp,
) -> Result<Prepared, Error> {
    let limits = &config.limits;
    let schedule_name = |n: &str| name::validate("schedule", n, limits.name_chars);
    match input {
        Input::Advance | Input::CancelJob { .. } | Input::Complete { .. } => {}
        Input::Recover | Input::Stop => {}
        // `error` is truncated, `retry_at` is any valid instant: nothing to refuse.
        Input::Fail { .. } => {}
        Input::UpsertSchedule(def) => {
            return Ok(Prepared::Spec(Box::new(check_def(def, config, tzdb)?)));
        }
        Input::RemoveSchedule { name, .. }
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
        Input::DeclareQueue(cfg) => check_queue_config(cfg, limits)?,
        Input::Enqueue(req) => {
            check_enqueue(req, limits)?;
            name::user_queue(&req.queue)?
        }
        Input::EnqueueOutbox(req) => {
            check_enqueue(req, limits)?;
            name::outbox_queue(&req.queue)?
        }
        Input::Claim {
            queue,
            worker,
            max,
            lease_ms,
        } => check_claim(queue, worker, *max, *lease_ms, limits)?,
        Input::Heartbeat { lease_ms, .. } => check_lease_ms(*lease_ms)?,
        Input::Redrive { queue, .. } | Input::PurgeDead { queue, .. } => {
            name::queue_name(queue, limits)?
        }
        Input::AcquireLease {
            name,
            owner,
            ttl_ms,
        } => check_lease(name, Some(owner), Some(*ttl_ms), limits)?,
        Input::RenewLease { name, ttl_ms, .. } => check_lease(name, None, Some(*ttl_ms), limits)?,
        Input::ReleaseLease { name, .. } => check_lease(name, None, None, limits)?,
    }
    Ok(Prepared::Nothing)
}

/// Validates a schedule definition and parses its spec.
pub(crate) fn check_def(
    def: &ScheduleDef,
    config: &EngineConfig,
    tzdb: &TzDatabase,
) -> Result<Spec, Error> {
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
    Ok(Spec::parse_with(&def.spec, &opts, tzdb)?)
}

/// Checks a queue config on its own (the mode switch is checked by the caller).
pub(crate) fn check_queue_config(cfg: &QueueConfig, limits: &Limits) -> Result<(), Error> {
    name::queue_name(&cfg.name, limits)?;
    if cfg.lease_ms <= 0 {
        return Err(invalid("leaseMs", "must be positive"));
    }
    if cfg.max_attempts == 0 {
        return Err(invalid("maxAttempts", "must be at least 1"));
    }
    if cfg.backoff.base_ms < 0 {
        return Err(invalid("backoff.baseMs", "must not be negative"));
    }
    if cfg.backoff.cap_ms < 0 {
        return Err(invalid("backoff.capMs", "must not be negative"));
    }
    if cfg.retention.completed_ms < 0 {
        return Err(invalid("retention.completedMs", "must not be negative"));
    }
    if cfg.retention.completed_max as usize > limits.completed_per_queue {
        return Err(Error::LimitExceeded {
            what: "completed_per_queue",
            limit: limits.completed_per_queue as u64,
        });
    }
    if cfg.dedup_window_ms < 0 {
        return Err(invalid("dedupWindowMs", "must not be negative"));
    }
    Ok(())
}

/// Checks an enqueue request's own fields (everything that needs no state).
pub(crate) fn check_enqueue(req: &EnqueueRequest, limits: &Limits) -> Result<(), Error> {
    name::queue_name(&req.queue, limits)?;
    let bytes = req.payload.len_bytes();
    if bytes > limits.payload_bytes {
        return Err(Error::PayloadTooLarge {
            bytes,
            limit: limits.payload_bytes,
        });
    }
    check_headers(&req.headers, limits)?;
    if let Some(key) = &req.key {
        if key.is_empty() {
            return Err(invalid("key", "must not be empty"));
        }
        if key.len() > limits.text_bytes {
            return Err(invalid(
                "key",
                format!("longer than {} bytes", limits.text_bytes),
            ));
        }
    }
    if req.max_attempts == Some(0) {
        return Err(invalid("maxAttempts", "must be at least 1"));
    }
    match (req.run_at, req.delay_ms) {
        (Some(_), Some(_)) => Err(invalid("delayMs", "give runAt or delayMs, not both")),
        (None, Some(ms)) if ms < 0 => Err(invalid("delayMs", "must not be negative")),
        _ => Ok(()),
    }
}

/// Checks the arguments of a `Claim`: queue and worker names, `max` in
/// `1..=limits.claim_batch`, a positive `lease_ms` if given.
pub(crate) fn check_claim(
    queue: &str,
    worker: &str,
    max: u32,
    lease: Option<i64>,
    limits: &Limits,
) -> Result<(), Error> {
    name::queue_name(queue, limits)?;
    name::validate("worker", worker, limits.name_chars)?;
    if max == 0 {
        return Err(invalid("max", "must be at least 1"));
    }
    if max > limits.claim_batch {
        return Err(Error::LimitExceeded {
            what: "claim_batch",
            limit: u64::from(limits.claim_batch),
        });
    }
    check_lease_ms(lease)
}

/// Headers: at most `limits.headers`, names non-empty, names and values at
/// most `limits.text_bytes` (rejected rather than truncated: a header is data
/// a worker acts on, and a silently cut value would be a different value).
fn check_headers(h: &Headers, limits: &Limits) -> Result<(), Error> {
    if h.len() > limits.headers {
        return Err(Error::LimitExceeded {
            what: "headers",
            limit: limits.headers as u64,
        });
    }
    for (k, v) in h {
        if k.is_empty() {
            return Err(invalid("headers", "a header name is empty"));
        }
        if k.len() > limits.text_bytes || v.len() > limits.text_bytes {
            return Err(invalid(
                "headers",
                format!("a header is longer than {} bytes", limits.text_bytes),
            ));
        }
    }
    Ok(())
}

/// A lease length given with `Claim`/`Heartbeat`.
pub(crate) fn check_lease_ms(ms: Option<i64>) -> Result<(), Error> {
    match ms {
        Some(ms) if ms <= 0 => Err(invalid("leaseMs", "must be positive")),
        _ => Ok(()),
    }
}

/// The stateless checks of `AcquireLease`/`RenewLease`/`ReleaseLease`,
/// run by the engine before it advances (so a refusal changes nothing, not
/// even the clock): the lease name, the owner (acquire only) and a positive
/// `ttl_ms` (acquire and renew).
fn check_lease(
    name: &str,
    owner: Option<&str>,
    ttl_ms: Option<i64>,
    limits: &Limits,
) -> Result<(), Error> {
    name::validate("lease", name, limits.name_chars)?;
    if let Some(owner) = owner {
        name::validate("owner", owner, limits.name_chars)?;
    }
    ttl_ms.map_or(Ok(()), check_ttl)
}

fn check_ttl(ttl_ms: i64) -> Result<(), Error> {
    if ttl_ms <= 0 {
        return Err(Error::InvalidInput {
            field: "ttlMs",
            message: "must be positive".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_ranges() {
        let l = Limits::default();
        let ok = QueueConfig::new("q");
        assert!(check_queue_config(&ok, &l).is_ok());
        let mut c = ok.clone();
        c.lease_ms = 0;
        assert_eq!(
            check_queue_config(&c, &l).unwrap_err().code(),
            "invalid_input"
        );
        let mut c = ok.clone();
        c.max_attempts = 0;
        assert!(check_queue_config(&c, &l).is_err());
        let mut c = ok.clone();
        c.retention.completed_max = 1_001;
        assert_eq!(
            check_queue_config(&c, &l).unwrap_err().code(),
            "limit_exceeded"
        );
        let mut c = ok;
        c.dedup_window_ms = -1;
        assert!(check_queue_config(&c, &l).is_err());
    }

    #[test]
    fn lease_inputs() {
        let l = Limits::default();
        let code = |r: Result<(), Error>| r.unwrap_err().code();
        assert_eq!(
            code(check_lease("a b", Some("o"), Some(1), &l)),
            "invalid_name"
        );
        assert_eq!(
            code(check_lease("a", Some(""), Some(1), &l)),
            "invalid_name"
        );
        assert_eq!(
            code(check_lease("a", Some("o"), Some(0), &l)),
            "invalid_input"
        );
        assert_eq!(code(check_lease("a", None, Some(-1), &l)), "invalid_input");
        assert!(check_lease("a", Some("o"), Some(1), &l).is_ok());
    }
}
