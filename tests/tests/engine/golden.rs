//! Golden traces: every `tests/golden/*.jsonl` fixture replays through a
//! fresh engine and must reproduce its recorded replies and commands byte
//! for byte (format and regeneration: `chime_tests::golden`).

use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden")
}

fn fixture(name: &str) {
    chime_tests::golden::check_file(&dir().join(format!("{name}.jsonl")));
}

#[test]
fn catchup_every_2s() {
    fixture("catchup_every_2s");
}

#[test]
fn overlap_skip() {
    fixture("overlap_skip");
}

#[test]
fn overlap_buffer_one() {
    fixture("overlap_buffer_one");
}

#[test]
fn overlap_cancel_previous() {
    fixture("overlap_cancel_previous");
}

#[test]
fn pause_resume() {
    fixture("pause_resume");
}

#[test]
fn dst_new_york() {
    fixture("dst_new_york");
}

#[test]
fn dedup_keys() {
    fixture("dedup_keys");
}

#[test]
fn retry_dead_letter() {
    fixture("retry_dead_letter");
}

#[test]
fn fencing() {
    fixture("fencing");
}

#[test]
fn leadership_loss() {
    fixture("leadership_loss");
}

#[test]
fn stop_recover() {
    fixture("stop_recover");
}

/// Every fixture in the directory has a test above (a new file must be
/// added here, so it cannot be silently ignored).
#[test]
fn every_fixture_is_listed() {
    let src = include_str!("golden.rs");
    let mut n = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            assert!(
                src.contains(&format!("fixture(\"{stem}\")")),
                "{stem}.jsonl has no test"
            );
            n += 1;
        }
    }
    assert!(n >= 6, "at least six golden fixtures");
}
