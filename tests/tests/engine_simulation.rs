//! Seeded simulation in virtual time with crash/restart: the seed sweeps.
//! The harness (workload generator, crash/replay, the per-step checks) is
//! `chime_tests::sim`; its module docs list what it generates and checks.
//!
//! Running: the default run is CI-sized. `CHIME_SIM_SEED=<seed>` runs one
//! seed (of `seeded_workloads_survive_crashes`); `CHIME_SIM_SEEDS=<n>` runs
//! seeds `0..n` (480 is 10× the default), `CHIME_SIM_STEPS=<n>` sets the
//! steps per seed (default 400); `CHIME_SIM_OFF=invalid,backfill,...`
//! turns input classes off (see `chime_tests::sim`). On failure every
//! failing seed is printed with its first failure and the command that
//! replays it.

use chime_tests::sim::{env_u64, sweep};

#[test]
fn seeded_workloads_survive_crashes() {
    let steps = env_u64("CHIME_SIM_STEPS").unwrap_or(400) as u32;
    let seeds: Vec<u64> = match (env_u64("CHIME_SIM_SEED"), env_u64("CHIME_SIM_SEEDS")) {
        (Some(seed), _) => vec![seed],
        (None, Some(n)) => (0..n).collect(),
        (None, None) => (0..48).collect(),
    };
    let o = sweep("seeded_workloads_survive_crashes", &seeds, steps);
    eprintln!(
        "{} seeds × {steps} steps: {} inputs, {} fires, {} crashes",
        seeds.len(),
        o.inputs,
        o.fires,
        o.crashes
    );
    if seeds.len() >= 48 && steps >= 400 {
        assert!(o.crashes > 48 * 5, "crashes exercised: {}", o.crashes);
        assert!(o.fires > 10_000, "fires exercised: {}", o.fires);
    }
}

/// One long run: many checkpoints and crashes on the same history.
#[test]
fn one_long_run() {
    if std::env::var_os("CHIME_SIM_SEED").is_some() {
        return;
    }
    let o = sweep("one_long_run", &[0xC41E], 4_000);
    assert!(
        o.crashes > 50 && o.fires > 500,
        "{} crashes, {} fires",
        o.crashes,
        o.fires
    );
}
