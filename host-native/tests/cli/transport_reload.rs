//! A SIGHUP that changes transports, on the real daemon: transports are
//! built once at start, so the reload logs `transport changes take effect
//! at restart` naming each change (a queue's transport both ways, the
//! `[transport.redis]` table, never its URL with the password) and keeps
//! what runs: the queue in Redis stays external in the engine (no local
//! depth series), the local one stays local. No broker is needed: the
//! Redis transport connects on first use, and the URL points at a port
//! nothing listens on.

use crate::daemon::{Daemon, read, signal, wait_for};
use std::process::{Command, Stdio};

fn config(redis_queue: &str, port: u16) -> String {
    let mut text = String::from("[http]\naddress = \"127.0.0.1:0\"\n");
    for q in ["a", "b"] {
        text.push_str(&format!("\n[[queue]]\nname = \"{q}\"\n"));
        if q == redis_queue {
            text.push_str("transport = \"redis\"\n");
        }
    }
    text.push_str(&format!(
        "\n[transport.redis]\nurl = \"redis://:hunter2@127.0.0.1:{port}\"\n"
    ));
    text
}

fn metrics(base: &str) -> String {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .arg(format!("{base}/metrics"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_reload_names_transport_changes_and_keeps_the_running_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chime.toml");
    let log = dir.path().join("daemon.log");
    std::fs::write(&file, config("a", 1)).unwrap();
    let d = Daemon(
        Command::new(env!("CARGO_BIN_EXE_chime"))
            .args(["--log-format", "json", "run", "--config"])
            .arg(&file)
            .arg("--data")
            .arg(dir.path().join("data"))
            .env("CHIME_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let mut address = String::new();
    wait_for("the listener", &log, || {
        read(&log).lines().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
            if v["fields"]["message"] == "HTTP listener up (/healthz, /metrics, /v1)" {
                address = v["fields"]["address"].as_str().unwrap().to_owned();
                true
            } else {
                false
            }
        })
    });
    let base = format!("http://{address}");
    let local = |q: &str| {
        format!(r#"chime_queue_depth{{queue="{q}",state="available",transport="local"}}"#)
    };
    let before = metrics(&base);
    assert!(before.contains(&local("b")), "{before}");
    assert!(!before.contains(&local("a")), "a lives in Redis: {before}");

    // a moves to the engine, b to Redis, the URL changes: none applies.
    std::fs::write(&file, config("b", 2)).unwrap();
    signal(&d.0, "-HUP");
    let mut changed = String::new();
    wait_for("the transport change logged", &log, || {
        read(&log).lines().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
            let m = v["fields"]["message"].as_str().unwrap_or_default();
            if m.starts_with("transport changes take effect at restart") {
                changed = v["fields"]["changed"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                true
            } else {
                false
            }
        })
    });
    for want in [
        "queue a: transport redis -> local",
        "queue b: transport local -> redis",
        "[transport.redis]",
    ] {
        assert!(changed.contains(want), "{want:?} in {changed:?}");
    }
    assert!(
        !read(&log).contains("hunter2"),
        "the password is never logged"
    );
    // The reload went through (and changed nothing else), the engine
    // kept each queue where it runs.
    wait_for("the reload's end", &log, || {
        read(&log).contains("reload: nothing changed")
    });
    let after = metrics(&base);
    assert!(after.contains(&local("b")), "b stays local: {after}");
    assert!(!after.contains(&local("a")), "a stays in Redis: {after}");
}
