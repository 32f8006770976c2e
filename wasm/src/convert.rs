//! The one place where JavaScript values become wire types and back.
//!
//! Structured values cross the boundary as JSON text, not as JS objects
//! built field by field (`serde-wasm-bindgen`):
//! - payloads are `Arc<RawValue>` kept verbatim, which only serde_json's own
//!   (de)serializer can carry; through any other format a payload would be
//!   re-formatted or refused;
//! - a drain of N commands is one string and one `JSON.parse` on the JS
//!   side, instead of thousands of boundary calls per batch (see
//!   `BENCHMARKS.md`, "JavaScript");
//! - the journal and the snapshot are JSON anyway, so the text a host
//!   journals is exactly the text the engine parsed.
//!
//! Errors are thrown as JSON text `{"code","field","message"}`; the JS layer
//! (`js/core.js`) turns it into a `ChimeError`.

use chime_core::{Error, Timestamp};
use serde::Serialize;
use wasm_bindgen::JsValue;

/// A thrown error: stable `code`, the field it concerns, and the message.
pub(crate) struct Thrown<'a> {
    pub(crate) code: &'a str,
    pub(crate) field: Option<&'a str>,
    pub(crate) message: String,
}

impl Thrown<'_> {
    /// The JSON the JS layer turns into a `ChimeError`.
    pub(crate) fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Wire<'a> {
            code: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            field: Option<&'a str>,
            message: &'a str,
        }
        let wire = Wire {
            code: self.code,
            field: self.field,
            message: &self.message,
        };
        serde_json::to_string(&wire).expect("errors serialize")
    }
}

impl From<Thrown<'_>> for JsValue {
    fn from(t: Thrown<'_>) -> JsValue {
        JsValue::from_str(&t.to_json())
    }
}

/// An engine error as thrown to JS.
pub(crate) fn engine_error(e: &Error) -> Thrown<'static> {
    Thrown {
        code: e.code(),
        field: e.field(),
        message: e.to_string(),
    }
}

/// `invalid_input` on `field`: malformed JSON, a wrong shape, a bad number.
pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> Thrown<'static> {
    Thrown {
        code: "invalid_input",
        field: Some(field),
        message: format!("invalid_input: {field}: {}", message.into()),
    }
}

/// A JS number of milliseconds as a [`Timestamp`]: it must be an integer
/// (JS numbers are exact to 2^53, far beyond year 9999) within the
/// engine's range.
pub(crate) fn timestamp(field: &'static str, ms: f64) -> Result<Timestamp, JsValue> {
    // An integral f64 in this range converts to i64 exactly.
    let whole = ms.is_finite() && ms.fract() == 0.0 && ms.abs() < 9.007_199_254_740_992e15;
    if !whole {
        return Err(invalid(field, format!("{ms} is not a whole number of milliseconds")).into());
    }
    Timestamp::from_millis(ms as i64).map_err(|e| invalid(field, e.to_string()).into())
}

/// Parses JSON text sent by the JS layer into a wire type.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    field: &'static str,
    text: &str,
) -> Result<T, JsValue> {
    serde_json::from_str(text).map_err(|e| invalid(field, e.to_string()).into())
}

/// Parses JSON text sent by the JS layer with the core's compact decoder
/// (the same result and error as [`from_json`], from less code).
pub(crate) fn decode<T: chime_core::decode::Decode>(
    field: &'static str,
    text: &str,
) -> Result<T, JsValue> {
    chime_core::decode::from_str(text).map_err(|e| invalid(field, e.to_string()).into())
}

/// Serializes a wire type for the JS layer to `JSON.parse`.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("wire types serialize")
}

/// An engine result as JSON, or the error thrown.
pub(crate) fn result<T: Serialize>(r: Result<T, Error>) -> Result<String, JsValue> {
    r.map(|v| to_json(&v)).map_err(|e| engine_error(&e).into())
}

/// Milliseconds as a JS number (exact: timestamps are below 2^53).
pub(crate) fn ms(t: Timestamp) -> f64 {
    t.as_millis() as f64
}

/// A count or duration from JS (a number), truncated to a whole number:
/// negatives and NaN become 0, numbers beyond `u64` saturate (what `as`
/// does).
pub(crate) fn count(n: f64) -> u64 {
    n as u64
}
