//! Every `sh` example of `docs/clients.md`, in order, run with `sh -e`
//! against a real daemon started from the page's own `toml` block: the
//! `chime` commands (the binary under test first on `PATH`) and the
//! Python and Node examples. Each block must exit 0 within 2 minutes,
//! the refusal must read as the page shows it, and afterwards every job
//! the two producers printed is `completed`: the page cannot drift from
//! the commands or the examples.

use crate::api_daemon::{chime_bin, repo, start, token_table};
use std::process::Command;

const ADMIN: &str = "chime_docs_admin";
const EMAILS: &str = "chime_docs_emails";

/// The fenced blocks of `lang` in a Markdown file.
fn blocks(markdown: &str, lang: &str) -> Vec<String> {
    let open = format!("```{lang}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, l) if l == open => current = Some(String::new()),
            (Some(b), "```") => {
                out.push(std::mem::take(b));
                current = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

#[test]
fn the_documented_client_examples_run() {
    let doc = std::fs::read_to_string(repo().join("docs/clients.md")).unwrap();
    let config = blocks(&doc, "toml").remove(0);
    let dir = tempfile::tempdir().unwrap();
    let api = start(
        dir.path(),
        &format!(
            "{config}{}{}",
            token_table("docs", ADMIN, &["admin"]),
            token_table("emails-producer", EMAILS, &["enqueue:emails"]),
        ),
    );
    // The examples name `examples/…` from the repository's root; the
    // files they write (job.json, the id lists) stay in a scratch dir.
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::os::unix::fs::symlink(repo().join("examples"), work.join("examples")).unwrap();
    let bin = chime_bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sh = blocks(&doc, "sh");
    assert!(sh.len() >= 7, "found {} examples", sh.len());
    let mut refusal = None;
    for block in &sh {
        let out = Command::new("timeout")
            .args(["120", "sh", "-ec", block])
            .current_dir(&work)
            .env("PATH", &path)
            .env("CHIME_URL", &api.base)
            .env("CHIME_TOKEN", ADMIN)
            .env("EMAILS_TOKEN", EMAILS)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{block}\n{}\ndaemon log:\n{}",
            crate::api_daemon::text(&out),
            crate::daemon::read(&api.log)
        );
        if block.contains("EMAILS_TOKEN") {
            refusal = Some(format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            ));
        }
    }
    // The refusal prints what the page says it prints.
    let refusal = refusal.expect("the refusal example");
    let shown = doc
        .split_once("CHIME_TOKEN=$EMAILS_TOKEN")
        .and_then(|(_, rest)| rest.split_once("```text\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(text, _)| text)
        .expect("the refusal's output block");
    assert_eq!(refusal, shown, "docs/clients.md shows another refusal");

    // Every job the producers printed was completed by the workers.
    for file in ["py-ids.txt", "js-ids.txt"] {
        let ids = std::fs::read_to_string(work.join(file)).unwrap();
        assert_eq!(ids.lines().count(), 100, "{file}");
        for id in ids.lines() {
            let job = api.json(ADMIN, &["job", id]);
            assert_eq!(job["state"], "completed", "{file}: {job}");
        }
    }
    api.stop();
}
