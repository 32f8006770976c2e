//! A 5xx answer is "unavailable" (exit 4, like no answer at all), not a
//! refusal (3): a script may retry it. A real daemon answers 503 only
//! under load or without a leader, so a loopback listener plays one
//! that answers every request `503 unavailable` with the API's error
//! body, as a replica without a leader does.

use crate::api_daemon::{chime_bin, text};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;

#[test]
fn a_5xx_answer_exits_4_with_the_apis_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buf = [0; 4096];
        // Reads the request head (the client sends no body for a GET).
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "the client closed early");
            request.extend_from_slice(&buf[..n]);
        }
        let body = r#"{"error":"unavailable","message":"no leader elected"}"#;
        write!(
            conn,
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
             retry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        String::from_utf8_lossy(&request).into_owned()
    });
    let out = Command::new(chime_bin())
        .args(["queues", "--url", &base])
        .env("CHIME_TOKEN", "chime_secret_token")
        .output()
        .unwrap();
    let request = server.join().unwrap();
    assert!(
        request.starts_with("GET /v1/queues HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("authorization: bearer chime_secret_token\r\n"),
        "the token travels in the header: {request}"
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "GET {base}/v1/queues: HTTP 503 unavailable: no leader elected"
        )),
        "{err}"
    );
    assert!(!err.contains("chime_secret_token"), "{err}");
}
