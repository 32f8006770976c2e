//! A crontab daemon's life, as real processes: `chime run --crontab` runs
//! `@reboot` once and each line's command with the crontab's variables and
//! `%` stdin; SIGHUP with an edited file swaps the lines; SIGHUP with a
//! broken file is refused and the running lines keep firing; `chime
//! inspect` refuses the held directory, then reads it once the daemon has
//! stopped; `chime replay` verifies its journal.

use crate::daemon::{Daemon, read, signal, wait_for};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn chime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chime"))
}

fn count(p: &Path, line: &str) -> usize {
    read(p).lines().filter(|l| *l == line).count()
}

#[test]
fn run_reload_inspect_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (tab, data, out, log) = (
        dir.path().join("crontab"),
        dir.path().join("data"),
        dir.path().join("out"),
        dir.path().join("daemon.log"),
    );
    let o = out.display();
    // Six fields: every second.
    std::fs::write(
        &tab,
        format!(
            "# test crontab\n\
             GREETING = \"hello there\"\n\
             @reboot echo boot >> {o}\n\
             * * * * * * echo \"a $GREETING\" >> {o}\n\
             * * * * * * cat >> {o}%in-1%in-2\n"
        ),
    )
    .unwrap();
    let mut daemon = Daemon(
        chime()
            .args(["run", "--crontab"])
            .arg(&tab)
            .arg("--data")
            .arg(&data)
            .env("CHIME_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );

    wait_for("two runs of each line", &log, || {
        count(&out, "a hello there") >= 2 && count(&out, "in-2") >= 2
    });
    assert_eq!(count(&out, "boot"), 1, "@reboot runs once");
    assert_eq!(
        count(&out, "in-1"),
        count(&out, "in-2"),
        "% splits stdin lines"
    );

    // The data directory is held: inspect says so and points at --url.
    let held = chime()
        .args(["inspect", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(!held.status.success());
    let err = String::from_utf8(held.stderr).unwrap();
    assert!(
        err.contains("in use by a running chime daemon") && err.contains("--url"),
        "{err}"
    );

    // Edit: line `a` goes, line `b` comes; the `cat` line stays as it was.
    std::fs::write(
        &tab,
        format!(
            "GREETING = \"hello there\"\n\
             @reboot echo boot >> {o}\n\
             * * * * * * cat >> {o}%in-1%in-2\n\
             * * * * * * echo b >> {o}\n"
        ),
    )
    .unwrap();
    signal(&daemon.0, "-HUP");
    wait_for("line b", &log, || count(&out, "b") >= 1);
    assert!(
        read(&log).contains("reload: schedule removed"),
        "{}",
        read(&log)
    );
    // A run of `a` that started before the reload may still land: let it.
    std::thread::sleep(Duration::from_millis(1_500));
    let a_runs = count(&out, "a hello there");
    let b_runs = count(&out, "b");

    // A broken file is refused; the lines in force keep firing.
    std::fs::write(&tab, "* * * * * * echo b >> /dev/null\n61 * * * * echo c\n").unwrap();
    signal(&daemon.0, "-HUP");
    wait_for("the refusal", &log, || {
        read(&log).contains("reload refused")
    });
    wait_for("line b after the refusal", &log, || {
        count(&out, "b") >= b_runs + 2
    });
    assert_eq!(count(&out, "a hello there"), a_runs, "line a stays removed");
    assert!(
        read(&log).contains("field spec: invalid_spec: minute 61"),
        "{}",
        read(&log)
    );

    signal(&daemon.0, "-TERM");
    let status = daemon.0.wait().unwrap();
    assert!(status.success(), "{}", read(&log));
    assert_eq!(count(&out, "boot"), 1);

    // Stopped: inspect reads the directory.
    let json = chime()
        .args(["inspect", "--json", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> = v["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["def"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("cat-")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("echo-")), "{names:?}");
    let queue = &v["queues"][0]["stats"];
    assert_eq!(queue["queue"], "crontab");
    let done = queue["totals"]["completed"].as_u64().unwrap() as usize;
    assert!(done >= 1 + 2 * 2 + a_runs, "{queue}");
    let text = chime()
        .args(["inspect", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("schedules (2):") && text.contains("  crontab  scheduled"),
        "{text}"
    );
    // What each schedule runs, from the data (a crontab's payloads).
    assert!(
        text.contains("commands (2):") && text.contains(&format!("  echo b >> {o}")),
        "{text}"
    );

    // The journal since the last snapshot replays identically.
    let replay = chime().arg("replay").arg(&data).output().unwrap();
    let summary = String::from_utf8(replay.stdout).unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    assert!(summary.starts_with("ok: "), "{summary}");
}
