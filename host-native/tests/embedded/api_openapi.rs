//! The OpenAPI document (`GET /v1/openapi.json`) describes exactly the
//! routes the listener serves: the document's paths × methods equal the
//! `.route(...)` calls of `src/http/` (a new route without a description
//! fails here, and so does a description without a route), and the live
//! listener serves each documented operation (no 405, no "no such
//! route") and answers 405 to every other method on a documented path.
//! Every operation lists the error statuses [`openapi::errors`] gives it,
//! each with the `ErrorBody` schema, and a job id that is not a number is
//! that JSON error too (it was axum's plain text).

use crate::common;

use chime_native::Setup;
use chime_native::http::openapi;
use common::start_with_tokens;
use std::collections::BTreeSet;

/// `(path, METHOD)` of every `.route("path", get(..).post(..))` call in
/// the `.rs` files of `src/http/`, parsed from the source.
fn routes_in_source() -> BTreeSet<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/http");
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut rest = text.as_str();
        while let Some(i) = rest.find(".route(") {
            rest = &rest[i + ".route(".len()..];
            let Some(open) = rest.find('"') else { break };
            let Some(len) = rest[open + 1..].find('"') else {
                break;
            };
            let route = rest[open + 1..open + 1 + len].to_owned();
            // The method router: up to the `)` closing `.route(`.
            let after = &rest[open + 1 + len + 1..];
            let mut depth = 1usize;
            let mut end = after.len();
            for (j, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let methods = &after[..end];
            let bytes = methods.as_bytes();
            for m in ["get", "post", "put", "delete", "patch"] {
                let needle = format!("{m}(");
                let mut from = 0;
                while let Some(k) = methods[from..].find(&needle) {
                    let at = from + k;
                    let boundary = at == 0
                        || !(bytes[at - 1].is_ascii_alphanumeric()
                            || bytes[at - 1] == b'_'
                            || bytes[at - 1] == b':');
                    if boundary {
                        found.insert((route.clone(), m.to_uppercase()));
                    }
                    from = at + needle.len();
                }
            }
            rest = after;
        }
    }
    found
}

#[test]
fn the_document_lists_exactly_the_routes_of_the_source() {
    let source = routes_in_source();
    assert!(source.len() >= 30, "parsed only {source:?}");
    let documented: BTreeSet<(String, String)> = openapi::operations().into_iter().collect();
    let undocumented: Vec<_> = source.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&source).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "routes without a description in src/http/openapi.rs: {undocumented:?}; \
         descriptions without a route: {unrouted:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_serves_every_documented_operation_and_no_other() {
    let inst = start_with_tokens(
        Setup::default(),
        &[
            ("admin", "admin-token", &["admin"]),
            ("none", "no-scope", &[]),
        ],
    )
    .await;
    // Served to any valid token, scopes or not; JSON, OpenAPI 3.1.
    let (status, doc) = inst
        .send("GET", "/v1/openapi.json", Some("no-scope"), None)
        .await;
    assert_eq!(status, 200);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let (status, body) = inst.send("GET", "/v1/openapi.json", None, None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("unauthorized"))
    );
    assert_eq!(doc, serde_json::to_value(openapi::document()).unwrap());

    // A job id that is not a u64 is the documented JSON 400, not axum's
    // plain-text rejection (schemathesis' content-type check found it).
    for (method, path) in [("GET", "/v1/jobs/abc"), ("POST", "/v1/jobs/-1/complete")] {
        let (status, body) = inst.send(method, path, Some("admin-token"), None).await;
        assert_eq!(status, 400, "{method} {path}");
        assert_eq!(body["error"], "invalid_request", "{body}");
        assert_eq!(body["field"], "id", "{body}");
    }

    let paths = doc["paths"].as_object().unwrap();
    for (path, item) in paths {
        let concrete = path.replace("{name}", "openapi-check").replace("{id}", "1");
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            let op = &item[method.to_lowercase()];
            if method == "GET" && path == "/v1/events" {
                // An endless stream: its answer is checked by api_events.
                continue;
            }
            let (status, body) = inst
                .send(method, &concrete, Some("admin-token"), None)
                .await;
            if op.is_null() {
                assert_eq!(status, 405, "{method} {path}: {body}");
                continue;
            }
            assert_ne!(
                status, 405,
                "{method} {path} is documented but not served: {body}"
            );
            assert!(
                !(status == 404 && body["message"] == "no such route"),
                "{method} {path} is documented but not routed"
            );
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses.contains_key(&status.to_string()),
                "{method} {path} answered {status}, not documented: {body}"
            );
            for code in openapi::errors(path, &method.to_lowercase()) {
                let r = &responses[&code.to_string()];
                assert_eq!(
                    r["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorBody",
                    "{method} {path} {code}"
                );
            }
        }
    }
    inst.stop().await;
}
