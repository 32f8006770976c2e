//! Engine benchmarks: fires per second in virtual time (100k and 1M
//! schedules), queue enqueue → claim → complete, resident bytes per
//! schedule, `poll_timeout` at 1k / 100k / 1M schedules, and the cost of
//! upserting a new schedule at 200k / 1M by the order its name arrives in.
//!
//! Run: `cargo bench -p chime-tests --bench engine` (results and setup in
//! BENCHMARKS.md, section "Engine"); only the upserts:
//! `cargo bench -p chime-tests --bench engine -- upsert`.
//!
//! Setup of the fire benchmarks: every schedule fires once per second of
//! virtual time, so each iteration (one `Advance` by 1 s, then draining
//! every command) makes exactly N fires. The mix: 60% `@every 1s`, 20%
//! cron `* * * * * *` in UTC, 10% the same cron in America/New_York, 10%
//! in Europe/London; all target one `external` queue with `overlap:
//! allow`, so no job piles up and no fire is tracked (each fire emits a
//! `Fire` and an `Enqueue` command, both serialized nowhere: the host's
//! drain just drops them). `limits.firesPerAdvance` is raised to N so one
//! advance fires everything due.
//!
//! Upserts: on an engine with N schedules `sched-0000000`…, each
//! iteration upserts one new schedule (definitions built before the
//! clock starts). After each sample, untimed, the engine goes back to N
//! schedules, so every upsert meets N to N + one sample's iterations
//! (≤ ~25k) schedules. `random`: next to a pseudo-random existing name;
//! `append`: after the last name; both remove the sample's schedules.
//! `worst`: always between the same two existing names
//! (`sched-{N/2-1}-{k}` for increasing k, so just before `sched-{N/2}`
//! every time), the order that once re-spaced every rank every ~40
//! inserts; its schedules stay, so the squeeze builds up over the whole
//! run, and as many original schedules from both ends of the name order
//! are removed instead.
//!
//! Memory: a counting global allocator (`stats_alloc`) measures the bytes
//! live after inserting N schedules minus before, divided by N, minus the
//! payload's JSON text.

use chime_core::{
    Command, Engine, EngineConfig, EnqueueRequest, Input, Payload, QueueConfig, QueueMode, Reply,
    ScheduleDef, Timestamp,
};
use chime_tests::workload::{PAYLOAD, START, burst_def, burst_def_named, mix, spread_def};
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

/// Drains in one batch (`drain_commands`, as the bindings do), reusing
/// one buffer, and counts the fires.
fn drain(e: &mut Engine) -> u64 {
    thread_local! {
        static BATCH: std::cell::RefCell<Vec<Command>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BATCH.with_borrow_mut(|batch| {
        e.drain_commands(batch);
        let fires = batch
            .iter()
            .filter(|c| matches!(c, Command::Fire(_)))
            .count();
        black_box(&batch);
        batch.clear();
        fires as u64
    })
}

/// An engine with `n` schedules (clock at START); returns it with the
/// resident (live heap) bytes per schedule beyond the payload text.
fn engine_with(n: usize) -> (Engine, f64) {
    let mut config = EngineConfig::default();
    config.limits.fires_per_advance = u32::try_from(n.max(100_000)).unwrap();
    config.limits.pending_commands = 4 * n.max(1_000_000);
    // Room for the upsert benchmarks' new schedules.
    config.limits.schedules = 2 * n.max(1_000_000);
    let mut e = Engine::new(config);
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    e.handle(t(START), Input::DeclareQueue(q)).unwrap();
    drain(&mut e);
    // The definitions are built inside the region: their strings stay
    // resident in the engine and count.
    let region = Region::new(GLOBAL);
    for i in 0..n {
        e.handle(t(START), Input::UpsertSchedule(burst_def(i)))
            .unwrap();
    }
    drain(&mut e);
    let stats = region.change();
    let live = stats.bytes_allocated as f64 - stats.bytes_deallocated as f64;
    let per = live / n as f64 - PAYLOAD.len() as f64;
    (e, per)
}

fn scale(c: &mut Criterion, n: usize, label: &str, fires: bool) {
    let setup = Instant::now();
    let (mut e, per) = engine_with(n);
    eprintln!(
        "engine/{label}: {n} schedules set up in {:.1} s; {per:.0} resident bytes per schedule beyond the payload",
        setup.elapsed().as_secs_f64()
    );
    let mut g = c.benchmark_group("engine/poll_timeout");
    g.sample_size(20).measurement_time(Duration::from_secs(2));
    g.bench_function(BenchmarkId::from_parameter(label), |b| {
        b.iter(|| black_box(e.poll_timeout()))
    });
    g.finish();
    if !fires {
        return;
    }
    let mut g = c.benchmark_group("engine/fires");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(if n > 200_000 { 20 } else { 5 }))
        .throughput(Throughput::Elements(n as u64));
    let mut now = START;
    g.bench_function(BenchmarkId::from_parameter(label), |b| {
        b.iter_custom(|iters| {
            let begin = Instant::now();
            for _ in 0..iters {
                now += 1000;
                e.handle(t(now), Input::Advance).unwrap();
                let fired = drain(&mut e);
                assert_eq!(fired, n as u64, "every schedule fires every second");
            }
            begin.elapsed()
        })
    });
    g.finish();
}

fn queue_roundtrip(c: &mut Criterion) {
    let mut e = Engine::new(EngineConfig::default());
    let mut now = START;
    // Some standing work so the indexes are not trivially small.
    for i in 0..10_000 {
        let mut req = EnqueueRequest::new("q", Payload::from_json(PAYLOAD).unwrap());
        req.delay_ms = Some(3_600_000 + i);
        e.handle(t(now), Input::Enqueue(req)).unwrap();
    }
    drain(&mut e);
    let mut g = c.benchmark_group("engine/queue");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    g.bench_function("enqueue_claim_complete", |b| {
        b.iter(|| {
            now += 1;
            let req = EnqueueRequest::new("q", Payload::from_json(PAYLOAD).unwrap());
            e.handle(t(now), Input::Enqueue(req)).unwrap();
            let claim = Input::Claim {
                queue: "q".into(),
                worker: "w".into(),
                max: 1,
                lease_ms: None,
            };
            let Reply::Claimed { jobs } = e.handle(t(now), claim).unwrap() else {
                unreachable!()
            };
            let c = &jobs[0];
            let done = Input::Complete {
                job: c.job,
                token: c.token,
            };
            e.handle(t(now), done).unwrap();
            drain(&mut e);
        })
    });
    g.finish();
}

/// A `* * * * * *` schedule and an hourly one, then one `Advance` over a
/// 10-year clock jump: the time until the hourly schedule fires is the
/// cost of that single advance (the per-second backlog, 3.2×10^8
/// boundaries, is counted, not walked).
fn ten_year_jump(c: &mut Criterion) {
    let fresh = || {
        let mut e = Engine::new(EngineConfig::default());
        for (name, spec) in [("hourly", "@every 1h"), ("secondly", "* * * * * *")] {
            let text = format!(r#"{{"name":"{name}","spec":"{spec}","target":{{"queue":"q"}}}}"#);
            let def: ScheduleDef = serde_json::from_str(&text).unwrap();
            e.handle(t(START), Input::UpsertSchedule(def)).unwrap();
        }
        drain(&mut e);
        e
    };
    let later = START + 3_652 * 86_400_000;
    let mut g = c.benchmark_group("engine/ten_year_jump");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    g.bench_function("advance_until_hourly_fires", |b| {
        b.iter_batched(
            fresh,
            |mut e| {
                e.handle(t(later), Input::Advance).unwrap();
                let hourly = std::iter::from_fn(|| e.poll_command())
                    .filter(|c| matches!(c, Command::Fire(f) if f.schedule() == "hourly"))
                    .count();
                assert_eq!(hourly, 1, "the hourly schedule fires in the first advance");
                e
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// SplitMix64: a fixed pseudo-random sequence of positions.
fn upsert(c: &mut Criterion, n: usize, label: &str) {
    let (mut e, _) = engine_with(n);
    let mut g = c.benchmark_group("engine/upsert");
    // Linear sampling: criterion's slope is then the amortized cost per
    // upsert, rare re-spacings included (a median of samples hides them).
    g.sampling_mode(SamplingMode::Linear)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500))
        .throughput(Throughput::Elements(1));
    let mut k = 0usize;
    let mut far = 0;
    let cases: [(&str, &dyn Fn(usize) -> String); 3] = [
        ("random", &|k| {
            format!("sched-{:07}-{k}", mix(k as u64) % n as u64)
        }),
        ("append", &|k| format!("sched-{:07}", n + k)),
        ("worst", &|k| format!("sched-{:07}-{k:010}", n / 2 - 1)),
    ];
    for (case, name) in cases {
        g.bench_function(BenchmarkId::new(case, label), |b| {
            b.iter_custom(|iters| {
                let names: Vec<String> = (0..iters)
                    .map(|_| {
                        k += 1;
                        name(k)
                    })
                    .collect();
                let defs: Vec<ScheduleDef> = names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| burst_def_named(name, i))
                    .collect();
                let begin = Instant::now();
                for d in defs {
                    e.handle(t(START), Input::UpsertSchedule(d)).unwrap();
                }
                let took = begin.elapsed();
                // Back to N schedules, untimed.
                if case == "worst" {
                    // Keep the squeeze: remove originals far from it,
                    // from both ends of the name order in turn.
                    for _ in 0..iters {
                        let i = if far % 2 == 0 {
                            n - 1 - far / 2
                        } else {
                            far / 2
                        };
                        far += 1;
                        assert!(far < n - 4, "removals stay clear of the hot spot");
                        let name = format!("sched-{i:07}");
                        e.handle(t(START), Input::remove_schedule(name)).unwrap();
                    }
                } else {
                    for name in names {
                        e.handle(t(START), Input::remove_schedule(name)).unwrap();
                    }
                }
                drain(&mut e);
                took
            })
        });
    }
    g.finish();
}

/// 1M schedules of [`spread_def`], advanced in 100 ms steps of virtual
/// time for one virtual hour: fires per second of wall time over the whole
/// run, and the cost of an `Advance` with nothing due.
fn spread(c: &mut Criterion) {
    const N: usize = 1_000_000;
    let mut config = EngineConfig::default();
    config.limits.pending_commands = 4 * N;
    let mut e = Engine::new(config);
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    e.handle(t(START), Input::DeclareQueue(q)).unwrap();
    for i in 0..N {
        e.handle(t(START), Input::UpsertSchedule(spread_def(i)))
            .unwrap();
    }
    drain(&mut e);
    let (mut now, mut fires) = (START, 0u64);
    let begin = Instant::now();
    for _ in 0..36_000 {
        now += 100;
        e.handle(t(now), Input::Advance).unwrap();
        fires += drain(&mut e);
    }
    let wall = begin.elapsed().as_secs_f64();
    eprintln!(
        "engine/spread: 1M schedules, 36,000 advances of 100 ms (1 virtual hour): {fires} fires in {wall:.2} s = {:.2} M fires/s, {:.1} µs per advance",
        fires as f64 / wall / 1e6,
        wall * 1e6 / 36_000.0
    );
    let mut g = c.benchmark_group("engine/spread");
    g.sample_size(20).measurement_time(Duration::from_secs(2));
    g.bench_function("advance_nothing_due_1M", |b| {
        b.iter(|| {
            e.handle(t(now), Input::Advance).unwrap();
            black_box(e.pending_commands())
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    spread(c);
    ten_year_jump(c);
    upsert(c, 200_000, "200k");
    upsert(c, 1_000_000, "1M");
    queue_roundtrip(c);
    scale(c, 1_000, "1k", false);
    scale(c, 100_000, "100k", true);
    scale(c, 1_000_000, "1M", true);
}

criterion_group!(engine, benches);
criterion_main!(engine);
