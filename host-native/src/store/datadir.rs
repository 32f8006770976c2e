//! Reading a data directory that no daemon holds (`chime inspect`,
//! `chime replay`): the store's snapshot and journal, never written to —
//! not even a lock file ([`RedbStore::read_only`]), so a read-only
//! directory or file system can be inspected.

use super::{Recovered, RedbStore, StoreError};
use chime_core::{Engine, EngineConfig, Snapshot, journal};
use std::path::{Path, PathBuf};

/// Why a data directory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    /// The path names a file, not a directory.
    #[error("{0} is not a directory (it is a file): name a chime data directory")]
    NotADirectory(PathBuf),
    /// No store there (nothing is created: a typo must not make one).
    #[error("{0} holds no chime data (no chime.redb)")]
    Missing(PathBuf),
    /// A running daemon holds it.
    #[error(
        "data directory {0} is in use by a running chime daemon; \
         ask the daemon instead (chime inspect --url http://127.0.0.1:<port>) or stop it first"
    )]
    Locked(PathBuf),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
    /// The snapshot does not restore, or the journal does not replay.
    #[error("{0}: recovery failed: {1}")]
    Recovery(PathBuf, chime_core::Error),
}

/// The snapshot to replay from (a fresh engine's when the store has none
/// yet, with the daemon's default config) and the journal since it.
pub fn read(dir: &Path) -> Result<(Snapshot, Recovered), DataDirError> {
    if dir.exists() && !dir.is_dir() {
        return Err(DataDirError::NotADirectory(dir.to_path_buf()));
    }
    if !dir.join("chime.redb").is_file() {
        return Err(DataDirError::Missing(dir.to_path_buf()));
    }
    let rec = RedbStore::read_only(dir).map_err(|e| match e {
        StoreError::Locked { .. } => DataDirError::Locked(dir.to_path_buf()),
        other => DataDirError::Store(other),
    })?;
    let base = match &rec.snapshot {
        Some(s) => s.clone(),
        None => Engine::new(EngineConfig::default()).snapshot(),
    };
    Ok((base, rec))
}

/// The engine as the daemon would recover it (snapshot + journal replay),
/// as of its last recorded input: nothing is advanced to the present.
pub fn recover(dir: &Path) -> Result<Engine, DataDirError> {
    let (base, rec) = read(dir)?;
    journal::replay(base, &rec.entries)
        .map(|r| r.engine)
        .map_err(|e| DataDirError::Recovery(dir.to_path_buf(), e))
}
