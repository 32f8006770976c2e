//! `chime preview` refuses what `chime validate` and an upsert refuse, with
//! the same message (field report, issue 21): an `@at` in the past says it
//! is in the past (not "no occurrence within 100 years"), a spec that never
//! fires says so, and `--tz` with a zone that does not exist is refused on
//! `@every` too.

use std::process::Command;

fn preview(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("preview")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn preview_refuses_with_the_reason() {
    let (ok, out) = preview(&["@at 2020-01-01T00:00:00Z"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("spec_never_fires: @at 2020-01-01T00:00:00.000Z is in the past"),
        "{out}"
    );
    let (ok, out) = preview(&["0 0 30 2 *"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("spec_never_fires: no occurrence within 100 years"),
        "{out}"
    );
    let (ok, out) = preview(&["@every 5s", "--tz", "Nowhere/Atlantis"]);
    assert!(!ok, "{out}");
    assert!(out.contains("invalid_time_zone"), "{out}");
}
