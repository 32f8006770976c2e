//! The types a host sees: inputs, replies, commands and events, errors, ids,
//! job views, payloads and headers, names, configs and definitions. Plain
//! serde data with no engine behaviour: the core's counterpart of cedar's
//! `ffi`, and the only module a binding needs to mirror.

pub mod command;
pub mod config;
pub mod error;
pub mod ids;
pub mod input;
pub mod job;
pub mod name;
pub mod payload;
pub mod queue_config;
pub mod reply;
pub mod schedule_def;
