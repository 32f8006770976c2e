//! Shared by the Redis tests: the server's URL from `CHIME_REDIS_URL`
//! (set by `scripts/redis-test-server.sh`) and a logical database of its
//! own per test (the test server has 1024), emptied first, so the tests
//! run in parallel on one server.
//!
//! Without the variable a test prints a notice and passes, unless
//! `CHIME_REQUIRE_REDIS=1` (set by `scripts/test-all.sh`).
#![allow(dead_code)] // each test file uses part of it

use chime_core::{EngineConfig, FireId, FireOutcome, JobEnd};
use chime_native::backend::PortFuture;
use chime_native::transport::config::{RedisNames, RedisOptions};
use chime_native::transport::redis::RedisTransport;
use chime_native::transport::{NoSettlements, Settlements};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The server's URL (no database), or `None` (after a notice) to skip.
pub fn redis_url() -> Option<String> {
    match std::env::var("CHIME_REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CHIME_REQUIRE_REDIS").as_deref() == Ok("1") => panic!(
            "CHIME_REQUIRE_REDIS=1 but CHIME_REDIS_URL is not set: run the tests under \
             scripts/redis-test-server.sh (scripts/test-all.sh does)"
        ),
        _ => {
            eprintln!(
                "SKIPPED: CHIME_REDIS_URL is not set; `scripts/redis-test-server.sh cargo \
                 test -p chime-native --test pg` runs this test against a throwaway Redis"
            );
            None
        }
    }
}

/// The URL of a database no other test of this run uses, emptied.
pub async fn fresh_db(base: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = 1 + N.fetch_add(1, Ordering::Relaxed) % 1023;
    let url = format!("{base}/{n}");
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHDB").query_async(&mut c).await.unwrap();
    url
}

/// The default options on a fresh database (none without a server):
/// `options.url` is the database's URL, for a raw client of the test's.
pub async fn fresh_options() -> Option<RedisOptions> {
    let base = redis_url()?;
    Some(RedisOptions {
        url: fresh_db(&base).await,
        ..RedisOptions::default()
    })
}

/// A transport on a fresh database (none without a server).
pub async fn transport(
    config: &EngineConfig,
    settlements: Arc<dyn Settlements>,
) -> Option<Arc<RedisTransport>> {
    let options = fresh_options().await?;
    Some(Arc::new(
        RedisTransport::new(options, config.clone(), Vec::new(), settlements).unwrap(),
    ))
}

/// Entries as `XREADGROUP` replies them: per stream, (entry id, fields).
pub type Entries = Vec<(String, Vec<(String, HashMap<String, String>)>)>;

/// A consumer that is not chime, in a queue's consumer group: a raw
/// connection reading under its own consumer name.
pub struct Foreign {
    pub conn: redis::aio::MultiplexedConnection,
    pub names: RedisNames,
    pub consumer: &'static str,
}

impl Foreign {
    /// Connects to `url` as `consumer` of `names`' group.
    pub async fn connect(url: &str, names: RedisNames, consumer: &'static str) -> Foreign {
        let client = redis::Client::open(url).unwrap();
        Foreign {
            conn: client.get_multiplexed_async_connection().await.unwrap(),
            names,
            consumer,
        }
    }

    /// Reads up to `count` new entries (`XREADGROUP … >`): (entry id,
    /// fields).
    pub async fn read(&mut self, count: usize) -> Vec<(String, HashMap<String, String>)> {
        let read: Option<Entries> = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(&self.names.group)
            .arg(self.consumer)
            .arg("COUNT")
            .arg(count)
            .arg("STREAMS")
            .arg(&self.names.stream)
            .arg(">")
            .query_async(&mut self.conn)
            .await
            .unwrap();
        read.and_then(|mut r| r.pop())
            .map(|(_, e)| e)
            .unwrap_or_default()
    }

    /// The documented complete: `XACK` then `XDEL` of `entry`.
    pub async fn complete(&mut self, entry: &str) {
        let (acked, deleted): (u64, u64) = redis::pipe()
            .cmd("XACK")
            .arg(&self.names.stream)
            .arg(&self.names.group)
            .arg(entry)
            .cmd("XDEL")
            .arg(&self.names.stream)
            .arg(entry)
            .query_async(&mut self.conn)
            .await
            .unwrap();
        assert_eq!((acked, deleted), (1, 1), "{entry}");
    }

    /// The documented heartbeat: `XCLAIM … 0 <entry> JUSTID` (idle reset).
    pub async fn heartbeat(&mut self, entry: &str) {
        let kept: Vec<String> = redis::cmd("XCLAIM")
            .arg(&self.names.stream)
            .arg(&self.names.group)
            .arg(self.consumer)
            .arg(0)
            .arg(entry)
            .arg("JUSTID")
            .query_async(&mut self.conn)
            .await
            .unwrap();
        assert_eq!(kept, vec![entry.to_owned()], "still pending");
    }
}

/// Every settlement, as the engine would get them.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<(FireId, FireOutcome, Option<JobEnd>)>>);

impl Recorder {
    /// How many times each fire was settled, with which outcomes.
    pub fn by_fire(&self) -> HashMap<FireId, Vec<FireOutcome>> {
        let mut out: HashMap<FireId, Vec<FireOutcome>> = HashMap::new();
        for (f, o, _) in self.0.lock().unwrap().iter() {
            out.entry(f.clone()).or_default().push(*o);
        }
        out
    }
}

impl Settlements for Recorder {
    fn settle(
        &self,
        fire: FireId,
        outcome: FireOutcome,
        job: Option<JobEnd>,
    ) -> PortFuture<'_, ()> {
        self.0.lock().unwrap().push((fire, outcome, job));
        Box::pin(async { Ok(()) })
    }
}

/// [`transport`] reporting settlements nowhere.
pub async fn plain(config: &EngineConfig) -> Option<Arc<RedisTransport>> {
    transport(config, Arc::new(NoSettlements)).await
}
