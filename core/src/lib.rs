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
#![warn(unreachable_pub)]

// The layers, lowest first; no module imports one above it (see
// `docs/architecture.md`). Every module is private but `host` (the rules
// of the host's loop, a namespace of functions like `journal`): the public
// API is the list of re-exports below, one path per type.
mod det;
mod engine;
pub mod host;
mod lease;
#[cfg(feature = "openapi")]
mod openapi;
mod queue;
mod schedule;
mod spec;
mod time;
mod wire;

// The engine and its persistence.
pub use engine::outbox::{Delivery, Outbox};
pub use engine::snapshot::{SNAPSHOT_FORMAT, Snapshot};
pub use engine::tzdb::{MAX_DIFF_FIRES, Restored, TzdbDiff, tzdb_diff};
pub use engine::{Engine, validate_input};

/// The journal of inputs: a namespace of functions (`journal::read`,
/// `journal::write`, `journal::replay`, …) kept as a public module (as `host` is),
/// because its short verbs read well only behind their module's name.
pub use engine::journal;

// Time and specs.
pub use spec::{
    DstNote, DstPolicy, FoldPolicy, GapPolicy, MAX_TZIF_BYTES, MAX_TZIF_ZONES, Occurrence, Spec,
    SpecError, SpecOptions, TzDatabase, tzdb_version,
};
pub use time::{Timestamp, TimestampOutOfRange};

// The queue rules a backend that keeps jobs outside the engine applies
// as they are (the Postgres queues pass them into their SQL): what a
// failure leads to, orders, key expiry, retention (`queue/rules.rs`;
// `QueueConfig::implicit`, `JobState::ALL`/`from_name`/`is_pruned` are
// there too, and `truncate_text` is beside the limits).
pub use queue::rules::{
    CLAIM_ORDER, Direction, EVICTION_ORDER, JobField, LEASE_EXPIRY_ORDER, claim_key,
    key_expires_at, key_is_active, retained_until,
};
pub use queue::{AfterFailure, JobPage, JobQuery, SEARCH_LIMIT, SEARCH_SCAN, after_failure};

// The wire types: what a host sends, receives and stores.
pub use wire::command::{CancelReason, Command, Event, Fire, FireReason, SkipReason};
pub use wire::config::{EngineConfig, Limits, truncate_text};
#[cfg(feature = "compact-decode")]
pub use wire::decode;
pub use wire::error::Error;
pub use wire::ids::{Epoch, FireId, FireKind, JobId, LeaseToken};
pub use wire::input::{EnqueueRequest, FireOutcome, Input, JournalEntry, LeadershipGrant};
pub use wire::job::{Claimed, JobInfo, JobState};
pub use wire::payload::{Headers, Payload};
pub use wire::queue_config::{Backoff, QueueConfig, QueueMode, QueueStats, QueueTotals, Retention};
pub use wire::reply::Reply;
pub use wire::run::{JobEnd, RunOutcome, RunRecord};
pub use wire::schedule_def::{
    Catchup, Origin, Overlap, ScheduleDef, ScheduleInfo, ScheduleStatus, Target,
};
pub use wire::tz_change::TzRuleChange;

/// Internals that only tests and benchmarks reach (feature `testing`): the
/// cron matcher on its own, civil date-times, the duration grammar and the
/// preview cap. Not part of the API; any release may change them.
#[cfg(feature = "testing")]
pub mod testing {
    pub use crate::engine::planted::PlantedBug;
    pub use crate::spec::cron::{CronSpec, ParsedCron};
    pub use crate::spec::duration::parse_duration_ms;
    pub use crate::spec::preview::MAX_PREVIEW;
    pub use crate::time::calendar::Civil;
}
