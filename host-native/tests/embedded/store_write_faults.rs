//! Storage faults, part 2: the disk starts failing under a running daemon.
//! A redb backend that wraps the real file fails every write, or every
//! fsync, from its n-th operation on, for every n a clean run reaches.
//! Each time: the driver stops with the store's error instead of acting
//! on an input it could not persist; no caller gets a reply for an input
//! that is not durable; and reopening the directory with a healthy disk
//! recovers every acknowledged job.

use chime_core::{EnqueueRequest, Input, JobId, Payload, QueueConfig, Reply};
use chime_native::driver::SystemClock;
use chime_native::store::{RedbStore, StoreError};
use chime_native::{Setup, start};
use redb::StorageBackend;
use redb::backends::FileBackend;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which operation the failing disk refuses.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    Write,
    Fsync,
}

/// The file backend with a fault from operation `fail_at` on (counting
/// writes and fsyncs together).
#[derive(Debug)]
struct Failing {
    inner: FileBackend,
    ops: Arc<AtomicU64>,
    fail_at: u64,
    fault: Fault,
}

impl Failing {
    fn tick(&self, kind: Fault) -> io::Result<()> {
        let n = self.ops.fetch_add(1, Ordering::SeqCst) + 1;
        if kind == self.fault && n >= self.fail_at {
            return Err(io::Error::other(format!("injected {kind:?} failure")));
        }
        Ok(())
    }
}

impl StorageBackend for Failing {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.inner.read(offset, out)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.tick(Fault::Fsync)?;
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.tick(Fault::Write)?;
        self.inner.write(offset, data)
    }
}

fn failing_store(
    dir: &Path,
    ops: Arc<AtomicU64>,
    fail_at: u64,
    fault: Fault,
) -> Result<RedbStore, StoreError> {
    RedbStore::open_with(dir, |path| {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|source| StoreError::Io {
                context: path.display().to_string(),
                source,
            })?;
        Ok(Failing {
            inner: FileBackend::new(file)?,
            ops: ops.clone(),
            fail_at,
            fault,
        })
    })
}

/// Enqueues up to 12 jobs (a snapshot every 5 journal entries) on a disk
/// that fails from operation `fail_at` on. Returns the acknowledged jobs
/// and whether the daemon saw a failure.
async fn run(dir: &Path, ops: Arc<AtomicU64>, fail_at: u64, fault: Fault) -> (Vec<JobId>, bool) {
    let Ok(store) = failing_store(dir, ops, fail_at, fault) else {
        // The fault hit while the database was created: the daemon does
        // not start.
        return (Vec::new(), true);
    };
    let mut setup = Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    };
    setup.driver.snapshot_every = 5;
    let running = match start(setup, Box::new(store), Arc::new(SystemClock)).await {
        Ok(r) => r,
        // The fault hit while the setup was applied: nothing acknowledged.
        Err(_) => return (Vec::new(), true),
    };
    let mut acked = Vec::new();
    let mut failed = false;
    for i in 0..12 {
        let payload = Payload::from_json(&format!(r#"{{"i":{i}}}"#)).unwrap();
        let req = EnqueueRequest::new("q", payload);
        match running.handle().call(Input::Enqueue(req)).await {
            Ok(Ok(Reply::Enqueued { job, .. })) => acked.push(job),
            Ok(other) => panic!("enqueue {i}: {other:?}"),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    // The final snapshot may meet the fault too.
    failed |= running.shutdown().await.is_err();
    (acked, failed)
}

fn sweep(fault: Fault) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A clean run counts the operations to sweep over.
    let clean = tempfile::tempdir().unwrap();
    let ops = Arc::new(AtomicU64::new(0));
    let (acked, failed) = rt.block_on(run(clean.path(), ops.clone(), u64::MAX, fault));
    assert!(!failed && acked.len() == 12);
    let total = ops.load(Ordering::SeqCst);
    assert!(total > 20, "only {total} storage operations in a clean run");
    let mut stopped = 0;
    for fail_at in 1..=total {
        let dir = tempfile::tempdir().unwrap();
        let ops = Arc::new(AtomicU64::new(0));
        let (acked, failed) = rt.block_on(run(dir.path(), ops.clone(), fail_at, fault));
        let reached = ops.load(Ordering::SeqCst) >= fail_at;
        // Unnoticed only when the fault came after the final commit (redb
        // writes its clean-shutdown mark when the database is dropped):
        // then every job was acknowledged.
        assert!(
            failed || !reached || acked.len() == 12,
            "{fault:?} failing from op {fail_at}: the daemon ran on without noticing"
        );
        stopped += u32::from(failed);
        // A healthy disk again: every acknowledged job is there.
        let store = RedbStore::open(dir.path())
            .unwrap_or_else(|e| panic!("{fault:?} from op {fail_at}: reopening failed: {e}"));
        let driver = chime_native::driver::Driver::recover(
            Box::new(store),
            Arc::new(SystemClock),
            Default::default(),
        )
        .unwrap_or_else(|e| panic!("{fault:?} from op {fail_at}: recovery failed: {e}"));
        for job in &acked {
            assert!(
                driver.engine().job(*job).is_some(),
                "{fault:?} from op {fail_at}: acknowledged job {} lost",
                job.0
            );
        }
    }
    eprintln!("{fault:?}: {total} fault points, the daemon stopped at {stopped}");
    assert!(stopped > 0);
}

#[test]
fn failing_writes_stop_the_daemon_and_lose_nothing_acknowledged() {
    sweep(Fault::Write);
}

#[test]
fn failing_fsyncs_stop_the_daemon_and_lose_nothing_acknowledged() {
    sweep(Fault::Fsync);
}
