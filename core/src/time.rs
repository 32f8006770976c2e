//! Instants on the engine's clock.
//!
//! The core never reads a clock: every instant it sees was handed to it by the
//! host. Milliseconds as `i64` keep JavaScript hosts exact (2^53 > year 9999).

#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))] // re-exported by `testing`
pub(crate) mod calendar;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::num::NonZeroU64;

/// Milliseconds since the Unix epoch, UTC, within years 1970..=9999.
///
/// Construct with [`Timestamp::from_millis`], which rejects values outside the
/// range; arithmetic saturates at the range ends so a bad offset can never wrap.
///
/// Stored as `millis + 1` in a `NonZeroU64` so that `Option<Timestamp>` is
/// 8 bytes, not 16: schedules and jobs hold several optional instants, and
/// at a million of them the niche is worth a few megabytes. Order, hashing
/// and serialization are those of the millisecond value.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "number"))]
#[serde(try_from = "i64", into = "i64")]
pub struct Timestamp(NonZeroU64);

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({})", self.as_millis())
    }
}

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
    pub const MIN: Timestamp = Timestamp::raw(0);
    /// 9999-12-31T23:59:59.999Z.
    pub const MAX: Timestamp = Timestamp::raw(253_402_300_799_999);

    /// Wraps a value already known to be in range.
    const fn raw(millis: i64) -> Timestamp {
        match NonZeroU64::new(millis as u64 + 1) {
            Some(n) => Timestamp(n),
            None => panic!("timestamp in range"),
        }
    }

    /// Checks the range and wraps the value.
    pub const fn from_millis(millis: i64) -> Result<Timestamp, TimestampOutOfRange> {
        if millis < 0 || millis > Self::MAX.as_millis() {
            Err(TimestampOutOfRange { millis })
        } else {
            Ok(Timestamp::raw(millis))
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
        (self.0.get() - 1) as i64
    }

    /// Whole seconds, rounded down.
    pub const fn as_secs(self) -> i64 {
        self.as_millis().div_euclid(1000)
    }

    /// `self + ms`, clamped to the valid range.
    pub const fn saturating_add_ms(self, ms: i64) -> Timestamp {
        let v = self.as_millis().saturating_add(ms);
        if v > Self::MAX.as_millis() {
            Self::MAX
        } else if v < 0 {
            Self::MIN
        } else {
            Timestamp::raw(v)
        }
    }

    /// Whether a lease ending at `self` has ended at `now`: at its deadline
    /// (as a job with `run_at <= now` is due), except that a lease ending
    /// at [`Timestamp::MAX`] never ends. The clock cannot pass `MAX`, so a
    /// lease cut there by [`Timestamp::saturating_add_ms`] lasts until the
    /// end of time and its holder can still use it at `MAX`.
    pub(crate) fn lease_ended(self, now: Timestamp) -> bool {
        self <= now && self < Self::MAX
    }

    /// `self + ms` if it stays within range.
    pub const fn checked_add_ms(self, ms: i64) -> Option<Timestamp> {
        match self.as_millis().checked_add(ms) {
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
        t.as_millis()
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds, e.g. `2026-03-08T07:00:00.000Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.as_secs();
        let ms = self.as_millis().rem_euclid(1000);
        let (y, m, d) = calendar::civil_from_days(secs.div_euclid(86_400));
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
    fn optional_instants_are_eight_bytes() {
        assert_eq!(std::mem::size_of::<Option<Timestamp>>(), 8);
        assert!(Timestamp::MIN < Timestamp::from_millis(1).unwrap());
        assert_eq!(format!("{:?}", Timestamp::MIN), "Timestamp(0)");
    }

    #[test]
    fn saturating_add_clamps() {
        assert_eq!(Timestamp::MAX.saturating_add_ms(5), Timestamp::MAX);
        assert_eq!(Timestamp::MIN.saturating_add_ms(-5), Timestamp::MIN);
        assert_eq!(Timestamp::MAX.checked_add_ms(1), None);
    }
}
