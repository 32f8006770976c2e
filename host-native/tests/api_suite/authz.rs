//! The authorization matrix: every route × every scope (unlimited, and
//! limited to `a*`) × a name inside and outside the pattern, plus no
//! token and an unknown one. A route is refused (401/403) exactly when
//! the token may not do it; when it may, the answer is whatever the
//! backend says (2xx, or 404/409 for state the earlier requests
//! changed), never 401/403 and never a 5xx. Refused requests change
//! nothing.

use super::deploy::{ADMIN, Deployment, SCOPES, Store};
use serde_json::json;

/// The config: two queues and a schedule on each.
pub const CONFIG: &str = r#"
[[queue]]
name = "a1"

[[queue]]
name = "b1"

[[schedule]]
name = "a-s"
spec = "@every 1h"
target = { queue = "a1" }

[[schedule]]
name = "b-s"
spec = "@every 1h"
target = { queue = "b1" }
"#;

/// What a route needs.
#[derive(Clone, Copy)]
enum Needs {
    /// Nothing (`/healthz`, the dashboard page and its assets).
    Open,
    /// A valid token, any scope (`/v1/whoami`).
    Token,
    /// The scope for every name (no pattern).
    All(&'static str),
    /// The scope for some names at least (lists filtered by name).
    Some(&'static str),
    /// The scope for the route's name.
    Name(&'static str),
}

fn allowed(token_scope: &str, limited: bool, inside: bool, needs: Needs) -> bool {
    let holds = |s: &str| token_scope == s || token_scope == "admin";
    match needs {
        Needs::Open | Needs::Token => true,
        Needs::All(s) => holds(s) && !limited,
        Needs::Some(s) => holds(s),
        Needs::Name(s) => holds(s) && (!limited || inside),
    }
}

/// Runs the matrix on a deployment of `store`; how many requests it checked.
pub async fn run(store: Store) -> usize {
    let d = Deployment::start(store, CONFIG).await;
    let admin = ADMIN;
    // A job in each queue, for the job routes.
    let mut job = std::collections::HashMap::new();
    for q in ["a1", "b1"] {
        let (status, e) = d
            .send(
                "POST",
                &format!("/v1/queues/{q}/jobs"),
                admin,
                Some(json!({})),
            )
            .await;
        assert_eq!(status, 200, "{e}");
        job.insert(q, e["id"].as_u64().unwrap());
    }

    // (method, path with {q} {s} {j}, body, needs)
    let routes: Vec<(&str, &str, Option<serde_json::Value>, Needs)> = vec![
        ("GET", "/healthz", None, Needs::Open),
        ("GET", "/", None, Needs::Open),
        ("GET", "/ui/app.js", None, Needs::Open),
        ("GET", "/v1/whoami", None, Needs::Token),
        ("GET", "/v1/metrics/history", None, Needs::Some("read")),
        ("GET", "/v1/schedules/{s}/fires", None, Needs::Name("read")),
        ("GET", "/metrics", None, Needs::All("read")),
        ("GET", "/v1/inspect", None, Needs::Some("read")),
        ("GET", "/v1/schedules", None, Needs::Some("read")),
        ("GET", "/v1/queues", None, Needs::Some("read")),
        ("GET", "/v1/schedules/{s}", None, Needs::Name("read")),
        ("GET", "/v1/queues/{q}/dead", None, Needs::Name("read")),
        ("GET", "/v1/queues/{q}/jobs", None, Needs::Name("read")),
        ("GET", "/v1/jobs/{j}", None, Needs::Name("read")),
        (
            "POST",
            "/v1/queues/{q}/jobs",
            Some(json!({"payload": 1})),
            Needs::Name("enqueue"),
        ),
        (
            "POST",
            "/v1/queues/{q}/claim",
            Some(json!({"worker": "w"})),
            Needs::Name("work"),
        ),
        (
            "POST",
            "/v1/jobs/{j}/heartbeat",
            Some(json!({"token": 1})),
            Needs::Name("work"),
        ),
        (
            "POST",
            "/v1/jobs/{j}/complete",
            Some(json!({"token": 1})),
            Needs::Name("work"),
        ),
        (
            "POST",
            "/v1/jobs/{j}/fail",
            Some(json!({"token": 1, "error": "e"})),
            Needs::Name("work"),
        ),
        (
            "PUT",
            "/v1/schedules/{s}",
            Some(json!({"spec": "@every 2h", "target": {"queue": "{q}"}})),
            Needs::Name("manage"),
        ),
        (
            "POST",
            "/v1/schedules/{s}/pause",
            Some(json!({"note": "n"})),
            Needs::Name("manage"),
        ),
        (
            "POST",
            "/v1/schedules/{s}/resume",
            None,
            Needs::Name("manage"),
        ),
        (
            "POST",
            "/v1/schedules/{s}/trigger",
            None,
            Needs::Name("manage"),
        ),
        (
            "POST",
            "/v1/schedules/{s}/backfill",
            Some(json!({"from": 0, "to": 3600000})),
            Needs::Name("manage"),
        ),
        (
            "PUT",
            "/v1/queues/{q}",
            Some(json!({})),
            Needs::Name("manage"),
        ),
        (
            "POST",
            "/v1/queues/{q}/dead/redrive",
            None,
            Needs::Name("manage"),
        ),
        (
            "POST",
            "/v1/queues/{q}/dead/purge",
            None,
            Needs::Name("manage"),
        ),
        ("DELETE", "/v1/queues/{q}/dead", None, Needs::Name("manage")),
        ("POST", "/v1/jobs/{j}/cancel", None, Needs::Name("manage")),
        ("DELETE", "/v1/schedules/{s}", None, Needs::Name("manage")),
    ];
    // Refused requests change nothing: every route without a token, with
    // an unknown one, and out of a limited token's pattern.
    let before = d.fingerprint().await;
    for (method, template, body, needs) in &routes {
        let fill = |t: &str| {
            t.replace("{q}", "b1")
                .replace("{s}", "b-s")
                .replace("{j}", &job["b1"].to_string())
        };
        let path = fill(template);
        let body = body
            .as_ref()
            .map(|b| serde_json::from_str::<serde_json::Value>(&fill(&b.to_string())).unwrap());
        for token in [None, Some("tok-nope"), Some("tok-admin-a")] {
            let (status, _) = d.send(method, &path, token, body.clone()).await;
            if !matches!(needs, Needs::Open | Needs::Token | Needs::Some(_)) {
                assert!(
                    [401, 403].contains(&status),
                    "{method} {path} {token:?}: {status}"
                );
            }
        }
    }
    assert_eq!(
        d.fingerprint().await,
        before,
        "refused requests changed nothing"
    );

    let mut checked = 0;
    for (method, template, body, needs) in &routes {
        for (q, s) in [("a1", "a-s"), ("b1", "b-s")] {
            let fill = |t: &str| {
                t.replace("{q}", q)
                    .replace("{s}", s)
                    .replace("{j}", &job[q].to_string())
            };
            let path = fill(template);
            let body = body
                .as_ref()
                .map(|b| serde_json::from_str::<serde_json::Value>(&fill(&b.to_string())).unwrap());
            let inside = q == "a1";
            // No token, an unknown token.
            for bad in [None, Some("tok-nope")] {
                let (status, err) = d.send(method, &path, bad, body.clone()).await;
                let want = if matches!(needs, Needs::Open) {
                    200
                } else {
                    401
                };
                assert_eq!(status, want, "{method} {path} with {bad:?}: {err}");
                checked += 1;
            }
            for scope in SCOPES {
                for limited in [false, true] {
                    let token = if limited {
                        format!("tok-{scope}-a")
                    } else {
                        format!("tok-{scope}")
                    };
                    let (status, err) = d.send(method, &path, Some(&token), body.clone()).await;
                    let what = format!("{method} {path} as {token}: {status} {err}");
                    if allowed(scope, limited, inside, *needs) {
                        assert!(![401, 403].contains(&status) && status < 500, "{what}");
                    } else {
                        assert_eq!(status, 403, "{what}");
                        assert_eq!(err["error"], "forbidden", "{what}");
                    }
                    checked += 1;
                }
            }
        }
    }

    // Batch worker routes: the scope at the route, the name per item.
    for q in ["a1", "b1"] {
        let items = json!({"jobs": [{"job": job[q], "token": 1, "error": "e"}]});
        for verb in ["heartbeat", "complete", "fail"] {
            let path = format!("/v1/jobs/{verb}");
            let (status, _) = d
                .send("POST", &path, Some("tok-read"), Some(items.clone()))
                .await;
            assert_eq!(status, 403);
            let (status, r) = d
                .send("POST", &path, Some("tok-work-a"), Some(items.clone()))
                .await;
            assert_eq!(status, 200, "{r}");
            let code = r["results"][0]["error"]["error"].as_str().unwrap();
            let want = if q == "a1" { "lease_lost" } else { "forbidden" };
            assert_eq!(code, want, "{verb} {q}: {r}");
        }
    }

    // Lists show only what a limited token may read.
    let (_, list) = d.send("GET", "/v1/queues", Some("tok-read-a"), None).await;
    let names: Vec<&str> = list["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["queue"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a1"]);
    let (_, view) = d.send("GET", "/v1/inspect", Some("tok-read-a"), None).await;
    assert!(!view.to_string().contains("\"b1\""), "{view}");
    // The token never appears in an answer.
    let (_, err) = d.send("GET", "/v1/jobs/1", Some("tok-enqueue"), None).await;
    assert!(!err.to_string().contains("tok-enqueue"), "{err}");
    eprintln!("authz matrix ({:?}): {checked} requests checked", d.mode);
    checked
}
