//! Crash recovery with real processes: the built `chime` binary is killed
//! with SIGKILL at pseudo-random moments (7 times for each of 3 seeds) and
//! restarted on the same data directory. A last run pauses the schedule
//! and drains the queue. Then, from the journal (replayed through the
//! core), the workers' own side-effect log and the daemons' logs:
//! - no fire id was issued twice, and every fire a daemon logged is in the
//!   journal (a logged fire was durable);
//! - every boundary from the first to the schedule's cursor was fired or
//!   skipped with a reason, exactly once (counted here by arithmetic on
//!   the `@every 1s` grid, not by the engine);
//! - every fire's job completed, and its side effect ran at least once;
//!   a side effect repeats only after the journal says the attempt was
//!   interrupted (a crash: `job_interrupted` at the next start, under the
//!   same attempt number) or failed (`job_retried`, a later attempt);
//! - and after all that, a graceful stop (SIGTERM) exits 0.
//!
//! Inputs acknowledged to callers are covered by `store_write_faults.rs`
//! (the CLI has no enqueue API to call).

use chime_core::{Command, Event, JobState, journal};
use chime_native::store::{RedbStore, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const KILLS_PER_SEED: usize = 7;

fn spawn(config: &Path, data: &Path, log: &Path) -> Child {
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(config)
        .arg("--data")
        .arg(data)
        // Never snapshot, so the journal keeps the whole history (only a
        // graceful stop writes a snapshot).
        .args(["--snapshot-every", "100000000"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

fn count(log: &Path, what: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches(what)
        .count()
}

/// Waits until the daemon logging to `log` has started once more than
/// `before` times (signal handlers installed), however loaded the machine.
fn wait_started(log: &Path, before: usize) {
    let t = Instant::now();
    while count(log, "chime running") <= before {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "daemon did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// xorshift: reproducible "random" kill moments.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn config(effects: &Path, paused: bool) -> String {
    format!(
        r#"
[[queue]]
name = "work"
leaseMs = 1500
maxAttempts = 10
backoff = {{ baseMs = 200, capMs = 400 }}

[[schedule]]
name = "tick"
spec = "@every 1s"
overlap = "allow"
paused = {paused}
target = {{ queue = "work" }}

[[worker]]
queue = "work"
concurrency = 4
command = ["sh", "-c", "echo \"$CHIME_FIRE_ID $CHIME_ATTEMPT $CHIME_JOB_ID\" >> {}; sleep 0.4"]
"#,
        effects.display()
    )
}

/// Side effects by fire id: the attempt numbers seen, in order.
fn effects(path: &Path) -> BTreeMap<String, Vec<u32>> {
    let mut attempts: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(parts.len(), 3, "{line:?}");
        attempts
            .entry(parts[0].to_owned())
            .or_default()
            .push(parts[1].parse().unwrap());
    }
    attempts
}

/// Fire ids the daemons logged, each checked to be logged once.
fn logged_fires(log: &Path) -> BTreeSet<String> {
    let log = std::fs::read_to_string(log).unwrap();
    let mut fires = BTreeSet::new();
    for line in log.lines().filter(|l| l.contains(" fire fire=")) {
        let id = line.split(" fire fire=").nth(1).unwrap();
        let id = id.split_whitespace().next().unwrap();
        assert!(fires.insert(id.to_owned()), "fire {id} logged twice");
    }
    fires
}

fn run_seed(start: u64) {
    let mut seed = start;
    let dir = tempfile::tempdir().unwrap();
    let (effects_log, daemon_log) = (
        dir.path().join("effects.log"),
        dir.path().join("daemon.log"),
    );
    let (data, config_file) = (dir.path().join("data"), dir.path().join("chime.toml"));
    std::fs::write(&config_file, config(&effects_log, false)).unwrap();
    for _ in 0..KILLS_PER_SEED {
        let mut child = spawn(&config_file, &data, &daemon_log);
        std::thread::sleep(Duration::from_millis(300 + next(&mut seed) % 2200));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    // Drain: the schedule paused, run until the side effects stop (a
    // job orphaned by a kill is released at the start), then kill again.
    std::fs::write(&config_file, config(&effects_log, true)).unwrap();
    let before = count(&daemon_log, "chime running");
    let mut child = spawn(&config_file, &data, &daemon_log);
    wait_started(&daemon_log, before);
    let mut quiet_since = (
        Instant::now(),
        std::fs::metadata(&effects_log).map_or(0, |m| m.len()),
    );
    while quiet_since.0.elapsed() < Duration::from_millis(3_000) {
        std::thread::sleep(Duration::from_millis(100));
        let len = std::fs::metadata(&effects_log).map_or(0, |m| m.len());
        if len != quiet_since.1 {
            quiet_since = (Instant::now(), len);
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // A killed daemon's job processes die with it (worker/process.rs);
    // give the kernel a moment anyway before reading the store.
    std::thread::sleep(Duration::from_millis(500));

    // The whole history, replayed through the core.
    let mut store = RedbStore::open(&data).unwrap();
    let rec = store.load().unwrap();
    drop(store);
    assert!(rec.snapshot.is_none(), "no snapshot was written");
    let base = chime_core::Engine::new(chime_core::EngineConfig::default()).snapshot();
    let replayed = journal::replay(base, &rec.entries).unwrap();
    let mut fires = BTreeMap::new();
    let mut skipped: Vec<(i64, i64, u64)> = Vec::new();
    // Per job, the attempts that ended without completing (interrupted
    // by a kill, or failed and retried): each allows one more run.
    let mut reruns: BTreeMap<u64, usize> = BTreeMap::new();
    for json in &replayed.commands {
        match serde_json::from_str::<Command>(json).unwrap() {
            Command::Event(Event::JobInterrupted { job, .. } | Event::JobRetried { job, .. }) => {
                *reruns.entry(job.0).or_default() += 1;
            }
            Command::Fire(f) => {
                let id = f.fire_id.to_string();
                assert!(
                    fires.insert(id.clone(), f).is_none(),
                    "fire {id} issued twice"
                );
            }
            Command::Event(Event::FireSkipped {
                first, last, count, ..
            }) => skipped.push((first.as_millis(), last.as_millis(), count)),
            _ => {}
        }
    }
    let logged = logged_fires(&daemon_log);
    for id in &logged {
        assert!(
            fires.contains_key(id),
            "fire {id} logged but not in the journal"
        );
    }

    // Every boundary from the first to the cursor, exactly once.
    let info = replayed.engine.schedule("tick").unwrap();
    let cursor = info.next_nominal.unwrap().as_millis();
    let mut seen: BTreeMap<i64, &str> = BTreeMap::new();
    let mut mark = |b: i64, how: &'static str| {
        assert_eq!(b % 1_000, 0, "boundary {b} off the 1 s grid");
        if let Some(prev) = seen.insert(b, how) {
            panic!("boundary {b} accounted twice ({prev}, then {how})");
        }
    };
    for f in fires.values() {
        mark(f.nominal().as_millis(), "fired");
    }
    for &(first, last, n) in &skipped {
        assert_eq!((last - first) / 1_000 + 1, n as i64, "a skip run with gaps");
        for b in (first..=last).step_by(1_000) {
            mark(b, "skipped");
        }
    }
    let first = *seen.keys().next().expect("something happened");
    let expected = (cursor - first) / 1_000;
    assert_eq!(
        seen.len() as i64,
        expected,
        "boundaries [{first}, {cursor}) not all accounted"
    );
    assert_eq!(*seen.keys().last().unwrap(), cursor - 1_000);

    // Every fire's job completed; its side effect ran, and ran again only
    // after an interruption or a failure of the run before.
    let attempts = effects(&effects_log);
    for (id, f) in &fires {
        let job = f.job.expect("a local queue's fire has a job");
        let state = replayed.engine.job(job).map(|j| j.state);
        assert!(
            matches!(state, Some(JobState::Completed) | None),
            "fire {id}: job {} ended {state:?}",
            job.0
        );
        let seen = attempts
            .get(id)
            .unwrap_or_else(|| panic!("fire {id}: job never ran"));
        let allowed = 1 + reruns.get(&job.0).copied().unwrap_or(0);
        assert!(
            seen.len() <= allowed,
            "{id} ran {} times ({seen:?}) with {} interruptions or retries",
            seen.len(),
            allowed - 1
        );
        assert!(
            seen.windows(2).all(|w| w[0] <= w[1]),
            "{id}: attempts went back: {seen:?}"
        );
    }
    let recovered = count(&daemon_log, "recovered");
    let reran = attempts.values().filter(|a| a.len() > 1).count();
    eprintln!(
        "seed {start:#x}: {} kills, {recovered} recoveries, {} fires ({} logged), {} boundaries \
         skipped, {reran} fires re-ran in a later attempt",
        KILLS_PER_SEED + 1,
        fires.len(),
        logged.len(),
        seen.values().filter(|h| **h == "skipped").count(),
    );
    assert!(fires.len() >= 3, "fires ran: {}", fires.len());

    // After all that, a graceful stop exits 0.
    let before = count(&daemon_log, "chime running");
    let child = spawn(&config_file, &data, &daemon_log);
    wait_started(&daemon_log, before);
    let pid = child.id().to_string();
    let term = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(term.unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "graceful stop exits 0: {}",
        out.status
    );
}

#[test]
fn kill_9_and_restart_never_double_fires_nor_loses_a_boundary() {
    for seed in [
        0x9e37_79b9_7f4a_7c15_u64,
        0x2545_f491_4f6c_dd1d,
        0x1234_5678_9abc_def1,
    ] {
        run_seed(seed);
    }
}
