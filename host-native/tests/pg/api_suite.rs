//! The API suite (`tests/api_suite/`) on Postgres: two real
//! `chime run --database …` replicas per scenario on a schema of their
//! own, requests alternating between leader and follower. The same
//! scenarios run on the embedded daemon in `tests/embedded/api_suite.rs`.

#[path = "../api_suite/mod.rs"]
mod suite;

use crate::pg_support;
use suite::Store;

/// The suite's store for `test`, or `None` (skip) without a server.
fn store(test: &str) -> Option<(Store, chime_native::pg::PgConfig)> {
    let pg = pg_support::config(test)?;
    let store = Store::Postgres {
        url: pg.url.clone(),
        schema: pg.schema.clone(),
    };
    Some((store, pg))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes() {
    let Some((store, pg)) = store("api_routes") else {
        return;
    };
    suite::routes::run(store).await;
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authz_matrix() {
    let Some((store, pg)) = store("api_authz") else {
        return;
    };
    let checked = suite::authz::run(store).await;
    assert!(checked > 500, "{checked}");
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_lease_token_is_409_and_changes_nothing() {
    let Some((store, pg)) = store("api_lease_lost") else {
        return;
    };
    suite::lease_lost::run(store).await;
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_written_through_the_follower_fires_from_the_leader() {
    let Some((store, pg)) = store("api_schedule_write") else {
        return;
    };
    suite::schedule_write::run(store).await;
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_claim_delivers_the_job_again_after_its_lease() {
    let Some((store, pg)) = store("api_crash_redelivery") else {
        return;
    };
    suite::crash_redelivery::run(store).await;
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_and_queues_are_managed() {
    let Some((store, pg)) = store("api_schedules") else {
        return;
    };
    suite::schedules::run(store).await;
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_paged_and_filtered() {
    let Some((store, pg)) = store("api_schedule_pages") else {
        return;
    };
    suite::schedule_pages::run(store).await;
    pg_support::drop_schema(&pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_claim_heartbeat_complete_and_fail() {
    let Some((store, pg)) = store("api_workers") else {
        return;
    };
    suite::workers::run(store).await;
    pg_support::drop_schema(&pg).await;
}
