//! The redb store on a real file: commits survive reopening, snapshots
//! truncate the journal, and a held data directory is refused.

use chime_core::{Engine, EngineConfig, Input, JournalEntry, QueueConfig, Timestamp};
use chime_native::store::{RedbStore, Store, StoreError};

fn entry(ms: i64, input: Input) -> JournalEntry {
    JournalEntry {
        now: Timestamp::from_millis(ms).unwrap(),
        input,
    }
}

#[test]
fn appended_turns_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let a = entry(1_000, Input::DeclareQueue(QueueConfig::new("q")));
    let b = entry(2_000, Input::Advance);
    let c = entry(3_000, Input::Advance);
    {
        let mut s = RedbStore::open(dir.path()).unwrap();
        s.append(std::slice::from_ref(&a)).unwrap();
        s.append(&[b.clone(), c.clone()]).unwrap();
        assert_eq!(s.journal_len(), 3);
    }
    let mut s = RedbStore::open(dir.path()).unwrap();
    let rec = s.load().unwrap();
    assert!(rec.snapshot.is_none());
    assert_eq!(rec.entries, vec![a, b, c]);
    assert_eq!(s.journal_len(), 3);
}

#[test]
fn snapshot_truncates_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::new(EngineConfig::default());
    let first = entry(1_000, Input::DeclareQueue(QueueConfig::new("q")));
    engine.handle(first.now, first.input.clone()).unwrap();
    {
        let mut s = RedbStore::open(dir.path()).unwrap();
        s.append(&[first]).unwrap();
        s.write_snapshot(&engine.snapshot()).unwrap();
        assert_eq!(s.journal_len(), 0);
        s.append(&[entry(5_000, Input::Advance)]).unwrap();
        assert_eq!(s.journal_len(), 1);
    }
    let mut s = RedbStore::open(dir.path()).unwrap();
    assert_eq!(s.journal_len(), 1);
    let rec = s.load().unwrap();
    let snap = rec.snapshot.expect("snapshot stored");
    assert_eq!(snap.to_json(), engine.snapshot().to_json());
    assert_eq!(rec.entries, vec![entry(5_000, Input::Advance)]);
    // Replay on the snapshot gives the live engine's state back.
    let replayed = chime_core::journal::replay(snap, &rec.entries).unwrap();
    engine
        .handle(Timestamp::from_millis(5_000).unwrap(), Input::Advance)
        .unwrap();
    assert_eq!(
        replayed.engine.snapshot().to_json(),
        engine.snapshot().to_json()
    );
}

#[test]
fn a_held_data_dir_is_refused_until_released() {
    let dir = tempfile::tempdir().unwrap();
    let first = RedbStore::open(dir.path()).unwrap();
    let err = RedbStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("in use by another running chime daemon"),
        "{msg}"
    );
    drop(first);
    RedbStore::open(dir.path()).expect("released on drop");
}
