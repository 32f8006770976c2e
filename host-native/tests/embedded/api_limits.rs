//! The listener's bounds on a real daemon: a body over the limit is 413,
//! JSON nested too deep, malformed or with unknown fields is 400, a body
//! that trickles in is 408 and headers that trickle in get the
//! connection closed, and long-polls beyond the per-token bound are 429;
//! none of these refused requests changes anything.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use chime_native::http::HttpOptions;
use common::start_with;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_and_slow_requests_are_refused_and_change_nothing() {
    let options = HttpOptions {
        body_limit: 2_048,
        body_timeout: Duration::from_millis(300),
        header_timeout: Duration::from_millis(300),
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
    let before = inst.fingerprint().await;

    let big = "x".repeat(4_096);
    let (status, err) = inst
        .api("POST", "/v1/queues/q/jobs", Some(json!({ "payload": big })))
        .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (413, Some("body_too_large")),
        "{err}"
    );

    let deep = format!("{{\"payload\": {}{}}}", "[".repeat(100), "]".repeat(100));
    let resp = inst
        .client
        .post(format!("{}/v1/queues/q/jobs", inst.base()))
        .body(deep)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);

    for bad in [
        "{",
        "[1,2]",
        "{\"payload\": 1, \"colour\": 2}",
        "{\"priority\": \"high\"}",
    ] {
        let resp = inst
            .client
            .post(format!("{}/v1/queues/q/jobs", inst.base()))
            .body(bad)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{bad}");
        let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        assert!(
            body["error"].is_string() && body["message"].is_string(),
            "{body}"
        );
    }

    // A body that trickles in: 408 once the body timeout passes.
    let mut s = tokio::net::TcpStream::connect(inst.server.local_addr())
        .await
        .unwrap();
    s.write_all(b"POST /v1/queues/q/jobs HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{")
        .await
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let _ = s.write_all(b" ").await;
            let mut buf = [0u8; 512];
            match tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => {
                    answer.extend_from_slice(&buf[..n]);
                    break;
                }
                Err(_) => {}
            }
        }
    })
    .await;
    assert!(read.is_ok(), "a trickling body was never cut off");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    eprintln!("trickling body cut off after {:?}", started.elapsed());

    // Headers that trickle in: the connection is closed.
    let mut s = tokio::net::TcpStream::connect(inst.server.local_addr())
        .await
        .unwrap();
    s.write_all(b"GET /v1/queues HTTP/1.1\r\n").await.unwrap();
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if s.write_all(b"x").await.is_err() {
                return;
            }
            let mut buf = [0u8; 512];
            match tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return,
                Ok(Ok(_)) => return, // a 408 before the close
                Err(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "trickling headers were never cut off");
    eprintln!("trickling headers cut off after {:?}", started.elapsed());

    // One long-poll per token (here: everyone): the second is 429.
    let first = tokio::spawn({
        let client = inst.client.clone();
        let url = format!("{}/v1/queues/q/claim", inst.base());
        async move {
            client
                .post(url)
                .body(json!({"worker": "w", "waitMs": 1500}).to_string())
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resp = inst
        .client
        .post(format!("{}/v1/queues/q/claim", inst.base()))
        .body(json!({"worker": "w2", "waitMs": 1000}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 429);
    assert_eq!(resp.headers()["retry-after"], "1");
    let err: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(err["error"], "too_many_requests", "{err}");
    assert_eq!(first.await.unwrap(), 200);

    assert_eq!(
        inst.fingerprint().await,
        before,
        "refused requests changed nothing"
    );
    inst.stop().await;
}
