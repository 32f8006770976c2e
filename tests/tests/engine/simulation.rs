//! Seeded simulation in virtual time with crash/restart: the seed sweeps.
//! The harness (workload generator, crash/replay, the per-step checks) is
//! `chime_tests::sim`; its module docs list what it generates and checks.
//!
//! Running: the default run is CI-sized. `CHIME_SIM_SEED=<seed>` runs one
//! seed (of `seeded_workloads_survive_crashes`); `CHIME_SIM_SEEDS=<n>` runs
//! seeds `k..k+n` (`CHIME_SIM_FIRST=<k>`, default 0; 480 is 10× the
//! default), `CHIME_SIM_STEPS=<n>` sets the steps per seed (default 400);
//! more knobs in `chime_tests::sim`. On failure every
//! failing seed is printed with its first failure and the command that
//! replays it.

use chime_tests::sim::{env_u64, sweep, sweep_incarnations};

#[test]
fn seeded_workloads_survive_crashes() {
    let steps = env_u64("CHIME_SIM_STEPS").unwrap_or(400) as u32;
    let seeds: Vec<u64> = match (env_u64("CHIME_SIM_SEED"), env_u64("CHIME_SIM_SEEDS")) {
        (Some(seed), _) => vec![seed],
        (None, Some(n)) => {
            let first = env_u64("CHIME_SIM_FIRST").unwrap_or(0);
            (first..first + n).collect()
        }
        (None, None) => (0..48).collect(),
    };
    let began = std::time::Instant::now();
    let o = sweep("seeded_workloads_survive_crashes", &seeds, steps);
    let secs = began.elapsed().as_secs_f64();
    eprintln!(
        "{} seeds × {steps} steps: {} inputs ({:.0}/s), {} fires, {} crashes, {:.0} simulated days in {secs:.0} s",
        seeds.len(),
        o.inputs,
        o.inputs as f64 / secs,
        o.fires,
        o.crashes,
        o.simulated_ms as f64 / 86_400_000.0,
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

/// Host incarnations: every restart after a crash sends `Recover` (claims
/// released as interrupted, a stop ended), and some restarts follow a
/// graceful `Stop` whose grace period fires nothing and claims nothing.
#[test]
fn incarnations_recover_and_stop() {
    if std::env::var_os("CHIME_SIM_SEED").is_some() {
        return;
    }
    let seeds: Vec<u64> = (1_000..1_024).collect();
    let o = sweep_incarnations("incarnations_recover_and_stop", &seeds, 400);
    assert!(o.crashes > 24 * 5, "crashes exercised: {}", o.crashes);
}
