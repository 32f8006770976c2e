//! A compact JSON decoder for the wire and snapshot types, for builds where
//! code size matters more than decoding speed (the npm package's `.wasm`;
//! feature `compact-decode`).
//!
//! Why: serde's derive emits, per struct, a field-name visitor, a map
//! visitor and a sequence visitor, each reading every field through its own
//! monomorphic copy of the JSON parser's entry points. Across the ~40 wire
//! and snapshot types that was ~140 KB of the `.wasm` (BENCHMARKS.md,
//! "Size"). Here one driver (`RecVisitor`) reads every struct: a type
//! only describes its fields (`Shape`), says where each value goes
//! (`Record::slot`) and assembles itself (`Record::finish`); the values
//! themselves are read by the same `Deserialize` impls the derive would
//! call, all in one place (`Seed`).
//!
//! This module is the driver and the records of the wire types (`input`,
//! `records`, `enums`). It names no type of a layer above `wire`: a
//! [`Slot`] is either a value of the wire layer or below, or a nested
//! struct read through its own [`Record`] (`Rec`, `OptRec`, `Checked`), a
//! list or a map of them (`Seq`, `Map`, through [`Elements`] and
//! [`Entries`]). The records of the snapshot's internal types live beside
//! their types (`schedule/decode.rs`, `queue/decode.rs`, `lease.rs`,
//! `engine/snapshot.rs`), written with [`record_decoder!`].
//!
//! The derived impls stay the definition of the format: this module must
//! accept and reject exactly what they do, with the same error at the same
//! position. It drives serde_json through the same calls in the same order
//! as the derived code (`deserialize_struct`, `next_key`, the duplicate
//! check before the value, `IgnoredAny` for unknown fields, missing fields
//! in declaration order, the sequence form with `invalid_length`), so
//! serde_json computes the same messages and line/column positions. The
//! tests (`tests.rs` here, `engine/snapshot/decode_tests.rs` for
//! snapshots) compare both on valid documents and on every truncation and
//! many mutations of them.
//!
//! When a decoded type changes, its record must follow (fields in
//! declaration order, wire name, how an absent one is filled): a new field
//! is a compile error in the record's struct literal, a new enum variant
//! one in the tests' exhaustive matches, and the differential tests catch
//! a wrong name, order or default.
// Without the feature the module is built for its tests only.
#![cfg_attr(not(feature = "compact-decode"), allow(unreachable_pub))]

mod enums;
mod input;
mod nested;
mod records;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

pub(crate) use nested::{Elements, Entries, Restore, Restoring};

use crate::spec::{FoldPolicy, GapPolicy};
use crate::time::Timestamp;
use crate::wire::command::{FireReason, SkipReason};
use crate::wire::ids::{Epoch, FireId, JobId, LeaseToken};
use crate::wire::input::{FireOutcome, Input};
use crate::wire::job::JobState;
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::QueueMode;
use crate::wire::run::RunOutcome;
use crate::wire::schedule_def::{Origin, Overlap, ScheduleStatus};
use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, Expected, IgnoredAny, MapAccess, SeqAccess, Unexpected,
    Visitor,
};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// Declares the builder of a struct, in declaration order: `field: Type,
/// "wireName", how;` where how is `req` (required), `opt` (an `Option`
/// without a serde default: absent from a map it is `None`, but a sequence
/// form must have it), `def` (the field's `#[serde(default)]`) or
/// `or(expr)` (a default function, or the container's default). Each
/// field's type says where its value goes ([`Field`]). `skip { field: expr
/// }` sets `#[serde(skip)]` fields (after a `;`). Also implements
/// [`Nested`] and [`Decode`] for the type.
macro_rules! record_decoder {
    (
        $builder:ident => $ty:ident, $name:literal, $count:literal, deny_unknown: $deny:literal;
        $($field:ident: $fty:ty, $wire:literal, $how:ident $(($dflt:expr))?;)*
        $(; skip { $($sfield:ident: $sexpr:expr),* })?
    ) => {
        #[derive(Default)]
        pub(crate) struct $builder {
            $($field: <$fty as $crate::wire::decode::Field>::Store,)*
            out: Option<$ty>,
        }

        impl $crate::wire::decode::Record for $builder {
            fn shape(&self) -> &'static $crate::wire::decode::Shape {
                static SHAPE: $crate::wire::decode::Shape = $crate::wire::decode::Shape {
                    name: $name,
                    expecting: concat!("struct ", $name),
                    expecting_seq: concat!("struct ", $name, " with ", $count),
                    fields: &[$($wire),*],
                    deny_unknown: $deny,
                    seq_default: $crate::wire::decode::seq_defaults(
                        &[$(record_decoder!(@has_default $how)),*],
                    ),
                };
                &SHAPE
            }

            #[allow(unused_assignments)]
            fn slot(&mut self, i: usize) -> $crate::wire::decode::Slot<'_> {
                let mut n = 0;
                $(
                    if i == n {
                        return <$fty as $crate::wire::decode::Field>::slot(&mut self.$field);
                    }
                    n += 1;
                )*
                // Not reached: the driver asks only for indexes of the shape.
                $crate::wire::decode::Slot::Skip
            }

            fn finish(&mut self) -> Result<(), $crate::wire::decode::Problem> {
                self.out = Some($ty {
                    $($field: record_decoder!(
                        @take $how,
                        <$fty as $crate::wire::decode::Field>::take(&mut self.$field),
                        $wire $(, $dflt)?
                    ),)*
                    $($($sfield: $sexpr,)*)?
                });
                Ok(())
            }
        }

        impl $crate::wire::decode::Nested for $ty {
            type Builder = $builder;

            fn built(b: &mut $builder) -> Option<$ty> {
                b.out.take()
            }
        }

        impl $crate::wire::decode::Decode for $ty {
            fn decode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let mut b = $builder::default();
                $crate::wire::decode::record(d, &mut b)?;
                Ok(b.out.expect("built by finish"))
            }
        }
    };
    (@has_default req) => { false };
    (@has_default opt) => { false };
    (@has_default def) => { true };
    (@has_default or) => { true };
    (@take req, $v:expr, $wire:literal) => { $crate::wire::decode::req($v, $wire)? };
    (@take opt, $v:expr, $wire:literal) => { $v.unwrap_or_default() };
    (@take def, $v:expr, $wire:literal) => { $v.unwrap_or_default() };
    (@take or, $v:expr, $wire:literal, $dflt:expr) => { $v.unwrap_or_else(|| $dflt) };
}
pub(crate) use record_decoder;

/// The [`Shape::seq_default`] bits of a field list.
pub(crate) const fn seq_defaults(has_default: &[bool]) -> u64 {
    let mut bits = 0;
    let mut i = 0;
    while i < has_default.len() {
        if has_default[i] {
            bits |= 1 << i;
        }
        i += 1;
    }
    bits
}

/// Parses `text` as serde_json's `from_str` does (the value, then nothing
/// but whitespace), decoding with [`Decode`] instead of `Deserialize`.
pub fn from_str<T: Decode>(text: &str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::decode(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A type this module decodes: the same result as its `Deserialize` impl.
pub trait Decode: Sized {
    /// Reads one value from `d`.
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

/// What a struct looks like on the wire, as the derive sees it.
pub(crate) struct Shape {
    /// The name passed to `deserialize_struct`.
    pub(crate) name: &'static str,
    /// What the derive's visitor says it expects: `struct X` or
    /// `struct variant X::Y`.
    pub(crate) expecting: &'static str,
    /// The same with the field count, for a too-short sequence form:
    /// `struct X with 3 elements`.
    pub(crate) expecting_seq: &'static str,
    /// Wire names in declaration order.
    pub(crate) fields: &'static [&'static str],
    /// `#[serde(deny_unknown_fields)]`.
    pub(crate) deny_unknown: bool,
    /// Bit i: field i has a default (its own or the container's), so a
    /// sequence form may stop before it.
    pub(crate) seq_default: u64,
}

/// Why [`Record::finish`] refused.
pub(crate) enum Problem {
    /// A required field was absent (`missing field`).
    Missing(&'static str),
}

/// A struct being decoded: where its fields go, and how it is assembled.
pub(crate) trait Record {
    /// Its wire shape.
    fn shape(&self) -> &'static Shape;
    /// Where field `i` (an index into `shape().fields`) is stored.
    fn slot(&mut self, i: usize) -> Slot<'_>;
    /// Builds the value from the fields read, taking defaults for absent
    /// ones and refusing the first absent required one in declaration
    /// order, as the derive does.
    fn finish(&mut self) -> Result<(), Problem>;
    /// Checks the value after the struct is read, outside it, as a
    /// `Deserialize` impl that wraps a derived one does (the error's
    /// position depends on it); only read through [`Slot::Checked`].
    fn check(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// A struct with its own [`Record`]: the builder, and the value it built.
/// Written by [`record_decoder!`].
pub(crate) trait Nested: Sized {
    /// Its builder.
    type Builder: Record + Default;
    /// The value built, once (`None` if it was never read).
    fn built(b: &mut Self::Builder) -> Option<Self>;
}

/// How a builder stores a field of this type and where the driver reads
/// it: the value itself for the wire's scalars, the nested builder for a
/// struct, a list or map of builders for collections of them.
pub(crate) trait Field: Sized {
    /// What the builder holds while the value is read.
    type Store: Default;
    /// Where the next value goes.
    fn slot(store: &mut Self::Store) -> Slot<'_>;
    /// The value read, or `None` if the field was absent.
    fn take(store: &mut Self::Store) -> Option<Self>;
}

impl<T: Nested> Field for T {
    type Store = T::Builder;

    fn slot(store: &mut T::Builder) -> Slot<'_> {
        Slot::Rec(store)
    }

    fn take(store: &mut T::Builder) -> Option<T> {
        T::built(store)
    }
}

impl<T: Nested> Field for Option<T> {
    type Store = T::Builder;

    fn slot(store: &mut T::Builder) -> Slot<'_> {
        Slot::OptRec(store)
    }

    /// `null` and absent are both `None` (an `Option` field is never
    /// required in a map; a sequence form's length is checked apart).
    fn take(store: &mut T::Builder) -> Option<Option<T>> {
        Some(T::built(store))
    }
}

/// Implements [`Field`] for types read by one [`Slot`] kind each.
macro_rules! scalar_fields {
    ($($ty:ty => $kind:ident,)*) => {$(
        impl Field for $ty {
            type Store = Option<$ty>;

            fn slot(store: &mut Option<$ty>) -> Slot<'_> {
                Slot::$kind(store)
            }

            fn take(store: &mut Option<$ty>) -> Option<$ty> {
                store.take()
            }
        }
    )*};
}

scalar_fields! {
    bool => Bool,
    usize => Usize,
    i32 => I32,
    u32 => U32,
    Option<u32> => OptU32,
    i64 => I64,
    Option<i64> => OptI64,
    u64 => U64,
    Option<u64> => OptU64,
    String => Str,
    Option<String> => OptStr,
    Arc<str> => ArcStr,
    Timestamp => Ts,
    Option<Timestamp> => OptTs,
    JobId => JobId,
    Option<JobId> => OptJobId,
    FireId => FireId,
    Option<FireId> => OptFireId,
    LeaseToken => Token,
    Epoch => Epoch,
    Option<Epoch> => OptEpoch,
    Vec<(JobId, Option<FireId>)> => JobFires,
    Payload => Payload,
    Headers => Headers,
    Overlap => Overlap,
    Option<Overlap> => OptOverlap,
    Origin => Origin,
    QueueMode => Mode,
    ScheduleStatus => Status,
    JobState => JobState,
    FireOutcome => Outcome,
    Option<FireReason> => OptFireReason,
    Option<SkipReason> => OptSkipReason,
    RunOutcome => RunOutcome,
    Option<GapPolicy> => OptGap,
    Option<FoldPolicy> => OptFold,
    Input => Input,
}

/// Where one field's value goes. A scalar is read by its own `Deserialize`
/// impl (exactly what the derive calls) or, for the wire's enums, by this
/// module; a struct by its [`Record`].
pub(crate) enum Slot<'a> {
    Bool(&'a mut Option<bool>),
    Usize(&'a mut Option<usize>),
    I32(&'a mut Option<i32>),
    U32(&'a mut Option<u32>),
    OptU32(&'a mut Option<Option<u32>>),
    I64(&'a mut Option<i64>),
    OptI64(&'a mut Option<Option<i64>>),
    U64(&'a mut Option<u64>),
    OptU64(&'a mut Option<Option<u64>>),
    Str(&'a mut Option<String>),
    OptStr(&'a mut Option<Option<String>>),
    ArcStr(&'a mut Option<Arc<str>>),
    Ts(&'a mut Option<Timestamp>),
    OptTs(&'a mut Option<Option<Timestamp>>),
    JobId(&'a mut Option<JobId>),
    OptJobId(&'a mut Option<Option<JobId>>),
    FireId(&'a mut Option<FireId>),
    OptFireId(&'a mut Option<Option<FireId>>),
    Token(&'a mut Option<LeaseToken>),
    Epoch(&'a mut Option<Epoch>),
    OptEpoch(&'a mut Option<Option<Epoch>>),
    /// Jobs with the fire each came from.
    JobFires(&'a mut Option<Vec<(JobId, Option<FireId>)>>),
    Payload(&'a mut Option<Payload>),
    Headers(&'a mut Option<Headers>),
    Overlap(&'a mut Option<Overlap>),
    OptOverlap(&'a mut Option<Option<Overlap>>),
    Origin(&'a mut Option<Origin>),
    Mode(&'a mut Option<QueueMode>),
    Status(&'a mut Option<ScheduleStatus>),
    JobState(&'a mut Option<JobState>),
    Outcome(&'a mut Option<FireOutcome>),
    OptFireReason(&'a mut Option<Option<FireReason>>),
    OptSkipReason(&'a mut Option<Option<SkipReason>>),
    RunOutcome(&'a mut Option<RunOutcome>),
    OptGap(&'a mut Option<Option<GapPolicy>>),
    OptFold(&'a mut Option<Option<FoldPolicy>>),
    Input(&'a mut Option<Input>),
    /// A nested struct.
    Rec(&'a mut dyn Record),
    /// `Option` of a nested struct (left unbuilt by `null`).
    OptRec(&'a mut dyn Record),
    /// A nested struct, then its [`Record::check`] (outside it).
    Checked(&'a mut dyn Record),
    /// A `Vec` of structs.
    Seq(&'a mut dyn Elements),
    /// A `BTreeMap` of structs (later duplicates win).
    Map(&'a mut dyn Entries),
    /// A value read and dropped (`IgnoredAny`); not reached.
    Skip,
}

/// Reads one value into its slot.
pub(crate) struct Seed<'a>(pub(crate) Slot<'a>);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.0 {
            Slot::Bool(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Usize(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::I32(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::U32(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptU32(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::I64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptI64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::U64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptU64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Str(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptStr(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::ArcStr(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Ts(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptTs(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::JobId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptJobId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::FireId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptFireId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Token(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Epoch(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptEpoch(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::JobFires(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Payload(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Headers(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Overlap(o) => *o = Some(Decode::decode(d)?),
            Slot::OptOverlap(o) => *o = Some(option(d)?),
            Slot::Origin(o) => *o = Some(Decode::decode(d)?),
            Slot::Mode(o) => *o = Some(Decode::decode(d)?),
            Slot::Status(o) => *o = Some(Decode::decode(d)?),
            Slot::JobState(o) => *o = Some(Decode::decode(d)?),
            Slot::Outcome(o) => *o = Some(Decode::decode(d)?),
            // Run history enums: read by their own derived impls.
            Slot::OptFireReason(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptSkipReason(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::RunOutcome(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptGap(o) => *o = Some(option(d)?),
            Slot::OptFold(o) => *o = Some(option(d)?),
            Slot::Input(o) => *o = Some(Input::decode(d)?),
            Slot::Rec(r) => {
                let shape = r.shape();
                d.deserialize_struct(shape.name, shape.fields, RecVisitor(r))?;
            }
            Slot::OptRec(r) => d.deserialize_option(OptRec(r))?,
            Slot::Checked(r) => {
                let shape = r.shape();
                d.deserialize_struct(shape.name, shape.fields, RecVisitor(&mut *r))?;
                r.check().map_err(de::Error::custom)?;
            }
            Slot::Seq(s) => d.deserialize_seq(nested::SeqVisitor(s))?,
            Slot::Map(m) => d.deserialize_map(nested::MapVisitor(m))?,
            Slot::Skip => {
                IgnoredAny::deserialize(d)?;
            }
        }
        Ok(())
    }
}

/// Decodes a whole struct with `r` (the derive's `deserialize`).
pub(crate) fn record<'de, D: Deserializer<'de>>(d: D, r: &mut dyn Record) -> Result<(), D::Error> {
    Seed(Slot::Rec(r)).deserialize(d)
}

/// serde's `Option<T>`, with `T` read by [`Decode`].
fn option<'de, T: Decode, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: Decode> Visitor<'de> for V<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("option")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
            T::decode(d).map(Some)
        }
    }
    d.deserialize_option(V(PhantomData))
}

/// The derive's struct visitor, shared by every struct.
pub(crate) struct RecVisitor<'a>(pub(crate) &'a mut dyn Record);

impl<'de> Visitor<'de> for RecVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.shape().expecting)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let shape = self.0.shape();
        for i in 0..shape.fields.len() {
            let read = seq.next_element_seed(Seed(self.0.slot(i)))?;
            if read.is_none() && shape.seq_default & (1 << i) == 0 {
                return Err(de::Error::invalid_length(i, &Text(shape.expecting_seq)));
            }
        }
        finish::<A::Error>(self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let shape = self.0.shape();
        let mut seen = 0u64;
        while let Some(key) = map.next_key_seed(Key(shape))? {
            match key {
                Some(i) => {
                    if seen & (1 << i) != 0 {
                        return Err(de::Error::duplicate_field(shape.fields[i]));
                    }
                    map.next_value_seed(Seed(self.0.slot(i)))?;
                    seen |= 1 << i;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        finish::<A::Error>(self.0)
    }
}

fn finish<E: de::Error>(r: &mut dyn Record) -> Result<(), E> {
    r.finish().map_err(|p| match p {
        Problem::Missing(field) => E::missing_field(field),
    })
}

/// A fixed "expected …" text.
struct Text(&'static str);

impl Expected for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// The derive's field-name visitor: the field's index, `None` for an
/// unknown field that is ignored.
struct Key(&'static Shape);

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<usize>, E> {
        let n = self.0.fields.len();
        match usize::try_from(v) {
            Ok(i) if i < n => Ok(Some(i)),
            _ if self.0.deny_unknown => {
                Err(E::invalid_value(Unexpected::Unsigned(v), &FieldIndex(n)))
            }
            _ => Ok(None),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        match self.0.fields.iter().position(|f| *f == v) {
            Some(i) => Ok(Some(i)),
            None if self.0.deny_unknown => Err(E::unknown_field(v, self.0.fields)),
            None => Ok(None),
        }
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Option<usize>, E> {
        match self.0.fields.iter().position(|f| f.as_bytes() == v) {
            Some(i) => Ok(Some(i)),
            None if self.0.deny_unknown => {
                Err(E::unknown_field(&String::from_utf8_lossy(v), self.0.fields))
            }
            None => Ok(None),
        }
    }
}

/// `field index 0 <= i < n`, as the derive words an out-of-range index.
struct FieldIndex(usize);

impl Expected for FieldIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field index 0 <= i < {}", self.0)
    }
}

/// serde's `Option` visitor, for a nested struct.
struct OptRec<'a>(&'a mut dyn Record);

impl<'de> Visitor<'de> for OptRec<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("option")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        record(d, self.0)
    }
}

/// A required field: its value, or `missing field` (the derive calls
/// `missing_field`, which fails for every type here but `Option`).
pub(crate) fn req<T>(v: Option<T>, field: &'static str) -> Result<T, Problem> {
    v.ok_or(Problem::Missing(field))
}
