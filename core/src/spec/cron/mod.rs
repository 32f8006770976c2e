//! Cron expressions as bitsets, matched in civil (local) time.
//!
//! STUB: helper A replaces this file's body; the API below is the contract
//! used by `spec::dst`.

use super::SpecError;

/// A parsed cron expression (5, 6 or 7 fields, or a macro).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSpec {}

/// A cron expression plus the zone named by a `CRON_TZ=`/`TZ=` prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedCron {
    /// The fields.
    pub cron: CronSpec,
    /// The zone from the prefix, if any.
    pub tz: Option<String>,
}

impl CronSpec {
    /// Parses cron text (with optional `CRON_TZ=`/`TZ=` prefix or a macro).
    pub fn parse(_text: &str) -> Result<ParsedCron, SpecError> {
        todo!()
    }

    /// The first local second `>= from` and `< limit` that matches, if any.
    pub fn next_civil(&self, _from: i64, _limit: i64) -> Option<i64> {
        todo!()
    }

    /// Whether local second `local` matches every field.
    pub fn matches_civil(&self, _local: i64) -> bool {
        todo!()
    }

    /// Second, minute and hour fields each select exactly one value.
    pub fn is_fixed_time(&self) -> bool {
        todo!()
    }
}
