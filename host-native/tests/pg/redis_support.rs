//! Shared by the Redis tests: the server's URL from `CHIME_REDIS_URL`
//! (set by `scripts/redis-test-server.sh`) and a logical database of its
//! own per test (the test server has 1024), emptied first, so the tests
//! run in parallel on one server.
//!
//! Without the variable a test prints a notice and passes, unless
//! `CHIME_REQUIRE_REDIS=1` (set by `scripts/test-all.sh`).
#![allow(dead_code)] // each test file uses part of it

use chime_core::EngineConfig;
use chime_native::transport::config::RedisOptions;
use chime_native::transport::redis::RedisTransport;
use chime_native::transport::{NoSettlements, Settlements};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

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

/// A transport on a fresh database (none without a server).
pub async fn transport(
    config: &EngineConfig,
    settlements: Arc<dyn Settlements>,
) -> Option<Arc<RedisTransport>> {
    let base = redis_url()?;
    let url = fresh_db(&base).await;
    let options = RedisOptions {
        url,
        ..RedisOptions::default()
    };
    Some(Arc::new(
        RedisTransport::new(options, config.clone(), Vec::new(), settlements).unwrap(),
    ))
}

/// [`transport`] reporting settlements nowhere.
pub async fn plain(config: &EngineConfig) -> Option<Arc<RedisTransport>> {
    transport(config, Arc::new(NoSettlements)).await
}
