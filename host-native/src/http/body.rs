//! Reading request bodies within the listener's bounds: at most
//! [`HttpOptions::body_limit`](super::HttpOptions::body_limit) bytes
//! (413), received within
//! [`HttpOptions::body_timeout`](super::HttpOptions::body_timeout) (408:
//! a client trickling a byte a second is cut off), JSON nested at most
//! [`MAX_DEPTH`] deep, and decoded into types that refuse unknown fields
//! (400). Nothing reaches a backend before the whole body passed.

use super::error::ApiError;
use axum::body::Body;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::time::Duration;

/// Deepest nesting of arrays and objects a body may have.
pub const MAX_DEPTH: usize = 64;

/// Reads the whole body within `limit` bytes and `timeout`.
pub(crate) async fn read(body: Body, limit: usize, timeout: Duration) -> Result<Vec<u8>, ApiError> {
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
        Err(_) => Err(ApiError::BodyTimeout(timeout)),
        Ok(Err(e)) => {
            // `to_bytes` fails on the length limit or a broken connection.
            let too_large = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
                || e.to_string().contains("length limit");
            if too_large {
                Err(ApiError::BodyTooLarge(limit))
            } else {
                Err(ApiError::bad(None, format!("reading the body: {e}")))
            }
        }
        Ok(Ok(b)) => Ok(b.to_vec()),
    }
}

/// Refuses JSON nested deeper than [`MAX_DEPTH`] (before serde sees it:
/// its own limit is a recursion guard, not an answer).
fn check_depth(bytes: &[u8]) -> Result<(), ApiError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(ApiError::bad(
                        Some("body"),
                        format!("JSON nested deeper than {MAX_DEPTH} levels"),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Decodes a body (empty means `{}`).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    check_depth(bytes)?;
    let text = if bytes.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        bytes
    };
    serde_json::from_slice(text).map_err(json_error)
}

/// A serde error as a 400, naming the field when serde does.
pub(crate) fn json_error(e: serde_json::Error) -> ApiError {
    let message = e.to_string();
    let field = if message.contains("unknown field") {
        Some("body")
    } else {
        None
    };
    ApiError::bad(field, format!("invalid JSON body: {message}"))
}

/// A JSON object, its values kept verbatim.
pub(crate) type Object = BTreeMap<String, Box<RawValue>>;

/// Decodes an object body into `T` after adding `key: value` taken from
/// the path (`name` of a schedule, `queue` of a job): the body must not
/// carry it itself.
pub(crate) fn with_path_field<T: DeserializeOwned>(
    mut object: Object,
    key: &'static str,
    value: &str,
) -> Result<T, ApiError> {
    if object.contains_key(key) {
        return Err(ApiError::bad(
            Some(key),
            format!("{key} is given by the path, not the body"),
        ));
    }
    let value = serde_json::to_string(value).map_err(json_error)?;
    object.insert(
        key.to_owned(),
        RawValue::from_string(value).map_err(json_error)?,
    );
    let text = serde_json::to_string(&object).map_err(json_error)?;
    serde_json::from_str(&text).map_err(json_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_bounded_outside_strings() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert!(check_depth(deep.as_bytes()).is_err());
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(check_depth(ok.as_bytes()).is_ok());
        let quoted = format!("\"{}\\\"\"", "[".repeat(200));
        assert!(check_depth(quoted.as_bytes()).is_ok());
    }
}
