//! The compact decoder's records of the schedule state a snapshot keeps
//! (see `wire::decode`): fields in declaration order, as the derived
//! `Deserialize` impls in `state.rs` read them.

use super::state::{Buffered, Counters, FireTarget, InFlight, PauseChange};
use crate::time::Timestamp;
use crate::wire::decode::record_decoder;
use crate::wire::ids::{FireId, JobId};
use crate::wire::payload::{Headers, Payload};
use std::sync::Arc;

record_decoder! {
    CountersB => Counters, "Counters", "5 elements", deny_unknown: true;
    fires: u64, "fires", req;
    grid_fires: u64, "gridFires", req;
    skipped: u64, "skipped", req;
    processed: u64, "processed", req;
    seq: u64, "seq", req;
}

record_decoder! {
    InFlightB => InFlight, "InFlight", "3 elements", deny_unknown: true;
    fire: FireId, "fire", req;
    job: Option<JobId>, "job", def;
    deadline: Option<Timestamp>, "deadline", def;
}

record_decoder! {
    PauseChangeB => PauseChange, "PauseChange", "2 elements", deny_unknown: true;
    at: Timestamp, "at", req;
    paused: bool, "paused", req;
}

record_decoder! {
    FireTargetB => FireTarget, "FireTarget", "6 elements", deny_unknown: true;
    version: u64, "version", req;
    queue: Arc<str>, "queue", req;
    payload: Payload, "payload", req;
    priority: i32, "priority", def;
    max_attempts: Option<u32>, "maxAttempts", def;
    headers: Headers, "headers", def;
}

record_decoder! {
    BufferedB => Buffered, "Buffered", "3 elements", deny_unknown: true;
    fire: FireId, "fire", req;
    due_at: Timestamp, "dueAt", req;
    target: FireTarget, "target", req;
}
