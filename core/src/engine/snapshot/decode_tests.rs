//! The compact decoder against the derived `Deserialize` on snapshots (see
//! `wire/decode/testkit.rs`): snapshots of engines driven through eight
//! golden traces, every truncation, deletion and newline of the two
//! largest, scalar replacements and structural changes of all.

use super::Snapshot;
use crate::engine::Engine;
use crate::wire::decode::testkit::{ALTS, same, structural_same, tokens, variants};

/// Snapshots of engines driven through the golden traces (jobs in
/// every state, leases, dedup and fire keys, leadership grants, buffered
/// and in-flight fires, pause logs), as JSON.
fn golden_snapshots() -> Vec<String> {
    let mut out = Vec::new();
    for file in [
        include_str!("../../../../tests/golden/fencing.jsonl"),
        include_str!("../../../../tests/golden/retry_dead_letter.jsonl"),
        include_str!("../../../../tests/golden/leadership_loss.jsonl"),
        include_str!("../../../../tests/golden/overlap_buffer_one.jsonl"),
        include_str!("../../../../tests/golden/overlap_cancel_previous.jsonl"),
        include_str!("../../../../tests/golden/dedup_keys.jsonl"),
        include_str!("../../../../tests/golden/pause_resume.jsonl"),
        include_str!("../../../../tests/golden/dst_new_york.jsonl"),
    ] {
        let mut lines = file.lines();
        let head: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        let config = serde_json::from_value(head["config"].clone()).unwrap_or_default();
        let mut engine = Engine::new(config);
        let entries: Vec<serde_json::Value> =
            lines.map(|l| serde_json::from_str(l).unwrap()).collect();
        for (n, v) in entries.iter().enumerate() {
            let now = serde_json::from_value(v["now"].clone()).unwrap();
            let input = serde_json::from_value(v["input"].clone()).unwrap();
            let _ = engine.handle(now, input);
            while engine.poll_command().is_some() {}
            let snap = engine.snapshot().to_json();
            if n % 4 == 3 && !out.contains(&snap) {
                out.push(snap);
            }
        }
    }
    out
}

#[test]
fn snapshots_decode_as_derived() {
    let snaps = golden_snapshots();
    assert!(snaps.iter().any(|s| s.contains("\"lease\":{")));
    assert!(snaps.iter().any(|s| s.contains("\"held\":{")));
    assert!(snaps.iter().any(|s| s.contains("\"grant\":{")));
    assert!(snaps.iter().any(|s| s.contains("\"buffered\":{")));
    assert!(snaps.iter().any(|s| s.contains("\"dedup\":{")));
    assert!(snaps.iter().any(|s| s.contains("\"civil\":{\"time\"")));
    assert!(snaps.iter().any(|s| s.contains("\"runs\":[")));
    assert!(snaps.iter().any(|s| s.contains("\"skipReason\":")));
    assert!(snaps.iter().any(|s| s.contains("\"durationMs\":")));
    let mut by_size: Vec<&String> = snaps.iter().collect();
    by_size.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for (n, snap) in by_size.into_iter().enumerate() {
        if n < 2 {
            // Every truncation, deletion and newline too.
            for v in variants(snap) {
                same::<Snapshot>(&v);
            }
        } else {
            same::<Snapshot>(snap);
            for (s, e) in tokens(snap) {
                for alt in ALTS {
                    same::<Snapshot>(&format!("{}{alt}{}", &snap[..s], &snap[e..]));
                }
            }
        }
    }
}

#[test]
fn structural_changes_decode_as_derived() {
    for snap in golden_snapshots() {
        structural_same::<Snapshot>(&snap);
    }
}
