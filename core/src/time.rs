//! Instants on the engine's clock.
//!
//! The core never reads a clock: every instant it sees was handed to it by the
//! host. Milliseconds as `i64` keep JavaScript hosts exact (2^53 > year 9999).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Milliseconds since the Unix epoch, UTC, within years 1970..=9999.
///
/// Construct with [`Timestamp::from_millis`], which rejects values outside the
/// range; arithmetic saturates at the range ends so a bad offset can never wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Timestamp(i64);

/// A millisecond value outside the supported range of years 1970..=9999.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid_timestamp: {millis} ms is outside years 1970..=9999")]
pub struct TimestampOutOfRange {
    /// The rejected value.
    pub millis: i64,
}

impl TimestampOutOfRange {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        "invalid_timestamp"
    }
}

impl Timestamp {
    /// 1970-01-01T00:00:00Z.
    pub const MIN: Timestamp = Timestamp(0);
    /// 9999-12-31T23:59:59.999Z.
    pub const MAX: Timestamp = Timestamp(253_402_300_799_999);

    /// Checks the range and wraps the value.
    pub const fn from_millis(millis: i64) -> Result<Timestamp, TimestampOutOfRange> {
        if millis < Self::MIN.0 || millis > Self::MAX.0 {
            Err(TimestampOutOfRange { millis })
        } else {
            Ok(Timestamp(millis))
        }
    }

    /// Whole seconds since the epoch (the value is never negative).
    pub const fn from_secs(secs: i64) -> Result<Timestamp, TimestampOutOfRange> {
        match secs.checked_mul(1000) {
            Some(ms) => Self::from_millis(ms),
            None => Err(TimestampOutOfRange { millis: i64::MAX }),
        }
    }

    /// The raw millisecond value.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// Whole seconds, rounded down.
    pub const fn as_secs(self) -> i64 {
        self.0.div_euclid(1000)
    }

    /// `self + ms`, clamped to the valid range.
    pub const fn saturating_add_ms(self, ms: i64) -> Timestamp {
        let v = self.0.saturating_add(ms);
        if v > Self::MAX.0 {
            Self::MAX
        } else if v < Self::MIN.0 {
            Self::MIN
        } else {
            Timestamp(v)
        }
    }

    /// `self + ms` if it stays within range.
    pub const fn checked_add_ms(self, ms: i64) -> Option<Timestamp> {
        match self.0.checked_add(ms) {
            Some(v) => match Self::from_millis(v) {
                Ok(t) => Some(t),
                Err(_) => None,
            },
            None => None,
        }
    }
}

impl TryFrom<i64> for Timestamp {
    type Error = TimestampOutOfRange;
    fn try_from(v: i64) -> Result<Self, Self::Error> {
        Timestamp::from_millis(v)
    }
}

impl From<Timestamp> for i64 {
    fn from(t: Timestamp) -> i64 {
        t.0
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds, e.g. `2026-03-08T07:00:00.000Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.as_secs();
        let ms = self.0.rem_euclid(1000);
        let (y, m, d) = crate::spec::civil::civil_from_days(secs.div_euclid(86_400));
        let sod = secs.rem_euclid(86_400);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_enforced() {
        assert!(Timestamp::from_millis(-1).is_err());
        assert!(Timestamp::from_millis(253_402_300_800_000).is_err());
        assert_eq!(Timestamp::from_millis(0).unwrap(), Timestamp::MIN);
        assert_eq!(Timestamp::MAX.to_string(), "9999-12-31T23:59:59.999Z");
        assert_eq!(
            Timestamp::from_millis(1_772_953_200_000)
                .unwrap()
                .to_string(),
            "2026-03-08T07:00:00.000Z"
        );
    }

    #[test]
    fn serde_rejects_out_of_range() {
        assert!(serde_json::from_str::<Timestamp>("-5").is_err());
        let t: Timestamp = serde_json::from_str("1000").unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), "1000");
    }

    #[test]
    fn saturating_add_clamps() {
        assert_eq!(Timestamp::MAX.saturating_add_ms(5), Timestamp::MAX);
        assert_eq!(Timestamp::MIN.saturating_add_ms(-5), Timestamp::MIN);
        assert_eq!(Timestamp::MAX.checked_add_ms(1), None);
    }
}
