//! Durable storage of the engine: a snapshot plus the journal of inputs
//! handled since it. The driver appends each loop turn's inputs with one
//! commit *before* it replies or executes commands (write-ahead), so
//! whatever a caller or a worker saw survives a crash; recovery restores
//! the snapshot and replays the journal through the core.

use chime_core::{JournalEntry, Snapshot, journal};
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
    /// Appends one loop turn's entries and commits them durably (one
    /// transaction: all or none survive a crash).
    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError>;
    /// Replaces the snapshot and drops every journal entry appended so far
    /// (the snapshot must include all of them), in one commit.
    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError>;
    /// Journal entries since the last snapshot.
    fn journal_len(&self) -> u64;
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

/// Journal lines keyed by a sequence number that only grows.
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
        let db = Database::create(dir.join("chime.redb"))?;
        // Create both tables so readers never meet a missing one.
        let tx = db.begin_write()?;
        tx.open_table(JOURNAL)?;
        tx.open_table(META)?;
        tx.commit()?;
        let (first_seq, next_seq) = {
            let tx = db.begin_read()?;
            let t = tx.open_table(JOURNAL)?;
            let first = t.first()?.map(|(k, _)| k.value());
            let last = t.last()?.map(|(k, _)| k.value());
            match (first, last) {
                (Some(f), Some(l)) => (f, l + 1),
                _ => (0, 0),
            }
        };
        Ok(RedbStore {
            db,
            next_seq,
            first_seq,
            _lock: lock,
        })
    }
}

impl Store for RedbStore {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let snapshot = match meta.get("snapshot")? {
            Some(v) => Some(
                Snapshot::from_json(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            ),
            None => None,
        };
        let table = tx.open_table(JOURNAL)?;
        let mut text = String::new();
        for row in table.iter()? {
            let (_, v) = row?;
            text.push_str(v.value());
            text.push('\n');
        }
        let entries = journal::read(&text).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(Recovered { snapshot, entries })
    }

    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        let tx = self.db.begin_write()?;
        {
            let mut t = tx.open_table(JOURNAL)?;
            for (seq, e) in (self.next_seq..).zip(entries) {
                t.insert(seq, journal::encode(e).as_str())?;
            }
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
            let mut t = tx.open_table(JOURNAL)?;
            t.retain(|_, _| false)?;
        }
        tx.commit()?;
        self.first_seq = self.next_seq;
        Ok(())
    }

    fn journal_len(&self) -> u64 {
        self.next_seq - self.first_seq
    }
}
