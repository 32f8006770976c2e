//! The canonical serializer against the sample payloads of `tests/golden`
//! (seed 000 item 3): every engine `Enqueue` command and every enqueued
//! payload of the golden histories becomes a message, serialized, parsed
//! and re-serialized byte for byte, and the bytes are pinned in
//! `tests/golden/transport/messages.txt` (rewritten with `CHIME_BLESS=1`).

use super::*;
use chime_core::Command;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden");

/// The messages of the golden histories, first appearance order, each body
/// once.
fn golden_messages() -> Vec<Message> {
    let mut files: Vec<_> = std::fs::read_dir(GOLDEN)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out: Vec<Message> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in files {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let mut found = Vec::new();
            if let Some(e) = v.pointer("/input/enqueue") {
                let queue = e["queue"].as_str().unwrap();
                let payload = Payload::from_json(&e["payload"].to_string()).unwrap();
                let headers: Headers =
                    serde_json::from_value(e.get("headers").cloned().unwrap_or_default())
                        .unwrap_or_default();
                let id = match e.get("key").and_then(|k| k.as_str()) {
                    Some(k) => Message::key_id(k),
                    None => Message::job_id(
                        v.pointer("/reply/enqueued/job")
                            .and_then(|j| j.as_u64())
                            .unwrap_or(0),
                    ),
                };
                found.push(Message {
                    id,
                    queue: queue.to_owned(),
                    fire: None,
                    priority: e.get("priority").and_then(|p| p.as_i64()).unwrap_or(0) as i32,
                    max_attempts: e
                        .get("maxAttempts")
                        .and_then(|m| m.as_u64())
                        .map(|m| m as u32),
                    headers,
                    payload,
                });
            }
            for c in v["commands"].as_array().into_iter().flatten() {
                if c.get("enqueue").is_some() {
                    let cmd: Command = serde_json::from_value(c.clone()).unwrap();
                    found.push(Message::of_command(&cmd).unwrap());
                }
            }
            for m in found {
                if seen.insert(m.body()) {
                    out.push(m);
                }
            }
        }
    }
    out
}

/// Messages the histories do not have: text that needs escaping, floats
/// kept verbatim, headers, overrides, manual fires.
fn edge_messages() -> Vec<Message> {
    let fire: FireId = "nightly.report@1700000000000#m3".parse().unwrap();
    let mut headers = Headers::new();
    headers.insert("tenant".into(), "t-1".into());
    headers.insert("z\"quote".into(), "line\nbreak ünï €".into());
    vec![
        Message::of_fire(
            &fire,
            "planner",
            &Payload::from_json(r#"{ "runId": "r-1", "digests": ["sha256:ab", 1.50, 1e3] }"#)
                .unwrap(),
            &headers,
            0,
            Some(5),
        ),
        Message {
            id: Message::key_id("k/ü"),
            queue: "runner".into(),
            fire: None,
            priority: -2,
            max_attempts: None,
            headers: Headers::new(),
            payload: Payload::from_json("\"\\u0000\\t\"").unwrap(),
        },
    ]
}

fn render(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        out.push_str(&m.body());
        out.push('\n');
        out.push_str(&encode_headers(&m.headers()));
        let dead = DeadLetter {
            message: m.clone(),
            attempts: 3,
            reason: "exit status 1\nstderr: boom".into(),
        };
        out.push_str("-- dead letter\n");
        out.push_str(&encode_headers(&dead.headers()));
        out.push('\n');
    }
    out
}

#[test]
fn golden_payloads_reserialize_byte_for_byte() {
    let mut all = golden_messages();
    assert!(
        all.len() >= 10,
        "golden histories hold enqueues: {}",
        all.len()
    );
    all.extend(edge_messages());
    for m in &all {
        let body = m.body();
        let back = Message::parse(&body).unwrap();
        assert_eq!(&back, m);
        assert_eq!(back.body(), body, "re-serialized");
        let h = encode_headers(&m.headers());
        let parsed = parse_headers(&h).unwrap();
        assert_eq!(encode_headers(&parsed), h);
    }
    let text = render(&all);
    let path = format!("{GOLDEN}/transport/messages.txt");
    if std::env::var_os("CHIME_BLESS").is_some() {
        std::fs::create_dir_all(format!("{GOLDEN}/transport")).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let pinned = std::fs::read_to_string(&path).expect("run with CHIME_BLESS=1 once");
    assert_eq!(text, pinned, "the canonical bytes changed: {path}");
}

#[test]
fn non_canonical_bodies_are_refused() {
    let m = &edge_messages()[0];
    let body = m.body();
    // Same message, other bytes: spacing, field order, an explicit default.
    let spaced = body.replacen("\"v\":1,", "\"v\": 1,", 1);
    assert!(matches!(
        Message::parse(&spaced),
        Err(MessageError::NotCanonical)
    ));
    let zero = body.replacen(",\"maxAttempts\"", ",\"priority\":0,\"maxAttempts\"", 1);
    assert!(matches!(
        Message::parse(&zero),
        Err(MessageError::NotCanonical)
    ));
    let v2 = body.replacen("\"v\":1", "\"v\":2", 1);
    assert!(matches!(Message::parse(&v2), Err(MessageError::Version(2))));
    assert!(matches!(
        Message::parse(r#"{"v":1,"id":"a","queue":"q","payload":1,"x":2}"#),
        Err(MessageError::Body(_))
    ));
    let wrong_schedule = body.replacen("\"schedule\":\"nightly.report\"", "\"schedule\":\"x\"", 1);
    assert!(matches!(
        Message::parse(&wrong_schedule),
        Err(MessageError::NotCanonical)
    ));
}

#[test]
fn header_values_are_one_line_and_reasons_cut() {
    let m = &edge_messages()[0];
    let dead = DeadLetter {
        message: m.clone(),
        attempts: 7,
        reason: "é".repeat(REASON_BYTES),
    };
    let h = dead.headers();
    let names: Vec<&str> = h.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [H_MESSAGE_ID, H_RUN_ID, H_SCHEDULE_ID, H_ATTEMPTS, H_REASON]
    );
    assert_eq!(h[1].1, "nightly.report@1700000000000#m3");
    assert_eq!(h[2].1, "nightly.report");
    assert_eq!(h[3].1, "7");
    assert!(h[4].1.len() <= REASON_BYTES && h[4].1.len() >= REASON_BYTES - 1);
    assert_eq!(one_line("a\r\nb"), "a  b");
}
