//! chime-core: a deterministic, sans-I/O scheduling and job-queue engine.
//!
//! The core never reads a clock, spawns a thread or touches the network: the
//! host hands it `now` with every input and drains the commands it produces.
//! That makes one engine usable from wasm, from a tokio server and from
//! deterministic tests, where a journal of inputs replays byte for byte.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod spec;
pub mod time;

pub use spec::{Spec, SpecError, SpecOptions};
pub use time::Timestamp;
