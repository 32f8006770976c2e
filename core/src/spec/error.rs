//! Errors from parsing or validating a schedule spec.

/// Why a spec, zone or duration was rejected.
///
/// Every variant has a stable [`code`](SpecError::code); the `Display` text
/// starts with that code and points at the offending field or character, e.g.
/// `invalid_spec: day-of-month 32 out of range 1-31 at field 3`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The text does not follow the grammar in `docs/spec.md`.
    #[error("invalid_spec: {message}")]
    InvalidSpec {
        /// What is wrong and where (field number or character offset).
        message: String,
    },
    /// A duration such as `90s` or `1h30m` is malformed.
    #[error("invalid_duration: {message}")]
    InvalidDuration {
        /// What is wrong and where.
        message: String,
    },
    /// The zone is not in the bundled tz database.
    #[error("invalid_time_zone: unknown time zone {name:?}")]
    InvalidTimeZone {
        /// The name that was given.
        name: String,
    },
    /// An `@every` cadence, or the tightest gap of a cron spec, below
    /// `EngineConfig::min_interval_ms`.
    #[error("interval_too_short: every {interval_ms} ms is below the minimum of {min_ms} ms")]
    IntervalTooShort {
        /// The requested cadence.
        interval_ms: i64,
        /// The configured minimum.
        min_ms: i64,
    },
    /// A one-shot `@at` whose instant is not after the time it was checked
    /// at (now, or the schedule's `startAt`): it can never fire. Same code
    /// as [`SpecError::SpecNeverFires`], with a message that says why.
    #[error("spec_never_fires: @at {at} is in the past (not after {after})")]
    AtInPast {
        /// The spec's instant.
        at: crate::time::Timestamp,
        /// The instant it had to follow.
        after: crate::time::Timestamp,
    },
    /// No occurrence within the search horizon.
    #[error("spec_never_fires: no occurrence within {horizon_years} years")]
    SpecNeverFires {
        /// The horizon searched.
        horizon_years: u32,
    },
}

impl SpecError {
    /// Stable machine-readable code, e.g. `"invalid_spec"`.
    pub fn code(&self) -> &'static str {
        match self {
            SpecError::InvalidSpec { .. } => "invalid_spec",
            SpecError::InvalidDuration { .. } => "invalid_duration",
            SpecError::InvalidTimeZone { .. } => "invalid_time_zone",
            SpecError::IntervalTooShort { .. } => "interval_too_short",
            SpecError::SpecNeverFires { .. } | SpecError::AtInPast { .. } => "spec_never_fires",
        }
    }

    /// The field of a schedule definition the error is about: `tz` for an
    /// unknown zone, `spec` for everything else (the message then says which
    /// cron field and column).
    pub fn field(&self) -> &'static str {
        match self {
            SpecError::InvalidTimeZone { .. } => "tz",
            _ => "spec",
        }
    }

    /// Shorthand for [`SpecError::InvalidSpec`].
    pub fn invalid(message: impl Into<String>) -> SpecError {
        SpecError::InvalidSpec {
            message: message.into(),
        }
    }
}
