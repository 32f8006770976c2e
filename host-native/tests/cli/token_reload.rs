//! SIGHUP and SIGUSR2 re-read `[[token]]` too, on the real daemon: after a
//! reload a new token works and a removed one gets 401, without a
//! restart; a file with a bad token table is refused whole and the
//! running tokens stay (logged); a file without any token is refused for
//! the tokens (it would open the listener) and the running ones stay.

use crate::daemon::{Daemon, read, signal, wait_for};
use chime_native::http::hash_hex;
use std::path::Path;
use std::process::{Command, Stdio};

fn config(tokens: &[(&str, &str)]) -> String {
    let mut text =
        String::from("[http]\naddress = \"127.0.0.1:0\"\n\n[[queue]]\nname = \"emails\"\n");
    for (name, sha) in tokens {
        text.push_str(&format!(
            "\n[[token]]\nname = \"{name}\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n"
        ));
    }
    text
}

/// `curl`'s status code for `GET /v1/queues` with `token`.
fn status(base: &str, token: &str) -> String {
    let out = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"])
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .arg(format!("{base}/v1/queues"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// How many times `needle` occurs in the log.
fn count(log: &Path, needle: &str) -> usize {
    read(log).matches(needle).count()
}

#[test]
fn a_reload_swaps_the_tokens_and_a_bad_table_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chime.toml");
    let log = dir.path().join("daemon.log");
    std::fs::write(&file, config(&[("a", &hash_hex("token-a"))])).unwrap();
    let mut d = Daemon(
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
    assert_eq!(status(&base, "token-a"), "200");
    assert_eq!(status(&base, "token-b"), "401");

    // SIGHUP: b replaces a.
    std::fs::write(&file, config(&[("b", &hash_hex("token-b"))])).unwrap();
    signal(&d.0, "-HUP");
    wait_for("the token reload", &log, || {
        count(&log, "reload: tokens changed") == 1
    });
    assert_eq!(status(&base, "token-b"), "200");
    assert_eq!(status(&base, "token-a"), "401");

    // SIGUSR2 with a bad table: refused whole, b still works, c does not.
    let bad = config(&[("b", &hash_hex("token-b")), ("c", "not-a-sha256")]);
    std::fs::write(&file, bad).unwrap();
    signal(&d.0, "-USR2");
    wait_for("the refusal", &log, || count(&log, "reload refused") == 1);
    assert!(read(&log).contains("token #2"), "{}", read(&log));
    assert_eq!(status(&base, "token-b"), "200");
    assert_eq!(status(&base, "token-c"), "401");

    // No token at all: the tokens are refused (the listener stays closed).
    std::fs::write(&file, config(&[])).unwrap();
    signal(&d.0, "-HUP");
    wait_for("the token refusal", &log, || {
        count(&log, "reload: tokens refused") == 1
    });
    assert_eq!(status(&base, "token-b"), "200");
    assert_eq!(status(&base, "anything"), "401");

    let text = read(&log);
    for secret in ["token-a", "token-b"] {
        assert!(!text.contains(secret), "a token in the log");
    }
    signal(&d.0, "-TERM");
    assert!(d.0.wait().unwrap().success(), "{}", read(&log));
}
