//! Fire lateness with many schedules, daemon-style: the real driver on the
//! wall clock (`SystemClock`) and the redb store (fsync per commit), a
//! local queue worked by a pool with a no-op handler.
//!
//! `cargo run --release -p chime-native --example lateness -- [SCHEDULES] [SECONDS] [CONCURRENCY] [PERIOD]`
//!
//! `SCHEDULES` (default 10,000): with `PERIOD` 1 (the default) every one
//! fires once a second, on the second, half `@every 1s`, half cron
//! `* * * * * *` (UTC): one burst of `SCHEDULES` fires a second. With
//! `PERIOD` p > 1, schedule i is cron `(i mod p)/p * * * * *`: each fires
//! every p seconds and a second's burst is `SCHEDULES`/p fires. All go
//! into the local queue `tick` (default overlap, `skip`). The schedules are upserted through
//! the driver's handle by concurrent callers, then the run lasts
//! `SECONDS` (default 30) of wall time; fires due in the first 2 s are
//! left out as warm-up. Three figures per fire, in milliseconds:
//!
//! - **engine**: `fired_at − due_at` as the engine reports it (the `now`
//!   of the driver turn that fired it, i.e. how late the driver woke);
//! - **executed**: wall time when the driver executed the `Fire` command
//!   (after the turn's commit returned) − `due_at`;
//! - **job start**: wall time when the no-op handler started on the fire's
//!   job (after the claim's commit and the pool's hand-off) − `due_at`.
//!
//! The driver's `fire` log event is read by a small `tracing` layer (no
//! log text is formatted or written). Also prints skipped boundaries, the
//! process's CPU time and `VmRSS`/`VmHWM` after setup and at the end.

use chime_core::{Input, QueueConfig, ScheduleDef};
use chime_native::driver::SystemClock;
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, PoolConfig};
use chime_native::{Setup, start};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `VmRSS` and `VmHWM` of this process, in MiB.
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    format!(
        "VmRSS {:.1} MiB, VmHWM {:.1} MiB",
        field("VmRSS:"),
        field("VmHWM:")
    )
}

/// User + system CPU time of this process so far, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Samples in ms, recorded only for fires due at or after `from`.
#[derive(Default)]
struct Samples {
    engine: Vec<i64>,
    executed: Vec<i64>,
    job_start: Vec<i64>,
    skipped: u64,
}

struct Recorder {
    samples: Arc<Mutex<Samples>>,
    from: Arc<AtomicU64>,
}

/// The fields of one driver event that matter here.
#[derive(Default)]
struct Fields {
    fire: Option<String>,
    late_ms: Option<i64>,
    count: Option<u64>,
    message: Option<String>,
}

impl Visit for Fields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "late_ms" {
            self.late_ms = Some(value);
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "count" => self.count = Some(value),
            "late_ms" => self.late_ms = Some(value as i64),
            _ => {}
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "fire" => self.fire = Some(format!("{value:?}")),
            "message" => self.message = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if !event
            .metadata()
            .target()
            .starts_with("chime_native::driver")
        {
            return;
        }
        let now = wall_ms();
        let mut f = Fields::default();
        event.record(&mut f);
        let from = self.from.load(Ordering::Relaxed) as i64;
        if let (Some(fire), Some(late)) = (&f.fire, f.late_ms) {
            let Some(nominal) = fire
                .rsplit_once('@')
                .and_then(|(_, n)| n.parse::<i64>().ok())
            else {
                return;
            };
            if nominal >= from {
                let mut s = self.samples.lock().unwrap();
                s.engine.push(late);
                s.executed.push(now - nominal);
            }
        } else if f.message.as_deref() == Some("boundaries skipped") {
            self.samples.lock().unwrap().skipped += f.count.unwrap_or(1);
        }
    }
}

fn schedule(i: usize, period: usize) -> ScheduleDef {
    let spec = if period > 1 {
        format!("{}/{period} * * * * *", i % period)
    } else if i.is_multiple_of(2) {
        "@every 1s".to_owned()
    } else {
        "* * * * * *".to_owned()
    };
    let def = serde_json::json!({
        "name": format!("s{i:06}"),
        "spec": spec,
        "target": {"queue": "tick", "payload": {"i": i}},
    });
    serde_json::from_value(def).expect("a valid schedule definition")
}

fn summary(name: &str, v: &mut [i64]) -> String {
    if v.is_empty() {
        return format!("{name}: no samples");
    }
    v.sort_unstable();
    let q = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
    format!(
        "{name}: p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms ({} fires)",
        q(0.50),
        q(0.99),
        q(0.999),
        v[v.len() - 1],
        v.len()
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let arg = |i: usize, default: usize| -> anyhow::Result<usize> {
        Ok(std::env::args().nth(i).map_or(Ok(default), |a| a.parse())?)
    };
    let schedules = arg(1, 10_000)?;
    let seconds = arg(2, 30)? as u64;
    let concurrency = arg(3, 1_000)?.max(1);
    let period = arg(4, 1)?.clamp(1, 59);

    let samples = Arc::new(Mutex::new(Samples::default()));
    // Nothing is recorded until the warm-up is over.
    let from = Arc::new(AtomicU64::new(u64::MAX >> 1));
    tracing_subscriber::registry()
        .with(Recorder {
            samples: samples.clone(),
            from: from.clone(),
        })
        .init();

    let recording = Arc::new(AtomicBool::new(false));
    let (s2, r2, f2) = (samples.clone(), recording.clone(), from.clone());
    let handler: Handler = Arc::new(move |job| {
        if r2.load(Ordering::Relaxed)
            && let Some(fire) = &job.fire
        {
            let nominal = fire.nominal.as_millis();
            if nominal >= f2.load(Ordering::Relaxed) as i64 {
                s2.lock().unwrap().job_start.push(wall_ms() - nominal);
            }
        }
        Box::pin(async { Ok(()) })
    });
    let mut pool = PoolConfig::new("tick");
    pool.concurrency = concurrency;
    let dir = tempfile::tempdir()?;
    let setup = Setup {
        queues: vec![QueueConfig::new("tick")],
        pools: vec![(pool, handler)],
        ..Setup::default()
    };
    let store = RedbStore::open(dir.path())?;
    let running = start(setup, Box::new(store), Arc::new(SystemClock)).await?;

    let t = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for chunk in (0..schedules)
        .collect::<Vec<_>>()
        .chunks(schedules.div_ceil(256).max(1))
    {
        let (handle, chunk) = (running.handle().clone(), chunk.to_vec());
        calls.spawn(async move {
            for i in chunk {
                let r = handle
                    .call(Input::UpsertSchedule(schedule(i, period)))
                    .await;
                r.expect("driver running").expect("schedule accepted");
            }
        });
    }
    while let Some(r) = calls.join_next().await {
        r?;
    }
    println!(
        "{schedules} schedules upserted in {:.2?}; {}",
        t.elapsed(),
        memory()
    );

    let warm_until = wall_ms() + 2_000;
    from.store(warm_until as u64, Ordering::Relaxed);
    recording.store(true, Ordering::Relaxed);
    let cpu = cpu_seconds();
    let commits = running.handle().vitals().read().commits;
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let end = wall_ms();
    recording.store(false, Ordering::Relaxed);
    // Nothing due after the end counts (its jobs may not have run yet).
    from.store(u64::MAX >> 1, Ordering::Relaxed);
    let cpu = cpu_seconds() - cpu;
    let commits = running.handle().vitals().read().commits - commits;
    let mem = memory();
    running.shutdown().await?;

    let mut s = std::mem::take(&mut *samples.lock().unwrap());
    let span_s = (end - warm_until) as f64 / 1e3;
    println!(
        "measured {span_s:.1} s after a 2 s warm-up: {} fires executed (~{:.0}/s), \
         {} jobs started, {} boundaries skipped (all causes, whole run); \
         {commits} commits; CPU {cpu:.2} s over {seconds} s; {mem}",
        s.executed.len(),
        s.executed.len() as f64 / span_s,
        s.job_start.len(),
        s.skipped,
    );
    println!("{}", summary("engine fired_at - due_at", &mut s.engine));
    println!("{}", summary("Fire executed - due_at", &mut s.executed));
    println!("{}", summary("job start - due_at", &mut s.job_start));
    Ok(())
}
