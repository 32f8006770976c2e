//! `chime validate` accepts, but warns about, what is probably not meant
//! (field report, issue 21): a `tz` on an `@every` schedule, which has no
//! effect, and a schedule aimed at a queue no `[[worker]]` of the file
//! works. Both print a `warning:` line with the line and field and still
//! exit 0; a `tz` that names no zone is an error even on `@every`.

use std::process::Command;

fn validate(path: &std::path::Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("validate")
        .arg(path)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn tz_on_every_and_unworked_queues_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chime.toml");
    std::fs::write(
        &path,
        r#"[[queue]]
name = "worked"

[[schedule]]
name = "zoned-every"
spec = "@every 5m"
tz = "Europe/Paris"
target = { queue = "worked" }

[[schedule]]
name = "nobody"
spec = "0 9 * * *"
target = { queue = "orphan" }

[[worker]]
queue = "worked"
command = ["true"]
"#,
    )
    .unwrap();
    let (ok, out) = validate(&path);
    assert!(ok, "{out}");
    let p = path.display();
    assert!(
        out.contains(&format!(
            "{p}:4: warning: [[schedule]] #1 \"zoned-every\", field tz: tz \"Europe/Paris\" has no effect on an @every spec"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{p}:10: warning: [[schedule]] #2 \"nobody\", field target.queue: no [[worker]] works queue \"orphan\""
        )),
        "{out}"
    );
    assert_eq!(out.matches("warning:").count(), 2, "{out}");

    std::fs::write(
        &path,
        "[[schedule]]\nname = \"e\"\nspec = \"@every 5m\"\ntz = \"Nowhere/Atlantis\"\n\
         target = { queue = \"q\" }\n",
    )
    .unwrap();
    let (ok, out) = validate(&path);
    assert!(!ok, "{out}");
    assert!(out.contains("invalid_time_zone"), "{out}");
}
