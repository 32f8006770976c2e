//! `chime run` with a queue in Redis Streams, as processes: a real
//! redis-server (AOF, `appendfsync always`) of the test's own, the daemon
//! publishing its schedule's fires there and working them with a
//! `[[worker]]` command pool; `/healthz` shows the transport and turns
//! 503 within 5 s of the broker being killed, 200 again after its restart;
//! `/metrics` has `chime_queue_depth{…,transport="redis"}`. Skipped
//! without `CHIME_REDIS_URL` (run under `scripts/redis-test-server.sh`),
//! failed under `CHIME_REQUIRE_REDIS=1`.

use crate::transport_daemon::{Broker, a_queue_in_a_broker_is_published_worked_and_health_checked};

/// Whether Redis tests run (else a notice, or a panic under
/// `CHIME_REQUIRE_REDIS=1`); shared with `transport_redis_kill`.
pub fn wanted() -> bool {
    match std::env::var("CHIME_REDIS_URL") {
        Ok(u) if !u.is_empty() => true,
        _ if std::env::var("CHIME_REQUIRE_REDIS").as_deref() == Ok("1") => {
            panic!("CHIME_REQUIRE_REDIS=1 but CHIME_REDIS_URL is not set")
        }
        _ => {
            eprintln!("SKIPPED: CHIME_REDIS_URL is not set (scripts/redis-test-server.sh)");
            false
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_in_redis_is_published_worked_and_health_checked() {
    if wanted() {
        a_queue_in_a_broker_is_published_worked_and_health_checked(Broker::Redis).await;
    }
}
