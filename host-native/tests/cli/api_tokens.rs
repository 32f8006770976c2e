//! Tokens end to end with real processes: `chime token new` prints a
//! token once and the `[[token]]` lines with its SHA-256; a daemon with
//! that table answers 401 without it, 403 outside its scope's pattern,
//! 200 inside; and a non-loopback `--http` without any token is refused
//! at start unless `--insecure-no-auth`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

fn chime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chime"))
}

/// `curl` status code of a request.
fn status(method: &str, url: &str, token: Option<&str>, body: &str) -> String {
    let mut c = Command::new("curl");
    c.args([
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-X",
        method,
        "-d",
        body,
        url,
    ]);
    if let Some(t) = token {
        c.args(["-H", &format!("Authorization: Bearer {t}")]);
    }
    String::from_utf8(c.output().unwrap().stdout).unwrap()
}

#[test]
fn a_new_token_works_within_its_scopes_and_open_listeners_stay_local() {
    let out = chime()
        .args([
            "token",
            "new",
            "ci",
            "--scope",
            "enqueue:emails*",
            "--scope",
            "read",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let token = stdout.lines().next().unwrap().to_owned();
    assert!(
        token.starts_with("chime_") && token.len() == 6 + 64,
        "{token}"
    );
    let table = stdout.split_once("[[token]]").unwrap().1;
    assert!(
        !table.contains(&token),
        "the config lines never hold the token"
    );
    assert!(
        table.contains(&chime_native::http::hash_hex(&token)),
        "{table}"
    );
    let again = chime()
        .args(["token", "new", "ci", "--scope", "read"])
        .output()
        .unwrap();
    assert_ne!(
        String::from_utf8(again.stdout).unwrap().lines().next(),
        Some(token.as_str())
    );
    let bad = chime()
        .args(["token", "new", "x", "--scope", "root"])
        .output()
        .unwrap();
    assert!(!bad.status.success());

    // A daemon with that table.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("chime.toml");
    std::fs::write(
        &config,
        format!(
            "[http]\naddress = \"127.0.0.1:0\"\n\n[[queue]]\nname = \"emails\"\n\n[[token]]{table}"
        ),
    )
    .unwrap();
    let mut child = chime()
        .args(["--log-format", "json", "run", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(dir.path().join("data"))
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = loop {
        let line = lines.next().expect("daemon log").unwrap();
        assert!(!line.contains(&token), "a token in the logs: {line}");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["fields"]["message"] == "HTTP listener up (/healthz, /metrics, /v1)" {
            assert_eq!(v["fields"]["auth"], true, "{v}");
            break v["fields"]["address"].as_str().unwrap().to_owned();
        }
    };
    let base = format!("http://{address}");
    let jobs = |q: &str| format!("{base}/v1/queues/{q}/jobs");
    assert_eq!(status("POST", &jobs("emails"), None, "{}"), "401");
    assert_eq!(
        status("POST", &jobs("emails"), Some("chime_wrong"), "{}"),
        "401"
    );
    assert_eq!(status("POST", &jobs("emails"), Some(&token), "{}"), "200");
    assert_eq!(status("POST", &jobs("sms"), Some(&token), "{}"), "403");
    assert_eq!(
        status("GET", &format!("{base}/v1/queues"), Some(&token), ""),
        "200"
    );
    assert_eq!(
        status(
            "PUT",
            &format!("{base}/v1/queues/emails"),
            Some(&token),
            "{}"
        ),
        "403"
    );
    assert_eq!(status("GET", &format!("{base}/healthz"), None, ""), "200");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(child.wait().unwrap().success());

    // Without tokens, a non-loopback address is refused at start...
    let open = dir.path().join("open.toml");
    std::fs::write(&open, "[[queue]]\nname = \"q\"\n").unwrap();
    let refused = chime()
        .args(["run", "--config"])
        .arg(&open)
        .arg("--data")
        .arg(dir.path().join("data2"))
        .args(["--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--insecure-no-auth"), "{stderr}");

    // ...unless asked for explicitly.
    let mut child = chime()
        .args(["--log-format", "json", "run", "--config"])
        .arg(&open)
        .arg("--data")
        .arg(dir.path().join("data3"))
        .args(["--http", "0.0.0.0:0", "--insecure-no-auth"])
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let up = std::iter::from_fn(|| lines.next())
        .map(|l| l.unwrap())
        .take(200)
        .any(|l| l.contains("HTTP listener up"));
    assert!(up, "the listener came up");
    std::thread::sleep(Duration::from_millis(50));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(child.wait().unwrap().success());
}

/// `chime token new … | head -n1` is how a script keeps only the token:
/// a reader that closed the pipe is no reason to fail (it used to panic
/// in `println!`, exit 101 under `set -o pipefail`).
#[test]
fn a_closed_stdout_is_not_an_error() {
    // The read end is closed before the child starts, so its very first
    // write meets a closed pipe.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = chime()
        .args(["token", "new", "ci", "--scope", "read"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
