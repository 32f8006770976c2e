//! The driver on a PgStore: a crash (no final snapshot) recovers every
//! committed turn from the journal, a graceful stop leaves a snapshot and
//! an empty journal, and a driver whose lease was taken over stops on its
//! next commit instead of acting on inputs it cannot make durable.

use crate::pg_support;

use chime_core::{EngineConfig, EnqueueRequest, Input, Payload, QueueConfig, Reply};
use chime_native::driver::{DriverError, SystemClock};
use chime_native::pg::PgStore;
use chime_native::store::StoreError;
use chime_native::{RunError, Running, Setup, start};
use std::sync::Arc;

fn setup() -> Setup {
    Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    }
}

async fn enqueue(running: &Running) -> Result<Reply, chime_native::driver::DriverError> {
    let req = EnqueueRequest::new("q", Payload::null());
    Ok(running.handle().call(Input::Enqueue(req)).await?.unwrap())
}

async fn live_jobs(running: &Running) -> usize {
    running.handle().inspect(|e| e.live_jobs()).await.unwrap()
}

#[tokio::test]
async fn the_driver_recovers_from_postgres() {
    let Some(cfg) = pg_support::config("driver_recover") else {
        return;
    };
    let mut lease = pg_support::lease(&cfg, "a", 60_000, 1_000).await;
    let epoch = lease.acquire().await.unwrap().unwrap().epoch;
    let open = || Box::new(PgStore::open(&cfg, "engine", epoch, &EngineConfig::default()).unwrap());

    let running = start(setup(), open(), Arc::new(SystemClock)).await.unwrap();
    for _ in 0..3 {
        assert!(matches!(
            enqueue(&running).await,
            Ok(Reply::Enqueued { .. })
        ));
    }
    // A crash: no final snapshot, only the journal.
    running.abort().await;
    let (journal, snapshots) = pg_support::rows(&cfg).await;
    assert!(
        journal >= 4,
        "declare + 3 enqueues journaled, got {journal}"
    );
    assert_eq!(snapshots, 0);

    let running = start(setup(), open(), Arc::new(SystemClock)).await.unwrap();
    assert_eq!(live_jobs(&running).await, 3, "replayed from the journal");
    assert!(matches!(
        enqueue(&running).await,
        Ok(Reply::Enqueued { .. })
    ));
    let engine = running.shutdown().await.unwrap();
    assert_eq!(engine.live_jobs(), 4);
    assert_eq!(pg_support::rows(&cfg).await, (0, 1), "final snapshot");

    let running = start(setup(), open(), Arc::new(SystemClock)).await.unwrap();
    assert_eq!(live_jobs(&running).await, 4, "restored from the snapshot");
    running.shutdown().await.unwrap();
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn a_deposed_driver_stops_on_its_next_commit() {
    let Some(cfg) = pg_support::config("driver_deposed") else {
        return;
    };
    let mut a = pg_support::lease(&cfg, "a", 60_000, 1_000).await;
    let epoch = a.acquire().await.unwrap().unwrap().epoch;
    let store = Box::new(PgStore::open(&cfg, "engine", epoch, &EngineConfig::default()).unwrap());
    let running = start(setup(), store, Arc::new(SystemClock)).await.unwrap();
    assert!(matches!(
        enqueue(&running).await,
        Ok(Reply::Enqueued { .. })
    ));
    let before = pg_support::rows(&cfg).await;

    // Another replica takes over (here: after a release, so no TTL wait).
    assert!(a.release().await.unwrap());
    let mut b = pg_support::lease(&cfg, "b", 60_000, 1_000).await;
    b.acquire().await.unwrap().unwrap();

    // The next input cannot be committed: the caller gets no reply and
    // the driver ends with the fencing error.
    assert!(matches!(enqueue(&running).await, Err(DriverError::Stopped)));
    match running.shutdown().await {
        Err(RunError::Driver(DriverError::Store(StoreError::Fenced { epoch: e, .. }))) => {
            assert_eq!(e, epoch.0)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pg_support::rows(&cfg).await, before, "nothing written");
    pg_support::drop_schema(&cfg).await;
}
