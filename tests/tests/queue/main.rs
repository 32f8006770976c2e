//! The job queue's scenarios, one per file: enqueue, claim, fencing, retries,
//! dead letters, idempotency keys, retention, limits and snapshots of queue
//! state (`tests/tests/queue_*.rs` before they became modules).
//!
//! One test binary for all of them. Run one scenario with
//! `cargo test -p chime-tests --test queue <module>::` (e.g. `dedup::`).

mod advance_budget;
mod cancel;
mod claim_order;
mod dead_letter;
mod dead_letter_bound;
mod declare;
mod dedup;
mod dedup_bound;
mod dedup_expiry_budget;
mod end_of_time;
mod enqueue_limits;
mod error_text;
mod external;
mod fencing;
mod fire_flight;
mod fire_keys;
mod interrupted;
mod lease_expiry;
mod lifecycle;
mod limit;
mod random_walk;
mod redrive_keys;
mod retention;
mod retry_timing;
mod snapshot;
mod snapshot_corrupt;
mod stats;
mod wake;
