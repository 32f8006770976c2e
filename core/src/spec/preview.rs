//! Previewing occurrences with civil time and DST notes.
//!
//! A preview lists at most [`MAX_PREVIEW`] occurrences; larger requests are
//! capped, so a preview call is bounded whatever the caller asks for.

use super::zone::ZoneTable;
use super::{Spec, SpecKind};
use crate::time::Timestamp;
use crate::time::calendar::Civil;
use serde::{Deserialize, Serialize};

/// Largest number of occurrences one [`Spec::preview`] returns.
#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))] // re-exported by `testing`
pub const MAX_PREVIEW: usize = 10_000;

/// Why an occurrence is not a plain civil match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum DstNote {
    /// The civil time fell in a spring-forward gap and was shifted to its end.
    ShiftedFromGap,
    /// First pass of a repeated hour.
    FirstPass,
    /// Second pass of a repeated hour.
    SecondPass,
}

/// One previewed occurrence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Occurrence {
    /// The instant.
    pub at: Timestamp,
    /// Local civil time, e.g. `2026-03-08T03:00:00` (with `.mmm` appended
    /// only when the instant is not a whole second).
    pub civil: String,
    /// UTC offset in seconds at that instant.
    pub offset_seconds: i32,
    /// DST note, if any.
    pub note: Option<DstNote>,
}

pub(crate) fn preview(spec: &Spec, from: Timestamp, n: usize) -> Vec<Occurrence> {
    let n = n.min(MAX_PREVIEW);
    let mut out = Vec::with_capacity(n.min(64));
    let mut t = from;
    while out.len() < n {
        let (at, note, zone) = match &spec.kind {
            SpecKind::Every(e) => match e.next_after(t) {
                Some(at) => (at, None, ZoneTable::utc()),
                None => break,
            },
            SpecKind::At(a) => match (a.at > t).then_some(a.at) {
                Some(at) => (at, None, a.zone.clone()),
                None => break,
            },
            SpecKind::Cron(c) => match c.next_after(t, spec.horizon_years) {
                Some((at, note)) => (at, note, c.zone_arc()),
                None => break,
            },
        };
        out.push(occurrence(&zone, at, note));
        t = at;
    }
    out
}

/// Describes `at` in `zone`.
pub(crate) fn occurrence(zone: &ZoneTable, at: Timestamp, note: Option<DstNote>) -> Occurrence {
    let secs = at.as_secs();
    let ms = at.as_millis().rem_euclid(1000);
    let offset_seconds = zone.offset_at(secs);
    let mut civil = Civil::from_local_secs(secs + i64::from(offset_seconds)).to_string();
    if ms != 0 {
        civil.push_str(&format!(".{ms:03}"));
    }
    Occurrence {
        at,
        civil,
        offset_seconds,
        note,
    }
}
