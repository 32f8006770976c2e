//! Helpers shared by the fuzz targets.
//!
//! Only crate-root items of chime-core are used, plus `chime_core::journal`,
//! whose path is referenced in this file alone (the [`jr`] module) so a move
//! of that module is a one-line change here.

use chime_core::{Engine, JournalEntry, Snapshot};

/// Every use of `chime_core::journal` in the fuzz crate.
pub mod jr {
    use chime_core::journal;
    use chime_core::{Error, JournalEntry, Reply, Snapshot};

    /// Entries as JSON Lines.
    pub fn write(entries: &[JournalEntry]) -> String {
        journal::write(entries)
    }

    /// Parses JSON Lines; `Err` is the typed `invalid_journal` error, as text.
    pub fn read(text: &str) -> Result<Vec<JournalEntry>, String> {
        journal::read(text).map_err(|e| {
            assert_eq!(e.code(), "invalid_journal");
            e.to_string()
        })
    }

    /// The outcome of a replay: final engine, serialized commands, replies.
    pub struct Replayed {
        /// The engine after the last entry.
        pub engine: chime_core::Engine,
        /// Every command, as JSON, in emission order.
        pub commands: Vec<String>,
        /// The reply of each entry.
        pub replies: Vec<Result<Reply, Error>>,
    }

    /// Restores `snapshot` and handles `entries`, draining after each.
    pub fn replay(snapshot: Snapshot, entries: &[JournalEntry]) -> Result<Replayed, Error> {
        let r = journal::replay(snapshot, entries)?;
        Ok(Replayed {
            engine: r.engine,
            commands: r.commands,
            replies: r.replies,
        })
    }
}

/// Snapshot → JSON → restore → JSON must be byte-identical, and the
/// restored engine must hold its invariants. Returns the restored engine.
pub fn round_trip(engine: &Engine) -> Engine {
    let json = engine.snapshot().to_json();
    let snap = Snapshot::from_json(&json)
        .unwrap_or_else(|e| panic!("own snapshot does not parse: {e}\n{json}"));
    let restored = Engine::restore(snap)
        .unwrap_or_else(|e| panic!("own snapshot does not restore: {e}\n{json}"));
    restored.check_invariants();
    let again = restored.snapshot().to_json();
    assert_eq!(again, json, "snapshot round trip is not byte-identical");
    restored
}

/// Journal text round trip: write → read gives the same entries.
pub fn journal_round_trip(entries: &[JournalEntry]) {
    let text = jr::write(entries);
    let back = jr::read(&text).unwrap_or_else(|e| panic!("own journal does not read: {e}\n{text}"));
    assert_eq!(back, entries, "journal write/read round trip differs");
}
