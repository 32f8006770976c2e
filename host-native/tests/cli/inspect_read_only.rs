//! `chime inspect --data` never writes (field report, issue 21): on a data
//! directory it may only read — the directory and its files made read-only
//! with chmod, and, since the tests may run as root (which ignores file
//! permissions), `inspect` run as the unprivileged `nobody` user then — it
//! shows the schedules of a daemon killed with SIGKILL (a store that needs
//! redb's repair, made on a copy) and leaves every file as it was. Before,
//! it failed creating and locking `chime.lock` for writing. A data path
//! that names a file is refused as "not a directory" by `inspect` and
//! `run` alike (before: `creating afile: File exists`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
[[queue]]
name = "q"

[[schedule]]
name = "tick"
spec = "@every 1s"
overlap = "allow"
target = { queue = "q" }
"#;

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.trim_ascii() == b"0")
        .unwrap()
}

/// `chime ARGS` as an unprivileged user (`nobody` when we are root).
fn chime_unprivileged(args: &[&str]) -> std::process::Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", env!("CARGO_BIN_EXE_chime")]);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_chime"))
    };
    cmd.args(args).output().unwrap()
}

/// Name, size and modification time of every file in `dir`.
fn listing(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.modified().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn inspect_reads_a_read_only_data_dir_left_by_a_crash() {
    let root = tempfile::tempdir().unwrap();
    let (config, data, log) = (
        root.path().join("chime.toml"),
        root.path().join("data"),
        root.path().join("daemon.log"),
    );
    std::fs::write(&config, CONFIG).unwrap();
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--http", "off", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(&data)
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::fs::read_to_string(&log)
        .unwrap()
        .matches("fire fire=")
        .count()
        < 2
    {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{}",
            std::fs::read_to_string(&log).unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    daemon.kill().unwrap(); // SIGKILL: the store is left as a crash leaves it
    daemon.wait().unwrap();

    for f in std::fs::read_dir(&data).unwrap() {
        chmod(&f.unwrap().path(), 0o444);
    }
    chmod(&data, 0o555);
    chmod(root.path(), 0o755); // for `nobody` to reach it
    let before = listing(&data);
    // Really read-only for the user inspect runs as.
    let probe = if is_root() {
        Command::new("runuser")
            .args(["-u", "nobody", "--", "touch"])
            .arg(data.join("probe"))
            .stderr(Stdio::null())
            .status()
            .unwrap()
    } else {
        Command::new("touch")
            .arg(data.join("probe"))
            .stderr(Stdio::null())
            .status()
            .unwrap()
    };
    assert!(!probe.success(), "the data directory is writable");

    let out = chime_unprivileged(&["inspect", "--json", "--data", data.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let view: chime_native::http::Inspection = serde_json::from_str(&stdout).unwrap();
    assert_eq!(view.schedules.len(), 1);
    assert_eq!(view.schedules[0].def.name, "tick");
    assert!(view.schedules[0].fires >= 2, "{stdout}");
    assert_eq!(listing(&data), before, "inspect changed the data directory");

    // A path that is a file: not a directory, for inspect and run.
    let file = root.path().join("afile");
    std::fs::write(&file, "").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["inspect", "--data"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is not a directory"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--http", "off", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("is not a directory") && !err.contains("File exists"),
        "{err}"
    );
    chmod(&data, 0o755);
}
