//! Schedules made through the API belong to the API: a restart and a
//! reload of the config (which prune or remove schedules the config no
//! longer declares) keep them, and the API may not overwrite or remove a
//! schedule the config declares (409 `schedule_declared`, nothing
//! changes). Real processes, the same data directory across starts.

use crate::daemon::{Daemon, read, signal, wait_for};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

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

fn start(dir: &Path, n: usize) -> (Daemon, String) {
    let log = dir.join(format!("log{n}"));
    let child = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["--log-format", "json", "run", "--config"])
        .arg(dir.join("chime.toml"))
        .arg("--data")
        .arg(dir.join("data"))
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut address = None;
    wait_for("the listener", &log, || {
        address = read(&log).lines().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            let up = v["fields"]["message"] == "HTTP listener up (/healthz, /metrics, /v1)";
            up.then(|| v["fields"]["address"].as_str().unwrap().to_owned())
        });
        address.is_some()
    });
    (Daemon(child), format!("http://{}", address.unwrap()))
}

/// `curl`: (status, body as JSON or null).
fn call(method: &str, url: &str, body: &str) -> (u16, Value) {
    let out = Command::new("curl")
        .args(["-sS", "-w", "\n%{http_code}", "-X", method, url])
        .args(["-H", "content-type: application/json", "-d", body])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (
        status.parse().unwrap(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

fn names(base: &str) -> Vec<String> {
    let (status, v) = call("GET", &format!("{base}/v1/schedules"), "");
    assert_eq!(status, 200, "{v}");
    let list = v["schedules"].as_array().unwrap_or_else(|| panic!("{v}"));
    list.iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

fn stop(d: Daemon) {
    let mut d = d;
    signal(&d.0, "-TERM");
    assert!(d.0.wait().unwrap().success());
}

#[test]
fn api_schedules_survive_restart_and_reload_and_declared_ones_stay_the_configs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chime.toml"), CONFIG).unwrap();
    let (d, base) = start(dir.path(), 1);
    let adhoc = r#"{"spec": "@every 1m", "target": {"queue": "jobs"}}"#;
    let (status, v) = call("PUT", &format!("{base}/v1/schedules/adhoc"), adhoc);
    assert_eq!(status, 200, "{v}");
    let (status, v) = call("PUT", &format!("{base}/v1/schedules/hourly"), adhoc);
    assert_eq!(
        (status, v["error"].as_str()),
        (409, Some("schedule_declared")),
        "{v}"
    );
    assert_eq!(v["field"], "schedule", "{v}");
    let (status, v) = call("DELETE", &format!("{base}/v1/schedules/hourly"), "");
    assert_eq!(status, 409, "{v}");
    let (_, hourly) = call("GET", &format!("{base}/v1/schedules/hourly"), "");
    assert_eq!(
        hourly["schedule"]["def"]["spec"], "@every 1h",
        "unchanged: {hourly}"
    );
    assert_eq!(names(&base), ["adhoc", "hourly"]);
    let (_, list) = call("GET", &format!("{base}/v1/schedules"), "");
    assert_eq!(list["schedules"][0]["origin"], "api", "{list}");
    assert_eq!(list["schedules"][1]["origin"], "declared", "{list}");
    stop(d);

    // A restart prunes declared schedules no longer declared, not the API's.
    let (d, base) = start(dir.path(), 2);
    assert_eq!(names(&base), ["adhoc", "hourly"]);
    // A reload that drops `hourly` from the config removes it, not `adhoc`.
    std::fs::write(
        dir.path().join("chime.toml"),
        CONFIG.replace(
            "[[schedule]]\nname = \"hourly\"",
            "[[schedule]]\nname = \"daily\"",
        ),
    )
    .unwrap();
    signal(&d.0, "-HUP");
    let log = dir.path().join("log2");
    wait_for("the reload", &log, || {
        read(&log).contains("reload: schedule removed")
    });
    assert_eq!(names(&base), ["adhoc", "daily"]);
    // The API removes its own.
    let (status, v) = call("DELETE", &format!("{base}/v1/schedules/adhoc"), "");
    assert_eq!(
        (status, &v["scheduleRemoved"]["existed"]),
        (200, &Value::Bool(true)),
        "{v}"
    );
    stop(d);
    let (d, base) = start(dir.path(), 3);
    assert_eq!(names(&base), ["daily"]);
    stop(d);
}
