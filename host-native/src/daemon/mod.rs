//! The `chime` binary's parts: the config file and crontab formats, the
//! plan that turns either into a [`Setup`](crate::Setup), the process of
//! `chime run` (signals, listener), `chime preview` and `chime replay`. The top layer: it may use every other one.

pub mod client;
pub mod config;
pub mod cronjob;
mod cronlint;
pub mod crontab;
pub mod logs;
pub mod plan;
pub mod preview;
pub mod replay;
pub mod run;
pub mod transports;
pub mod tzdb;
