//! The schedule spec language, one scenario per file: the cron grammar,
//! `@every`/`@at`, DST transitions, counting, the differential test against
//! croner, property and robustness tests (`tests/tests/spec_*.rs` before they
//! became modules), and the boundary oracle's self-check.
//!
//! One test binary for all of them. Run one scenario with
//! `cargo test -p chime-tests --test spec <module>::` (e.g. `dst_london::`).

mod count;
mod differential;
mod dst_london;
mod dst_lord_howe;
mod dst_new_york;
mod dst_offset_change;
mod every_at;
mod grammar;
mod oracle_self;
mod parse_robustness;
mod properties;
