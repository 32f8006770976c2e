//! `chime validate` on crontab lines that Vixie cron, system crontabs and
//! supercronic read differently (they used to validate "ok" and then run
//! something else): a 7-field line and a user column are errors unless a
//! flag says how to read them; 6 fields (seconds first here, a year in
//! supercronic) and a `%` (stdin, as in Vixie) are warnings on an "ok".

use std::process::{Command, Output};

fn validate(text: &str, flags: &[&str]) -> (Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let tab = dir.path().join("jobs");
    std::fs::write(&tab, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("validate")
        .arg(&tab)
        .args(flags)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    (out, stdout.replace(&tab.display().to_string(), "jobs"))
}

#[test]
fn supercronic_and_system_crontab_lines_are_not_ok() {
    let (out, text) = validate(
        "*/5 * * * * * * echo x\n0 3 * * * root /usr/sbin/logrotate /etc/logrotate.conf\n",
        &[],
    );
    assert!(!out.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("jobs:1: field command: the command starts with \"*\""),
        "{text}"
    );
    assert!(lines[0].contains("--crontab-allow-field-command"), "{text}");
    assert!(
        lines[1].starts_with("jobs:2: field command: \"root\" reads as the user column"),
        "{text}"
    );
    assert!(lines[1].contains("--crontab-user-column"), "{text}");
}

#[test]
fn the_flags_read_them_and_warnings_still_say_ok() {
    let (out, text) = validate(
        "0 3 * * * root /usr/sbin/logrotate /etc/logrotate.conf\n\
         0 0 4 * * * root backup.sh\n\
         0 5 * * * root date +%T\n",
        &["--crontab-user-column"],
    );
    assert!(out.status.success(), "{text}");
    // As another user than root, line 1 warns that chime runs it as that
    // user (it does not switch users).
    let not_root = text.contains("jobs:1: warning: field user: runs as ");
    let lines: Vec<&str> = text.lines().skip(usize::from(not_root)).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("jobs:2: warning: field schedule: 6 time fields"),
        "{text}"
    );
    assert!(lines[0].ends_with("(six_fields_seconds_first)"), "{text}");
    assert!(
        lines[1].starts_with("jobs:3: warning: field command: an unescaped `%`"),
        "{text}"
    );
    assert!(lines[1].ends_with("(percent_is_stdin)"), "{text}");
    assert!(lines[2].starts_with("jobs: ok ("), "{text}");
    let warnings = if not_root {
        "3 warning(s)"
    } else {
        "2 warning(s)"
    };
    assert!(lines[2].contains(warnings), "{text}");
}
