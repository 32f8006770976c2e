//! The daemon's signals and a closed log pipe, with real processes:
//! SIGUSR2 reloads (supercronic's reload signal; it used to kill the
//! daemon at once with no log line), SIGQUIT stops gracefully (it used to
//! be ignored); a daemon whose stderr reader is gone keeps running and
//! stops with exit 0, and a command whose stdout or stderr is a closed
//! pipe exits with its own status (they used to panic: exit 101).

use crate::daemon::{Daemon, read, signal, wait_for};
use std::path::Path;
use std::process::{Command, Stdio};

const CONFIG: &str = r#"
[[queue]]
name = "jobs"

[[schedule]]
name = "tick"
spec = "@every 1s"
target = { queue = "jobs" }

[[worker]]
queue = "jobs"
command = ["sh", "-c", "echo ran >> \"$CHIME_TEST_OUT\""]
"#;

fn daemon(dir: &Path, stderr: Stdio) -> Daemon {
    let config = dir.join("chime.toml");
    std::fs::write(&config, CONFIG).unwrap();
    Daemon(
        Command::new(env!("CARGO_BIN_EXE_chime"))
            .args(["run", "--http", "off", "--config"])
            .arg(&config)
            .arg("--data")
            .arg(dir.join("data"))
            .env("CHIME_LOG", "info")
            .env("CHIME_TEST_OUT", dir.join("out"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap(),
    )
}

/// A pipe whose reading end is already closed: every write gets EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

#[test]
fn sigusr2_reloads_and_sigquit_stops_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("daemon.log");
    let mut d = daemon(
        dir.path(),
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    wait_for("the daemon", &log, || read(&log).contains("chime running"));
    signal(&d.0, "-USR2");
    wait_for("the reload", &log, || {
        read(&log).contains("reload: nothing changed")
    });
    assert!(read(&log).contains("signal=\"SIGUSR2\""), "{}", read(&log));
    assert!(
        d.0.try_wait().unwrap().is_none(),
        "SIGUSR2 ended the daemon"
    );
    signal(&d.0, "-QUIT");
    let status = d.0.wait().unwrap();
    let text = read(&log);
    assert!(status.success(), "{status}\n{text}");
    assert!(text.contains("stop requested signal=\"SIGQUIT\""), "{text}");
    assert!(text.contains("stopped"), "{text}");
}

#[test]
fn a_closed_stderr_pipe_does_not_kill_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut d = daemon(dir.path(), closed_pipe());
    // Jobs run, so the daemon is up and has logged plenty.
    wait_for("two runs", &out, || read(&out).lines().count() >= 2);
    assert!(d.0.try_wait().unwrap().is_none(), "the daemon died");
    signal(&d.0, "-TERM");
    let status = d.0.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn errors_on_closed_pipes_keep_their_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[queue]]\nname = \"q\"\nleaseMs = \"x\"\n").unwrap();
    // `error: …` on a closed stderr.
    let run = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--http", "off", "--config"])
        .arg(&bad)
        .arg("--data")
        .arg(dir.path().join("data"))
        .stdout(Stdio::null())
        .stderr(closed_pipe())
        .status()
        .unwrap();
    assert_eq!(run.code(), Some(1), "{run}");
    // The problems on a closed stdout, then `error: …` on a closed stderr.
    let validate = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("validate")
        .arg(&bad)
        .stdout(closed_pipe())
        .stderr(closed_pipe())
        .status()
        .unwrap();
    assert_eq!(validate.code(), Some(1), "{validate}");
}
