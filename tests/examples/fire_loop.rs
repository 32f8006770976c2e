//! The engine benchmarks' fire loop as a plain binary, to run under `perf
//! record` or to compare two builds by CPU time on a busy machine (where
//! wall-clock benchmarks drift): reports fires per CPU-second of the
//! advance phase (user + system time from `/proc/self/stat`, Linux only).
//!
//! ```sh
//! cargo run --release -p chime-tests --example fire_loop -- spread 1000000 36000
//! cargo run --release -p chime-tests --example fire_loop -- burst 100000 30
//! ```
//!
//! Arguments: workload (`spread`: 100 ms steps; `burst`: 1 s steps, every
//! schedule due each step), schedules, advances. Workloads:
//! [`chime_tests::workload`].

use chime_core::{Command, Engine, EngineConfig, Input, QueueConfig, QueueMode, Timestamp};
use chime_tests::workload::{START, burst_def, spread_def};
use std::time::Instant;

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// CPU seconds used by this process so far (user + system).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    // Fields after the command name (which may hold spaces) ends with ')'.
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let ticks = |i: usize| fields[i].parse::<f64>().unwrap();
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let burst = match args.first().map(String::as_str) {
        Some("burst") => true,
        Some("spread") | None => false,
        Some(other) => panic!("workload {other:?}: spread or burst"),
    };
    let n: usize = args.get(1).map_or(1_000_000, |s| s.parse().unwrap());
    let steps: usize = args.get(2).map_or(36_000, |s| s.parse().unwrap());
    let mut config = EngineConfig::default();
    config.limits.pending_commands = 4 * n.max(1_000);
    config.limits.fires_per_advance = u32::try_from(n.max(100_000)).unwrap();
    let mut e = Engine::new(config);
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    e.handle(t(START), Input::DeclareQueue(q)).unwrap();
    let setup = Instant::now();
    for i in 0..n {
        let def = if burst { burst_def(i) } else { spread_def(i) };
        e.handle(t(START), Input::UpsertSchedule(def)).unwrap();
    }
    let mut batch: Vec<Command> = Vec::new();
    e.drain_commands(&mut batch);
    batch.clear();
    eprintln!(
        "{n} schedules set up in {:.1} s",
        setup.elapsed().as_secs_f64()
    );
    let step_ms = if burst { 1000 } else { 100 };
    let (mut now, mut fires) = (START, 0u64);
    let (wall, cpu) = (Instant::now(), cpu_seconds());
    for _ in 0..steps {
        now += step_ms;
        e.handle(t(now), Input::Advance).unwrap();
        e.drain_commands(&mut batch);
        fires += batch
            .iter()
            .filter(|c| matches!(c, Command::Fire(_)))
            .count() as u64;
        batch.clear();
    }
    let (wall, cpu) = (wall.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "{} {n}: {fires} fires in {steps} advances; {cpu:.2} CPU-s ({wall:.2} s wall): {:.2} M fires per CPU-second, {:.1} µs CPU per advance",
        if burst { "burst" } else { "spread" },
        fires as f64 / cpu / 1e6,
        cpu * 1e6 / steps as f64
    );
}
