//! What the per-schedule run history costs in memory: N schedules of the
//! engine bench's burst mix (each fires once a second, external queue,
//! `overlap: allow`), advanced one virtual second at a time until every
//! history is full (`limits.runsPerSchedule` fires), then as many seconds
//! again (the oldest runs are dropped: the steady state). The live heap
//! is counted by a counting global allocator (`stats_alloc`, as the
//! engine bench's resident bytes per schedule), with the default bound
//! (50) and with the history off (`runsPerSchedule = 0`), so the
//! difference is the history alone.
//!
//! Run: `cargo bench -p chime-tests --bench history_memory [-- N...]`
//! (default N: 10,000 and 100,000; results in BENCHMARKS.md, "Run
//! history memory"). Not a criterion bench: it measures bytes, not time.

use chime_core::{
    Command, Engine, EngineConfig, Input, QueueConfig, QueueMode, RunRecord, Timestamp,
};
use chime_tests::workload::{START, burst_def};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::time::Instant;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// Live heap bytes allocated in `region` so far.
fn live(region: &Region<'_, System>) -> f64 {
    let s = region.change();
    s.bytes_allocated as f64 - s.bytes_deallocated as f64
}

/// Drops every pending command, reusing one buffer.
fn drain(e: &mut Engine, batch: &mut Vec<Command>) -> usize {
    e.drain_commands(batch);
    let fires = batch
        .iter()
        .filter(|c| matches!(c, Command::Fire(_)))
        .count();
    batch.clear();
    fires
}

/// Per-schedule live bytes after the upserts, after `runs` seconds of
/// fires, and after `runs` more, with a history bound of `bound`.
fn measure(n: usize, bound: usize, runs: usize) -> (f64, f64, f64) {
    let mut config = EngineConfig::default();
    config.limits.fires_per_advance = u32::try_from(n.max(100_000)).unwrap();
    config.limits.pending_commands = 4 * n.max(1_000_000);
    config.limits.runs_per_schedule = bound;
    let mut e = Engine::new(config);
    let mut batch = Vec::with_capacity(2 * n);
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    e.handle(t(START), Input::DeclareQueue(q)).unwrap();
    drain(&mut e, &mut batch);
    let region = Region::new(GLOBAL);
    for i in 0..n {
        e.handle(t(START), Input::UpsertSchedule(burst_def(i)))
            .unwrap();
    }
    drain(&mut e, &mut batch);
    let set_up = live(&region);
    let mut now = START;
    let mut advance = |e: &mut Engine, batch: &mut Vec<Command>| {
        for _ in 0..runs {
            now += 1000;
            e.handle(t(now), Input::Advance).unwrap();
            assert_eq!(drain(e, batch), n, "every schedule fires every second");
        }
    };
    advance(&mut e, &mut batch);
    let full = live(&region);
    advance(&mut e, &mut batch);
    let steady = live(&region);
    if bound > 0 {
        let info = e.schedule("sched-0000000").unwrap();
        assert_eq!(info.runs.len(), bound, "the history is full");
    }
    let per = |b: f64| b / n as f64;
    (per(set_up), per(full), per(steady))
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    let bound = EngineConfig::default().limits.runs_per_schedule;
    println!(
        "RunRecord: {} bytes inline; default bound {bound} runs per schedule",
        std::mem::size_of::<RunRecord>()
    );
    for n in sizes {
        let clock = Instant::now();
        let (base_set, base_full, base_steady) = measure(n, 0, bound);
        let (set, full, steady) = measure(n, bound, bound);
        let history = steady - base_steady;
        println!(
            "{n} schedules: live bytes per schedule after upsert {set:.0} (history off {base_set:.0}), \
             after {bound} fires each {full:.0} (off {base_full:.0}), after {} {steady:.0} (off \
             {base_steady:.0}); the history adds {history:.0} B per schedule = {:.1} B per run \
             ({:.1} s)",
            2 * bound,
            history / bound as f64,
            clock.elapsed().as_secs_f64()
        );
    }
}
