//! Shared by the NATS JetStream tests: the server's URL from
//! `CHIME_NATS_URL` (set by `scripts/nats-test-server.sh`), a namespace
//! of its own per test (stream, subject and consumer names) so the tests
//! run in parallel on one server, and a server of a test's own for the
//! fault tests (`CHIME_TEST_NATS_BIN`, killed and restarted on the same
//! store).
//!
//! Without the variable a test prints a notice and passes, unless
//! `CHIME_REQUIRE_NATS=1`, where a missing server must not turn into
//! silently skipped tests.
#![allow(dead_code)] // each test file uses part of it

use chime_core::EngineConfig;
use chime_native::transport::config::NatsOptions;
use chime_native::transport::nats::NatsQueues;
use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

fn required() -> bool {
    std::env::var("CHIME_REQUIRE_NATS").as_deref() == Ok("1")
}

/// The server's URL, or `None` (after a notice) to skip.
pub fn url() -> Option<String> {
    match std::env::var("CHIME_NATS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if required() => panic!(
            "CHIME_REQUIRE_NATS=1 but CHIME_NATS_URL is not set: run the tests under \
             scripts/nats-test-server.sh"
        ),
        _ => {
            eprintln!(
                "SKIPPED: CHIME_NATS_URL is not set; `scripts/nats-test-server.sh cargo test \
                 -p chime-native --test pg` runs this test against a throwaway nats-server"
            );
            None
        }
    }
}

/// A namespace no other test (or run) uses: `t-<test>-<pid>-<n>`.
pub fn namespace(test: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("t-{test}-{}-{n}", std::process::id())
}

/// The transport on `url` in namespace `ns`.
pub async fn connect(url: &str, ns: &str, config: &EngineConfig) -> NatsQueues {
    let options = NatsOptions {
        url: url.to_owned(),
        ..NatsOptions::default()
    };
    NatsQueues::connect(options, config.clone())
        .await
        .unwrap()
        .with_namespace(ns)
}

/// The transport on the test server in a namespace of the test's own.
pub async fn queues(test: &str, config: &EngineConfig) -> Option<(NatsQueues, String)> {
    let url = url()?;
    let ns = namespace(test);
    Some((connect(&url, &ns, config).await, ns))
}

/// Deletes the streams of namespace `ns` (best effort: the server is
/// thrown away anyway).
pub async fn drop_streams(url: &str, ns: &str) {
    let Ok(client) = async_nats::connect(url).await else {
        return;
    };
    let js = async_nats::jetstream::new(client);
    let prefix = format!("{}_", ns.to_ascii_uppercase());
    let names: Vec<String> = js
        .stream_names()
        .filter_map(|n| async move { n.ok() })
        .collect()
        .await;
    for name in names.into_iter().filter(|n| n.starts_with(&prefix)) {
        let _ = js.delete_stream(&name).await;
    }
}

/// The nats-server binary for a server of the test's own.
pub fn binary() -> Option<PathBuf> {
    match std::env::var("CHIME_TEST_NATS_BIN") {
        Ok(b) if !b.is_empty() => Some(PathBuf::from(b)),
        _ if required() => panic!("CHIME_REQUIRE_NATS=1 but CHIME_TEST_NATS_BIN is not set"),
        _ => {
            eprintln!("SKIPPED: CHIME_TEST_NATS_BIN is not set (scripts/nats-test-server.sh)");
            None
        }
    }
}

/// A nats-server of a test's own, on a fixed loopback port and store
/// directory so that it can be killed (`kill -9`) and started again on
/// the same data.
pub struct OwnServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// The port it listens on.
    pub port: u16,
    child: Option<Child>,
}

impl OwnServer {
    /// Starts one (JetStream, `sync_interval: always`).
    pub async fn start(bin: PathBuf) -> OwnServer {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let dir = tempfile::tempdir().unwrap();
        let conf = format!(
            "listen: \"127.0.0.1:{port}\"\njetstream {{\n  store_dir: \"{}\"\n  sync_interval: always\n}}\n",
            dir.path().join("js").display()
        );
        std::fs::write(dir.path().join("server.conf"), conf).unwrap();
        let mut s = OwnServer {
            bin,
            dir,
            port,
            child: None,
        };
        s.restart().await;
        s
    }

    /// The URL of the server.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("server.conf")
    }

    /// The store directory.
    pub fn store(&self) -> &Path {
        self.dir.path()
    }

    /// Starts the server (again), and waits until it accepts connections.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "already running");
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.dir.path().join("server.log"))
            .unwrap();
        let child = Command::new(&self.bin)
            .arg("-c")
            .arg(self.conf())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("nats-server did not listen on {}", self.port);
    }

    /// `kill -9`: no shutdown, no flush.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        self.kill();
    }
}
