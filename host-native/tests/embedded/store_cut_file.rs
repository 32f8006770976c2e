//! Storage faults, part 1: the redb file cut short at pseudo-random byte
//! offsets (a disk that lost the file's tail, a copy that stopped half
//! way). Whatever the cut, opening the store either fails with a clear
//! error or recovers exactly one of the states it committed — never a
//! mix, never entries it did not commit, and never a panic (redb asserts
//! on some cut files; the store turns that into an error).

use chime_core::{EnqueueRequest, Input, JournalEntry, Payload, QueueConfig, Timestamp};
use chime_native::store::{RedbStore, Store};

/// What a reopened store holds: the snapshot as JSON and the journal.
type State = (Option<String>, Vec<JournalEntry>);

fn entry(ms: i64, input: Input) -> JournalEntry {
    JournalEntry {
        now: Timestamp::from_millis(ms).unwrap(),
        input,
    }
}

/// SplitMix64, so the offsets are the same on every run.
fn mix(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Commits 40 turns (a snapshot after turn 20) and returns every state a
/// reader could have seen after a commit, oldest first.
fn build(dir: &std::path::Path) -> Vec<State> {
    let mut engine = chime_core::Engine::new(chime_core::EngineConfig::default());
    let mut store = RedbStore::open(dir).unwrap();
    let mut states: Vec<State> = vec![(None, Vec::new())];
    let mut snapshot: Option<String> = None;
    let mut journal: Vec<JournalEntry> = Vec::new();
    for turn in 0..40i64 {
        let now = 1_000_000 + turn * 1_000;
        let mut entries = vec![entry(now, Input::Advance)];
        if turn == 0 {
            entries.push(entry(now, Input::DeclareQueue(QueueConfig::new("q"))));
        }
        for k in 0..3 {
            let payload = Payload::from_json(&format!(r#"{{"turn":{turn},"k":{k}}}"#)).unwrap();
            entries.push(entry(
                now,
                Input::Enqueue(EnqueueRequest::new("q", payload)),
            ));
        }
        for e in &entries {
            engine.handle(e.now, e.input.clone()).unwrap();
        }
        store.append(&entries).unwrap();
        journal.extend(entries);
        states.push((snapshot.clone(), journal.clone()));
        if turn == 20 {
            let snap = engine.snapshot();
            store.write_snapshot(&snap).unwrap();
            snapshot = Some(snap.to_json());
            journal.clear();
            states.push((snapshot.clone(), journal.clone()));
        }
    }
    states
}

#[test]
fn a_cut_file_recovers_a_committed_state_or_fails_clearly() {
    let src = tempfile::tempdir().unwrap();
    let states = build(src.path());
    let bytes = std::fs::read(src.path().join("chime.redb")).unwrap();
    assert!(bytes.len() > 4096, "database file of {} bytes", bytes.len());
    let (mut recovered, mut refused, mut latest) = (0, 0, 0);
    let mut offsets: Vec<usize> = (0..48u64)
        .map(|i| (mix(i) % bytes.len() as u64) as usize)
        .collect();
    // The edges: nothing left, one byte, all but one byte; and the whole
    // file, which must give the latest state back.
    offsets.extend([0, 1, bytes.len() - 1, bytes.len()]);
    for cut in offsets {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chime.redb"), &bytes[..cut]).unwrap();
        let opened = std::panic::catch_unwind(|| {
            let mut store = RedbStore::open(dir.path())?;
            store.load()
        })
        .unwrap_or_else(|_| panic!("opening a file cut at byte {cut} panicked"));
        match opened {
            Ok(rec) => {
                let got: State = (rec.snapshot.map(|s| s.to_json()), rec.entries);
                let at = states.iter().position(|s| *s == got).unwrap_or_else(|| {
                    panic!(
                        "cut at byte {cut}: recovered a state that was never committed \
                         (snapshot: {}, {} journal entries)",
                        got.0.is_some(),
                        got.1.len()
                    )
                });
                recovered += 1;
                latest += usize::from(at == states.len() - 1);
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.is_empty(), "cut at byte {cut}: an empty error");
                refused += 1;
            }
        }
    }
    eprintln!(
        "{recovered} cuts recovered a committed state ({latest} the latest), {refused} refused"
    );
    // A zero-length file is a new, empty store; a file without its tail
    // is refused or rolled back — both outcomes must have been exercised.
    assert!(
        recovered >= 1 && refused >= 1,
        "{recovered} recovered, {refused} refused"
    );
}
