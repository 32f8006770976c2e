//! What the API client scenarios share (`client_*`): a daemon started
//! from a config with `[[token]]` tables on a free loopback port, and the
//! `chime` client commands run against it.

use crate::daemon::Daemon;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The `chime` binary under test.
pub fn chime_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chime"))
}

/// The repository's root (the examples and docs live there).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A `[[token]]` table for `token` with `scopes`.
pub fn token_table(name: &str, token: &str, scopes: &[&str]) -> String {
    let scopes: Vec<String> = scopes.iter().map(|s| format!("{s:?}")).collect();
    format!(
        "\n[[token]]\nname = {name:?}\nsha256 = {:?}\nscopes = [{}]\n",
        chime_native::http::hash_hex(token),
        scopes.join(", ")
    )
}

/// A running daemon: its process, base URL and log file.
pub struct Api {
    /// The process (killed on drop if still running).
    pub daemon: Daemon,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its stderr, one JSON object a line.
    pub log: PathBuf,
}

/// Starts `chime run` on `config` (plus `[http] address` on port 0) in
/// `dir`; returns once the listener is up.
pub fn start(dir: &Path, config: &str) -> Api {
    let path = dir.join("chime.toml");
    std::fs::write(
        &path,
        format!("[http]\naddress = \"127.0.0.1:0\"\n{config}"),
    )
    .unwrap();
    let log = dir.join("daemon.log");
    let mut child = Command::new(chime_bin())
        .args(["--log-format", "json", "run", "--config"])
        .arg(&path)
        .arg("--data")
        .arg(dir.join("data"))
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let file = log.clone();
    // Copies the log to a file (for failure messages) and hands the
    // listener's address over once.
    std::thread::spawn(move || {
        let mut out = std::fs::File::create(file).unwrap();
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(out, "{line}");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if v["fields"]["message"] == "HTTP listener up (/healthz, /metrics, /v1)"
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(v["fields"]["address"].as_str().unwrap_or("").to_owned());
            }
        }
    });
    let daemon = Daemon(child);
    let address = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("no listener; log:\n{}", crate::daemon::read(&log)));
    Api {
        daemon,
        base: format!("http://{address}"),
        log,
    }
}

impl Api {
    /// `chime ARGS` with `CHIME_URL` this daemon and `CHIME_TOKEN` `token`.
    pub fn chime(&self, token: Option<&str>, args: &[&str]) -> Output {
        let mut c = Command::new(chime_bin());
        c.args(args)
            .env("CHIME_URL", &self.base)
            .env_remove("CHIME_TOKEN")
            .stdin(Stdio::null());
        if let Some(t) = token {
            c.env("CHIME_TOKEN", t);
        }
        c.output().unwrap()
    }

    /// `chime ARGS --json`, which must succeed: its JSON reply.
    pub fn json(&self, token: &str, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.chime(Some(token), &all);
        assert!(out.status.success(), "chime {args:?}: {}", text(&out));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("chime {args:?}: not JSON ({e}): {}", text(&out)))
    }

    /// SIGTERM; the daemon must exit 0.
    pub fn stop(mut self) {
        crate::daemon::signal(&self.daemon.0, "-TERM");
        assert!(self.daemon.0.wait().unwrap().success());
    }
}

/// stdout, stderr and status of a run, for failure messages.
pub fn text(out: &Output) -> String {
    format!(
        "{:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
