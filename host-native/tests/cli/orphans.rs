//! A command job's processes do not outlive a `kill -9` of the daemon: a
//! job that takes 3 s (`sh` with a `sleep` grandchild) is killed mid-run
//! with its daemon; once the restarted daemon is up, no process of the
//! first attempt is left (the `sh` died with the daemon, the `sleep` was
//! killed at start), and the job ends with exactly one complete run, the
//! retry's, which the restart's `recover` starts at once. Before, the orphaned `sh` finished its run too: one fire, two
//! complete runs.

use crate::daemon::{Daemon, read, wait_for};
use std::path::Path;
use std::process::{Command, Stdio};

fn spawn(config: &Path, data: &Path, log: &Path, token: &str) -> Daemon {
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Daemon(
        Command::new(env!("CARGO_BIN_EXE_chime"))
            .args(["run", "--http", "off", "--config"])
            .arg(config)
            .arg("--data")
            .arg(data)
            .env("CHIME_LOG", "info")
            // Inherited by every process of every job: how /proc tells
            // this test's processes from the machine's others.
            .env("CHIME_ORPHAN_TEST", token)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .unwrap(),
    )
}

/// A live process's start time (field 22 of `/proc/PID/stat`); empty if
/// it is gone or a zombie (dead, waiting for a parent to reap it).
fn start_time(pid: &str) -> String {
    let stat = read(&Path::new("/proc").join(pid).join("stat"));
    let mut fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
    match fields.next() {
        Some("Z" | "X") | None => String::new(),
        Some(_) => fields.nth(18).unwrap_or("").to_string(),
    }
}

/// Live processes (not zombies) whose environment has all of `vars`.
fn processes_with(vars: &[String]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let stat = read(&e.path().join("stat"));
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        if state.starts_with('Z') || state.starts_with('X') || stat.is_empty() {
            continue;
        }
        let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
        let env: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
        if vars.iter().all(|v| env.contains(&v.as_bytes())) {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            found.push((name, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}

#[test]
fn a_killed_daemons_job_runs_once_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data, runs, log) = (
        dir.path().join("chime.toml"),
        dir.path().join("data"),
        dir.path().join("runs.txt"),
        dir.path().join("daemon.log"),
    );
    let token = format!("CHIME_ORPHAN_TEST={}", dir.path().display());
    let value = dir.path().display().to_string();
    // A 2 s lease: the retry comes soon, whether the restarted engine
    // releases the dead daemon's claims at once or lets the lease expire.
    std::fs::write(
        &config,
        format!(
            r#"
[[queue]]
name = "work"
leaseMs = 2000
maxAttempts = 3

[[schedule]]
name = "once"
spec = "@every 1s"
maxFires = 1
target = {{ queue = "work" }}

[[worker]]
queue = "work"
command = ["sh", "-c", "echo start $CHIME_ATTEMPT >> {r}; sleep 3; echo end $CHIME_ATTEMPT >> {r}"]
"#,
            r = runs.display()
        ),
    )
    .unwrap();

    let mut first = spawn(&config, &data, &log, &value);
    wait_for("the first attempt to start", &log, || {
        read(&runs).contains("start 1")
    });
    // The daemon records the attempt's process group right after the
    // spawn; the command may be quicker to write its marker.
    let ledger = data.join("job-processes");
    wait_for("the attempt's process group on record", &log, || {
        read(&ledger)
            .lines()
            .any(|l| !l.starts_with('#') && !l.starts_with("boot "))
    });
    // The first incarnation's job processes (`sh` and its `sleep`), by pid
    // and start time: the retry runs under the same attempt number (an
    // interruption is not a failed attempt), so only these tell them apart.
    let first_run: Vec<(String, String)> = processes_with(std::slice::from_ref(&token))
        .into_iter()
        .map(|(pid, _)| {
            let start = start_time(&pid);
            (pid, start)
        })
        .collect();
    assert!(!first_run.is_empty(), "attempt 1's processes were found");
    first.0.kill().unwrap(); // SIGKILL, mid-job
    first.0.wait().unwrap();

    let mut second = spawn(&config, &data, &log, &value);
    wait_for("the restarted daemon", &log, || {
        read(&log).matches("chime running").count() == 2
    });
    // Before claiming anything, the restarted daemon made sure nothing of
    // attempt 1 runs any more.
    let left: Vec<_> = first_run
        .iter()
        .filter(|(pid, start)| !start.is_empty() && start_time(pid) == *start)
        .collect();
    assert!(left.is_empty(), "the first run still running: {left:?}");

    wait_for("the job to complete", &log, || {
        read(&log).contains("job completed")
    });
    let ok = Command::new("kill")
        .args(["-TERM", &second.0.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    assert!(second.0.wait().unwrap().success(), "graceful stop exits 0");

    // Logs carry the wire names and plain values, not Rust's Debug text.
    let logged = read(&log);
    assert!(logged.contains(" reason=scheduled "), "{logged}");
    assert!(!logged.contains("reason=Scheduled"), "{logged}");
    assert!(!logged.contains("Some(\""), "{logged}");
    let text = read(&runs);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        ["start 1", "start 1", "end 1"],
        "two starts, one complete run (the retry's, under the same attempt \
         number: the interruption did not count as a failure)"
    );
    assert!(logged.contains("job interrupted"), "{logged}");
    let left = processes_with(std::slice::from_ref(&token));
    assert!(left.is_empty(), "processes left: {left:?}");
}
