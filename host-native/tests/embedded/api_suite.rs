//! The API suite (`tests/api_suite/`) on the embedded daemon: one real
//! `chime run --data …` process per scenario. The same scenarios run on
//! Postgres with two replicas in `tests/pg/api_suite.rs`.

#[path = "../api_suite/mod.rs"]
mod suite;

use suite::Store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes() {
    suite::routes::run(Store::Data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authz_matrix() {
    let checked = suite::authz::run(Store::Data).await;
    assert!(checked > 500, "{checked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_lease_token_is_409_and_changes_nothing() {
    suite::lease_lost::run(Store::Data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_written_through_the_api_fires() {
    suite::schedule_write::run(Store::Data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_mid_claim_delivers_the_job_again() {
    suite::crash_redelivery::run(Store::Data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_and_queues_are_managed() {
    suite::schedules::run(Store::Data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_paged_and_filtered() {
    suite::schedule_pages::run(Store::Data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_claim_heartbeat_complete_and_fail() {
    suite::workers::run(Store::Data).await;
}
