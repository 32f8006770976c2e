//! A replica given a wrong password exits at once with the server's own
//! reason — SQLSTATE `28P01`, "password authentication failed" — rather
//! than the driver's bare `db error`, and does not retry: waiting cannot
//! fix a wrong password (a server that is down is waited for instead, see
//! `db_restart`).

use crate::pg_support;

use std::process::Stdio;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_exits_with_the_servers_reason() {
    let Some(pg) = pg_support::config("wrong_pw") else {
        return;
    };
    // postgresql://user:password@host:port/db, the password replaced.
    let (scheme, rest) = pg.url.split_once("://").unwrap();
    let (userinfo, host) = rest.split_once('@').unwrap();
    let user = userinfo.split(':').next().unwrap();
    let url = format!("{scheme}://{user}:not-the-password@{host}");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("chime.toml");
    std::fs::write(
        &config,
        "[[schedule]]\nname = \"t\"\nspec = \"@every 1s\"\ntarget = { queue = \"q\" }\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(&config)
        .args(["--database", &url, "--schema", &pg.schema])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("still running with a wrong password");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("28P01") && text.contains("password authentication failed"),
        "the error does not carry the server's reason:\n{text}"
    );
    assert!(
        !text.contains("retrying"),
        "retried a wrong password:\n{text}"
    );
}
