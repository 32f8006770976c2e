//! Shared helpers for chime's scenario, golden-trace, differential and
//! property tests. Each scenario lives in its own file under `tests/`.

pub mod accounting;
pub mod checker;
pub mod dst;
pub mod golden;
pub mod oracle;
pub mod scenario;
pub mod sim;
pub mod specgen;
pub mod workload;

/// The README's Rust snippets compile and run (`cargo test --doc`).
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
