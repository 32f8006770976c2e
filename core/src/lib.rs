//! chime-core: a deterministic, sans-I/O scheduling and job-queue engine.
//!
//! The core never reads a clock, spawns a thread or touches the network: the
//! host hands it `now` with every input and drains the commands it produces.
//! That makes one engine usable from wasm, from a tokio server and from
//! deterministic tests, where a journal of inputs replays byte for byte.
//!
//! # The drain loop
//!
//! [`Engine`] has one mutator, [`Engine::handle`]; after every call the host
//! drains [`Engine::poll_command`] until `None` and re-arms its timer at
//! [`Engine::poll_timeout`]. Getters never mutate.
//!
//! ```
//! use chime_core::{Command, Engine, EngineConfig, Input, ScheduleDef, Timestamp};
//!
//! let mut engine = Engine::new(EngineConfig::default());
//! let def: ScheduleDef = serde_json::from_str(
//!     r#"{"name": "backup", "spec": "@every 1h", "overlap": "allow",
//!         "target": {"queue": "jobs"}}"#,
//! )?;
//! let start = Timestamp::from_millis(1_767_225_600_000)?; // 2026-01-01T00:00Z
//! engine.handle(start, Input::UpsertSchedule(def))?;
//!
//! let mut fired = Vec::new();
//! let mut now = start;
//! for _ in 0..3 {
//!     // Drain after every handle: fires, jobs to wake workers for, events.
//!     while let Some(cmd) = engine.poll_command() {
//!         if let Command::Fire(fire) = cmd {
//!             fired.push(fire.fire_id.to_string());
//!         }
//!     }
//!     // Sleep until the engine has work, then advance to that instant.
//!     now = engine.poll_timeout().expect("a schedule is pending");
//!     engine.handle(now, Input::Advance)?;
//! }
//! while let Some(cmd) = engine.poll_command() {
//!     if let Command::Fire(fire) = cmd {
//!         fired.push(fire.fire_id.to_string());
//!     }
//! }
//! assert_eq!(fired.len(), 3);
//! assert_eq!(fired[0], "backup@1767229200000");
//! assert_eq!(engine.schedule("backup").unwrap().fires, 3);
//!
//! // Persistence: a snapshot round-trips byte for byte.
//! let json = engine.snapshot().to_json();
//! let engine = Engine::restore(chime_core::Snapshot::from_json(&json)?)?;
//! assert_eq!(engine.snapshot().to_json(), json);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Semantics the design left open are recorded in `docs/semantics.md`.
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
pub mod outbox;
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
pub use outbox::{Delivery, Outbox};
pub use payload::{Headers, Payload};
pub use queue_config::{Backoff, QueueConfig, QueueMode, QueueStats, QueueTotals, Retention};
pub use reply::Reply;
pub use schedule_def::{Catchup, Overlap, ScheduleDef, ScheduleInfo, ScheduleStatus, Target};
pub use snapshot::Snapshot;
pub use spec::{Spec, SpecError, SpecOptions};
pub use time::Timestamp;
