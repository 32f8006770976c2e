//! Crash recovery with real processes: the built `chime` binary is killed
//! with SIGKILL at pseudo-random moments and restarted on the same data
//! directory. The workers' own side-effect log and the daemons' logs then
//! show that no fire was issued twice, and that a job ran again only in a
//! new attempt (a crash interrupted the previous one).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn spawn(config: &Path, data: &Path, log: &Path) -> Child {
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(config)
        .arg("--data")
        .arg(data)
        .args(["--snapshot-every", "20"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

fn running_lines(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches("chime running")
        .count()
}

/// xorshift: reproducible "random" kill moments.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn kill_9_and_restart_never_double_fires() {
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.log");
    let daemon_log = dir.path().join("daemon.log");
    let data = dir.path().join("data");
    let config = dir.path().join("chime.toml");
    std::fs::write(
        &config,
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
target = {{ queue = "work" }}

[[worker]]
queue = "work"
concurrency = 4
command = ["sh", "-c", "echo \"$CHIME_FIRE_ID $CHIME_ATTEMPT $CHIME_JOB_ID\" >> {}; sleep 0.4"]
"#,
            effects.display()
        ),
    )
    .unwrap();

    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let kills = 8;
    for _ in 0..kills {
        let mut child = spawn(&config, &data, &daemon_log);
        std::thread::sleep(Duration::from_millis(400 + next(&mut seed) % 1200));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    // A last run that drains what the crashes left, then a graceful stop.
    let before = running_lines(&daemon_log);
    let mut child = spawn(&config, &data, &daemon_log);
    // Wait until it is up (signal handlers installed), however loaded the
    // machine is, then let it work a while.
    for _ in 0..400 {
        if running_lines(&daemon_log) > before {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running_lines(&daemon_log) > before, "the last run started");
    std::thread::sleep(Duration::from_millis(3_000));
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful stop exits 0: {status}");
    // Orphaned `sh` children of killed daemons may still be finishing.
    std::thread::sleep(Duration::from_millis(500));

    let effects = std::fs::read_to_string(&effects).unwrap();
    let mut attempts: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for line in effects.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(parts.len(), 3, "{line:?}");
        attempts
            .entry(parts[0].to_owned())
            .or_default()
            .push(parts[1].parse().unwrap());
    }
    assert!(attempts.len() >= 3, "fires ran: {attempts:?}");
    for (fire, seen) in &attempts {
        let distinct: BTreeSet<_> = seen.iter().collect();
        assert_eq!(
            distinct.len(),
            seen.len(),
            "{fire} ran the same attempt twice: {seen:?}"
        );
    }
    let reran = attempts.values().filter(|a| a.len() > 1).count();

    // Every fire the daemons logged, across all runs, is logged once.
    let log = std::fs::read_to_string(&daemon_log).unwrap();
    let mut fires = BTreeSet::new();
    for line in log.lines().filter(|l| l.contains(" fire fire=")) {
        let id = line
            .split(" fire fire=")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        assert!(fires.insert(id.to_owned()), "fire {id} issued twice");
    }
    // A run killed early may not have got that far; the last one did.
    let recovered = log.matches("recovered").count();
    assert!(
        (2..=kills + 1).contains(&recovered),
        "{recovered} recoveries"
    );
    eprintln!(
        "{recovered} recoveries, {} fires logged, {} fires ran, {reran} re-ran in a later attempt",
        fires.len(),
        attempts.len()
    );
}
