//! `chime replay`: a golden fixture reproduces its recorded outputs and a
//! tampered copy fails at the tampered line; a data directory left by a
//! crash replays deterministically, records a trace of its outputs, and
//! that trace verifies until someone edits it.

use chime_core::{QueueConfig, Timestamp};
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, Job, PoolConfig};
use chime_native::{Setup, driver::TokioClock, start};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// 2026-01-01T00:00Z.
const T0: i64 = 1_767_225_600_000;

fn replay(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("replay")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs a schedule every 10 s for 65 virtual seconds on a redb store in
/// `dir`, then stops as a crash would (no final snapshot).
fn crash_left_data_dir(dir: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let clock = Arc::new(TokioClock::new(Timestamp::from_millis(T0).unwrap()));
        let handler: Handler = Arc::new(|_: Job| Box::pin(async { Ok(()) }));
        let def = serde_json::from_value(serde_json::json!({
            "name": "tick", "spec": "@every 10s", "target": {"queue": "q"}
        }))
        .unwrap();
        let setup = Setup {
            queues: vec![QueueConfig::new("q")],
            schedules: vec![def],
            pools: vec![(PoolConfig::new("q"), handler)],
            ..Setup::default()
        };
        let store = RedbStore::open(dir).unwrap();
        let running = start(setup, Box::new(store), clock).await.unwrap();
        tokio::time::sleep(Duration::from_secs(65)).await;
        running.abort().await;
    });
}

#[test]
fn a_golden_fixture_verifies_and_a_tampered_one_fails() {
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/overlap_skip.jsonl"
    );
    let text = std::fs::read_to_string(golden).unwrap();
    let inputs = text.lines().filter(|l| l.contains("\"input\"")).count();
    let (ok, out, err) = replay(&[golden]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with(&format!("ok: {inputs} entries (0 rejected), ")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            ", {inputs} entries checked against recorded outputs"
        )),
        "{out}"
    );

    // One recorded command changed: the skip reason of the third input.
    let dir = tempfile::tempdir().unwrap();
    let tampered = dir.path().join("tampered.jsonl");
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("\"reason\":\"overlap\""))
        .unwrap();
    let bad = text.replacen(line, &line.replacen("\"overlap\"", "\"paused\"", 1), 1);
    std::fs::write(&tampered, bad).unwrap();
    let (ok, _, err) = replay(&[tampered.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains(&format!("line {}: command 1 differs", n + 1)),
        "{err}"
    );
    assert!(
        err.contains("recorded: ") && err.contains("\"reason\":\"paused\""),
        "{err}"
    );
}

#[test]
fn a_crashed_data_dir_replays_and_its_recorded_trace_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    crash_left_data_dir(&data);
    let data_s = data.to_str().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let trace_s = trace.to_str().unwrap();

    let (ok, out, err) = replay(&[data_s, "--record", trace_s]);
    assert!(ok, "{err}");
    // 6 fires (10..60 s), each claimed and completed, plus the setup.
    assert!(out.starts_with("ok: "), "{out}");
    assert!(
        out.contains("clock 1970-01-01T00:00:00.000Z -> 2026-01-01T00:01:00.000Z"),
        "from a fresh engine (no snapshot yet) to the last fire's time: {out}"
    );
    assert!(out.contains("1 schedules, 0 live jobs"), "{out}");

    let recorded = std::fs::read_to_string(&trace).unwrap();
    let entries = recorded.lines().count() - 1;
    assert!(entries > 12, "{recorded}");
    let (ok, out, err) = replay(&[trace_s]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!(
            "{entries} entries checked against recorded outputs"
        )),
        "{out}"
    );

    // Tamper with one recorded fire: the job id it created.
    let (n, line) = recorded
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("\"fire\":{\"fireId\":\"tick@1767225630000\""))
        .unwrap();
    let edited = line.replacen("\"job\":", "\"job\":9", 1);
    assert_ne!(edited, line);
    std::fs::write(&trace, recorded.replacen(line, &edited, 1)).unwrap();
    let (ok, _, err) = replay(&[trace_s]);
    assert!(!ok);
    assert!(err.contains(&format!("line {}: command", n + 1)), "{err}");

    // A journal line that is not an input at all.
    std::fs::write(&trace, format!("{recorded}{{\"now\": 5}}\n")).unwrap();
    let (ok, _, err) = replay(&[trace_s]);
    assert!(!ok);
    assert!(
        err.contains("an input line needs both now and input"),
        "{err}"
    );
}
