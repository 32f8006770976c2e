//! The naming rule shared by schedules, queues, leases and workers.

use crate::wire::config::Limits;
use crate::wire::error::Error;

/// Prefix reserved for names the engine derives (e.g. `__chime_outbox:x`).
pub(crate) const RESERVED_PREFIX: &str = "__chime";

/// Checks `name` against the rule: 1..=`max_chars` characters of
/// `[A-Za-z0-9._:/-]`, not starting with [`RESERVED_PREFIX`].
pub(crate) fn validate(what: &'static str, name: &str, max_chars: usize) -> Result<(), Error> {
    check_chars(what, name, max_chars)?;
    if name.starts_with(RESERVED_PREFIX) {
        return Err(Error::ReservedName {
            what,
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// Like [`validate`] but allows the reserved prefix: for names the engine
/// derives itself, such as outbox queues.
pub(crate) fn validate_internal(
    what: &'static str,
    name: &str,
    max_chars: usize,
) -> Result<(), Error> {
    check_chars(what, name, max_chars)
}

/// Prefix of the derived outbox queues (`__chime_outbox:<name>`), the one
/// use of the reserved prefix a queue name may have.
pub(crate) const OUTBOX_PREFIX: &str = "__chime_outbox:";

/// The queue naming rule: the shared rule, except that `__chime_outbox:<name>`
/// is allowed when `<name>` itself follows the rule (outbox helper queues are
/// enqueued to and claimed from like any other).
pub(crate) fn queue_name(queue: &str, limits: &Limits) -> Result<(), Error> {
    match queue.strip_prefix(OUTBOX_PREFIX) {
        Some(rest) => {
            validate("queue", rest, limits.name_chars)?;
            validate_internal("queue", queue, limits.name_chars)
        }
        None => validate("queue", queue, limits.name_chars),
    }
}

/// A queue a plain `Enqueue` may add to: not a derived outbox queue (those
/// take `EnqueueOutbox`, so a user's enqueue never lands in an outbox).
pub(crate) fn user_queue(queue: &str) -> Result<(), Error> {
    if queue.starts_with(OUTBOX_PREFIX) {
        return Err(Error::ReservedName {
            what: "queue",
            name: queue.to_owned(),
        });
    }
    Ok(())
}

/// The queue of an `EnqueueOutbox`: a derived outbox queue.
pub(crate) fn outbox_queue(queue: &str) -> Result<(), Error> {
    if queue.starts_with(OUTBOX_PREFIX) {
        return Ok(());
    }
    Err(Error::InvalidInput {
        field: "queue",
        message: format!("{queue:?} is not an outbox queue ({OUTBOX_PREFIX}<name>)"),
    })
}

fn check_chars(what: &'static str, name: &str, max_chars: usize) -> Result<(), Error> {
    let invalid = |why| Error::InvalidName {
        what,
        name: name.chars().take(200).collect(),
        why,
    };
    if name.is_empty() {
        return Err(invalid("is empty"));
    }
    if name.len() > max_chars {
        return Err(invalid("is too long"));
    }
    let ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'/' | b'-');
    if !name.bytes().all(ok) {
        return Err(invalid("may only contain A-Z a-z 0-9 . _ : / -"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::config::Limits;

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
    fn rule() {
        assert!(validate("schedule", "a.b_c:d/e-f9", 128).is_ok());
        for (bad, code) in [
            ("", "invalid_name"),
            ("a b", "invalid_name"),
            ("é", "invalid_name"),
            ("a@b", "invalid_name"),
            ("__chime_x", "reserved_name"),
        ] {
            assert_eq!(
                validate("queue", bad, 128).unwrap_err().code(),
                code,
                "{bad:?}"
            );
        }
        assert!(validate("queue", &"x".repeat(129), 128).is_err());
        assert!(validate("queue", &"x".repeat(128), 128).is_ok());
        assert!(validate_internal("queue", "__chime_outbox:x", 128).is_ok());
    }
}
