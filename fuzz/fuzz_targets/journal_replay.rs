//! Arbitrary JSON Lines → journal read → replay from a default snapshot:
//! never a panic. Entries that parse must re-encode to entries that parse
//! the same; a replay must be deterministic (twice, same commands) and end
//! in a state whose snapshot round-trips.
//!
//! Input: byte 0 picks the starting snapshot (standalone or follower
//! engine, default config); the rest is the journal text.
#![no_main]

use chime_core::{Engine, EngineConfig, Snapshot};
use chime_fuzz::{journal_round_trip, jr, round_trip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(entries) = jr::read(text) else {
        return;
    };
    if entries.len() > 256 {
        return;
    }
    journal_round_trip(&entries);
    let config = EngineConfig {
        standalone: mode & 1 == 0,
        seed: u64::from(mode >> 1),
        ..EngineConfig::default()
    };
    let snapshot = Engine::new(config).snapshot();
    let json = snapshot.to_json();
    let Ok(first) = jr::replay(snapshot, &entries) else {
        return;
    };
    first.engine.check_invariants();
    round_trip(&first.engine);
    let second = jr::replay(Snapshot::from_json(&json).unwrap(), &entries).unwrap();
    assert_eq!(
        first.commands, second.commands,
        "replay is not deterministic"
    );
    assert_eq!(first.replies, second.replies, "replay replies differ");
});
