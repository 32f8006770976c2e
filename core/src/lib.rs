//! chime-core: a deterministic, sans-I/O scheduling and job-queue engine.
//!
//! The core never reads a clock, spawns a thread or touches the network: the
//! host hands it `now` with every input and drains the commands it produces.
//! That makes one engine usable from wasm, from a tokio server and from
//! deterministic tests, where a journal of inputs replays byte for byte.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod command;
pub mod config;
mod det;
pub mod error;
pub mod ids;
pub mod input;
pub mod job;
pub(crate) mod lease;
pub mod name;
pub mod payload;
pub(crate) mod queue;
pub mod queue_config;
pub mod reply;
pub mod schedule_def;
pub mod spec;
pub mod time;

pub use command::{CancelReason, Command, Event, Fire, FireReason, SkipReason};
pub use config::{EngineConfig, Limits};
pub use error::Error;
pub use ids::{Epoch, FireId, JobId, LeaseToken};
pub use input::{EnqueueRequest, FireOutcome, Input, JournalEntry, LeadershipGrant};
pub use job::{Claimed, JobInfo, JobState};
pub use payload::{Headers, Payload};
pub use queue_config::{Backoff, QueueConfig, QueueMode, QueueStats, QueueTotals, Retention};
pub use reply::Reply;
pub use schedule_def::{Catchup, Overlap, ScheduleDef, ScheduleInfo, ScheduleStatus, Target};
pub use spec::{Spec, SpecError, SpecOptions};
pub use time::Timestamp;
