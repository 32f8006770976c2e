//! What a restore under another tz database reports, and what
//! `chime tzdb diff` lists: a zoned boundary whose instant moved.

use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// A boundary of a zoned schedule that the new tz database puts at another
/// instant: the same civil time (its meaning), a new instant. Reported by
/// [`crate::Engine::restore_with`] for every unprocessed boundary it moved
/// (also as [`crate::Event::TzRulesChanged`]), and by
/// [`crate::tzdb_diff`] for the next fires of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TzRuleChange {
    /// Schedule.
    pub schedule: String,
    /// The zone the civil time is read in.
    pub zone: String,
    /// Civil date-time the boundary stands for, e.g. `2025-04-02T09:00:00`.
    pub civil: String,
    /// Its instant under the old database.
    pub old_at: Timestamp,
    /// Its instant under the new database.
    pub new_at: Timestamp,
    /// The release the old instant was computed with (`None`: unknown).
    pub old_tzdb: Option<String>,
    /// The release the new instant was computed with.
    pub new_tzdb: String,
}

impl TzRuleChange {
    /// `new_at - old_at` in milliseconds (negative: earlier).
    pub fn moved_ms(&self) -> i64 {
        self.new_at.as_millis() - self.old_at.as_millis()
    }
}
