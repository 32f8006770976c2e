//! Input checks done before any mutation, so a rejected input changes nothing.

use crate::time::Timestamp;
use crate::wire::config::Limits;
use crate::wire::error::Error;
use crate::wire::input::EnqueueRequest;
use crate::wire::name;
use crate::wire::payload::Headers;
use crate::wire::queue_config::QueueConfig;

/// Prefix of the derived outbox queues (`__chime_outbox:<name>`), the one
/// use of the reserved prefix a queue name may have.
pub(crate) const OUTBOX_PREFIX: &str = "__chime_outbox:";

/// The queue naming rule: the shared rule, except that `__chime_outbox:<name>`
/// is allowed when `<name>` itself follows the rule (outbox helper queues are
/// enqueued to and claimed from like any other).
pub(crate) fn queue_name(queue: &str, limits: &Limits) -> Result<(), Error> {
    match queue.strip_prefix(OUTBOX_PREFIX) {
        Some(rest) => {
            name::validate("queue", rest, limits.name_chars)?;
            name::validate_internal("queue", queue, limits.name_chars)
        }
        None => name::validate("queue", queue, limits.name_chars),
    }
}

fn invalid(field: &'static str, message: impl Into<String>) -> Error {
    Error::InvalidInput {
        field,
        message: message.into(),
    }
}

/// Checks a queue config on its own (the mode switch is checked by the caller).
pub(crate) fn config(cfg: &QueueConfig, limits: &Limits) -> Result<(), Error> {
    queue_name(&cfg.name, limits)?;
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
pub(crate) fn enqueue(req: &EnqueueRequest, limits: &Limits) -> Result<(), Error> {
    queue_name(&req.queue, limits)?;
    let bytes = req.payload.len_bytes();
    if bytes > limits.payload_bytes {
        return Err(Error::PayloadTooLarge {
            bytes,
            limit: limits.payload_bytes,
        });
    }
    headers(&req.headers, limits)?;
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

/// When a checked enqueue request's job becomes available: `run_at` (a
/// past one means now) or `now + delay_ms`.
pub(crate) fn run_at(req: &EnqueueRequest, now: Timestamp) -> Timestamp {
    match (req.run_at, req.delay_ms) {
        (Some(at), _) => at.max(now),
        (None, Some(ms)) => now.saturating_add_ms(ms.max(0)),
        (None, None) => now,
    }
}

/// Checks the arguments of a `Claim`: queue and worker names, `max` in
/// `1..=limits.claim_batch`, a positive `lease_ms` if given.
pub(crate) fn claim(
    queue: &str,
    worker: &str,
    max: u32,
    lease: Option<i64>,
    limits: &Limits,
) -> Result<(), Error> {
    queue_name(queue, limits)?;
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
    lease_ms(lease)
}

/// Headers: at most `limits.headers`, names non-empty, names and values at
/// most `limits.text_bytes` (rejected rather than truncated: a header is data
/// a worker acts on, and a silently cut value would be a different value).
pub(crate) fn headers(h: &Headers, limits: &Limits) -> Result<(), Error> {
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
pub(crate) fn lease_ms(ms: Option<i64>) -> Result<(), Error> {
    match ms {
        Some(ms) if ms <= 0 => Err(invalid("leaseMs", "must be positive")),
        _ => Ok(()),
    }
}

/// Cuts `text` to at most `max_bytes`, on a char boundary.
pub(crate) fn truncate(mut text: String, max_bytes: usize) -> String {
    if text.len() > max_bytes {
        let mut end = max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundary() {
        assert_eq!(truncate("héllo".into(), 2), "h");
        assert_eq!(truncate("héllo".into(), 3), "hé");
        assert_eq!(truncate("abc".into(), 10), "abc");
        assert_eq!(truncate("abc".into(), 0), "");
    }

    #[test]
    fn outbox_names() {
        let l = Limits::default();
        assert!(queue_name("__chime_outbox:mail", &l).is_ok());
        assert_eq!(
            queue_name("__chime_outbox:", &l).unwrap_err().code(),
            "invalid_name"
        );
        assert_eq!(
            queue_name("__chime_x", &l).unwrap_err().code(),
            "reserved_name"
        );
        assert_eq!(
            queue_name("__chime_outbox:__chime", &l).unwrap_err().code(),
            "reserved_name"
        );
        assert_eq!(queue_name("a b", &l).unwrap_err().code(), "invalid_name");
    }

    #[test]
    fn config_ranges() {
        let l = Limits::default();
        let ok = QueueConfig::new("q");
        assert!(config(&ok, &l).is_ok());
        let mut c = ok.clone();
        c.lease_ms = 0;
        assert_eq!(config(&c, &l).unwrap_err().code(), "invalid_input");
        let mut c = ok.clone();
        c.max_attempts = 0;
        assert!(config(&c, &l).is_err());
        let mut c = ok.clone();
        c.retention.completed_max = 1_001;
        assert_eq!(config(&c, &l).unwrap_err().code(), "limit_exceeded");
        let mut c = ok;
        c.dedup_window_ms = -1;
        assert!(config(&c, &l).is_err());
    }
}
