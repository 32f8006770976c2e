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

/// The module names a `main.rs` or `mod.rs` declares (`mod x;`, `pub mod x;`).
fn declared(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(|l| l.strip_prefix("pub ").unwrap_or(l))
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

/// Checks one crate's `tests/` folder; returns the number of binaries.
/// A folder with a `mod.rs` and no `main.rs` is a suite shared by
/// binaries (`#[path = "../NAME/mod.rs"]`): it must be included by one,
/// and its `mod.rs` names every file beside it.
fn check(tests: &Path) -> usize {
    let (loose, folders) = entries(tests);
    assert!(
        loose.is_empty(),
        "{}: {loose:?} would each be a test binary of their own: move them into a binary's folder",
        tests.display()
    );
    let mut binaries = 0;
    for bin in &folders {
        let (files, dirs) = entries(bin);
        assert!(
            dirs.is_empty(),
            "{}: no nested folders: {dirs:?}",
            bin.display()
        );
        let (root, shared) = match std::fs::read_to_string(bin.join("main.rs")) {
            Ok(main) => (main, false),
            Err(_) => {
                let text = std::fs::read_to_string(bin.join("mod.rs"))
                    .unwrap_or_else(|_| panic!("{}: neither main.rs nor mod.rs", bin.display()));
                (text, true)
            }
        };
        let mut expected = files.clone();
        expected.remove(if shared { "mod" } else { "main" });
        assert_eq!(
            declared(&root),
            expected,
            "{}: one `mod` line per file beside it",
            bin.display()
        );
        if shared {
            let name = bin.file_name().unwrap().to_str().unwrap();
            let include = format!("#[path = \"../{name}/mod.rs\"]");
            let included = folders.iter().filter(|f| *f != bin).any(|f| {
                std::fs::read_dir(f).unwrap().any(|e| {
                    std::fs::read_to_string(e.unwrap().path()).is_ok_and(|t| t.contains(&include))
                })
            });
            assert!(
                included,
                "{}: no binary includes it ({include})",
                bin.display()
            );
        } else {
            binaries += 1;
        }
    }
    binaries
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
