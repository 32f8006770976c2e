//! chime-native: the native host of the chime engine. A tokio driver owns
//! the [`chime_core::Engine`], makes every input durable in a [`store`]
//! before acting on it, and runs [`worker`] pools for local queues; the
//! `chime` binary wires it to a TOML config and signals.
//!
//! The host stays thin: schedules, retries, leases and dead letters are
//! decided by the core; this crate only moves inputs in, commits them, and
//! carries commands out.
//!
//! The modules are layers, lowest first (each imports only from those
//! before it; `docs/architecture.md` has the checks): [`store`],
//! [`driver`], [`backend`] (the queue port), [`worker`], the runtime (its
//! items are re-exported here: [`start`], [`Builder`], [`Running`]), then
//! [`http`], [`pg`] and [`transport`] (beside each other) and [`daemon`],
//! each behind a cargo feature (`http`, `postgres`, `transports`, `cli`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod backend;
#[cfg(feature = "cli")]
pub mod daemon;
pub mod driver;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "postgres")]
pub mod pg;
mod runtime;
pub mod store;
#[cfg(feature = "transports")]
pub mod transport;
pub mod worker;

pub use runtime::{
    Builder, CallError, Rejection, ReloadError, ReloadReport, RunError, Running, Setup, Subject,
    check, start,
};
