//! The types a host sees: inputs, replies, commands and events, errors, ids,
//! job views, payloads and headers, names, configs and definitions. Plain
//! serde data with no engine behaviour: the core's counterpart of cedar's
//! `ffi`, and the only module a binding needs to mirror.

pub(crate) mod command;
pub(crate) mod config;
#[cfg(any(feature = "compact-decode", test))]
pub mod decode;
pub(crate) mod error;
pub(crate) mod ids;
pub(crate) mod input;
pub(crate) mod job;
pub(crate) mod name;
pub(crate) mod payload;
pub(crate) mod queue_config;
pub(crate) mod reply;
pub(crate) mod run;
pub(crate) mod schedule_def;
pub(crate) mod tz_change;
