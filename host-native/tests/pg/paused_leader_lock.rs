//! A leader paused in the middle of a fenced write (SIGSTOP, a VM
//! freeze) holds the lease row's lock: every store write locks it until
//! commit. Without a limit the next leader's takeover waits for that lock
//! for as long as the pause lasts; found by `failover.rs` under load
//! (no new leader in 30 s after a SIGSTOP). A replica's store therefore
//! sets `idle_in_transaction_session_timeout` below the lease TTL
//! (`PgStore::limit_idle_in_transaction`, TTL/2), and the server ends
//! the paused transaction. Here a session holding the lock as a paused
//! store would: without the limit the takeover is still blocked seconds
//! after the lease expired; with it, the takeover succeeds.

use crate::pg_support;

use chime_native::pg::PgConfig;
use std::time::{Duration, Instant};

const TTL_MS: u64 = 1_000;

/// A session that locks the lease row as a store write does, then goes
/// silent (its client neither commits nor sends anything).
async fn paused_writer(cfg: &PgConfig, idle_limit_ms: Option<u64>) -> tokio_postgres::Client {
    let c = chime_native::pg::connect(&cfg.url).await.unwrap();
    if let Some(ms) = idle_limit_ms {
        c.batch_execute(&format!("SET idle_in_transaction_session_timeout = {ms}"))
            .await
            .unwrap();
    }
    c.batch_execute(&format!(
        "BEGIN; SELECT holder, epoch FROM \"{}\".chime_leader WHERE name = 'engine' FOR UPDATE",
        cfg.schema
    ))
    .await
    .unwrap();
    c
}

#[tokio::test]
async fn a_paused_writer_does_not_block_the_takeover() {
    let Some(cfg) = pg_support::config("paused_lock") else {
        return;
    };
    let mut a = pg_support::lease(&cfg, "a", TTL_MS, 100).await;
    let mut b = pg_support::lease(&cfg, "b", TTL_MS, 100).await;
    a.acquire().await.unwrap().unwrap();

    // Without the limit: the lease expires, and the takeover still waits.
    let held = paused_writer(&cfg, None).await;
    tokio::time::sleep(Duration::from_millis(TTL_MS + 200)).await;
    let blocked = tokio::time::timeout(Duration::from_secs(2), b.acquire()).await;
    assert!(blocked.is_err(), "the takeover went through a held lock");
    // Its client gone, the server rolls the transaction back. (b's
    // abandoned statement may still run then: a fresh handle bids.)
    drop(held);
    drop(b);
    let mut b = pg_support::lease(&cfg, "b", TTL_MS, 100).await;
    let epoch = b
        .acquire()
        .await
        .unwrap()
        .expect("free once released")
        .epoch;

    // With the limit a replica's store sets (TTL/2): the server ends the
    // paused transaction and the next takeover goes ahead.
    let _paused = paused_writer(&cfg, Some(TTL_MS / 2)).await;
    tokio::time::sleep(Duration::from_millis(TTL_MS + 200)).await;
    let mut c = pg_support::lease(&cfg, "c", TTL_MS, 100).await;
    let started = Instant::now();
    let grant = tokio::time::timeout(Duration::from_secs(5), c.acquire())
        .await
        .expect("the takeover waited for the paused session")
        .unwrap()
        .expect("the expired lease is free");
    assert!(grant.epoch.0 > epoch.0);
    assert!(started.elapsed() < Duration::from_millis(TTL_MS));
    pg_support::drop_schema(&cfg).await;
}
