//! Shared by the Postgres tests: the server's URL from
//! `CHIME_TEST_DATABASE_URL` (set by `scripts/pg-test-server.sh`), and a
//! schema of its own per test so the tests run in parallel on one server.
//!
//! Without the variable a test prints a notice and passes (a bare `cargo
//! test` on a machine without Postgres still works), unless
//! `CHIME_REQUIRE_POSTGRES=1` (set by `scripts/test-all.sh`), where a
//! missing server must not turn into silently skipped tests.
#![allow(dead_code)] // each test file uses part of it

use chime_core::Timestamp;
use chime_native::driver::Clock;
use chime_native::pg::{LeaderLease, LeaseOptions, PgConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The server's URL, or `None` (after a notice) to skip.
pub fn database_url() -> Option<String> {
    match std::env::var("CHIME_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CHIME_REQUIRE_POSTGRES").as_deref() == Ok("1") => panic!(
            "CHIME_REQUIRE_POSTGRES=1 but CHIME_TEST_DATABASE_URL is not set: run the \
             tests under scripts/pg-test-server.sh (scripts/test-all.sh does)"
        ),
        _ => {
            eprintln!(
                "SKIPPED: CHIME_TEST_DATABASE_URL is not set; \
                 `scripts/pg-test-server.sh cargo test -p chime-native` runs this test \
                 against a throwaway PostgreSQL"
            );
            None
        }
    }
}

/// A config on a schema no other test (or run) uses: `t_<test>_<pid>_<n>`.
pub fn config(test: &str) -> Option<PgConfig> {
    static N: AtomicU32 = AtomicU32::new(0);
    let url = database_url()?;
    let n = N.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let schema = format!("t_{test}_{}_{n}_{nanos}", std::process::id());
    assert!(
        schema.len() <= 63,
        "test name too long for a schema: {schema}"
    );
    Some(PgConfig::new(url).with_schema(schema))
}

/// Drops the test's schema (best effort: the server is thrown away anyway).
pub async fn drop_schema(config: &PgConfig) {
    if let Ok(c) = chime_native::pg::connect(&config.url).await {
        let _ = c
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
                config.schema
            ))
            .await;
    }
}

/// Wall-clock milliseconds: the lease tests compare grants with the
/// database's clock, which on the test machine is the same clock.
#[derive(Debug)]
pub struct Wall;

impl Clock for Wall {
    fn now(&self) -> Timestamp {
        chime_native::driver::SystemClock.now()
    }
}

/// A lease handle named `engine` for `holder`.
pub async fn lease(config: &PgConfig, holder: &str, ttl_ms: u64, skew_ms: u64) -> LeaderLease {
    let options = LeaseOptions {
        ttl: Duration::from_millis(ttl_ms),
        skew_allowance: Duration::from_millis(skew_ms),
    };
    LeaderLease::connect(config, "engine", holder, options, Arc::new(Wall))
        .await
        .unwrap()
}

/// How many journal rows and snapshot rows the schema holds for `engine`.
pub async fn rows(config: &PgConfig) -> (i64, i64) {
    let c = chime_native::pg::connect(&config.url).await.unwrap();
    let s = &config.schema;
    let j: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM \"{s}\".chime_journal WHERE engine = 'engine'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let n: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM \"{s}\".chime_snapshot WHERE engine = 'engine'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    (j, n)
}

/// A connection `LISTEN`ing on `channel`: each notification arrives on the
/// receiver as (channel, payload, when it was read). Keep the client alive
/// while listening (dropping it ends the connection).
pub async fn listen(
    url: &str,
    channel: &str,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<(String, String, std::time::Instant)>,
) {
    use futures_util::StreamExt;
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notification(n) = m {
                let _ = tx.send((
                    n.channel().to_owned(),
                    n.payload().to_owned(),
                    std::time::Instant::now(),
                ));
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN \"{channel}\""))
        .await
        .unwrap();
    (client, rx)
}

/// One in-process replica (`chime_native::pg::replica::run`) of the test's
/// deployment: its config (with the status its listener reports), the
/// stop switch and the task.
pub struct InProcess {
    pub cfg: chime_native::pg::replica::ReplicaConfig,
    pub stop: tokio::sync::watch::Sender<bool>,
    pub task: tokio::task::JoinHandle<Result<(), chime_native::RunError>>,
}

impl InProcess {
    /// Stops it gracefully (a leader releases the lease).
    pub async fn end(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }

    /// Ends it without a goodbye, as a killed process would: the lease is
    /// not released and runs out.
    pub fn kill(self) {
        self.task.abort();
    }

    /// Whether it leads now.
    pub fn leading(&self) -> bool {
        self.cfg.status.view().leading
    }
}

/// Starts a replica named `holder` with lease TTL `ttl_ms`, declaring the
/// queue `ticks` and no schedules or workers.
pub fn replica(config: &PgConfig, holder: &str, ttl_ms: u64) -> InProcess {
    use chime_native::pg::replica::{ReplicaConfig, run};
    let mut cfg = ReplicaConfig::new(config.clone());
    cfg.holder = holder.to_owned();
    cfg.lease = LeaseOptions {
        ttl: Duration::from_millis(ttl_ms),
        skew_allowance: Duration::from_millis(ttl_ms / 10),
    };
    let setup = chime_native::Setup {
        queues: vec![chime_core::QueueConfig::new("ticks")],
        ..Default::default()
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(run(
        cfg.clone(),
        setup,
        Arc::new(chime_native::driver::SystemClock),
        stopped,
    ));
    InProcess { cfg, stop, task }
}

/// Waits (bounded) until exactly one of `replicas` leads; its index.
pub async fn one_leader(replicas: &[&InProcess], within: Duration) -> usize {
    let t = std::time::Instant::now();
    loop {
        let leading: Vec<usize> = (0..replicas.len())
            .filter(|&i| replicas[i].leading())
            .collect();
        if leading.len() == 1 {
            return leading[0];
        }
        assert!(
            t.elapsed() < within,
            "no single leader within {within:?}: {leading:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A schedule on queue `ticks`, overlap `allow` (no worker ends its jobs).
pub fn schedule(name: &str, spec: &str) -> chime_core::ScheduleDef {
    serde_json::from_value(serde_json::json!({
        "name": name,
        "spec": spec,
        "target": { "queue": "ticks" },
        "overlap": "allow",
    }))
    .unwrap()
}
