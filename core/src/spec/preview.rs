//! Previewing occurrences with civil time and DST notes. STUB (helper B).
use super::Spec;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// Why an occurrence is not a plain civil match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[serde(rename_all = "camelCase")]
pub struct Occurrence {
    /// The instant.
    pub at: Timestamp,
    /// Local civil time, e.g. `2026-03-08T03:00:00`.
    pub civil: String,
    /// UTC offset in seconds at that instant.
    pub offset_seconds: i32,
    /// DST note, if any.
    pub note: Option<DstNote>,
}

pub(crate) fn preview(_spec: &Spec, _from: Timestamp, _n: usize) -> Vec<Occurrence> {
    todo!()
}
