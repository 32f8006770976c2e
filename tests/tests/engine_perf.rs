//! Throughput and memory smoke checks (ignored by default; run with
//! `cargo test --release -p chime-tests --test engine_perf -- --ignored --nocapture`).

mod engine_common;
use chime_core::{Engine, EngineConfig, Input, Overlap, QueueConfig, QueueMode};
use engine_common::*;
use std::time::Instant;

const S: i64 = 1_000_000_000_000;

#[test]
#[ignore]
fn fires_per_second_100k_schedules_external_allow() {
    let mut e = Engine::new(EngineConfig::default());
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    e.handle(t(S), Input::DeclareQueue(q)).unwrap();
    for i in 0..100_000 {
        let mut d = def(&format!("s{i:06}"), "@every 1s", "out");
        d.overlap = Overlap::Allow;
        e.handle(t(S), Input::UpsertSchedule(d)).unwrap();
    }
    while e.poll_command().is_some() {}
    let start = Instant::now();
    let mut fires = 0u64;
    for k in 1..=20 {
        e.handle(t(S + k * 1000), Input::Advance).unwrap();
        while let Some(c) = e.poll_command() {
            if matches!(c, chime_core::Command::Fire(_)) {
                fires += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(fires, 2_000_000);
    println!(
        "{fires} fires in {secs:.3} s: {:.0} fires/s",
        fires as f64 / secs
    );
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
#[ignore]
fn memory_per_schedule() {
    let n = 200_000;
    let mut e = Engine::new(EngineConfig::default());
    e.handle(t(S), Input::Advance).unwrap();
    let before = rss_kb();
    for i in 0..n {
        let d = def(&format!("schedule-{i:07}"), "@every 1m", "q");
        e.handle(t(S), Input::UpsertSchedule(d)).unwrap();
        while e.poll_command().is_some() {}
    }
    let after = rss_kb();
    println!(
        "{} bytes per schedule (RSS delta over {n} schedules)",
        (after - before) * 1024 / n as u64
    );
    assert_eq!(e.schedule_count(), n);
}
