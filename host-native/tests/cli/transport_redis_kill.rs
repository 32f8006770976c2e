//! `kill -9` of a `chime run` daemon whose queue is in Redis Streams (a
//! real redis-server of the test's own), mid-run, then a restart on the
//! same data and config: one job per fire chime delivered (its
//! idempotency key), each entry in the work stream once, each fire worked
//! to the end or still held by Redis, none started again but the attempts
//! the crash cut (`transport_daemon_kill`). Skipped without
//! `CHIME_REDIS_URL` (run under `scripts/redis-test-server.sh`), failed
//! under `CHIME_REQUIRE_REDIS=1`.

use crate::transport_daemon::Broker;
use crate::transport_daemon_kill::a_daemon_killed_mid_run_loses_and_repeats_nothing;
use crate::transport_redis::wanted;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_on_redis_killed_mid_run_loses_and_repeats_nothing() {
    if wanted() {
        a_daemon_killed_mid_run_loses_and_repeats_nothing(Broker::Redis).await;
    }
}
