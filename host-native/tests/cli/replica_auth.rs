//! `chime run --database` serves the API on the embedded daemon's rules:
//! a non-loopback `--http` without any `[[token]]` is refused at start
//! unless `--insecure-no-auth`, and with a token the guard answers 401
//! before the database is even reached (here it cannot be: nothing
//! listens at the URL, and the replica keeps retrying it).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn chime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chime"))
}

/// Nothing listens on port 1.
const NOWHERE: &str = "postgresql://chime@127.0.0.1:1/chime";

#[test]
fn a_replica_refuses_an_open_public_listener_and_guards_a_protected_one() {
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open.toml");
    std::fs::write(&open, "[[queue]]\nname = \"q\"\n").unwrap();
    let refused = chime()
        .args(["run", "--config"])
        .arg(&open)
        .args(["--database", NOWHERE, "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--insecure-no-auth"), "{stderr}");

    // With a token: 401 without it, on every route but /healthz.
    let token = "tok-replica";
    let hash = chime_native::http::hash_hex(token);
    let guarded = dir.path().join("guarded.toml");
    std::fs::write(
        &guarded,
        format!(
            "[[queue]]\nname = \"q\"\n\n[[token]]\nname = \"ops\"\nsha256 = \"{hash}\"\nscopes = [\"admin\"]\n"
        ),
    )
    .unwrap();
    let mut child = chime()
        .args(["--log-format", "json", "run", "--config"])
        .arg(&guarded)
        .args(["--database", NOWHERE, "--http", "127.0.0.1:0"])
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = loop {
        let line = lines.next().expect("replica log").unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["fields"]["message"] == "HTTP listener up (/healthz, /metrics, /v1)" {
            assert_eq!(v["fields"]["auth"], true, "{v}");
            break v["fields"]["address"].as_str().unwrap().to_owned();
        }
    };
    let status = |method: &str, path: &str, auth: Option<&str>| {
        let mut c = Command::new("curl");
        c.args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", method]);
        if let Some(t) = auth {
            c.args(["-H", &format!("Authorization: Bearer {t}")]);
        }
        let out = c.arg(format!("http://{address}{path}")).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(status("POST", "/v1/queues/q/jobs", None), "401");
    assert_eq!(status("PUT", "/v1/schedules/s", Some("wrong")), "401");
    assert_eq!(status("GET", "/v1/queues", None), "401");
    // With the token the request reaches the database, which is down.
    assert_eq!(status("GET", "/v1/queues", Some(token)), "503");
    assert_eq!(status("GET", "/healthz", None), "503");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(child.wait().unwrap().success());
}
