//! `Input` and the journal: the enum's variants through one builder of
//! their arguments, `EnqueueRequest`, `LeadershipGrant` and
//! `JournalEntry`.

use super::enums::VariantKey;
use super::records::{QueueConfigB, ScheduleDefB};
use super::{
    Decode, Field, Nested, Problem, RecVisitor, Record, Seed, Shape, Slot, record_decoder, req,
};
use crate::time::Timestamp;
use crate::wire::ids::{Epoch, FireId, JobId, LeaseToken};
use crate::wire::input::{EnqueueRequest, FireOutcome, Input, JournalEntry, LeadershipGrant};
use crate::wire::payload::{Headers, Payload};
use crate::wire::run::JobEnd;
use crate::wire::schedule_def::{Origin, Overlap};
use serde::de::{Deserializer, EnumAccess, VariantAccess, Visitor};
use std::fmt;

pub(super) const INPUT_VARIANTS: &[&str] = &[
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
    "recover",
    "stop",
    "enqueueOutbox",
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
    job_end: <Option<JobEnd> as Field>::Store,
    owner: Option<String>,
    ttl_ms: Option<i64>,
    origin: Option<Origin>,
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
    JobEnd,
    Owner,
    TtlMs,
    Origin,
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
static ARGS: [Option<ArgShape>; 24] = [
    None,
    None,
    None,
    Some(variant!(
        "RemoveSchedule",
        "2 elements",
        ["name", "origin"],
        [Name, Origin],
        0b10
    )),
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
        "3 elements",
        ["fire", "outcome", "job"],
        [Fire, Outcome, JobEnd],
        0b100
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
    None,
    None,
    None,
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
            Arg::JobEnd => <Option<JobEnd> as Field>::slot(&mut self.job_end),
            Arg::Owner => Slot::Str(&mut self.owner),
            Arg::TtlMs => Slot::I64(&mut self.ttl_ms),
            Arg::Origin => Slot::Origin(&mut self.origin),
        }
    }

    fn finish(&mut self) -> Result<(), Problem> {
        // Fields in declaration order within each variant: the first
        // missing one is the one reported.
        let input = match self.variant {
            3 => Input::RemoveSchedule {
                name: req(self.name.take(), "name")?,
                origin: self.origin.take().unwrap_or_default(),
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
                job: <Option<JobEnd> as Field>::take(&mut self.job_end).flatten(),
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
                let mut b = QueueConfigB::default();
                access.newtype_variant_seed(Seed(Slot::Rec(&mut b)))?;
                Ok(Input::DeclareQueue(Nested::built(&mut b).expect("read")))
            }
            2 => {
                let mut b = ScheduleDefB::default();
                access.newtype_variant_seed(Seed(Slot::Rec(&mut b)))?;
                Ok(Input::UpsertSchedule(Nested::built(&mut b).expect("read")))
            }
            8 => {
                let mut b = EnqueueRequestB::default();
                access.newtype_variant_seed(Seed(Slot::Rec(&mut b)))?;
                Ok(Input::Enqueue(Nested::built(&mut b).expect("read")))
            }
            17 => {
                let mut b = LeadershipGrantB::default();
                access.newtype_variant_seed(Seed(Slot::OptRec(&mut b)))?;
                Ok(Input::Leadership(Nested::built(&mut b)))
            }
            21 => {
                access.unit_variant()?;
                Ok(Input::Recover)
            }
            22 => {
                access.unit_variant()?;
                Ok(Input::Stop)
            }
            23 => {
                let mut b = EnqueueRequestB::default();
                access.newtype_variant_seed(Seed(Slot::Rec(&mut b)))?;
                Ok(Input::EnqueueOutbox(Nested::built(&mut b).expect("read")))
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

record_decoder! {
    EnqueueRequestB => EnqueueRequest, "EnqueueRequest", "8 elements", deny_unknown: true;
    queue: String, "queue", req;
    payload: Payload, "payload", def;
    key: Option<String>, "key", def;
    run_at: Option<Timestamp>, "runAt", def;
    delay_ms: Option<i64>, "delayMs", def;
    priority: i32, "priority", def;
    max_attempts: Option<u32>, "maxAttempts", def;
    headers: Headers, "headers", def;
}

record_decoder! {
    LeadershipGrantB => LeadershipGrant, "LeadershipGrant", "2 elements", deny_unknown: true;
    epoch: Epoch, "epoch", req;
    valid_until: Timestamp, "validUntil", req;
}

record_decoder! {
    JournalEntryB => JournalEntry, "JournalEntry", "2 elements", deny_unknown: true;
    now: Timestamp, "now", req;
    input: Input, "input", req;
}
