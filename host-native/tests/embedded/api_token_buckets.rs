//! Tokens added by a reload (`Tokens::replace`, what SIGHUP calls) each
//! get their own per-token bound, as the tokens of the start have: with
//! one long-poll per token, a long-poll of one new token does not make
//! another new token's 429, and a second one of the same token is 429.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use chime_native::http::{HttpOptions, TokenDef, Tokens, hash_hex};
use common::start_with;
use serde_json::json;
use std::time::Duration;

fn def(name: &str) -> TokenDef {
    TokenDef::new(name, &hash_hex(&format!("secret-{name}")), &["work".into()]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_added_by_a_reload_have_their_own_bounds() {
    let tokens = Tokens::new(vec![def("first")]).unwrap();
    let options = HttpOptions {
        tokens: tokens.clone(),
        max_polls_per_token: 1,
        ..HttpOptions::default()
    };
    let inst = start_with(
        Setup {
            queues: vec![QueueConfig::new("q")],
            ..Setup::default()
        },
        options,
        |s| Box::new(s),
    )
    .await;
    tokens
        .replace(&Tokens::new(vec![def("first"), def("b"), def("c")]).unwrap())
        .unwrap();

    let claim = |name: &'static str, wait_ms: u64| {
        let client = inst.client.clone();
        let url = format!("{}/v1/queues/q/claim", inst.base());
        async move {
            client
                .post(url)
                .bearer_auth(format!("secret-{name}"))
                .body(json!({"worker": name, "waitMs": wait_ms}).to_string())
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    let b = tokio::spawn(claim("b", 1_500));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Another new token: its own bound, so it waits (and gets nothing).
    let c = tokio::spawn(claim("c", 600));
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The same new token again: beyond its bound of one.
    assert_eq!(claim("b", 100).await, 429, "b's second long-poll");
    assert_eq!(c.await.unwrap(), 200, "c shares no bound with b");
    assert_eq!(b.await.unwrap(), 200);
    inst.stop().await;
}
