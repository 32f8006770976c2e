//! Durable storage of the engine: a snapshot plus the journal of inputs
//! handled since it. The driver appends each loop turn's inputs with one
//! commit *before* it replies or executes commands (write-ahead), so
//! whatever a caller or a worker saw survives a crash; recovery restores
//! the snapshot and replays the journal through the core.

use chime_core::{Command, Event, JournalEntry, Snapshot, journal};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// What a store failed at.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process holds the data directory.
    #[error(
        "data directory {dir} is in use by another running chime daemon \
         (lock file {lock} is held); stop it or pass another --data"
    )]
    Locked {
        /// The directory.
        dir: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// File-system error around the database.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The embedded database failed.
    #[error("redb: {0}")]
    Redb(#[from] redb::Error),
    /// Stored data that does not parse (journal line or snapshot).
    #[error("corrupt store: {0}")]
    Corrupt(String),
    /// A write under a leader epoch that is no longer current: another
    /// replica took the lease over (or it was released). The write was
    /// rolled back; this replica must stop acting as leader.
    #[error(
        "store write refused: {engine:?} was written under leader epoch {epoch}, \
         but the lease is now at epoch {current_epoch:?} held by {holder:?} \
         (this replica was deposed; nothing was written)"
    )]
    Fenced {
        /// The engine (its lease name).
        engine: String,
        /// The epoch the write carried.
        epoch: u64,
        /// The lease row's epoch (`None`: no lease row).
        current_epoch: Option<u64>,
        /// The lease's holder (`None`: released).
        holder: Option<String>,
    },
    /// The PostgreSQL backend failed.
    #[error(transparent)]
    Postgres(#[from] crate::pg::PgError),
}

macro_rules! redb_errors {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Redb(e.into())
            }
        }
    )*};
}
redb_errors!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// What a store holds at startup.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The last snapshot (`None`: start from an empty engine).
    pub snapshot: Option<Snapshot>,
    /// Entries appended since that snapshot, oldest first.
    pub entries: Vec<JournalEntry>,
}

/// Durable home of one engine's state. Calls are synchronous: a commit is
/// an fsync, and the driver must not go on before it returns.
pub trait Store: Send + 'static {
    /// The snapshot and the journal since it.
    fn load(&mut self) -> Result<Recovered, StoreError>;
    /// The snapshot alone (what [`Store::load`] returns as `snapshot`).
    fn load_snapshot(&mut self) -> Result<Option<Snapshot>, StoreError> {
        Ok(self.load()?.snapshot)
    }
    /// Passes each journal entry since the snapshot to `each`, oldest
    /// first, as it is read, and returns how many there were: recovery
    /// without holding the whole journal in memory. By default, from
    /// [`Store::load`].
    fn for_each_entry(&mut self, each: &mut dyn FnMut(JournalEntry)) -> Result<u64, StoreError> {
        let entries = self.load()?.entries;
        let n = entries.len() as u64;
        entries.into_iter().for_each(each);
        Ok(n)
    }
    /// Appends one loop turn's entries and commits them durably (one
    /// transaction: all or none survive a crash).
    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError>;
    /// Replaces the snapshot and drops every journal entry appended so far
    /// (the snapshot must include all of them), in one commit.
    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError>;
    /// Journal entries since the last snapshot.
    fn journal_len(&self) -> u64;
    /// Whether this store also carries the engine's fires to other
    /// processes ([`Store::deliver`]): a shared database where external
    /// queues live. The embedded stores do not.
    fn delivers(&self) -> bool {
        false
    }
    /// Makes the outputs meant for other processes durable: `Fire`s of
    /// external queues with their `Enqueue`, and `FireSkipped` events.
    /// Called after the turn that produced them was appended, and again,
    /// after recovery, with every such output of the replayed journal (a
    /// crash may have come between the append and the delivery), so it
    /// must be idempotent: a fire delivered twice is one fire.
    fn deliver(&mut self, outputs: &[Command]) -> Result<(), StoreError> {
        let _ = outputs;
        Ok(())
    }
}

/// Whether `cmd` is an output [`Store::deliver`] takes.
pub fn deliverable(cmd: &Command) -> bool {
    match cmd {
        Command::Fire(f) => f.job.is_none(),
        Command::Enqueue { .. } | Command::Event(Event::FireSkipped { .. }) => true,
        _ => false,
    }
}

/// A store in memory: for tests and for embedding without durability.
/// Cloning shares the contents, so a test can "restart" on the same data.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    inner: std::sync::Arc<std::sync::Mutex<(Option<String>, Vec<String>)>>,
}

impl Store for MemoryStore {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        let g = self.inner.lock().expect("memory store lock");
        let snapshot =
            g.0.as_deref()
                .map(Snapshot::from_json)
                .transpose()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let entries =
            journal::read(&g.1.concat()).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(Recovered { snapshot, entries })
    }

    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        let mut g = self.inner.lock().expect("memory store lock");
        g.1.push(journal::write(entries));
        Ok(())
    }

    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError> {
        let mut g = self.inner.lock().expect("memory store lock");
        g.0 = Some(snapshot.to_json());
        g.1.clear();
        Ok(())
    }

    fn journal_len(&self) -> u64 {
        let g = self.inner.lock().expect("memory store lock");
        g.1.iter().map(|t| t.lines().count() as u64).sum()
    }
}

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
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        let lock_path = dir.join("chime.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(format!("opening {}", lock_path.display())))?;
        match lock.try_lock() {
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

impl RedbStore {
    fn snapshot_unguarded(&self) -> Result<Option<Snapshot>, StoreError> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        match meta.get("snapshot")? {
            Some(v) => Ok(Some(
                Snapshot::from_json(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            )),
            None => Ok(None),
        }
    }
}

impl Store for RedbStore {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        let snapshot = self.load_snapshot()?;
        let mut entries = Vec::with_capacity(self.journal_len() as usize);
        self.for_each_entry(&mut |e| entries.push(e))?;
        Ok(Recovered { snapshot, entries })
    }

    fn load_snapshot(&mut self) -> Result<Option<Snapshot>, StoreError> {
        guard("loading the database", || self.snapshot_unguarded())
    }

    fn for_each_entry(&mut self, each: &mut dyn FnMut(JournalEntry)) -> Result<u64, StoreError> {
        const WHAT: &str = "loading the database";
        let tx = guard(WHAT, || Ok(self.db.begin_read()?))?;
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
                let entry = serde_json::from_str(l).map_err(|e| {
                    StoreError::Corrupt(format!("invalid_journal: line {line}: {e}"))
                })?;
                each(entry);
                count += 1;
            }
        }
        Ok(count)
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

    fn journal_len(&self) -> u64 {
        self.next_seq - self.first_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chime_core::{Input, Timestamp};

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
