//! Unit-only enums through one visitor, and the variant-name visitor that
//! `Input` shares.

use super::Decode;
use crate::spec::{FoldPolicy, GapPolicy};
use crate::wire::input::FireOutcome;
use crate::wire::job::JobState;
use crate::wire::queue_config::QueueMode;
use crate::wire::schedule_def::{Origin, Overlap, ScheduleStatus};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, Expected, Unexpected, VariantAccess, Visitor,
};
use std::fmt;

/// The derive's variant-name visitor: the variant's index.
pub(super) struct VariantKey {
    /// `VARIANTS` of the enum.
    pub(super) names: &'static [&'static str],
}

impl<'de> DeserializeSeed<'de> for VariantKey {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for VariantKey {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        let n = self.names.len();
        match usize::try_from(v) {
            Ok(i) if i < n => Ok(i),
            _ => Err(E::invalid_value(Unexpected::Unsigned(v), &VariantIndex(n))),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.names
            .iter()
            .position(|n| *n == v)
            .ok_or_else(|| E::unknown_variant(v, self.names))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<usize, E> {
        self.names
            .iter()
            .position(|n| n.as_bytes() == v)
            .ok_or_else(|| E::unknown_variant(&String::from_utf8_lossy(v), self.names))
    }
}

/// `variant index 0 <= i < n`, as the derive words an out-of-range index.
struct VariantIndex(usize);

impl Expected for VariantIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "variant index 0 <= i < {}", self.0)
    }
}

/// The derive's visitor of an enum whose variants are all units: the
/// variant's index.
struct UnitEnum {
    /// `enum X`.
    expecting: &'static str,
    /// `VARIANTS` of the enum.
    names: &'static [&'static str],
}

impl<'de> Visitor<'de> for UnitEnum {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<usize, A::Error> {
        let (i, access) = data.variant_seed(VariantKey { names: self.names })?;
        access.unit_variant()?;
        Ok(i)
    }
}

/// Implements [`Decode`] for unit-only enums, variants listed in
/// declaration order with their wire names.
macro_rules! unit_enums {
    ($($ty:ident, $name:literal: $($variant:ident = $wire:literal),+;)*) => {$(
        impl Decode for $ty {
            fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                const NAMES: &[&str] = &[$($wire),+];
                const ALL: &[$ty] = &[$($ty::$variant),+];
                let visitor = UnitEnum {
                    expecting: concat!("enum ", $name),
                    names: NAMES,
                };
                Ok(ALL[d.deserialize_enum($name, NAMES, visitor)?])
            }
        }
    )*};
}

unit_enums! {
    Overlap, "Overlap": Skip = "skip", Allow = "allow", BufferOne = "buffer_one",
        CancelPrevious = "cancel_previous";
    Origin, "Origin": Declared = "declared", Api = "api";
    QueueMode, "QueueMode": Local = "local", External = "external";
    ScheduleStatus, "ScheduleStatus": Active = "active", Paused = "paused",
        Completed = "completed";
    JobState, "JobState": Scheduled = "scheduled", Available = "available",
        Claimed = "claimed", Completed = "completed", Dead = "dead", Dropped = "dropped",
        Cancelled = "cancelled";
    FireOutcome, "FireOutcome": Succeeded = "succeeded", Failed = "failed";
    GapPolicy, "GapPolicy": Shift = "shift", Skip = "skip";
    FoldPolicy, "FoldPolicy": First = "first", Last = "last", Both = "both";
}
