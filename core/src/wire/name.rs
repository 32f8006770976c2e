//! The naming rule shared by schedules, queues, leases and workers.

use crate::wire::error::Error;

/// Prefix reserved for names the engine derives (e.g. `__chime_outbox:x`).
pub const RESERVED_PREFIX: &str = "__chime";

/// Checks `name` against the rule: 1..=`max_chars` characters of
/// `[A-Za-z0-9._:/-]`, not starting with [`RESERVED_PREFIX`].
pub fn validate(what: &'static str, name: &str, max_chars: usize) -> Result<(), Error> {
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
pub fn validate_internal(what: &'static str, name: &str, max_chars: usize) -> Result<(), Error> {
    check_chars(what, name, max_chars)
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
