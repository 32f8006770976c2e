//! Opaque identifiers handed out by the engine.

use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A job, numbered by the engine from 1 in creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct JobId(pub u64);

/// A lease token: changes on every claim, so a worker holding a stale one is
/// fenced off (`LeaseLost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct LeaseToken(pub u64);

/// A leadership epoch; strictly increases on every takeover. 0 = standalone.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct Epoch(pub u64);

/// A fire of a schedule.
///
/// Scheduled fires are `<schedule>@<nominal_ms>`: the same boundary always
/// gets the same id, which is also the enqueue key, so a re-delivered fire
/// de-duplicates downstream. Manual and backfill fires append `#m<n>` or
/// `#b<n>` (a per-schedule sequence) so they never collide with scheduled ones.
/// Cheap to clone: the schedule name is shared.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct FireId {
    /// Schedule name.
    pub schedule: Arc<str>,
    /// The boundary this fire stands for.
    pub nominal: Timestamp,
    /// `None` for a scheduled or catch-up fire.
    pub extra: Option<(FireKind, u64)>,
}

/// The kind of a non-scheduled fire id suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FireKind {
    /// `#m<n>`: `TriggerSchedule`.
    Manual,
    /// `#b<n>`: `Backfill`.
    Backfill,
}

impl fmt::Display for FireId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.schedule, self.nominal.as_millis())?;
        match self.extra {
            None => Ok(()),
            Some((FireKind::Manual, n)) => write!(f, "#m{n}"),
            Some((FireKind::Backfill, n)) => write!(f, "#b{n}"),
        }
    }
}

impl FromStr for FireId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("invalid fire id {s:?}");
        let (schedule, rest) = s.rsplit_once('@').ok_or_else(bad)?;
        let (ms, extra) = match rest.split_once('#') {
            None => (rest, None),
            Some((ms, suffix)) => {
                let kind = match suffix.as_bytes().first() {
                    Some(b'm') => FireKind::Manual,
                    Some(b'b') => FireKind::Backfill,
                    _ => return Err(bad()),
                };
                let n: u64 = suffix[1..].parse().map_err(|_| bad())?;
                (ms, Some((kind, n)))
            }
        };
        let ms: i64 = ms.parse().map_err(|_| bad())?;
        let nominal = Timestamp::from_millis(ms).map_err(|_| bad())?;
        if schedule.is_empty() {
            return Err(bad());
        }
        Ok(FireId {
            schedule: schedule.into(),
            nominal,
            extra,
        })
    }
}

impl Serialize for FireId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FireId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fire_id_round_trips() {
        for s in ["backup@1000", "a.b:c/d-e@0#m3", "x@253402300799999#b12"] {
            let id: FireId = s.parse().unwrap();
            assert_eq!(id.to_string(), s);
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(serde_json::from_str::<FireId>(&json).unwrap(), id);
        }
        for bad in ["", "@5", "x", "x@-1", "x@5#q1", "x@5#m", "x@a"] {
            assert!(bad.parse::<FireId>().is_err(), "{bad}");
        }
    }
}
