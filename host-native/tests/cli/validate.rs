//! `chime validate`: a good file says what it holds and exits 0; a bad one
//! lists every problem with its line and field (syntax and the core's
//! errors alike) and exits non-zero. TOML and crontab files alike.

use std::path::Path;
use std::process::Command;

fn validate(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("validate")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn good_and_bad_files_toml_and_crontab() {
    let quickstart = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart.toml");
    let (ok, out, _) = validate(&[quickstart]);
    assert!(ok);
    assert!(
        out.trim()
            .ends_with("quickstart.toml: ok (2 queues, 3 schedules, 2 worker pools)"),
        "{out}"
    );

    let dir = tempfile::tempdir().unwrap();
    let bad_toml = write(
        dir.path(),
        "bad.toml",
        "\
[[queue]]
name = \"q\"
maxAttempts = 0

[[schedule]]
name = \"fine\"
spec = \"@hourly\"
target = { queue = \"q\" }

[[schedule]]
name = \"nightly\"
spec = \"0 3 * * *\"
tz = \"Europe/Atlantis\"
target = { queue = \"q\" }

[[schedule]]
name = \"too-often\"
spec = \"@every 10ms\"
target = { queue = \"q\" }
",
    );
    let (ok, out, err) = validate(&[&bad_toml]);
    assert!(!ok);
    assert!(err.contains("bad.toml: 3 problem(s)"), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with(&format!(
            "{bad_toml}:1: [[queue]] #1 \"q\", field maxAttempts: invalid_input"
        )),
        "{out}"
    );
    assert_eq!(
        lines[1],
        format!(
            "{bad_toml}:10: [[schedule]] #2 \"nightly\", field tz: \
             invalid_time_zone: unknown time zone \"Europe/Atlantis\""
        )
    );
    assert!(
        lines[2].starts_with(&format!(
            "{bad_toml}:16: [[schedule]] #3 \"too-often\", field spec: interval_too_short"
        )),
        "{out}"
    );

    // A crontab: syntax errors and the core's errors in one listing, by line.
    let bad_cron = write(
        dir.path(),
        "jobs",
        "\
# nightly jobs
MAILTO=\"\"
*/5 * * * * echo fine
0 24 * * * echo bad-hour
CRON_TZ=Nowhere/City
@fortnightly echo what
0 0 30 2 * echo never-fires
",
    );
    let (ok, out, err) = validate(&[&bad_cron]);
    assert!(!ok);
    assert!(err.contains("4 problem(s)"), "{err}");
    let got: Vec<(&str, &str)> = out
        .lines()
        .map(|l| {
            let rest = l.strip_prefix(&format!("{bad_cron}:")).unwrap();
            let (line, rest) = rest.split_once(": ").unwrap();
            (line, rest)
        })
        .collect();
    let lines: Vec<&str> = got.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec!["4", "5", "6", "7"], "{out}");
    assert!(
        got[0].1.contains("field spec: invalid_spec: hour 24"),
        "{out}"
    );
    assert!(
        got[1].1.starts_with("field CRON_TZ: invalid_time_zone"),
        "{out}"
    );
    assert!(
        got[2].1.starts_with("field schedule: unknown macro"),
        "{out}"
    );
    assert!(got[3].1.contains("spec_never_fires"), "{out}");

    // `--crontab` reads any file as a crontab, whatever its name.
    let cron_named_toml = write(dir.path(), "cron.toml", "@daily echo hi\n@reboot echo up\n");
    let (ok, _, _) = validate(&[&cron_named_toml]);
    assert!(!ok, "read as TOML it is invalid");
    let (ok, out, _) = validate(&["--crontab", &cron_named_toml]);
    assert!(ok);
    assert!(
        out.contains("ok (1 queues, 1 schedules, 1 worker pools, 1 @reboot jobs)"),
        "{out}"
    );

    let (ok, _, err) = validate(&["/nonexistent/crontab"]);
    assert!(!ok);
    assert!(err.contains("1 problem(s)"), "{err}");
}
