//! DST policy and the walk over a zone's offset segments.
//!
//! STUB: helper B replaces this file.

use super::{SpecError, SpecOptions};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// What to do with cron times in a spring-forward gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GapPolicy {
    /// Fire once at the first instant after the gap.
    Shift,
    /// Do not fire: the civil time does not exist that day.
    Skip,
}

/// What to do with cron times in a fall-back (repeated) hour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FoldPolicy {
    /// Fire on the first pass only.
    First,
    /// Fire on the second pass only.
    Last,
    /// Fire on both passes.
    Both,
}

/// DST handling; a `None` side means `auto` (see `docs/spec.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DstPolicy {
    /// Gap override; `None` = auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<GapPolicy>,
    /// Fold override; `None` = auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fold: Option<FoldPolicy>,
}

/// A cron spec bound to a zone and an effective DST policy.
#[derive(Clone, Debug)]
pub(crate) struct ZonedCron {}

impl ZonedCron {
    pub(crate) fn parse(_text: &str, _opts: &SpecOptions) -> Result<ZonedCron, SpecError> {
        todo!()
    }
    pub(crate) fn next_after(
        &self,
        _t: Timestamp,
        _horizon_years: u32,
    ) -> Option<(Timestamp, Option<super::DstNote>)> {
        todo!()
    }
    pub(crate) fn is_fixed_time(&self) -> bool {
        todo!()
    }
    pub(crate) fn zone_name(&self) -> &str {
        todo!()
    }
}
