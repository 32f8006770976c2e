//! `chime run` with a queue in NATS JetStream, as processes: a real
//! nats-server (JetStream, `sync_interval: always`) of the test's own, the
//! daemon publishing its schedule's fires there and working them with a
//! `[[worker]]` command pool; `/healthz` shows the transport and turns
//! 503 within 5 s of the broker being killed (`kill -9`), 200 again after
//! its restart on the same store; `/metrics` has
//! `chime_queue_depth{…,transport="nats"}`. Skipped without
//! `CHIME_TEST_NATS_BIN` (run under `scripts/nats-test-server.sh`), failed
//! under `CHIME_REQUIRE_NATS=1`.

use crate::transport_daemon::{Broker, a_queue_in_a_broker_is_published_worked_and_health_checked};

/// nats-server's path, or `None` (after a notice) to skip; shared with
/// `transport_nats_kill`.
pub fn nats_bin() -> Option<String> {
    match std::env::var("CHIME_TEST_NATS_BIN") {
        Ok(b) if !b.is_empty() => Some(b),
        _ if std::env::var("CHIME_REQUIRE_NATS").as_deref() == Ok("1") => {
            panic!("CHIME_REQUIRE_NATS=1 but CHIME_TEST_NATS_BIN is not set")
        }
        _ => {
            eprintln!("SKIPPED: CHIME_TEST_NATS_BIN is not set (scripts/nats-test-server.sh)");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_in_nats_is_published_worked_and_health_checked() {
    let Some(bin) = nats_bin() else {
        return;
    };
    a_queue_in_a_broker_is_published_worked_and_health_checked(Broker::Nats(bin)).await;
}
