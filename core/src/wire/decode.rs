//! A compact JSON decoder for the wire types, for builds where code size
//! matters more than decoding speed (the npm package's `.wasm`; feature
//! `compact-decode`).
//!
//! Why: serde's derive emits, per struct, a field-name visitor, a map
//! visitor and a sequence visitor, each reading every field through its own
//! monomorphic copy of the JSON parser's entry points. Across the ~40 wire
//! and snapshot types that was ~140 KB of the `.wasm` (BENCHMARKS.md,
//! "Size"). Here one driver ([`RecVisitor`]) reads every struct: a type
//! only describes its fields ([`Shape`]), says where each value goes
//! ([`Record::slot`]) and assembles itself ([`Record::finish`]); the values
//! themselves are read by the same `Deserialize` impls the derive would
//! call, all in one place ([`Seed`]).
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
// Without the feature the module is built for its tests only.
#![cfg_attr(not(feature = "compact-decode"), allow(unreachable_pub))]

use crate::time::Timestamp;
use crate::wire::ids::{Epoch, FireId, JobId, LeaseToken};
use crate::wire::input::{EnqueueRequest, FireOutcome, Input, JournalEntry, LeadershipGrant};
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::QueueConfig;
use crate::wire::schedule_def::{Overlap, ScheduleDef};
use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, Expected, IgnoredAny, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use std::fmt;

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
            Slot::OptOverlap(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::Outcome(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::ScheduleDef(o) => *o = Some(Deserialize::deserialize(d)?),
            Slot::QueueConfig(o) => *o = Some(Deserialize::deserialize(d)?),
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

#[cfg(test)]
mod tests {
    //! The derived `Deserialize` impls are the oracle: for every document
    //! here, and every truncation and many mutations of it, the decoder
    //! must give the same value or the same error message (position
    //! included).
    use super::*;
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
}
