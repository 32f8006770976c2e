//! A compact JSON decoder for the wire types, for builds where code size
//! matters more than decoding speed (the npm package's `.wasm`; feature
//! `compact-decode`).
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
//! The derived impls stay the definition of the format: this module must
//! accept and reject exactly what they do, with the same error at the same
//! position. It drives serde_json through the same calls in the same order
//! as the derived code (`deserialize_struct`, `next_key`, the duplicate
//! check before the value, `IgnoredAny` for unknown fields, missing fields
//! in declaration order, the sequence form with `invalid_length`), so
//! serde_json computes the same messages and line/column positions. The
//! tests compare both on valid documents and on every truncation and many
//! mutations of them.
//!
//! When a decoded type changes, its record here must follow (fields in
//! declaration order, wire name, how an absent one is filled): a new field
//! is a compile error in the record's struct literal, a new enum variant
//! one in the tests' exhaustive matches, and the differential tests catch
//! a wrong name, order or default.
// Without the feature the module is built for its tests only.
#![cfg_attr(not(feature = "compact-decode"), allow(unreachable_pub))]

use crate::engine::snapshot::{Leadership, ScheduleState};
use crate::lease::{Held, Leases};
use crate::queue::{DedupEntry, Job, JobLease, QueueState, Queues};
use crate::schedule::{Buffered, Counters, FireTarget, InFlight, PauseChange};
use crate::spec::{DstPolicy, FoldPolicy, GapPolicy};
use crate::time::Timestamp;
use crate::wire::config::{EngineConfig, Limits};
use crate::wire::ids::{Epoch, FireId, JobId, LeaseToken};
use crate::wire::input::{EnqueueRequest, FireOutcome, Input, JournalEntry, LeadershipGrant};
use crate::wire::job::JobState;
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::{Backoff, QueueConfig, QueueMode, QueueTotals, Retention};
use crate::wire::schedule_def::{Catchup, Overlap, ScheduleDef, ScheduleStatus, Target};
use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, Expected, IgnoredAny, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// Declares the builder of a struct whose fields are all [`Slot`]s, in
/// declaration order: `field: Type, SlotKind, "wireName", how;` where how
/// is `req` (required), `opt` (an `Option` without a serde default: absent
/// from a map it is `None`, but a sequence form must have it), `def` (the
/// field's `#[serde(default)]`) or `or(expr)` (a default function, or the
/// container's default). `skip { field: expr }` sets `#[serde(skip)]`
/// fields (after a `;`). Also implements [`Decode`] for the type.
macro_rules! record_decoder {
    (
        $builder:ident => $ty:ident, $name:literal, $count:literal, deny_unknown: $deny:literal;
        $($field:ident: $fty:ty, $slot:ident, $wire:literal, $how:ident $(($dflt:expr))?;)*
        $(; skip { $($sfield:ident: $sexpr:expr),* })?
    ) => {
        #[derive(Default)]
        pub(crate) struct $builder {
            $($field: Option<$fty>,)*
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
                        return $crate::wire::decode::Slot::$slot(&mut self.$field);
                    }
                    n += 1;
                )*
                unreachable!("field index {i} out of the shape ({n} fields)")
            }

            fn finish(&mut self) -> Result<(), $crate::wire::decode::Problem> {
                self.out = Some($ty {
                    $($field: record_decoder!(@take $how, self.$field.take(), $wire $(, $dflt)?),)*
                    $($($sfield: $sexpr,)*)?
                });
                Ok(())
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
}

/// Where one field's value goes; each kind is read by its own
/// `Deserialize` impl (exactly what the derive calls), nested structs by
/// this module.
pub(crate) enum Slot<'a> {
    Bool(&'a mut Option<bool>),
    Usize(&'a mut Option<usize>),
    U64(&'a mut Option<u64>),
    OptU64(&'a mut Option<Option<u64>>),
    ArcStr(&'a mut Option<Arc<str>>),
    OptEpoch(&'a mut Option<Option<Epoch>>),
    OptFireId(&'a mut Option<Option<FireId>>),
    Overlap(&'a mut Option<Overlap>),
    Mode(&'a mut Option<QueueMode>),
    Status(&'a mut Option<ScheduleStatus>),
    JobState(&'a mut Option<JobState>),
    OptGap(&'a mut Option<Option<GapPolicy>>),
    OptFold(&'a mut Option<Option<FoldPolicy>>),
    Finished(&'a mut Option<Vec<(JobId, Option<FireId>)>>),
    Dst(&'a mut Option<DstPolicy>),
    Target(&'a mut Option<Target>),
    Catchup(&'a mut Option<Catchup>),
    Backoff(&'a mut Option<Backoff>),
    Retention(&'a mut Option<Retention>),
    Limits(&'a mut Option<Limits>),
    Config(&'a mut Option<EngineConfig>),
    Totals(&'a mut Option<QueueTotals>),
    Counters(&'a mut Option<Counters>),
    FireTarget(&'a mut Option<FireTarget>),
    OptGrant(&'a mut Option<Option<LeadershipGrant>>),
    OptLease(&'a mut Option<Option<JobLease>>),
    OptBuffered(&'a mut Option<Option<Buffered>>),
    InFlights(&'a mut Option<Vec<InFlight>>),
    PauseLog(&'a mut Option<Vec<PauseChange>>),
    Schedules(&'a mut Option<Vec<ScheduleState>>),
    QueueStates(&'a mut Option<BTreeMap<String, QueueState>>),
    Jobs(&'a mut Option<BTreeMap<JobId, Job>>),
    Dedup(&'a mut Option<BTreeMap<String, DedupEntry>>),
    Held(&'a mut Option<BTreeMap<String, Held>>),
    Leadership(&'a mut Option<Leadership>),
    Queues(&'a mut Option<Queues>),
    Leases(&'a mut Option<Leases>),
    Str(&'a mut Option<String>),
    OptStr(&'a mut Option<Option<String>>),
    I32(&'a mut Option<i32>),
    U32(&'a mut Option<u32>),
    OptU32(&'a mut Option<Option<u32>>),
    I64(&'a mut Option<i64>),
    OptI64(&'a mut Option<Option<i64>>),
    Ts(&'a mut Option<Timestamp>),
    OptTs(&'a mut Option<Option<Timestamp>>),
    JobId(&'a mut Option<JobId>),
    OptJobId(&'a mut Option<Option<JobId>>),
    Token(&'a mut Option<LeaseToken>),
    Epoch(&'a mut Option<Epoch>),
    FireId(&'a mut Option<FireId>),
    Payload(&'a mut Option<Payload>),
    Headers(&'a mut Option<Headers>),
    OptOverlap(&'a mut Option<Option<Overlap>>),
    Outcome(&'a mut Option<FireOutcome>),
    ScheduleDef(&'a mut Option<ScheduleDef>),
    QueueConfig(&'a mut Option<QueueConfig>),
    Input(&'a mut Option<Input>),
    /// A nested struct.
    Rec(&'a mut dyn Record),
    /// `Option` of a nested struct (left unbuilt by `null`).
    OptRec(&'a mut dyn Record),
}

/// Reads one value into its slot.
struct Seed<'a>(Slot<'a>);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.0 {
            Slot::Bool(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Usize(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::U64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptU64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::ArcStr(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptEpoch(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptFireId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Overlap(o) => *o = Some(Decode::decode(d)?),
            Slot::Mode(o) => *o = Some(Decode::decode(d)?),
            Slot::Status(o) => *o = Some(Decode::decode(d)?),
            Slot::JobState(o) => *o = Some(Decode::decode(d)?),
            Slot::OptGap(o) => *o = Some(option(d)?),
            Slot::OptFold(o) => *o = Some(option(d)?),
            Slot::Finished(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Dst(o) => *o = Some(Decode::decode(d)?),
            Slot::Target(o) => *o = Some(Decode::decode(d)?),
            Slot::Catchup(o) => *o = Some(Decode::decode(d)?),
            Slot::Backoff(o) => *o = Some(Decode::decode(d)?),
            Slot::Retention(o) => *o = Some(Decode::decode(d)?),
            Slot::Limits(o) => *o = Some(Decode::decode(d)?),
            Slot::Config(o) => *o = Some(Decode::decode(d)?),
            Slot::Totals(o) => *o = Some(Decode::decode(d)?),
            Slot::Counters(o) => *o = Some(Decode::decode(d)?),
            Slot::FireTarget(o) => *o = Some(Decode::decode(d)?),
            Slot::OptGrant(o) => *o = Some(option(d)?),
            Slot::OptLease(o) => *o = Some(option(d)?),
            Slot::OptBuffered(o) => *o = Some(option(d)?),
            Slot::InFlights(o) => *o = Some(vec(d)?),
            Slot::PauseLog(o) => *o = Some(vec(d)?),
            Slot::Schedules(o) => *o = Some(vec(d)?),
            Slot::QueueStates(o) => *o = Some(map(d)?),
            Slot::Jobs(o) => *o = Some(map(d)?),
            Slot::Dedup(o) => *o = Some(map(d)?),
            Slot::Held(o) => *o = Some(map(d)?),
            Slot::Leadership(o) => *o = Some(Decode::decode(d)?),
            Slot::Queues(o) => {
                // Checked after the struct is read, outside it, as the
                // `Deserialize` impl does (the error's position depends on it).
                let p: QueuesParts = Decode::decode(d)?;
                let queues =
                    Queues::restored(p.last_job, p.last_token, p.queues, p.jobs, p.finished);
                *o = Some(queues.map_err(de::Error::custom)?);
            }
            Slot::Leases(o) => {
                let p: LeasesParts = Decode::decode(d)?;
                *o = Some(Leases::restored(p.last_token, p.held).map_err(de::Error::custom)?);
            }
            Slot::Str(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptStr(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::I32(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::U32(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptU32(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::I64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptI64(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Ts(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptTs(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::JobId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptJobId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Token(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Epoch(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::FireId(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Payload(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Headers(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::OptOverlap(o) => *o = Some(option(d)?),
            Slot::Outcome(o) => *o = Some(Decode::decode(d)?),
            Slot::ScheduleDef(o) => *o = Some(Decode::decode(d)?),
            Slot::QueueConfig(o) => *o = Some(Decode::decode(d)?),
            Slot::Rec(r) => {
                let shape = r.shape();
                d.deserialize_struct(shape.name, shape.fields, RecVisitor(r))?;
            }
            Slot::Input(o) => *o = Some(Input::decode(d)?),
            Slot::OptRec(r) => d.deserialize_option(OptRec(r))?,
        }
        Ok(())
    }
}

/// Decodes a whole struct with `r` (the derive's `deserialize`).
pub(crate) fn record<'de, D: Deserializer<'de>>(d: D, r: &mut dyn Record) -> Result<(), D::Error> {
    Seed(Slot::Rec(r)).deserialize(d)
}

/// Reads a `T` with [`Decode`] where serde wants a seed.
struct DecodeSeed<T>(PhantomData<T>);

impl<'de, T: Decode> DeserializeSeed<'de> for DecodeSeed<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::decode(d)
    }
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

/// serde's `Vec<T>`, with `T` read by [`Decode`].
fn vec<'de, T: Decode, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: Decode> Visitor<'de> for V<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(DecodeSeed(PhantomData))? {
                out.push(v);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(V(PhantomData))
}

/// serde's `BTreeMap<K, T>` (later duplicates win), with `T` read by
/// [`Decode`].
fn map<'de, K, T, D>(d: D) -> Result<BTreeMap<K, T>, D::Error>
where
    K: Deserialize<'de> + Ord,
    T: Decode,
    D: Deserializer<'de>,
{
    struct V<K, T>(PhantomData<(K, T)>);
    impl<'de, K: Deserialize<'de> + Ord, T: Decode> Visitor<'de> for V<K, T> {
        type Value = BTreeMap<K, T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BTreeMap<K, T>, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(k) = map.next_key()? {
                let v = map.next_value_seed(DecodeSeed(PhantomData))?;
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(V(PhantomData))
}

/// The derive's struct visitor, shared by every struct.
struct RecVisitor<'a>(&'a mut dyn Record);

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

// ---------------------------------------------------------------------------
// Input and the journal

const INPUT_VARIANTS: &[&str] = &[
    "advance",
    "declareQueue",
    "upsertSchedule",
    "removeSchedule",
    "pauseSchedule",
    "resumeSchedule",
    "triggerSchedule",
    "backfill",
    "enqueue",
    "claim",
    "heartbeat",
    "complete",
    "fail",
    "cancelJob",
    "redrive",
    "purgeDead",
    "fireSettled",
    "leadership",
    "acquireLease",
    "renewLease",
    "releaseLease",
];

/// The arguments of every struct variant of [`Input`], in one builder: a
/// variant's field `i` is slot `ARGS[variant][i]`.
#[derive(Default)]
struct InputArgs {
    variant: usize,
    name: Option<String>,
    note: Option<Option<String>>,
    overlap: Option<Option<Overlap>>,
    from: Option<Timestamp>,
    to: Option<Timestamp>,
    queue: Option<String>,
    worker: Option<String>,
    max: Option<u32>,
    lease_ms: Option<Option<i64>>,
    job: Option<JobId>,
    token: Option<LeaseToken>,
    error: Option<String>,
    retry_at: Option<Option<Timestamp>>,
    opt_job: Option<Option<JobId>>,
    before: Option<Option<Timestamp>>,
    fire: Option<FireId>,
    outcome: Option<FireOutcome>,
    owner: Option<String>,
    ttl_ms: Option<i64>,
    out: Option<Input>,
}

/// A struct variant's shape, with its fields' slots.
struct ArgShape {
    shape: Shape,
    slots: &'static [Arg],
}

/// The slots of [`InputArgs`].
#[derive(Clone, Copy)]
enum Arg {
    Name,
    Note,
    Overlap,
    From,
    To,
    Queue,
    Worker,
    Max,
    LeaseMs,
    Job,
    Token,
    Error,
    RetryAt,
    OptJob,
    Before,
    Fire,
    Outcome,
    Owner,
    TtlMs,
}

macro_rules! variant {
    ($name:literal, $n:literal, [$($field:literal),*], [$($arg:ident),*], $default:expr) => {
        ArgShape {
            shape: Shape {
                name: "",
                expecting: concat!("struct variant Input::", $name),
                expecting_seq: concat!("struct variant Input::", $name, " with ", $n),
                fields: &[$($field),*],
                deny_unknown: false,
                seq_default: $default,
            },
            slots: &[$(Arg::$arg),*],
        }
    };
}

/// Struct variants by index in [`INPUT_VARIANTS`] (unit and newtype
/// variants have none).
static ARGS: [Option<ArgShape>; 21] = [
    None,
    None,
    None,
    Some(variant!("RemoveSchedule", "1 element", ["name"], [Name], 0)),
    Some(variant!(
        "PauseSchedule",
        "2 elements",
        ["name", "note"],
        [Name, Note],
        0b10
    )),
    Some(variant!("ResumeSchedule", "1 element", ["name"], [Name], 0)),
    Some(variant!(
        "TriggerSchedule",
        "2 elements",
        ["name", "overlap"],
        [Name, Overlap],
        0b10
    )),
    Some(variant!(
        "Backfill",
        "4 elements",
        ["name", "from", "to", "overlap"],
        [Name, From, To, Overlap],
        0b1000
    )),
    None,
    Some(variant!(
        "Claim",
        "4 elements",
        ["queue", "worker", "max", "leaseMs"],
        [Queue, Worker, Max, LeaseMs],
        0b1000
    )),
    Some(variant!(
        "Heartbeat",
        "3 elements",
        ["job", "token", "leaseMs"],
        [Job, Token, LeaseMs],
        0b100
    )),
    Some(variant!(
        "Complete",
        "2 elements",
        ["job", "token"],
        [Job, Token],
        0
    )),
    Some(variant!(
        "Fail",
        "4 elements",
        ["job", "token", "error", "retryAt"],
        [Job, Token, Error, RetryAt],
        0b1000
    )),
    Some(variant!("CancelJob", "1 element", ["job"], [Job], 0)),
    Some(variant!(
        "Redrive",
        "2 elements",
        ["queue", "job"],
        [Queue, OptJob],
        0b10
    )),
    Some(variant!(
        "PurgeDead",
        "2 elements",
        ["queue", "before"],
        [Queue, Before],
        0b10
    )),
    Some(variant!(
        "FireSettled",
        "2 elements",
        ["fire", "outcome"],
        [Fire, Outcome],
        0
    )),
    None,
    Some(variant!(
        "AcquireLease",
        "3 elements",
        ["name", "owner", "ttlMs"],
        [Name, Owner, TtlMs],
        0
    )),
    Some(variant!(
        "RenewLease",
        "3 elements",
        ["name", "token", "ttlMs"],
        [Name, Token, TtlMs],
        0
    )),
    Some(variant!(
        "ReleaseLease",
        "2 elements",
        ["name", "token"],
        [Name, Token],
        0
    )),
];

fn args(variant: usize) -> &'static ArgShape {
    ARGS[variant].as_ref().expect("a struct variant")
}

impl Record for InputArgs {
    fn shape(&self) -> &'static Shape {
        &args(self.variant).shape
    }

    fn slot(&mut self, i: usize) -> Slot<'_> {
        match args(self.variant).slots[i] {
            Arg::Name => Slot::Str(&mut self.name),
            Arg::Note => Slot::OptStr(&mut self.note),
            Arg::Overlap => Slot::OptOverlap(&mut self.overlap),
            Arg::From => Slot::Ts(&mut self.from),
            Arg::To => Slot::Ts(&mut self.to),
            Arg::Queue => Slot::Str(&mut self.queue),
            Arg::Worker => Slot::Str(&mut self.worker),
            Arg::Max => Slot::U32(&mut self.max),
            Arg::LeaseMs => Slot::OptI64(&mut self.lease_ms),
            Arg::Job => Slot::JobId(&mut self.job),
            Arg::Token => Slot::Token(&mut self.token),
            Arg::Error => Slot::Str(&mut self.error),
            Arg::RetryAt => Slot::OptTs(&mut self.retry_at),
            Arg::OptJob => Slot::OptJobId(&mut self.opt_job),
            Arg::Before => Slot::OptTs(&mut self.before),
            Arg::Fire => Slot::FireId(&mut self.fire),
            Arg::Outcome => Slot::Outcome(&mut self.outcome),
            Arg::Owner => Slot::Str(&mut self.owner),
            Arg::TtlMs => Slot::I64(&mut self.ttl_ms),
        }
    }

    fn finish(&mut self) -> Result<(), Problem> {
        // Fields in declaration order within each variant: the first
        // missing one is the one reported.
        let input = match self.variant {
            3 => Input::RemoveSchedule {
                name: req(self.name.take(), "name")?,
            },
            4 => Input::PauseSchedule {
                name: req(self.name.take(), "name")?,
                note: self.note.take().flatten(),
            },
            5 => Input::ResumeSchedule {
                name: req(self.name.take(), "name")?,
            },
            6 => Input::TriggerSchedule {
                name: req(self.name.take(), "name")?,
                overlap: self.overlap.take().flatten(),
            },
            7 => Input::Backfill {
                name: req(self.name.take(), "name")?,
                from: req(self.from.take(), "from")?,
                to: req(self.to.take(), "to")?,
                overlap: self.overlap.take().flatten(),
            },
            9 => Input::Claim {
                queue: req(self.queue.take(), "queue")?,
                worker: req(self.worker.take(), "worker")?,
                max: req(self.max.take(), "max")?,
                lease_ms: self.lease_ms.take().flatten(),
            },
            10 => Input::Heartbeat {
                job: req(self.job.take(), "job")?,
                token: req(self.token.take(), "token")?,
                lease_ms: self.lease_ms.take().flatten(),
            },
            11 => Input::Complete {
                job: req(self.job.take(), "job")?,
                token: req(self.token.take(), "token")?,
            },
            12 => Input::Fail {
                job: req(self.job.take(), "job")?,
                token: req(self.token.take(), "token")?,
                error: req(self.error.take(), "error")?,
                retry_at: self.retry_at.take().flatten(),
            },
            13 => Input::CancelJob {
                job: req(self.job.take(), "job")?,
            },
            14 => Input::Redrive {
                queue: req(self.queue.take(), "queue")?,
                job: self.opt_job.take().flatten(),
            },
            15 => Input::PurgeDead {
                queue: req(self.queue.take(), "queue")?,
                before: self.before.take().flatten(),
            },
            16 => Input::FireSettled {
                fire: req(self.fire.take(), "fire")?,
                outcome: req(self.outcome.take(), "outcome")?,
            },
            18 => Input::AcquireLease {
                name: req(self.name.take(), "name")?,
                owner: req(self.owner.take(), "owner")?,
                ttl_ms: req(self.ttl_ms.take(), "ttlMs")?,
            },
            19 => Input::RenewLease {
                name: req(self.name.take(), "name")?,
                token: req(self.token.take(), "token")?,
                ttl_ms: req(self.ttl_ms.take(), "ttlMs")?,
            },
            _ => Input::ReleaseLease {
                name: req(self.name.take(), "name")?,
                token: req(self.token.take(), "token")?,
            },
        };
        self.out = Some(input);
        Ok(())
    }
}

/// The derive's variant-name visitor: the variant's index.
struct VariantKey {
    /// `VARIANTS` of the enum.
    names: &'static [&'static str],
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

/// The derive's `Input` visitor.
struct InputVisitor;

impl<'de> Visitor<'de> for InputVisitor {
    type Value = Input;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("enum Input")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Input, A::Error> {
        let (variant, access) = data.variant_seed(VariantKey {
            names: INPUT_VARIANTS,
        })?;
        match variant {
            0 => {
                access.unit_variant()?;
                Ok(Input::Advance)
            }
            1 => {
                let mut config = None;
                access.newtype_variant_seed(Seed(Slot::QueueConfig(&mut config)))?;
                Ok(Input::DeclareQueue(config.expect("read")))
            }
            2 => {
                let mut def = None;
                access.newtype_variant_seed(Seed(Slot::ScheduleDef(&mut def)))?;
                Ok(Input::UpsertSchedule(def.expect("read")))
            }
            8 => {
                let mut b = EnqueueRequestB::default();
                access.newtype_variant_seed(Seed(Slot::Rec(&mut b)))?;
                Ok(Input::Enqueue(b.out.expect("read")))
            }
            17 => {
                let mut b = LeadershipGrantB::default();
                access.newtype_variant_seed(Seed(Slot::OptRec(&mut b)))?;
                Ok(Input::Leadership(b.out))
            }
            v => {
                let mut b = InputArgs {
                    variant: v,
                    ..InputArgs::default()
                };
                let shape = b.shape();
                access.struct_variant(shape.fields, RecVisitor(&mut b))?;
                Ok(b.out.expect("read"))
            }
        }
    }
}

impl Decode for Input {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Input, D::Error> {
        d.deserialize_enum("Input", INPUT_VARIANTS, InputVisitor)
    }
}

/// Builder of [`EnqueueRequest`].
#[derive(Default)]
struct EnqueueRequestB {
    queue: Option<String>,
    payload: Option<Payload>,
    key: Option<Option<String>>,
    run_at: Option<Option<Timestamp>>,
    delay_ms: Option<Option<i64>>,
    priority: Option<i32>,
    max_attempts: Option<Option<u32>>,
    headers: Option<Headers>,
    out: Option<EnqueueRequest>,
}

static ENQUEUE_REQUEST: Shape = Shape {
    name: "EnqueueRequest",
    expecting: "struct EnqueueRequest",
    expecting_seq: "struct EnqueueRequest with 8 elements",
    fields: &[
        "queue",
        "payload",
        "key",
        "runAt",
        "delayMs",
        "priority",
        "maxAttempts",
        "headers",
    ],
    deny_unknown: true,
    seq_default: 0b1111_1110,
};

impl Record for EnqueueRequestB {
    fn shape(&self) -> &'static Shape {
        &ENQUEUE_REQUEST
    }

    fn slot(&mut self, i: usize) -> Slot<'_> {
        match i {
            0 => Slot::Str(&mut self.queue),
            1 => Slot::Payload(&mut self.payload),
            2 => Slot::OptStr(&mut self.key),
            3 => Slot::OptTs(&mut self.run_at),
            4 => Slot::OptI64(&mut self.delay_ms),
            5 => Slot::I32(&mut self.priority),
            6 => Slot::OptU32(&mut self.max_attempts),
            _ => Slot::Headers(&mut self.headers),
        }
    }

    fn finish(&mut self) -> Result<(), Problem> {
        self.out = Some(EnqueueRequest {
            queue: req(self.queue.take(), "queue")?,
            payload: self.payload.take().unwrap_or_default(),
            key: self.key.take().flatten(),
            run_at: self.run_at.take().flatten(),
            delay_ms: self.delay_ms.take().flatten(),
            priority: self.priority.take().unwrap_or_default(),
            max_attempts: self.max_attempts.take().flatten(),
            headers: self.headers.take().unwrap_or_default(),
        });
        Ok(())
    }
}

/// Builder of [`LeadershipGrant`].
#[derive(Default)]
pub(crate) struct LeadershipGrantB {
    epoch: Option<Epoch>,
    valid_until: Option<Timestamp>,
    pub(crate) out: Option<LeadershipGrant>,
}

static LEADERSHIP_GRANT: Shape = Shape {
    name: "LeadershipGrant",
    expecting: "struct LeadershipGrant",
    expecting_seq: "struct LeadershipGrant with 2 elements",
    fields: &["epoch", "validUntil"],
    deny_unknown: true,
    seq_default: 0,
};

impl Record for LeadershipGrantB {
    fn shape(&self) -> &'static Shape {
        &LEADERSHIP_GRANT
    }

    fn slot(&mut self, i: usize) -> Slot<'_> {
        match i {
            0 => Slot::Epoch(&mut self.epoch),
            _ => Slot::Ts(&mut self.valid_until),
        }
    }

    fn finish(&mut self) -> Result<(), Problem> {
        self.out = Some(LeadershipGrant {
            epoch: req(self.epoch.take(), "epoch")?,
            valid_until: req(self.valid_until.take(), "validUntil")?,
        });
        Ok(())
    }
}

/// Builder of [`JournalEntry`].
#[derive(Default)]
struct JournalEntryB {
    now: Option<Timestamp>,
    input: Option<Input>,
    out: Option<JournalEntry>,
}

static JOURNAL_ENTRY: Shape = Shape {
    name: "JournalEntry",
    expecting: "struct JournalEntry",
    expecting_seq: "struct JournalEntry with 2 elements",
    fields: &["now", "input"],
    deny_unknown: true,
    seq_default: 0,
};

impl Record for JournalEntryB {
    fn shape(&self) -> &'static Shape {
        &JOURNAL_ENTRY
    }

    fn slot(&mut self, i: usize) -> Slot<'_> {
        match i {
            0 => Slot::Ts(&mut self.now),
            _ => Slot::Input(&mut self.input),
        }
    }

    fn finish(&mut self) -> Result<(), Problem> {
        self.out = Some(JournalEntry {
            now: req(self.now.take(), "now")?,
            input: req(self.input.take(), "input")?,
        });
        Ok(())
    }
}

impl Decode for JournalEntry {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<JournalEntry, D::Error> {
        let mut b = JournalEntryB::default();
        record(d, &mut b)?;
        Ok(b.out.expect("read"))
    }
}

impl Decode for LeadershipGrant {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<LeadershipGrant, D::Error> {
        let mut b = LeadershipGrantB::default();
        record(d, &mut b)?;
        Ok(b.out.expect("built by finish"))
    }
}

// ---------------------------------------------------------------------------
// Definitions and configs (inputs and snapshots)

record_decoder! {
    ScheduleDefB => ScheduleDef, "ScheduleDef", "12 elements", deny_unknown: true;
    name: String, Str, "name", req;
    spec: String, Str, "spec", req;
    tz: Option<String>, OptStr, "tz", def;
    dst: DstPolicy, Dst, "dst", def;
    target: Target, Target, "target", req;
    jitter_ms: i64, I64, "jitterMs", def;
    start_at: Option<Timestamp>, OptTs, "startAt", def;
    end_at: Option<Timestamp>, OptTs, "endAt", def;
    max_fires: Option<u64>, OptU64, "maxFires", def;
    paused: bool, Bool, "paused", def;
    overlap: Overlap, Overlap, "overlap", def;
    catchup: Catchup, Catchup, "catchup", def;
}

record_decoder! {
    DstPolicyB => DstPolicy, "DstPolicy", "2 elements", deny_unknown: true;
    gap: Option<GapPolicy>, OptGap, "gap", def;
    fold: Option<FoldPolicy>, OptFold, "fold", def;
}

record_decoder! {
    TargetB => Target, "Target", "5 elements", deny_unknown: true;
    queue: String, Str, "queue", req;
    payload: Payload, Payload, "payload", def;
    priority: i32, I32, "priority", def;
    max_attempts: Option<u32>, OptU32, "maxAttempts", def;
    headers: Headers, Headers, "headers", def;
}

record_decoder! {
    CatchupB => Catchup, "Catchup", "2 elements", deny_unknown: true;
    window_ms: i64, I64, "windowMs", or(Catchup::default().window_ms);
    max: u32, U32, "max", or(Catchup::default().max);
}

record_decoder! {
    QueueConfigB => QueueConfig, "QueueConfig", "8 elements", deny_unknown: true;
    name: String, Str, "name", req;
    mode: QueueMode, Mode, "mode", def;
    lease_ms: i64, I64, "leaseMs", or(QueueConfig::new("").lease_ms);
    max_attempts: u32, U32, "maxAttempts", or(QueueConfig::new("").max_attempts);
    backoff: Backoff, Backoff, "backoff", def;
    dead_letter: bool, Bool, "deadLetter", or(true);
    retention: Retention, Retention, "retention", def;
    dedup_window_ms: i64, I64, "dedupWindowMs", or(QueueConfig::new("").dedup_window_ms);
}

record_decoder! {
    BackoffB => Backoff, "Backoff", "2 elements", deny_unknown: true;
    base_ms: i64, I64, "baseMs", or(Backoff::default().base_ms);
    cap_ms: i64, I64, "capMs", or(Backoff::default().cap_ms);
}

record_decoder! {
    RetentionB => Retention, "Retention", "2 elements", deny_unknown: true;
    completed_max: u32, U32, "completedMax", or(Retention::default().completed_max);
    completed_ms: i64, I64, "completedMs", or(Retention::default().completed_ms);
}

record_decoder! {
    EngineConfigB => EngineConfig, "EngineConfig", "5 elements", deny_unknown: true;
    seed: u64, U64, "seed", or(EngineConfig::default().seed);
    standalone: bool, Bool, "standalone", or(EngineConfig::default().standalone);
    min_interval_ms: i64, I64, "minIntervalMs", or(EngineConfig::default().min_interval_ms);
    horizon_years: u32, U32, "horizonYears", or(EngineConfig::default().horizon_years);
    limits: Limits, Limits, "limits", or(EngineConfig::default().limits);
}

record_decoder! {
    LimitsB => Limits, "Limits", "16 elements", deny_unknown: true;
    payload_bytes: usize, Usize, "payloadBytes", or(Limits::default().payload_bytes);
    name_chars: usize, Usize, "nameChars", or(Limits::default().name_chars);
    schedules: usize, Usize, "schedules", or(Limits::default().schedules);
    queues: usize, Usize, "queues", or(Limits::default().queues);
    claim_batch: u32, U32, "claimBatch", or(Limits::default().claim_batch);
    catchup_fires: u32, U32, "catchupFires", or(Limits::default().catchup_fires);
    backfill_fires: u32, U32, "backfillFires", or(Limits::default().backfill_fires);
    fires_per_advance: u32, U32, "firesPerAdvance", or(Limits::default().fires_per_advance);
    live_jobs: usize, Usize, "liveJobs", or(Limits::default().live_jobs);
    dedup_keys: usize, Usize, "dedupKeys", or(Limits::default().dedup_keys);
    dead_letters_per_queue: usize, Usize, "deadLettersPerQueue", or(Limits::default().dead_letters_per_queue);
    completed_per_queue: usize, Usize, "completedPerQueue", or(Limits::default().completed_per_queue);
    pending_commands: usize, Usize, "pendingCommands", or(Limits::default().pending_commands);
    text_bytes: usize, Usize, "textBytes", or(Limits::default().text_bytes);
    headers: usize, Usize, "headers", or(Limits::default().headers);
    pause_changes: usize, Usize, "pauseChanges", or(Limits::default().pause_changes);
}

// ---------------------------------------------------------------------------
// Snapshot internals

record_decoder! {
    QueueTotalsB => QueueTotals, "QueueTotals", "7 elements", deny_unknown: false;
    enqueued: u64, U64, "enqueued", req;
    completed: u64, U64, "completed", req;
    retried: u64, U64, "retried", req;
    dead: u64, U64, "dead", req;
    dropped: u64, U64, "dropped", req;
    expired: u64, U64, "expired", req;
    cancelled: u64, U64, "cancelled", req;
}

record_decoder! {
    CountersB => Counters, "Counters", "5 elements", deny_unknown: true;
    fires: u64, U64, "fires", req;
    grid_fires: u64, U64, "gridFires", req;
    skipped: u64, U64, "skipped", req;
    processed: u64, U64, "processed", req;
    seq: u64, U64, "seq", req;
}

record_decoder! {
    InFlightB => InFlight, "InFlight", "3 elements", deny_unknown: true;
    fire: FireId, FireId, "fire", req;
    job: Option<JobId>, OptJobId, "job", def;
    deadline: Option<Timestamp>, OptTs, "deadline", def;
}

record_decoder! {
    PauseChangeB => PauseChange, "PauseChange", "2 elements", deny_unknown: true;
    at: Timestamp, Ts, "at", req;
    paused: bool, Bool, "paused", req;
}

record_decoder! {
    FireTargetB => FireTarget, "FireTarget", "6 elements", deny_unknown: true;
    version: u64, U64, "version", req;
    queue: Arc<str>, ArcStr, "queue", req;
    payload: Payload, Payload, "payload", req;
    priority: i32, I32, "priority", def;
    max_attempts: Option<u32>, OptU32, "maxAttempts", def;
    headers: Headers, Headers, "headers", def;
}

record_decoder! {
    BufferedB => Buffered, "Buffered", "3 elements", deny_unknown: true;
    fire: FireId, FireId, "fire", req;
    due_at: Timestamp, Ts, "dueAt", req;
    target: FireTarget, FireTarget, "target", req;
}

record_decoder! {
    JobB => Job, "Job", "14 elements", deny_unknown: true;
    queue: String, Str, "queue", req;
    state: JobState, JobState, "state", req;
    payload: Payload, Payload, "payload", req;
    headers: Headers, Headers, "headers", def;
    priority: i32, I32, "priority", def;
    key: Option<String>, OptStr, "key", def;
    fire: Option<FireId>, OptFireId, "fire", def;
    attempt: u32, U32, "attempt", def;
    max_attempts: Option<u32>, OptU32, "maxAttempts", def;
    run_at: Timestamp, Ts, "runAt", req;
    lease: Option<JobLease>, OptLease, "lease", def;
    last_error: Option<String>, OptStr, "lastError", def;
    finished_at: Option<Timestamp>, OptTs, "finishedAt", def;
    retain_until: Option<Timestamp>, OptTs, "retainUntil", def;
}

record_decoder! {
    JobLeaseB => JobLease, "JobLease", "3 elements", deny_unknown: true;
    token: LeaseToken, Token, "token", req;
    deadline: Timestamp, Ts, "deadline", req;
    worker: String, Str, "worker", req;
}

record_decoder! {
    DedupEntryB => DedupEntry, "DedupEntry", "2 elements", deny_unknown: true;
    job: JobId, JobId, "job", req;
    expires_at: Option<Timestamp>, OptTs, "expiresAt", def;
}

record_decoder! {
    QueueStateB => QueueState, "QueueState", "4 elements", deny_unknown: true;
    config: QueueConfig, QueueConfig, "config", req;
    totals: QueueTotals, Totals, "totals", req;
    dedup: BTreeMap<String, DedupEntry>, Dedup, "dedup", def;
    fire_keys: BTreeMap<String, DedupEntry>, Dedup, "fireKeys", def;
    ; skip { idx: Default::default() }
}

/// The serialized fields of [`Queues`] (`QueuesData` in `queue::view`).
pub(crate) struct QueuesParts {
    last_job: u64,
    last_token: u64,
    queues: BTreeMap<String, QueueState>,
    jobs: BTreeMap<JobId, Job>,
    finished: Vec<(JobId, Option<FireId>)>,
}

record_decoder! {
    QueuesPartsB => QueuesParts, "QueuesData", "5 elements", deny_unknown: true;
    last_job: u64, U64, "lastJob", req;
    last_token: u64, U64, "lastToken", req;
    queues: BTreeMap<String, QueueState>, QueueStates, "queues", req;
    jobs: BTreeMap<JobId, Job>, Jobs, "jobs", req;
    finished: Vec<(JobId, Option<FireId>)>, Finished, "finished", def;
}

record_decoder! {
    HeldB => Held, "Held", "3 elements", deny_unknown: true;
    owner: String, Str, "owner", req;
    token: LeaseToken, Token, "token", req;
    expires_at: Timestamp, Ts, "expiresAt", req;
}

/// The serialized fields of [`Leases`] (`LeasesData` in `lease`).
pub(crate) struct LeasesParts {
    last_token: u64,
    held: BTreeMap<String, Held>,
}

record_decoder! {
    LeasesPartsB => LeasesParts, "LeasesData", "2 elements", deny_unknown: true;
    last_token: u64, U64, "lastToken", req;
    held: BTreeMap<String, Held>, Held, "held", def;
}

#[cfg(test)]
mod tests {
    //! The derived `Deserialize` impls are the oracle: for every document
    //! here, and every truncation and many mutations of it, the decoder
    //! must give the same value or the same error message (position
    //! included).
    use super::*;
    use serde::Serialize;
    use serde::de::DeserializeOwned;

    fn same<T: Decode + DeserializeOwned + PartialEq + fmt::Debug>(text: &str) {
        let derived = serde_json::from_str::<T>(text).map_err(|e| e.to_string());
        let decoded = from_str::<T>(text).map_err(|e| e.to_string());
        assert_eq!(decoded, derived, "on {text:?}");
    }

    /// Replacements for each scalar token: wrong types, floats where
    /// integers belong, out-of-range and negative numbers, bad syntax.
    const ALTS: &[&str] = &[
        "null",
        "true",
        "1.5",
        "-1",
        "0",
        "4294967296",
        "18446744073709551616",
        "1e3",
        "\"x\"",
        "\"zz\"",
        "\"name\"",
        "\"claim\"",
        "[]",
        "{}",
        "[1]",
        "{\"a\":1}",
        "\"\\u00e9\\n\"",
        "\"\\q\"",
        "{\"allow\":null}",
        "{\"claimed\":1}",
        "[\"local\"]",
        "nul",
        "",
    ];

    /// Byte ranges of the scalar tokens (strings, numbers, literals).
    fn tokens(text: &str) -> Vec<(usize, usize)> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let start = i;
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i = (i + 1).min(b.len());
                }
                b'-' | b'0'..=b'9' => {
                    while i < b.len()
                        && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    {
                        i += 1;
                    }
                }
                b'a'..=b'z' => {
                    while i < b.len() && b[i].is_ascii_alphabetic() {
                        i += 1;
                    }
                }
                _ => {
                    i += 1;
                    continue;
                }
            }
            out.push((start, i));
        }
        out
    }

    /// `text` and its variants: every prefix, every one-byte deletion, a
    /// newline at every position (so positions span lines), and every
    /// scalar token replaced by each of [`ALTS`].
    fn variants(text: &str) -> Vec<String> {
        let mut out = vec![text.to_owned()];
        for i in 0..text.len() {
            if !text.is_char_boundary(i) {
                continue;
            }
            out.push(text[..i].to_owned());
            let next = (i + 1..=text.len()).find(|&j| text.is_char_boundary(j));
            if let Some(j) = next {
                out.push(format!("{}{}", &text[..i], &text[j..]));
            }
            out.push(format!("{}\n{}", &text[..i], &text[i..]));
        }
        for (s, e) in tokens(text) {
            for alt in ALTS {
                out.push(format!("{}{alt}{}", &text[..s], &text[e..]));
            }
        }
        out
    }

    fn all_same<T: Decode + DeserializeOwned + PartialEq + fmt::Debug>(docs: &[&str]) {
        for doc in docs {
            for v in variants(doc) {
                same::<T>(&v);
            }
        }
    }

    /// Every variant of `Input`, in map form with all fields, with the
    /// required ones only, in sequence form, plus shapes the derive
    /// accepts or refuses in its own ways.
    const INPUTS: &[&str] = &[
        r#""advance""#,
        r#"{"advance":null}"#,
        r#"{"declareQueue":{"name":"q","mode":"external","leaseMs":5,"maxAttempts":2,"backoff":{"baseMs":1,"capMs":2},"deadLetter":false,"retention":{"completedMax":1,"completedMs":2},"dedupWindowMs":3}}"#,
        r#"{"upsertSchedule":{"name":"s","spec":"@every 1s","tz":"UTC","dst":{"gap":"skip","fold":"last"},"target":{"queue":"q","payload":{"a":[1,2.50]},"priority":-3,"maxAttempts":4,"headers":{"h":"v"}},"jitterMs":5,"startAt":1,"endAt":2,"maxFires":3,"paused":true,"overlap":"buffer_one","catchup":{"windowMs":1,"max":2}}}"#,
        r#"{"removeSchedule":{"name":"s"}}"#,
        r#"{"removeSchedule":["s"]}"#,
        r#"{"pauseSchedule":{"name":"s","note":"why"}}"#,
        r#"{"pauseSchedule":{"note":null,"name":"s"}}"#,
        r#"{"pauseSchedule":["s"]}"#,
        r#"{"pauseSchedule":["s","n"]}"#,
        r#"{"resumeSchedule":{"name":"s","other":[1,{"x":2}]}}"#,
        r#"{"triggerSchedule":{"name":"s","overlap":"cancel_previous"}}"#,
        r#"{"triggerSchedule":["s"]}"#,
        r#"{"backfill":{"name":"s","from":1,"to":2,"overlap":"allow"}}"#,
        r#"{"backfill":["s",1,2]}"#,
        r#"{"backfill":["s",1]}"#,
        r#"{"enqueue":{"queue":"q","payload":{"n":1},"key":"k","runAt":5,"delayMs":6,"priority":7,"maxAttempts":8,"headers":{"a":"b","c":"d"}}}"#,
        r#"{"enqueue":{"queue":"q"}}"#,
        r#"{"enqueue":["q",{"n":1},"k"]}"#,
        r#"{"enqueue":["q",{"n":1},"k",5,6,7,8,{},9]}"#,
        r#"{"claim":{"queue":"q","worker":"w","max":10,"leaseMs":500}}"#,
        r#"{"claim":{"queue":"q","worker":"w","max":10}}"#,
        r#"{"claim":["q","w",10]}"#,
        r#"{"claim":["q","w"]}"#,
        r#"{"heartbeat":{"job":1,"token":2,"leaseMs":3}}"#,
        r#"{"heartbeat":[1,2]}"#,
        r#"{"complete":{"job":1,"token":2}}"#,
        r#"{"complete":{"job":1,"job":1,"token":2}}"#,
        r#"{"complete":[1]}"#,
        r#"{"fail":{"job":1,"token":2,"error":"boom","retryAt":9}}"#,
        r#"{"fail":{"job":1,"token":2}}"#,
        r#"{"cancelJob":{"job":1}}"#,
        r#"{"cancelJob":{}}"#,
        r#"{"redrive":{"queue":"q","job":3}}"#,
        r#"{"redrive":{"queue":"q"}}"#,
        r#"{"purgeDead":{"queue":"q","before":4}}"#,
        r#"{"purgeDead":["q",null]}"#,
        r#"{"fireSettled":{"fire":"s@1000#m2","outcome":"succeeded"}}"#,
        r#"{"fireSettled":{"fire":"s","outcome":"failed"}}"#,
        r#"{"leadership":{"epoch":3,"validUntil":99}}"#,
        r#"{"leadership":null}"#,
        r#"{"leadership":[3,99]}"#,
        r#"{"acquireLease":{"name":"l","owner":"o","ttlMs":5}}"#,
        r#"{"renewLease":{"name":"l","token":1,"ttlMs":5}}"#,
        r#"{"releaseLease":{"name":"l","token":1}}"#,
        r#"{"releaseLease":{"name":"l","token":1},"advance":null}"#,
        r#"{"nope":{}}"#,
        r#"{"claim":{"queue":"q","worker":"w","max":10} }  "#,
        "\n {\n\"claim\" :\n{ \"queue\" : \"q\" ,\"worker\":\"w\",\n\"max\":1}\n}\n",
    ];

    #[test]
    fn inputs_decode_as_derived() {
        all_same::<Input>(INPUTS);
    }

    #[test]
    fn journal_entries_decode_as_derived() {
        let entries: Vec<String> = INPUTS
            .iter()
            .map(|i| format!(r#"{{"now":1000,"input":{i}}}"#))
            .chain([
                r#"{"input":"advance","now":5}"#.to_owned(),
                r#"[5,"advance"]"#.to_owned(),
                r#"[5]"#.to_owned(),
                r#"{"now":5,"input":"advance","x":1}"#.to_owned(),
                r#"{"now":-5,"input":"advance"}"#.to_owned(),
            ])
            .collect();
        let docs: Vec<&str> = entries.iter().map(String::as_str).collect();
        all_same::<JournalEntry>(&docs);
    }

    #[test]
    fn golden_journal_lines_decode_as_derived() {
        for file in [
            include_str!("../../../tests/golden/fencing.jsonl"),
            include_str!("../../../tests/golden/retry_dead_letter.jsonl"),
            include_str!("../../../tests/golden/leadership_loss.jsonl"),
            include_str!("../../../tests/golden/overlap_buffer_one.jsonl"),
        ] {
            for line in file.lines().filter(|l| l.contains("\"input\"")) {
                // The trace lines carry reply and commands too: keep the
                // entry's two fields.
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let entry = serde_json::json!({"now": v["now"], "input": v["input"]});
                let text = serde_json::to_string(&entry).unwrap();
                same::<JournalEntry>(&text);
                for t in tokens(&text) {
                    for alt in ALTS {
                        same::<JournalEntry>(&format!("{}{alt}{}", &text[..t.0], &text[t.1..]));
                    }
                }
            }
        }
    }

    /// Snapshots of engines driven through the golden traces (jobs in
    /// every state, leases, dedup and fire keys, leadership grants, buffered
    /// and in-flight fires, pause logs), as JSON.
    fn golden_snapshots() -> Vec<String> {
        use crate::engine::Engine;
        let mut out = Vec::new();
        for file in [
            include_str!("../../../tests/golden/fencing.jsonl"),
            include_str!("../../../tests/golden/retry_dead_letter.jsonl"),
            include_str!("../../../tests/golden/leadership_loss.jsonl"),
            include_str!("../../../tests/golden/overlap_buffer_one.jsonl"),
            include_str!("../../../tests/golden/overlap_cancel_previous.jsonl"),
            include_str!("../../../tests/golden/dedup_keys.jsonl"),
            include_str!("../../../tests/golden/pause_resume.jsonl"),
            include_str!("../../../tests/golden/dst_new_york.jsonl"),
        ] {
            let mut lines = file.lines();
            let head: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
            let config = serde_json::from_value(head["config"].clone()).unwrap_or_default();
            let mut engine = Engine::new(config);
            let entries: Vec<serde_json::Value> =
                lines.map(|l| serde_json::from_str(l).unwrap()).collect();
            for (n, v) in entries.iter().enumerate() {
                let now = serde_json::from_value(v["now"].clone()).unwrap();
                let input = serde_json::from_value(v["input"].clone()).unwrap();
                let _ = engine.handle(now, input);
                while engine.poll_command().is_some() {}
                let snap = engine.snapshot().to_json();
                if n % 4 == 3 && !out.contains(&snap) {
                    out.push(snap);
                }
            }
        }
        out
    }

    #[test]
    fn snapshots_decode_as_derived() {
        use crate::engine::snapshot::Snapshot;
        let snaps = golden_snapshots();
        assert!(snaps.iter().any(|s| s.contains("\"lease\":{")));
        assert!(snaps.iter().any(|s| s.contains("\"held\":{")));
        assert!(snaps.iter().any(|s| s.contains("\"grant\":{")));
        assert!(snaps.iter().any(|s| s.contains("\"buffered\":{")));
        assert!(snaps.iter().any(|s| s.contains("\"dedup\":{")));
        let mut by_size: Vec<&String> = snaps.iter().collect();
        by_size.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for (n, snap) in by_size.into_iter().enumerate() {
            if n < 2 {
                // Every truncation, deletion and newline too.
                for v in variants(snap) {
                    same::<Snapshot>(&v);
                }
            } else {
                same::<Snapshot>(snap);
                for (s, e) in tokens(snap) {
                    for alt in ALTS {
                        same::<Snapshot>(&format!("{}{alt}{}", &snap[..s], &snap[e..]));
                    }
                }
            }
        }
    }

    #[test]
    fn configs_decode_as_derived() {
        all_same::<EngineConfig>(&[
            "{}",
            r#"{"seed":1,"standalone":false,"minIntervalMs":5,"horizonYears":2,"limits":{"payloadBytes":1,"nameChars":2,"schedules":3,"queues":4,"claimBatch":5,"catchupFires":6,"backfillFires":7,"firesPerAdvance":8,"liveJobs":9,"dedupKeys":10,"deadLettersPerQueue":11,"completedPerQueue":12,"pendingCommands":13,"textBytes":14,"headers":15,"pauseChanges":16}}"#,
            r#"{"limits":{"queues":4}}"#,
            r#"[1,true]"#,
            r#"[1,true,5,2,[1,2,3]]"#,
            r#"{"seed":1,"seed":2}"#,
            r#"{"limits":{}, "x":1}"#,
        ]);
    }

    /// A JSON tree that keeps key order and scalar text, for structural
    /// mutations (serde_json's `Value` sorts keys).
    #[derive(Clone)]
    enum J {
        Obj(Vec<(String, J)>),
        Arr(Vec<J>),
        Raw(String),
    }

    fn parse_j(text: &str) -> J {
        fn ws(b: &[u8], i: &mut usize) {
            while *i < b.len() && b[*i].is_ascii_whitespace() {
                *i += 1;
            }
        }
        fn value(t: &str, i: &mut usize) -> J {
            let b = t.as_bytes();
            ws(b, i);
            match b[*i] {
                b'{' => {
                    *i += 1;
                    let mut m = Vec::new();
                    loop {
                        ws(b, i);
                        if b[*i] == b'}' {
                            *i += 1;
                            return J::Obj(m);
                        }
                        let J::Raw(k) = value(t, i) else {
                            panic!("key")
                        };
                        ws(b, i);
                        *i += 1; // ':'
                        let v = value(t, i);
                        m.push((k, v));
                        ws(b, i);
                        if b[*i] == b',' {
                            *i += 1;
                        }
                    }
                }
                b'[' => {
                    *i += 1;
                    let mut a = Vec::new();
                    loop {
                        ws(b, i);
                        if b[*i] == b']' {
                            *i += 1;
                            return J::Arr(a);
                        }
                        a.push(value(t, i));
                        ws(b, i);
                        if b[*i] == b',' {
                            *i += 1;
                        }
                    }
                }
                _ => {
                    let (s, e) = tokens(&t[*i..])[0];
                    let raw = t[*i + s..*i + e].to_owned();
                    *i += e;
                    J::Raw(raw)
                }
            }
        }
        value(text, &mut 0)
    }

    fn show(j: &J) -> String {
        match j {
            J::Raw(r) => r.clone(),
            J::Arr(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(",")),
            J::Obj(m) => {
                let fields: Vec<String> =
                    m.iter().map(|(k, v)| format!("{k}:{}", show(v))).collect();
                format!("{{{}}}", fields.join(","))
            }
        }
    }

    /// One structural change at a time, anywhere in the tree: a field
    /// removed, duplicated or set to null; an object turned into the
    /// sequence of its values (the derive's sequence form, in field
    /// order); an array's first element dropped.
    fn structural(j: &J) -> Vec<J> {
        let mut out = Vec::new();
        match j {
            J::Obj(m) => {
                for i in 0..m.len() {
                    let mut removed = m.clone();
                    removed.remove(i);
                    out.push(J::Obj(removed));
                    let mut dup = m.clone();
                    dup.push(m[i].clone());
                    out.push(J::Obj(dup));
                    let mut null = m.clone();
                    null[i].1 = J::Raw("null".into());
                    out.push(J::Obj(null));
                    for v in structural(&m[i].1) {
                        let mut changed = m.clone();
                        changed[i].1 = v;
                        out.push(J::Obj(changed));
                    }
                }
                out.push(J::Arr(m.iter().map(|(_, v)| v.clone()).collect()));
            }
            J::Arr(a) => {
                if !a.is_empty() {
                    out.push(J::Arr(a[1..].to_vec()));
                }
                for i in 0..a.len() {
                    for v in structural(&a[i]) {
                        let mut changed = a.clone();
                        changed[i] = v;
                        out.push(J::Arr(changed));
                    }
                }
            }
            J::Raw(_) => {}
        }
        out
    }

    fn structural_same<T: Decode + DeserializeOwned + PartialEq + fmt::Debug>(doc: &str) {
        let tree = parse_j(doc);
        let parsed = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
        assert_eq!(parsed(&show(&tree)), parsed(doc));
        for v in structural(&tree) {
            same::<T>(&show(&v));
        }
    }

    #[test]
    fn structural_changes_decode_as_derived() {
        use crate::engine::snapshot::Snapshot;
        for snap in golden_snapshots() {
            structural_same::<Snapshot>(&snap);
        }
        for input in INPUTS {
            structural_same::<Input>(input);
        }
    }

    /// Adding a variant to a decoded enum must fail to compile here, until
    /// the decoder's tables and these tests have it: the exhaustive matches
    /// below list every variant, and each one must round-trip through the
    /// decoder as serde writes it.
    #[test]
    fn tables_cover_every_variant() {
        fn input(i: &Input) -> &'static str {
            match i {
                Input::Advance => "advance",
                Input::DeclareQueue(_) => "declareQueue",
                Input::UpsertSchedule(_) => "upsertSchedule",
                Input::RemoveSchedule { .. } => "removeSchedule",
                Input::PauseSchedule { .. } => "pauseSchedule",
                Input::ResumeSchedule { .. } => "resumeSchedule",
                Input::TriggerSchedule { .. } => "triggerSchedule",
                Input::Backfill { .. } => "backfill",
                Input::Enqueue(_) => "enqueue",
                Input::Claim { .. } => "claim",
                Input::Heartbeat { .. } => "heartbeat",
                Input::Complete { .. } => "complete",
                Input::Fail { .. } => "fail",
                Input::CancelJob { .. } => "cancelJob",
                Input::Redrive { .. } => "redrive",
                Input::PurgeDead { .. } => "purgeDead",
                Input::FireSettled { .. } => "fireSettled",
                Input::Leadership(_) => "leadership",
                Input::AcquireLease { .. } => "acquireLease",
                Input::RenewLease { .. } => "renewLease",
                Input::ReleaseLease { .. } => "releaseLease",
            }
        }
        let mut seen = Vec::new();
        for text in INPUTS {
            if let Ok(i) = serde_json::from_str::<Input>(text) {
                assert_eq!(
                    from_str::<Input>(&serde_json::to_string(&i).unwrap()).unwrap(),
                    i
                );
                seen.push(input(&i));
            }
        }
        for name in INPUT_VARIANTS {
            assert!(seen.contains(name), "no sample of {name} in INPUTS");
        }

        fn round_trip<T: Decode + Serialize + DeserializeOwned + PartialEq + fmt::Debug>(
            all: &[T],
        ) {
            for v in all {
                let text = serde_json::to_string(v).unwrap();
                assert_eq!(from_str::<T>(&text).unwrap(), *v, "{text}");
            }
        }
        macro_rules! all {
            ($ty:ident: $($variant:ident),+) => {{
                let all = [$($ty::$variant),+];
                for v in all {
                    match v {
                        $($ty::$variant)|+ => {}
                    }
                }
                round_trip(&all);
            }};
        }
        all!(Overlap: Skip, Allow, BufferOne, CancelPrevious);
        all!(QueueMode: Local, External);
        all!(ScheduleStatus: Active, Paused, Completed);
        all!(JobState: Scheduled, Available, Claimed, Completed, Dead, Dropped, Cancelled);
        all!(FireOutcome: Succeeded, Failed);
        all!(GapPolicy: Shift, Skip);
        all!(FoldPolicy: First, Last, Both);
    }
}
