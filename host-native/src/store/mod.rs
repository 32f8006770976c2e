//! Durable storage of the engine: a snapshot plus the journal of inputs
//! handled since it. The driver appends each loop turn's inputs with one
//! commit *before* it replies or executes commands (write-ahead), so
//! whatever a caller or a worker saw survives a crash; recovery restores
//! the snapshot and replays the journal through the core.
//!
//! This module is the port ([`Store`], [`StoreError`], [`Recovered`]); the
//! adapters are [`MemoryStore`], [`RedbStore`] (the data directory) and,
//! with the `postgres` feature, `pg::PgStore`.

pub mod datadir;
mod embedded;
mod memory;

pub use embedded::RedbStore;
pub use memory::MemoryStore;

use chime_core::{Command, Event, JournalEntry, Snapshot};
use std::path::PathBuf;

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
    /// The database behind the store failed (`backend` names it: `redb`,
    /// `postgres`). The port names no adapter: each adapter converts its
    /// own errors into this variant (their messages say which it is).
    #[error("{source}")]
    Backend {
        /// Which kind of store.
        backend: &'static str,
        /// The adapter's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
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
}

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
    /// Whether only one process at a time can hold this store (the data
    /// directory's lock file; a memory store). Then every claim the store
    /// holds at recovery was made by a process that is gone, and the
    /// driver releases them at once as interrupted (`Input::Recover`);
    /// a graceful stop is journaled (`Input::Stop`) for the next start to
    /// end. A store several replicas share (Postgres) says `false`: a
    /// claim there may be alive, and lease expiry decides. By default
    /// `false`.
    fn single_owner(&self) -> bool {
        false
    }
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
