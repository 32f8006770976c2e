//! Every `sh` example of `docs/http.md`, in order, run with `sh -e`
//! against a real daemon with an `admin` token: each must exit 0 (the
//! examples use `curl -f`), and the jobs end as the prose says (job 1 and
//! 3 completed, job 2 cancelled), so the reference cannot drift from the
//! routes.

use crate::common;

use chime_native::Setup;
use common::start_with_tokens;
use serde_json::json;

/// The fenced ```sh blocks of a Markdown file.
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_curl_examples_run() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/http.md")).unwrap();
    let blocks = sh_blocks(&doc);
    assert!(blocks.len() >= 15, "found {} examples", blocks.len());
    let inst = start_with_tokens(Setup::default(), &[("docs", "doc-token", &["admin"])]).await;
    for block in &blocks {
        assert!(block.contains("curl"), "{block}");
        let out = tokio::process::Command::new("sh")
            .arg("-ec")
            .arg(block)
            .env("CHIME", inst.base())
            .env("CHIME_TOKEN", "doc-token")
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{block}\nexit {:?}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let token = Some("doc-token");
    let state = |id: u64| {
        let inst = &inst;
        async move {
            let (_, j) = inst
                .send("GET", &format!("/v1/jobs/{id}"), token, None)
                .await;
            j["state"].clone()
        }
    };
    assert_eq!(state(1).await, json!("completed"));
    assert_eq!(state(2).await, json!("cancelled"));
    assert_eq!(state(3).await, json!("completed"));
    inst.stop().await;
}
