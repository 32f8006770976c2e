//! A store in memory, for tests and embedders that need no durability.

use super::{Recovered, Store, StoreError};
use chime_core::{JournalEntry, Snapshot, journal};

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

    /// One driver at a time uses it (a test "restarts" on a clone).
    fn single_owner(&self) -> bool {
        true
    }

    fn journal_len(&self) -> u64 {
        let g = self.inner.lock().expect("memory store lock");
        g.1.iter().map(|t| t.lines().count() as u64).sum()
    }
}
