//! The layout of the workspace's integration tests (`docs/testing.md`,
//! "Layout"): each folder under `tests/tests/` and `host-native/tests/` is
//! one test binary whose `main.rs` names every file beside it as a module.
//! A file without its `mod` line would not be compiled at all, and a file
//! directly in `tests/` would become a test binary of its own again.

use std::collections::BTreeSet;
use std::path::Path;

/// The `.rs` file names (without the extension) in `dir`, and its folders.
fn entries(dir: &Path) -> (BTreeSet<String>, Vec<std::path::PathBuf>) {
    let (mut files, mut dirs) = (BTreeSet::new(), Vec::new());
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            dirs.push(path);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.insert(path.file_stem().unwrap().to_str().unwrap().to_owned());
        }
    }
    dirs.sort();
    (files, dirs)
}

/// Checks one crate's `tests/` folder; returns the number of binaries.
fn check(tests: &Path) -> usize {
    let (loose, binaries) = entries(tests);
    assert!(
        loose.is_empty(),
        "{}: {loose:?} would each be a test binary of their own: move them into a binary's folder",
        tests.display()
    );
    for bin in &binaries {
        let (files, dirs) = entries(bin);
        assert!(
            dirs.is_empty(),
            "{}: no nested folders: {dirs:?}",
            bin.display()
        );
        let main = std::fs::read_to_string(bin.join("main.rs")).unwrap();
        let mods: BTreeSet<String> = main
            .lines()
            .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
            .map(str::to_owned)
            .collect();
        let mut expected = files.clone();
        expected.remove("main");
        assert_eq!(
            mods,
            expected,
            "{}/main.rs must have one `mod` line per file beside it",
            bin.display()
        );
    }
    binaries.len()
}

#[test]
fn every_test_file_is_a_module_of_a_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        check(&root.join("tests")),
        3,
        "tests/tests: engine, queue, spec"
    );
    assert_eq!(
        check(&root.join("../host-native/tests")),
        3,
        "host-native/tests: embedded, pg, cli"
    );
}
