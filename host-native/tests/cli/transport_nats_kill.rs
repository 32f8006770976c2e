//! `kill -9` of a `chime run` daemon whose queue is in NATS JetStream (a
//! real nats-server of the test's own), mid-run, then a restart on the
//! same data and config: every fire in the work stream exactly once by
//! `Nats-Msg-Id` (the stream's last sequence is the number of fires chime
//! delivered), each worked to the end or still in the stream, none
//! started again but the attempts the crash cut (`transport_daemon_kill`).
//! Skipped without `CHIME_TEST_NATS_BIN` (run under
//! `scripts/nats-test-server.sh`), failed under `CHIME_REQUIRE_NATS=1`.

use crate::transport_daemon::Broker;
use crate::transport_daemon_kill::a_daemon_killed_mid_run_loses_and_repeats_nothing;
use crate::transport_nats::nats_bin;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_on_nats_killed_mid_run_loses_and_repeats_nothing() {
    let Some(bin) = nats_bin() else {
        return;
    };
    a_daemon_killed_mid_run_loses_and_repeats_nothing(Broker::Nats(bin)).await;
}
