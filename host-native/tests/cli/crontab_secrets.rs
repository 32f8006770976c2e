//! A crontab's variables are secrets as far as chime is concerned: with
//! `SECRET=hunter2` above the lines, the commands see it in their
//! environment, but it is in no job payload, no `/v1` or `/metrics`
//! response and no file of the data directory (journal, snapshot, or any
//! other), also for a failed run kept as a dead letter. Before, the
//! variables travelled in every payload.

use crate::daemon::{Daemon, read, wait_for};
use std::path::Path;
use std::process::{Command, Stdio};

const SECRET: &str = "hunter2";

/// Every file under `dir` whose bytes contain the secret.
fn files_with_secret(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files_with_secret(&path));
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())
        {
            found.push(path.display().to_string());
        }
    }
    found
}

/// `GET http://{address}{path}`, HTTP/1.0 by hand: the body.
fn get(address: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(address).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    assert!(
        text.starts_with("HTTP/1.0 200") || text.starts_with("HTTP/1.1 200"),
        "{path}: {text}"
    );
    text
}

#[test]
fn crontab_variables_reach_the_command_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (tab, data, seen, log) = (
        dir.path().join("crontab"),
        dir.path().join("data"),
        dir.path().join("seen"),
        dir.path().join("daemon.log"),
    );
    let s = seen.display();
    std::fs::write(
        &tab,
        format!(
            "SECRET={SECRET}\n\
             @reboot printenv SECRET >> {s}\n\
             * * * * * * printenv SECRET >> {s}\n\
             * * * * * * test -n \"$SECRET\" && exit 3\n"
        ),
    )
    .unwrap();
    let mut d = Daemon(
        Command::new(env!("CARGO_BIN_EXE_chime"))
            .args(["run", "--http", "127.0.0.1:0", "--crontab"])
            .arg(&tab)
            .arg("--data")
            .arg(&data)
            .env("CHIME_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_for("runs and a dead letter", &log, || {
        read(&seen).lines().filter(|l| *l == SECRET).count() >= 2
            && read(&log).contains("job dead-lettered")
    });
    let text = read(&log);
    let address = text
        .lines()
        .find(|l| l.contains("HTTP listener up"))
        .and_then(|l| l.split("address=").nth(1))
        .and_then(|a| a.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in\n{text}"))
        .to_owned();
    let mut bodies = vec![get(&address, "/v1/schedules")];
    for path in [
        "/v1/queues",
        "/v1/queues/crontab/dead",
        "/v1/inspect",
        "/metrics",
        "/healthz",
    ] {
        bodies.push(get(&address, path));
    }
    let names: Vec<String> = bodies[0]
        .split("\"name\":\"")
        .skip(1)
        .filter_map(|s| s.split('"').next().map(str::to_owned))
        .collect();
    assert!(!names.is_empty());
    for n in &names {
        bodies.push(get(&address, &format!("/v1/schedules/{n}")));
    }
    // The payloads are served (so the check below means something)...
    assert!(
        bodies.iter().any(|b| b.contains("printenv SECRET")),
        "{bodies:#?}"
    );
    // ...but not the variables.
    for b in &bodies {
        assert!(!b.contains(SECRET), "served: {b}");
    }
    // A dead letter's log line says what failed, how, and where from.
    let dead = read(&log);
    let dead = dead
        .lines()
        .find(|l| l.contains("job dead-lettered"))
        .unwrap();
    assert!(
        dead.contains("schedule=\"test-n-SECRET-exit-3\"")
            && dead.contains("error=\"/bin/sh exited with status 3\""),
        "{dead}"
    );
    assert_eq!(
        files_with_secret(&data),
        Vec::<String>::new(),
        "while running"
    );
    let ok = Command::new("kill")
        .args(["-TERM", &d.0.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    assert!(d.0.wait().unwrap().success());
    // The final snapshot too.
    assert_eq!(files_with_secret(&data), Vec::<String>::new(), "after stop");
}
