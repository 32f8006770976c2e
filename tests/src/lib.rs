//! Shared helpers for chime's scenario, golden-trace, differential and
//! property tests. Each scenario lives in its own file under `tests/`.

pub mod accounting;
pub mod golden;
pub mod specgen;
