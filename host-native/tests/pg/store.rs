//! PgStore on a real PostgreSQL (see `pg_support`): commits survive
//! reopening, a snapshot truncates the journal, and loads replay to the
//! live engine's state — the same contract `store.rs` checks for redb.

use crate::pg_support;

use chime_core::{Engine, EngineConfig, Input, JournalEntry, QueueConfig, Timestamp};
use chime_native::pg::PgStore;
use chime_native::store::Store;

fn entry(ms: i64, input: Input) -> JournalEntry {
    JournalEntry {
        now: Timestamp::from_millis(ms).unwrap(),
        input,
    }
}

#[tokio::test]
async fn appended_turns_survive_reopen() {
    let Some(cfg) = pg_support::config("store_reopen") else {
        return;
    };
    let grant = pg_support::lease(&cfg, "a", 30_000, 1_000)
        .await
        .acquire()
        .await
        .unwrap()
        .expect("free lease");
    let a = entry(1_000, Input::DeclareQueue(QueueConfig::new("q")));
    let b = entry(2_000, Input::Advance);
    let c = entry(3_000, Input::Advance);
    {
        let mut s = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
        assert!(s.load().unwrap().snapshot.is_none());
        s.append(std::slice::from_ref(&a)).unwrap();
        s.append(&[b.clone(), c.clone()]).unwrap();
        s.append(&[]).unwrap();
        assert_eq!(s.journal_len(), 3);
    }
    let mut s = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
    assert_eq!(s.journal_len(), 3);
    let rec = s.load().unwrap();
    assert!(rec.snapshot.is_none());
    assert_eq!(rec.entries, vec![a, b, c]);
    // Appends after a reopen continue the sequence.
    let d = entry(4_000, Input::Advance);
    s.append(std::slice::from_ref(&d)).unwrap();
    assert_eq!(s.load().unwrap().entries.len(), 4);
    assert_eq!(pg_support::rows(&cfg).await, (4, 0));
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn snapshot_truncates_the_journal() {
    let Some(cfg) = pg_support::config("store_snapshot") else {
        return;
    };
    let grant = pg_support::lease(&cfg, "a", 30_000, 1_000)
        .await
        .acquire()
        .await
        .unwrap()
        .expect("free lease");
    let mut engine = Engine::new(EngineConfig::default());
    let first = entry(1_000, Input::DeclareQueue(QueueConfig::new("q")));
    engine.handle(first.now, first.input.clone()).unwrap();
    {
        let mut s = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
        s.append(&[first]).unwrap();
        s.write_snapshot(&engine.snapshot()).unwrap();
        assert_eq!(s.journal_len(), 0);
        assert_eq!(pg_support::rows(&cfg).await, (0, 1));
        s.append(&[entry(5_000, Input::Advance)]).unwrap();
        assert_eq!(s.journal_len(), 1);
    }
    let mut s = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
    assert_eq!(s.journal_len(), 1);
    let rec = s.load().unwrap();
    let snap = rec.snapshot.expect("snapshot stored");
    // Byte for byte: the snapshot is kept as text, never re-formatted.
    assert_eq!(snap.to_json(), engine.snapshot().to_json());
    assert_eq!(rec.entries, vec![entry(5_000, Input::Advance)]);
    let replayed = chime_core::journal::replay(snap, &rec.entries).unwrap();
    engine
        .handle(Timestamp::from_millis(5_000).unwrap(), Input::Advance)
        .unwrap();
    assert_eq!(
        replayed.engine.snapshot().to_json(),
        engine.snapshot().to_json()
    );
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn engines_in_one_schema_keep_apart() {
    let Some(cfg) = pg_support::config("store_apart") else {
        return;
    };
    let grant = pg_support::lease(&cfg, "a", 30_000, 1_000)
        .await
        .acquire()
        .await
        .unwrap()
        .unwrap();
    let mut s = PgStore::open(&cfg, "engine", grant.epoch, &EngineConfig::default()).unwrap();
    s.append(&[entry(1_000, Input::Advance)]).unwrap();
    // Another engine name has no lease row: it may read (empty) but every
    // write is refused, whatever epoch it claims.
    let mut other = PgStore::open(&cfg, "other", grant.epoch, &EngineConfig::default()).unwrap();
    let rec = other.load().unwrap();
    assert!(rec.snapshot.is_none() && rec.entries.is_empty());
    let err = other.append(&[entry(1_000, Input::Advance)]).unwrap_err();
    assert!(
        matches!(
            err,
            chime_native::store::StoreError::Fenced {
                current_epoch: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(pg_support::rows(&cfg).await, (1, 0));
    pg_support::drop_schema(&cfg).await;
}
