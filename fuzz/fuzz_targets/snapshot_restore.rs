//! `Snapshot::from_json` + `Engine::restore` on arbitrary text: never a
//! panic; a snapshot that restores holds the engine's invariants, and its
//! re-snapshot round-trips byte for byte (and is stable: restoring that
//! gives the same JSON again). The restored engine must also survive an
//! advance.
//!
//! Corpus seeds: real snapshots in `fuzz/corpus/snapshot_restore/`.
#![no_main]

use chime_core::{Engine, Input, Snapshot, Spec, SpecOptions};
use chime_fuzz::round_trip;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let snap = match Snapshot::from_json(text) {
        Ok(s) => s,
        Err(e) => {
            assert_eq!(e.code(), "invalid_input");
            return;
        }
    };
    let _ = (snap.clock(), snap.format());
    let mut engine = match Engine::restore(snap) {
        Ok(e) => e,
        Err(e) => {
            assert!(!e.code().is_empty());
            return;
        }
    };
    if SKIP_KNOWN_F2 && fires_below_grid_fires(text) {
        return;
    }
    engine.check_invariants();
    // Whatever restored must write itself back stably.
    let json = engine.snapshot().to_json();
    let again = round_trip(&engine);
    assert_eq!(again.snapshot().to_json(), json);
    if SKIP_KNOWN_F1 && cursor_off_grid(&engine) {
        return;
    }
    // And keep working: one advance a minute on, drained, invariants.
    let now = engine.clock().saturating_add_ms(60_000);
    let _ = engine.handle(now, Input::Advance);
    while engine.poll_command().is_some() {}
    engine.check_invariants();
});

/// Fuzz finding F1 (`tests/tests/engine/fuzz_regressions.rs`, open): a restored
/// cursor that is not a boundary of its spec panics in the catch-up walk on
/// the next advance. While it is open, such snapshots stop before the
/// advance so the run can find other bugs; set to `false` to see it.
const SKIP_KNOWN_F1: bool = false;

fn cursor_off_grid(engine: &Engine) -> bool {
    let config = engine.config();
    engine.schedule_names().any(|name| {
        let info = engine.schedule(name).expect("listed schedule");
        let Some(c) = info.next_nominal else {
            return false;
        };
        let opts = SpecOptions {
            tz: info.def.tz.clone(),
            dst: info.def.dst,
            min_interval_ms: config.min_interval_ms,
            horizon_years: config.horizon_years,
        };
        match Spec::parse(&info.def.spec, &opts) {
            Ok(spec) => spec.first_at_or_after(c) != Some(c),
            Err(_) => true,
        }
    })
}

/// Fuzz finding F2 (`tests/tests/engine/fuzz_regressions.rs`, open): `restore`
/// accepts a schedule whose counters have `fires < gridFires`, which
/// `check_invariants` rejects (schedule.rs:722). Skipped like F1 while open.
const SKIP_KNOWN_F2: bool = false;

fn fires_below_grid_fires(text: &str) -> bool {
    // Only the counters are read; everything else is skipped lexically
    // (a payload may hold numbers no f64 holds, which `serde_json::Value`
    // refuses but a snapshot keeps verbatim).
    #[derive(serde::Deserialize)]
    struct Snap {
        schedules: Vec<Sched>,
    }
    #[derive(serde::Deserialize)]
    struct Sched {
        counters: Counters,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Counters {
        fires: u64,
        grid_fires: u64,
    }
    match serde_json::from_str::<Snap>(text) {
        Ok(s) => s
            .schedules
            .iter()
            .any(|s| s.counters.fires < s.counters.grid_fires),
        Err(_) => false,
    }
}
