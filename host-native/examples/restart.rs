//! Restart time and resident memory: a data directory holding a snapshot
//! with 100,000 schedules plus a 1,000,000-entry journal, recovered with
//! [`Driver::recover`] (store load + snapshot restore + journal replay).
//!
//! ```sh
//! cargo run --release -p chime-native --example restart -- build DIR [SCHEDULES] [ENTRIES] [ROW]
//! cargo run --release -p chime-native --example restart -- recover DIR
//! cargo run --release -p chime-native --example restart -- phases DIR
//! ```
//!
//! `build` makes `DIR` (which must not hold a store yet): `SCHEDULES`
//! (default 100,000) schedules upserted on an engine and stored as the
//! snapshot (half `@every 1h` — they do not come due in the journal's
//! span — half daily cron at a spread-out second, a fifth of those in
//! America/New_York, so about 70 come due per minute), then `ENTRIES`
//! (default 1,000,000) journal entries appended `ROW` (default 500) per
//! commit, as a busy driver's turns would be: an `Advance` every 10 ms of
//! virtual time, enqueues, a batched claim and the completions of what
//! the claim returned. Each entry is handled by a generating engine
//! first, so every one is accepted on replay with the same result.
//!
//! `recover` times `RedbStore::open` + `Driver::recover` in a fresh
//! process and prints `VmRSS`/`VmHWM` before and after. `phases` times
//! each step on its own: snapshot read + parse, `Engine::restore`, the
//! journal read + parse alone, then read + parse + replay.

use chime_core::{
    Engine, EngineConfig, EnqueueRequest, Input, JournalEntry, Payload, QueueConfig, Reply,
    ScheduleDef, Timestamp,
};
use chime_native::driver::{Driver, DriverConfig, SystemClock};
use chime_native::store::{RedbStore, Store};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

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
    // After the command name (in parentheses): utime and stime are the
    // 12th and 13th fields, in clock ticks (100 Hz).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn schedule(i: usize) -> ScheduleDef {
    let (spec, tz) = if i.is_multiple_of(2) {
        ("@every 1h".to_owned(), None)
    } else {
        let s = (i / 2) % 86_400;
        let spec = format!("{} {} {} * * *", s % 60, (s / 60) % 60, s / 3600);
        (spec, (i % 10 == 1).then_some("America/New_York"))
    };
    let def = serde_json::json!({
        "name": format!("sched-{i:06}"),
        "spec": spec,
        "tz": tz,
        "target": {"queue": "fired", "payload": {"schedule": i}},
    });
    serde_json::from_value(def).expect("a valid schedule definition")
}

fn build(dir: &Path, schedules: usize, entries: usize, row: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut now = Timestamp::from_millis(1_798_761_600_000).expect("2027-01-01"); // 2027-01-01T00:00Z
    let mut engine = Engine::new(EngineConfig::default());
    let ok = |r: Result<Reply, chime_core::Error>| r.expect("accepted");
    ok(engine.handle(now, Input::DeclareQueue(QueueConfig::new("work"))));
    ok(engine.handle(now, Input::DeclareQueue(QueueConfig::new("fired"))));
    for i in 0..schedules {
        ok(engine.handle(now, Input::UpsertSchedule(schedule(i))));
    }
    let mut commands = Vec::new();
    engine.drain_commands(&mut commands);
    let mut store = RedbStore::open(dir)?;
    assert_eq!(
        store.journal_len(),
        0,
        "{} already holds a store",
        dir.display()
    );
    store.write_snapshot(&engine.snapshot())?;
    println!(
        "snapshot with {} schedules written in {:.2?}",
        engine.schedule_count(),
        started.elapsed()
    );

    let started = Instant::now();
    let mut journal: Vec<JournalEntry> = Vec::with_capacity(row);
    let mut written = 0;
    let mut n = 0u64;
    let mut claimed = Vec::new();
    while written + journal.len() < entries {
        // One virtual turn: 10 ms later, an advance, 20 enqueues, the
        // completions of the last claim, then a claim of up to 20.
        now = now.saturating_add_ms(10);
        let mut turn = vec![Input::Advance];
        for _ in 0..20 {
            n += 1;
            let payload = Payload::from_json(&format!("{{\"n\":{n},\"kind\":\"bench\"}}"))?;
            turn.push(Input::Enqueue(EnqueueRequest::new("work", payload)));
        }
        for (job, token) in claimed.drain(..) {
            turn.push(Input::Complete { job, token });
        }
        turn.push(Input::Claim {
            queue: "work".into(),
            worker: "bench-worker".into(),
            max: 20,
            lease_ms: Some(60_000),
        });
        for input in turn {
            let reply = ok(engine.handle(now, input.clone()));
            if let Reply::Claimed { jobs } = reply {
                claimed.extend(jobs.into_iter().map(|c| (c.job, c.token)));
            }
            engine.drain_commands(&mut commands);
            commands.clear();
            journal.push(JournalEntry { now, input });
            if journal.len() == row {
                store.append(&journal)?;
                written += journal.len();
                journal.clear();
            }
        }
    }
    store.append(&journal)?;
    written += journal.len();
    println!(
        "{written} journal entries appended in {:.2?} (virtual span {} s); \
         the engine now has {} schedules, {} live jobs",
        started.elapsed(),
        (now.as_millis() - 1_798_761_600_000) / 1000,
        engine.schedule_count(),
        engine.live_jobs(),
    );
    Ok(())
}

/// Each phase of a recovery on its own, through the same public calls as
/// [`Driver::recover`], with wall and CPU time.
fn phases(dir: &Path) -> anyhow::Result<()> {
    let timed = |what: &str, t: Instant, cpu: f64| {
        println!(
            "{what}: {:.2?} (CPU {:.2} s); {}",
            t.elapsed(),
            cpu_seconds() - cpu,
            memory()
        );
        (Instant::now(), cpu_seconds())
    };
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let mut store = RedbStore::open(dir)?;
    let (t, cpu) = timed("RedbStore::open", t, cpu);
    let snapshot = store.load_snapshot()?.expect("a snapshot");
    let (t, cpu) = timed("Store::load_snapshot (read + JSON parse)", t, cpu);
    let mut engine = Engine::restore(snapshot)?;
    let (t, cpu) = timed("Engine::restore", t, cpu);
    let mut n = 0u64;
    store.for_each_entry(&mut |_| n += 1)?;
    let (t, cpu) = timed(
        &format!("Store::for_each_entry, {n} entries read and parsed, dropped"),
        t,
        cpu,
    );
    let mut commands = Vec::new();
    store.for_each_entry(&mut |e| {
        let _ = engine.handle(e.now, e.input);
        engine.drain_commands(&mut commands);
        commands.clear();
    })?;
    timed("the same, each handled by the engine (replay)", t, cpu);
    Ok(())
}

/// [`Driver::recover`] alone, in a fresh process, for its time and memory.
fn recover(dir: &Path) -> anyhow::Result<()> {
    println!("before: {}", memory());
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let store = RedbStore::open(dir)?;
    let driver = Driver::recover(
        Box::new(store),
        Arc::new(SystemClock),
        DriverConfig::default(),
    )?;
    let took = t.elapsed();
    let took_cpu = cpu_seconds() - cpu;
    println!(
        "RedbStore::open + Driver::recover (load + restore + replay) {took:.2?} (CPU {took_cpu:.2} s): \
         {} schedules, {} live jobs; {}",
        driver.engine().schedule_count(),
        driver.engine().live_jobs(),
        memory()
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: usize| -> anyhow::Result<usize> {
        Ok(args.get(i).map_or(Ok(default), |a| a.parse())?)
    };
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("build"), Some(dir)) => build(
            Path::new(dir),
            num(2, 100_000)?,
            num(3, 1_000_000)?,
            num(4, 500)?.max(1),
        ),
        (Some("recover"), Some(dir)) => recover(Path::new(dir)),
        (Some("phases"), Some(dir)) => phases(Path::new(dir)),
        _ => anyhow::bail!(
            "usage: restart build DIR [SCHEDULES] [ENTRIES] [ROW] | restart recover DIR \
             | restart phases DIR"
        ),
    }
}
