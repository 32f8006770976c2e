//! The embedded durable store: one redb file in the data directory.

use super::{Recovered, Store, StoreError};
use chime_core::{JournalEntry, Snapshot};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::fs::{File, OpenOptions};
use std::path::Path;

macro_rules! redb_errors {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Backend {
                    backend: "redb",
                    source: format!("redb: {}", redb::Error::from(e)).into(),
                }
            }
        }
    )*};
}
redb_errors!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// Journal lines keyed by a sequence number that only grows. A row holds
/// the lines of one commit (JSON Lines, `\n`-separated, no trailing
/// newline), keyed by the sequence number of its first entry: one B-tree
/// insert per commit instead of one per entry. (Stores written before
/// hold one line per row, which reads the same way.)
const JOURNAL: TableDefinition<u64, &str> = TableDefinition::new("journal");
/// `"snapshot"` → snapshot JSON.
const META: TableDefinition<&str, &str> = TableDefinition::new("meta");

/// The embedded durable store: one redb file (`chime.redb`) in the data
/// directory, next to a lock file held for the store's lifetime. Every
/// commit is redb's default `Durability::Immediate` (fsync).
pub struct RedbStore {
    db: Database,
    next_seq: u64,
    first_seq: u64,
    /// The row being encoded, kept between commits to reuse its capacity.
    buf: Vec<u8>,
    /// Held (locked) until drop; the OS releases it if the process dies.
    _lock: File,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore")
            .field("next_seq", &self.next_seq)
            .field("first_seq", &self.first_seq)
            .finish()
    }
}

impl RedbStore {
    /// Opens (creating if needed) the store in `dir`, refusing a directory
    /// that another live process holds.
    pub fn open(dir: &Path) -> Result<RedbStore, StoreError> {
        RedbStore::open_with(dir, |file| {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(file)
                .map_err(|source| StoreError::Io {
                    context: format!("opening {}", file.display()),
                    source,
                })?;
            Ok(redb::backends::FileBackend::new(f)?)
        })
    }

    /// Like [`RedbStore::open`], with the database on the storage backend
    /// that `backend` makes for a path in the directory (called once it is
    /// locked). The fault-injection tests wrap the file backend to fail
    /// writes and fsyncs.
    ///
    /// A new database is made under a temporary name and renamed into
    /// place once its tables are committed: a crash or a disk error while
    /// creating it must not leave a half-written `chime.redb` that no later
    /// start can open.
    pub fn open_with<B: redb::StorageBackend>(
        dir: &Path,
        backend: impl Fn(&Path) -> Result<B, StoreError>,
    ) -> Result<RedbStore, StoreError> {
        let io = |context: String| move |source| StoreError::Io { context, source };
        not_a_file(dir)?;
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        let lock_path = dir.join("chime.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(format!("opening {}", lock_path.display())))?;
        // A lock can look held for a moment after its holder let go: a
        // process forked elsewhere in this one (a worker's command, before
        // its exec closes the descriptor) shares the open file. So a held
        // lock is tried again for up to 200 ms before it counts as held.
        let mut tries = 0;
        let locked = loop {
            match lock.try_lock() {
                Err(std::fs::TryLockError::WouldBlock) if tries < 20 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                other => break other,
            }
        };
        match locked {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    dir: dir.to_path_buf(),
                    lock: lock_path,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io(format!("locking {}", lock_path.display()))(e));
            }
        }
        let path = dir.join("chime.redb");
        let exists = path
            .try_exists()
            .map_err(io(format!("looking for {}", path.display())))?;
        if !exists {
            let fresh = dir.join("chime.redb.new");
            // Left by a creation that did not finish: start it again.
            if fresh.exists() {
                std::fs::remove_file(&fresh)
                    .map_err(io(format!("removing {}", fresh.display())))?;
            }
            create_tables(guard("creating the database", || {
                Ok(redb::Builder::new().create_with_backend(backend(&fresh)?)?)
            })?)?;
            std::fs::rename(&fresh, &path).map_err(io(format!("renaming {}", fresh.display())))?;
            // The rename itself must survive a crash.
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io(format!("syncing {}", dir.display())))?;
        }
        let db = guard("opening the database", || {
            Ok(redb::Builder::new().create_with_backend(backend(&path)?)?)
        })?;
        let (first_seq, next_seq) = {
            let tx = db.begin_read()?;
            let t = tx.open_table(JOURNAL)?;
            let first = t.first()?.map(|(k, _)| k.value());
            let last = t.last()?.map(|(k, v)| k.value() + lines(v.value()));
            match (first, last) {
                (Some(f), Some(next)) => (f, next),
                _ => (0, 0),
            }
        };
        Ok(RedbStore {
            db,
            next_seq,
            first_seq,
            buf: Vec::new(),
            _lock: lock,
        })
    }
}

/// Refuses a data directory path that names a file: `create_dir_all`
/// would only say "File exists", which reads as if the directory were the
/// problem's cure rather than its cause.
fn not_a_file(dir: &Path) -> Result<(), StoreError> {
    if dir.exists() && !dir.is_dir() {
        return Err(StoreError::Io {
            context: format!(
                "data directory {} is not a directory (it is a file): name a directory, \
                 which is created if missing",
                dir.display()
            ),
            source: std::io::Error::from(std::io::ErrorKind::NotADirectory),
        });
    }
    Ok(())
}

impl RedbStore {
    /// The snapshot and journal of the store in `dir`, read without
    /// writing anything there (`chime inspect`, `chime replay`): no lock
    /// file is created and the database is opened read-only, so this works
    /// on a read-only file system or directory. A daemon running on `dir`
    /// is still detected ([`StoreError::Locked`]): its lock is tested with
    /// a *shared* lock, which needs no write access.
    ///
    /// A store that was not shut down cleanly (a crash: the case `inspect`
    /// exists for) needs redb's repair before it can be read, and a repair
    /// writes. It is done on a copy in the system's temporary directory,
    /// removed afterwards; the original is never touched.
    pub fn read_only(dir: &Path) -> Result<Recovered, StoreError> {
        let io = |context: String| move |source| StoreError::Io { context, source };
        not_a_file(dir)?;
        let lock_path = dir.join("chime.lock");
        // Held until we return: a daemon starting meanwhile is refused.
        let _lock = match File::open(&lock_path) {
            Ok(lock) => {
                match lock.try_lock_shared() {
                    Ok(()) => {}
                    Err(std::fs::TryLockError::WouldBlock) => {
                        return Err(StoreError::Locked {
                            dir: dir.to_path_buf(),
                            lock: lock_path,
                        });
                    }
                    Err(std::fs::TryLockError::Error(e)) => {
                        return Err(io(format!("locking {} (shared)", lock_path.display()))(e));
                    }
                }
                Some(lock)
            }
            // Never opened by a daemon (it creates the lock file first).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(format!("opening {}", lock_path.display()))(e)),
        };
        let path = dir.join("chime.redb");
        let opened = guard("opening the database", || {
            match redb::Builder::new().open_read_only(&path) {
                Ok(db) => Ok(Ok(db)),
                Err(redb::DatabaseError::RepairAborted) => Ok(Err(())),
                Err(redb::DatabaseError::DatabaseAlreadyOpen) => Err(StoreError::Locked {
                    dir: dir.to_path_buf(),
                    lock: lock_path.clone(),
                }),
                Err(e) => Err(e.into()),
            }
        })?;
        match opened {
            Ok(db) => read_all(&db),
            Err(()) => {
                let copy = ScratchCopy::of(&path)?;
                let db = guard("repairing a copy of the database", || {
                    Ok(redb::Builder::new().create(&copy.file)?)
                })?;
                read_all(&db)
            }
        }
    }
}

/// A copy of a database file in a fresh temporary directory, removed on
/// drop.
struct ScratchCopy {
    dir: std::path::PathBuf,
    file: std::path::PathBuf,
}

impl ScratchCopy {
    fn of(path: &Path) -> Result<ScratchCopy, StoreError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("chime-read-{}-{nanos:x}", std::process::id()));
        let fail = |what: &str| {
            let context = format!(
                "{} was not shut down cleanly; reading it needs a repair, made on a copy, \
                 but {what} {} failed",
                path.display(),
                dir.display()
            );
            move |source| StoreError::Io { context, source }
        };
        // Private: the copy holds every payload of the store.
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(fail("creating"))?;
        let copy = ScratchCopy {
            file: dir.join("chime.redb"),
            dir: dir.clone(),
        };
        std::fs::copy(path, &copy.file).map_err(fail("copying it to"))?;
        // `copy` keeps the original's mode: a read-only original would
        // give a copy the repair cannot open for writing.
        let mut perms = std::fs::metadata(&copy.file)
            .map_err(fail("reading the copy in"))?
            .permissions();
        #[allow(clippy::permissions_set_readonly_false)] // our own private copy
        perms.set_readonly(false);
        std::fs::set_permissions(&copy.file, perms).map_err(fail("making the copy writable in"))?;
        Ok(copy)
    }
}

impl Drop for ScratchCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The snapshot and every journal entry of an open database.
fn read_all(db: &impl ReadableDatabase) -> Result<Recovered, StoreError> {
    let snapshot = guard("loading the database", || snapshot_of(db))?;
    let mut entries = Vec::new();
    entries_of(db, &mut |e| entries.push(e))?;
    Ok(Recovered { snapshot, entries })
}

fn snapshot_of(db: &impl ReadableDatabase) -> Result<Option<Snapshot>, StoreError> {
    let tx = db.begin_read()?;
    let meta = tx.open_table(META)?;
    match meta.get("snapshot")? {
        Some(v) => Ok(Some(
            Snapshot::from_json(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        )),
        None => Ok(None),
    }
}

/// Feeds every journal entry to `each`, in order; how many.
fn entries_of(
    db: &impl ReadableDatabase,
    each: &mut dyn FnMut(JournalEntry),
) -> Result<u64, StoreError> {
    const WHAT: &str = "loading the database";
    let tx = guard(WHAT, || Ok(db.begin_read()?))?;
    let table = guard(WHAT, || Ok(tx.open_table(JOURNAL)?))?;
    let mut rows = guard(WHAT, || Ok(table.iter()?))?;
    // Parsed row by row, line by line, as read: no copy of the whole
    // journal into one text, nor a vector of every entry. Only redb's
    // calls run under `guard`: a panic in `each` is not the file's.
    let mut line = 0;
    let mut count = 0;
    loop {
        let row = guard(WHAT, || match rows.next() {
            Some(r) => Ok(Some(r?.1)),
            None => Ok(None),
        })?;
        let Some(row) = row else { break };
        for l in row.value().lines() {
            line += 1;
            if l.trim().is_empty() {
                continue;
            }
            let entry = serde_json::from_str(l)
                .map_err(|e| StoreError::Corrupt(format!("invalid_journal: line {line}: {e}")))?;
            each(entry);
            count += 1;
        }
    }
    Ok(count)
}

/// Entries in a journal row (its non-blank lines).
fn lines(row: &str) -> u64 {
    row.lines().filter(|l| !l.trim().is_empty()).count() as u64
}

/// Creates both tables, so readers never meet a missing one, and closes
/// the database.
fn create_tables(db: Database) -> Result<(), StoreError> {
    let tx = db.begin_write()?;
    tx.open_table(JOURNAL)?;
    tx.open_table(META)?;
    tx.commit()?;
    Ok(())
}

/// Runs `f`, turning a panic inside redb into [`StoreError::Corrupt`].
/// redb asserts on some damaged files (one cut short, for example) instead
/// of returning an error; a damaged store must stop the daemon with a
/// message, not crash it with a backtrace.
fn guard<T>(what: &str, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(StoreError::Corrupt(format!(
            "{what}: the database file is damaged ({why}); restore it from a backup \
             or move the data directory away to start empty"
        )))
    })
}

impl Store for RedbStore {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        let snapshot = self.load_snapshot()?;
        let mut entries = Vec::with_capacity(self.journal_len() as usize);
        self.for_each_entry(&mut |e| entries.push(e))?;
        Ok(Recovered { snapshot, entries })
    }

    fn load_snapshot(&mut self) -> Result<Option<Snapshot>, StoreError> {
        guard("loading the database", || snapshot_of(&self.db))
    }

    fn for_each_entry(&mut self, each: &mut dyn FnMut(JournalEntry)) -> Result<u64, StoreError> {
        entries_of(&self.db, each)
    }

    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        self.buf.clear();
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                self.buf.push(b'\n');
            }
            serde_json::to_writer(&mut self.buf, e).expect("journal entries serialize");
        }
        let row = std::str::from_utf8(&self.buf).expect("serde_json writes UTF-8");
        let tx = self.db.begin_write()?;
        {
            let mut t = tx.open_table(JOURNAL)?;
            t.insert(self.next_seq, row)?;
        }
        tx.commit()?;
        self.next_seq += entries.len() as u64;
        Ok(())
    }

    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError> {
        let tx = self.db.begin_write()?;
        {
            let mut meta = tx.open_table(META)?;
            meta.insert("snapshot", snapshot.to_json().as_str())?;
        }
        // Dropping the whole table frees its pages in bulk; deleting its
        // rows one by one (`retain`) rebalanced the tree per row and took
        // most of the driver's time under load. Recreated empty at once, so
        // readers never meet a missing table.
        tx.delete_table(JOURNAL)?;
        tx.open_table(JOURNAL)?;
        tx.commit()?;
        self.first_seq = self.next_seq;
        Ok(())
    }

    /// The data directory's lock file admits one daemon at a time.
    fn single_owner(&self) -> bool {
        true
    }

    fn journal_len(&self) -> u64 {
        self.next_seq - self.first_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chime_core::{Input, Timestamp, journal};

    fn entry(ms: i64) -> JournalEntry {
        JournalEntry {
            now: Timestamp::from_millis(ms).unwrap(),
            input: Input::Advance,
        }
    }

    /// Rows written one line each (the layout before one row per commit)
    /// read back, count and continue the same way.
    #[test]
    fn one_line_rows_still_read() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = RedbStore::open(dir.path()).unwrap();
            let tx = s.db.begin_write().unwrap();
            {
                let mut t = tx.open_table(JOURNAL).unwrap();
                for seq in 0..3u64 {
                    let line = journal::encode(&entry(seq as i64 + 1));
                    t.insert(seq, line.as_str()).unwrap();
                }
            }
            tx.commit().unwrap();
        }
        let mut s = RedbStore::open(dir.path()).unwrap();
        assert_eq!(s.journal_len(), 3);
        s.append(&[entry(4), entry(5)]).unwrap();
        drop(s);
        let mut s = RedbStore::open(dir.path()).unwrap();
        assert_eq!(s.journal_len(), 5);
        let rec = s.load().unwrap();
        assert_eq!(rec.entries, (1..=5).map(entry).collect::<Vec<_>>());
        let mut seen = Vec::new();
        assert_eq!(s.for_each_entry(&mut |e| seen.push(e)).unwrap(), 5);
        assert_eq!(seen, rec.entries);
    }
}
