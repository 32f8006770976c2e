//! The engine's scenarios, one per file: schedules, fires, catch-up, overlap,
//! leadership, snapshots and validation (`tests/tests/engine_*.rs` before
//! they became modules), the golden traces, the model-based property test,
//! the seeded simulation, the planted bugs and the fuzz regressions.
//!
//! One test binary for all of them, so the dependencies are linked once.
//! Run one scenario with `cargo test -p chime-tests --test engine <module>::`
//! (e.g. `golden::`); a name filter works as well.

mod backfill_epoch;
mod backfill_skipped;
mod backlog_removed;
mod bad_input;
mod buffered_pause_panic;
mod buffered_queue_full;
mod buffered_release;
mod catchup;
mod catchup_window_edge;
mod clock_clamped;
mod completed_reason;
mod drain_appends;
mod drain_batch;
mod dst_day;
mod end_at_backlog;
mod external_fire;
mod fire_ids_recreate;
mod fire_order;
mod fuzz_regressions;
mod golden;
mod grid_per_policy;
mod input_robustness;
mod jitter_before_next;
mod jitter_window;
mod last_epoch;
mod leadership;
mod model;
mod overlap;
mod pause_changes_limit;
mod pause_in_gap;
mod pause_resume;
mod paused_jitter_due;
mod planted_bugs;
mod rank_squeeze;
mod redefined;
mod restored_grant_expired;
mod restored_ready_fire;
mod resume_by_nominal;
mod run_history;
mod schedule_names;
mod schedule_origin;
mod simulation;
mod snapshot_corrupt;
mod snapshot_fields;
mod snapshot_replay;
mod start_at_never_fires;
mod start_at_now;
mod stop;
mod ten_year_jump;
mod upsert_end_at;
mod upsert_unchanged;
mod validate_def_bounds;
mod validate_enqueue_bounds;
mod validate_header_bounds;
mod validate_input;
mod validate_queue_config_bounds;
mod validate_spec_checks;
