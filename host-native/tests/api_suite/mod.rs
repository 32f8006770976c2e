//! The API suite: each scenario written once against base URLs and
//! tokens, and run on both modes by real `chime run` processes — the
//! `embedded` binary on a data directory, the `pg` binary on real
//! PostgreSQL with two replicas, requests alternating between leader and
//! follower. Included by `#[path]` into both test binaries
//! (`tests/embedded/api_suite.rs`, `tests/pg/api_suite.rs`).
//!
//! One scenario per module: [`routes`] (every route's answer),
//! [`authz`] (every route × every scope × in and out of its name
//! pattern), [`lease_lost`] (a stale token is 409 and changes nothing),
//! [`schedule_write`] (a schedule written through any node fires; in
//! Postgres mode through the follower, from the leader),
//! [`schedules`] (schedule and queue writes, their refusals),
//! [`schedule_pages`] (the schedule list's pages, filters and cursor,
//! within a token's names),
//! [`workers`] (claim, heartbeat, complete, fail, one and batch),
//! [`crash_redelivery`] (a node killed mid-claim: the job comes back
//! after its lease).

#![allow(dead_code)] // each binary's runner uses all of it; helpers vary

pub mod authz;
pub mod crash_redelivery;
pub mod deploy;
pub mod lease_lost;
pub mod routes;
pub mod schedule_pages;
pub mod schedule_write;
pub mod schedules;
pub mod workers;

pub use deploy::Store;
