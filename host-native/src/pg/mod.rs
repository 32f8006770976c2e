//! The PostgreSQL backend: several replicas on one database
//! (`chime run --database`, [`replica`]). Schema migrations, the fenced
//! leader lease, [`PgStore`] (the engine's snapshot + journal in tables
//! with every write — appends, snapshots and the delivery of fires —
//! checked against the writer's lease epoch in the same transaction),
//! [`fires`] (one row per fire, so two leaders can never both fire a
//! boundary), [`PgQueues`] (job queues claimed with `FOR UPDATE SKIP
//! LOCKED`, and enqueued from inside the application's own transaction
//! with [`PgQueues::enqueue_in`]), the worker pools on them
//! ([`workers`]), the schedule-write inbox through which any replica
//! reaches the leader's engine ([`PgControl`], `chime_inbox`), and every
//! replica's reads for the HTTP API ([`http`]: every replica serves the
//! whole `/v1` API, the same router as the embedded daemon).
//!
//! Everything lives in one Postgres schema (default `chime`), so several
//! deployments — or parallel tests — can share one database. Time that
//! matters for correctness (lease expiry) is always the database's clock
//! (`now()`); a replica only ever uses *durations* of its own clock, never
//! compares its wall clock to the database's (see [`LeaderLease`]). See
//! `docs/postgres.md`.

#[cfg(feature = "http")]
mod api_complete;
#[cfg(feature = "http")]
mod api_enqueue;
#[cfg(feature = "http")]
mod api_queues;
mod bridge;
mod control;
pub mod fires;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
mod http_metrics;
mod inbox;
mod lease;
pub mod migrate;
pub mod notify;
mod queue;
mod reconnect;
pub mod replica;
mod status;
mod store;
pub mod workers;

mod connection;

#[cfg(feature = "http")]
pub use api_queues::PgApiQueues;
pub use connection::{PgConfig, PgError, connect};
pub use control::PgControl;
pub use inbox::{InboxOptions, RemoteError, is_control};
pub use lease::{LeaderLease, LeaseGrant, LeaseOptions, default_holder};
pub use notify::PgListener;
pub use queue::{Cycle, PgQueues, QueueError};
pub use status::{ReplicaStatus, StatusView};
pub use store::PgStore;
