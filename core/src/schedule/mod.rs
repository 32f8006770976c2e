//! Schedules: one schedule's state ([`state`]), the collection and its due
//! index ([`set`]), catch-up after downtime ([`catchup`]) and the aggregation
//! of skipped boundaries ([`skips`]). Mirrors `queue/`: a state machine over
//! its own data, driven by the engine, which never imports queues.

mod catchup;
// The compact decoder's records of the snapshot's schedule state.
#[cfg(any(feature = "compact-decode", test))]
mod decode;
mod runs;
mod set;
pub(crate) mod skips;
mod state;

pub(crate) use catchup::{Span, Tick};
pub(crate) use set::Schedules;
pub(crate) use state::{
    Buffered, Counters, FireTarget, Grid, GridKey, InFlight, PauseChange, Schedule,
};
