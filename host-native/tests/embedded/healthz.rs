//! `GET /healthz` turns 503 when the driver cannot do its job: stopped,
//! stuck in a commit, or stopped by a failed commit. The store is a real
//! redb file behind a switch that can hold or fail the next commit.

use crate::common;

use chime_core::{JournalEntry, QueueConfig, Snapshot};
use chime_native::Setup;
use chime_native::http::HttpOptions;
use chime_native::store::{Recovered, RedbStore, Store, StoreError};
use common::{start_instance, start_with};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

const PASS: u8 = 0;
const HOLD: u8 = 1;
const FAIL: u8 = 2;

/// redb, except that `append` waits while the switch says HOLD and fails
/// when it says FAIL.
struct Switched {
    inner: RedbStore,
    mode: Arc<AtomicU8>,
}

impl Store for Switched {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        self.inner.load()
    }
    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        // A stuck fsync, as the driver would see it: the call does not return.
        while self.mode.load(Ordering::SeqCst) == HOLD {
            std::thread::sleep(Duration::from_millis(5));
        }
        if self.mode.load(Ordering::SeqCst) == FAIL {
            return Err(StoreError::Corrupt("injected commit failure".into()));
        }
        self.inner.append(entries)
    }
    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError> {
        self.inner.write_snapshot(snapshot)
    }
    fn journal_len(&self) -> u64 {
        self.inner.journal_len()
    }
}

fn setup() -> Setup {
    Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    }
}

fn short() -> HttpOptions {
    HttpOptions {
        read_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_driver_is_unhealthy() {
    let inst = start_instance(setup()).await;
    assert_eq!(inst.get("/healthz").await.0, 200);
    inst.running.handle().stop();
    inst.running.handle().closed().await;
    let (status, health) = inst.get_json("/healthz").await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["status"], "unavailable");
    assert_eq!(health["driver"], "stopped");
    assert_eq!(health["store"], "ok");
    assert_eq!(health["error"], "the driver has stopped");
    // The JSON endpoints say so too.
    let (status, body) = inst.get_json("/v1/queues").await;
    assert_eq!(status, 503);
    assert_eq!(body["error"], "driver_stopped");
    inst.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_driver_stuck_in_a_commit_is_unhealthy_until_it_returns() {
    let mode = Arc::new(AtomicU8::new(PASS));
    let m = mode.clone();
    let inst = start_with(setup(), short(), move |inner| {
        Box::new(Switched { inner, mode: m })
    })
    .await;
    let (status, before) = inst.get_json("/healthz").await;
    assert_eq!(status, 200, "{before}");

    mode.store(HOLD, Ordering::SeqCst);
    // An input makes the driver commit, and the commit hangs.
    let handle = inst.running.handle().clone();
    let pending = tokio::spawn(async move {
        handle
            .call(chime_core::Input::DeclareQueue(QueueConfig::new("r")))
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (status, health) = inst.get_json("/healthz").await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["driver"], "not_responding");
    assert_eq!(health["turns"], before["turns"].as_u64().unwrap() + 1);
    assert!(health["error"].as_str().unwrap().contains("did not answer"));
    let (status, metrics) = inst.get_json("/metrics").await;
    assert_eq!(status, 503);
    assert_eq!(metrics["error"], "driver_timeout");

    // The commit returns: healthy again, and the input went through.
    mode.store(PASS, Ordering::SeqCst);
    pending.await.unwrap().unwrap().unwrap();
    let (status, after) = inst.get_json("/healthz").await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(after["commits"], before["commits"].as_u64().unwrap() + 1);
    inst.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_stops_the_driver_and_says_why() {
    let mode = Arc::new(AtomicU8::new(PASS));
    let m = mode.clone();
    let inst = start_with(setup(), short(), move |inner| {
        Box::new(Switched { inner, mode: m })
    })
    .await;
    mode.store(FAIL, Ordering::SeqCst);
    let r = inst
        .running
        .handle()
        .call(chime_core::Input::DeclareQueue(QueueConfig::new("r")))
        .await;
    assert!(r.is_err(), "the driver stopped instead of replying: {r:?}");
    inst.running.handle().closed().await;
    let (status, health) = inst.get_json("/healthz").await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["driver"], "stopped");
    assert_eq!(health["store"], "failed");
    assert_eq!(health["error"], "corrupt store: injected commit failure");
    inst.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_read_does_not_stop_the_driver() {
    let inst = start_instance(setup()).await;
    let r = inst
        .running
        .handle()
        .inspect(|_| -> u8 { panic!("a bad read") })
        .await;
    assert!(r.is_err());
    let (status, health) = inst.get_json("/healthz").await;
    assert_eq!(status, 200, "{health}");
    inst.stop().await;
}
