//! Opaque JSON carried by jobs and fires.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A JSON value kept verbatim: the engine never re-formats it, so payloads
/// round-trip through snapshots and journals exactly, floats and all.
///
/// Shared, not copied: a schedule's payload goes out with every fire, so a
/// clone is a reference-count increment. Serializes as the JSON itself.
#[derive(Clone)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "unknown"))]
pub struct Payload(Arc<RawValue>);

/// String headers attached to a job (ordered, so snapshots are canonical).
pub type Headers = BTreeMap<String, String>;

impl Payload {
    /// Parses JSON text; the text is kept as given.
    pub fn from_json(text: &str) -> Result<Payload, serde_json::Error> {
        Ok(Payload(RawValue::from_string(text.to_owned())?.into()))
    }

    /// The JSON `null`.
    pub fn null() -> Payload {
        Payload::from_json("null").expect("null is JSON")
    }

    /// The JSON text exactly as received.
    pub fn as_json(&self) -> &str {
        self.0.get()
    }

    /// Size in bytes of the JSON text (what the payload limit counts).
    pub fn len_bytes(&self) -> usize {
        self.0.get().len()
    }
}

impl Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Payload(Box::<RawValue>::deserialize(d)?.into()))
    }
}

impl Default for Payload {
    fn default() -> Self {
        Payload::null()
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_json() == other.as_json()
    }
}

impl Eq for Payload {}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_verbatim() {
        let p = Payload::from_json(r#"{ "b":1.50, "a": [1e3] }"#).unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{ "b":1.50, "a": [1e3] }"#);
        let back: Payload = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        assert!(Payload::from_json("{").is_err());
    }
}
