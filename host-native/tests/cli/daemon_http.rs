//! The `chime run` daemon's HTTP side, with real processes: `[http]
//! address` in the config (port 0), `--http off` overriding it,
//! `--log-format json` writing one JSON object per line, and `chime
//! inspect --url` reading the live daemon.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const CONFIG: &str = r#"
[http]
address = "127.0.0.1:0"

[[queue]]
name = "jobs"

[[schedule]]
name = "hourly"
spec = "@every 1h"
target = { queue = "jobs" }
"#;

/// Starts the daemon and a thread forwarding its stderr lines, parsed.
fn spawn(dir: &Path, extra: &[&str]) -> (Child, mpsc::Receiver<Value>) {
    let config = dir.join("chime.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["--log-format", "json", "run", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(dir.join("data"))
        .args(extra)
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            let json: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
            if tx.send(json).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Log lines up to and including the first whose message starts with
/// `prefix` (panics after 10 s).
fn until(rx: &mpsc::Receiver<Value>, prefix: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no {prefix:?} line; saw {seen:#?}"));
        let hit = line["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(prefix));
        seen.push(line);
        if hit {
            return seen;
        }
    }
}

/// SIGTERM, then the exit status must be success.
fn stop(mut child: Child, rx: &mpsc::Receiver<Value>) {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    until(rx, "stopped");
    assert!(child.wait().unwrap().success());
}

#[tokio::test]
async fn the_daemon_serves_http_from_its_config_and_logs_json() {
    let dir = tempfile::tempdir().unwrap();
    let (child, rx) = spawn(dir.path(), &[]);
    let lines = until(&rx, "HTTP listener up");
    let up = lines.last().unwrap();
    assert_eq!(up["level"], "INFO");
    assert_eq!(up["target"], "chime_native::http");
    let address = up["fields"]["address"].as_str().unwrap().to_owned();
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    assert_ne!(address, "127.0.0.1:0");
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["message"] == "schedule upserted"
                && l["fields"]["schedule"] == "hourly"),
        "{lines:#?}"
    );
    until(&rx, "chime running");

    let client = chime_native::worker::http::client(Duration::from_secs(5)).unwrap();
    let health = client
        .get(format!("http://{address}/healthz"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let health: Value = serde_json::from_str(&health).unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["schedules"], 1);
    let metrics = client
        .get(format!("http://{address}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        metrics.headers()["content-type"],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    let text = metrics.text().await.unwrap();
    assert!(text.contains("\nchime_leader 1\n"), "{text}");
    assert!(
        text.contains(
            "chime_queue_depth{queue=\"jobs\",state=\"available\",transport=\"local\"} 0\n"
        )
    );

    // `chime inspect --url` reads the same picture from the live daemon
    // (the data directory is held, so `--data` could not).
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["inspect", "--json", "--url", &format!("http://{address}")])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let view: chime_native::http::Inspection = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = view.schedules.iter().map(|s| s.def.name.as_str()).collect();
    assert_eq!(names, ["hourly"]);
    assert!(view.schedules[0].next_nominal.is_some());
    assert_eq!(view.queues.len(), 1);
    assert_eq!(view.queues[0].stats.queue, "jobs");
    stop(child, &rx);
}

#[tokio::test]
async fn http_off_overrides_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let (child, rx) = spawn(dir.path(), &["--http", "off"]);
    let lines = until(&rx, "chime running");
    assert!(
        !lines.iter().any(|l| l["target"] == "chime_native::http"),
        "{lines:#?}"
    );
    stop(child, &rx);
}
