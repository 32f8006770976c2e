//! Planted bugs: each deliberate fault of `chime_core::testing::PlantedBug`
//! must make the simulation fail with the tag of the invariant that
//! catches it, at a recorded seed, and the same seed must pass without the
//! bug (so the failure is the bug's). See `docs/testing.md`, "Planted bugs".
//!
//! `CHIME_SIM_SEED=<seed>` replays one case's seed instead of the recorded
//! one (`CHIME_SIM_VERBOSE=1` prints the full panic). The ignored test
//! `search` finds new seeds (`CHIME_SIM_SEEDS=<n>` seeds from 0,
//! `CHIME_SIM_STEPS=<n>` steps) when the generator changes.

use chime_core::testing::PlantedBug;
use chime_tests::sim::{env_u64, run_seed};

const BUGS: [PlantedBug; 4] = [
    PlantedBug::PausedKeepFiring,
    PlantedBug::OverlapAlwaysSkip,
    PlantedBug::LeadershipNeverExpires,
    PlantedBug::DueIndexMissesRemoval,
];

/// Prints, per bug, the tag and step budget of every seed that finds it.
#[test]
#[ignore = "a search for seeds, not a check"]
fn search() {
    let seeds = env_u64("CHIME_SIM_SEEDS").unwrap_or(40);
    let steps = env_u64("CHIME_SIM_STEPS").unwrap_or(150) as u32;
    for bug in BUGS {
        for seed in 0..seeds {
            // The engine's own invariant check off: the outside checks alone.
            match run_seed(seed, steps, Some(bug), false) {
                Ok(_) => eprintln!("{bug:?} seed {seed}: passes"),
                Err(f) => eprintln!(
                    "{bug:?} seed {seed}: {} at {}",
                    f.message.lines().next().unwrap_or(""),
                    f.location
                ),
            }
        }
    }
}

/// Runs seeds without a bug: the checks raise no false alarm.
#[test]
#[ignore = "a search for false alarms, not a check"]
fn clean() {
    let seeds = env_u64("CHIME_SIM_SEEDS").unwrap_or(40);
    let steps = env_u64("CHIME_SIM_STEPS").unwrap_or(150) as u32;
    let mut failed = 0;
    for seed in 0..seeds {
        if let Err(f) = run_seed(seed, steps, None, false) {
            failed += 1;
            eprintln!(
                "clean seed {seed}: {} at {}",
                f.message.lines().next().unwrap_or(""),
                f.location
            );
        }
    }
    assert_eq!(failed, 0);
}
