//! chime-core: a deterministic, sans-I/O scheduling and job-queue engine.
//!
//! The core never reads a clock, spawns a thread or touches the network: the
//! host hands it `now` with every input and drains the commands it produces.
//! That makes one engine usable from wasm, from a tokio server and from
//! deterministic tests, where a journal of inputs replays byte for byte.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod advance;
mod catchup;
pub mod command;
pub mod config;
mod det;
mod engine;
pub mod error;
mod fire;
pub mod ids;
pub mod input;
pub mod job;
pub mod journal;
mod leadership;
pub(crate) mod lease;
pub mod name;
pub mod payload;
pub(crate) mod queue;
pub mod queue_config;
pub mod reply;
mod schedule;
pub mod schedule_def;
mod schedule_ops;
mod schedules;
mod skips;
pub mod snapshot;
pub mod spec;
pub mod time;
mod validate;

pub use command::{CancelReason, Command, Event, Fire, FireReason, SkipReason};
pub use config::{EngineConfig, Limits};
pub use engine::Engine;
pub use error::Error;
pub use ids::{Epoch, FireId, JobId, LeaseToken};
pub use input::{EnqueueRequest, FireOutcome, Input, JournalEntry, LeadershipGrant};
pub use job::{Claimed, JobInfo, JobState};
pub use payload::{Headers, Payload};
pub use queue_config::{Backoff, QueueConfig, QueueMode, QueueStats, QueueTotals, Retention};
pub use reply::Reply;
pub use schedule_def::{Catchup, Overlap, ScheduleDef, ScheduleInfo, ScheduleStatus, Target};
pub use snapshot::Snapshot;
pub use spec::{Spec, SpecError, SpecOptions};
pub use time::Timestamp;
