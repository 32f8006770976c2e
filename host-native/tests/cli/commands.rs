//! The `chime` binary's small commands, and the shipped quickstart config.

use chime_native::daemon::config::FileConfig;
use std::process::Command;

fn chime(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn preview_prints_civil_times_with_offsets() {
    let (ok, out, _) = chime(&[
        "preview",
        "30 2 * * *",
        "--tz",
        "America/New_York",
        "-n",
        "3",
    ]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    for l in lines {
        assert!(l.contains("T02:30:00 "), "{l}");
        assert!(l.contains(" America/New_York"), "{l}");
        assert!(l.contains("-05:00") || l.contains("-04:00"), "{l}");
    }
}

#[test]
fn errors_are_one_clear_line() {
    let (ok, _, err) = chime(&["preview", "61 * * * *"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: invalid_spec: minute 61 out of range 0-59 at field 1"
    );
    let (ok, _, err) = chime(&["run", "--config", "/nonexistent/chime.toml"]);
    assert!(!ok);
    assert!(
        err.starts_with("error: config /nonexistent/chime.toml: reading"),
        "{err}"
    );
}

#[test]
fn the_quickstart_config_parses() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart.toml");
    let cfg = FileConfig::load(path.as_ref()).unwrap();
    assert_eq!(cfg.queues.len(), 2);
    assert_eq!(cfg.schedules.len(), 3);
    assert_eq!(cfg.workers.len(), 2);
    let flaky = cfg.queues.iter().find(|q| q.name == "flaky").unwrap();
    assert_eq!(flaky.max_attempts, 3);
    assert_eq!(cfg.pool_config(&cfg.workers[0]).lease_ms, 10_000);
}

#[test]
fn a_worker_for_an_undeclared_queue_is_rejected() {
    let err =
        FileConfig::parse("[[worker]]\nqueue = \"nope\"\ncommand = [\"true\"]\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "worker #1: queue \"nope\" has no [[queue]] table"
    );
}

#[test]
fn preview_takes_a_dst_policy_and_a_start() {
    // 2026-03-08 is the spring-forward day in New York: 02:30 does not exist.
    let base = [
        "preview",
        "30 2 * * *",
        "--tz",
        "America/New_York",
        "--from",
        "2026-03-07T12:00:00Z",
        "-n",
        "2",
    ];
    let (ok, out, _) = chime(&base);
    assert!(ok);
    let first: Vec<&str> = out.lines().map(|l| l.split("  ").next().unwrap()).collect();
    assert_eq!(
        first,
        vec!["2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"]
    );
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with("(shifted from DST gap)")
    );

    let (ok, out, _) = chime(&[&base[..], &["--dst", "gap=skip"]].concat());
    assert!(ok);
    let first: Vec<&str> = out.lines().map(|l| l.split("  ").next().unwrap()).collect();
    assert_eq!(
        first,
        vec!["2026-03-09T06:30:00.000Z", "2026-03-10T06:30:00.000Z"]
    );

    // A civil --from is read in --tz, like a civil `@at`.
    let (ok, out, _) = chime(&[
        "preview",
        "@hourly",
        "--tz",
        "Europe/Paris",
        "--from",
        "2026-01-01T10:00",
        "-n",
        "1",
    ]);
    assert!(ok);
    assert!(
        out.starts_with("2026-01-01T10:00:00.000Z  2026-01-01T11:00:00 +01:00"),
        "{out}"
    );

    let (ok, _, err) = chime(&["preview", "@hourly", "--dst", "fold=sometimes"]);
    assert!(!ok);
    assert!(err.contains("--dst: unknown \"fold=sometimes\""), "{err}");
    let (ok, _, err) = chime(&["preview", "@hourly", "--from", "yesterday"]);
    assert!(!ok);
    assert!(err.starts_with("error: --from \"yesterday\": "), "{err}");
}
