//! Shared helpers for chime's scenario, golden-trace, differential and
//! property tests. Each scenario lives in its own file under `tests/`, a
//! module of one of the test binaries `tests/tests/{engine,queue,spec}`
//! (`docs/testing.md`, "Layout").

pub mod accounting;
pub mod checker;
pub mod dst;
pub mod golden;
pub mod oracle;
pub mod scenario;
pub mod sim;
pub mod specgen;
pub mod workload;

#[cfg(test)]
mod layout;

/// The README's Rust snippets compile and run (`cargo test --doc`).
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
