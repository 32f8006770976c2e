//! What the dashboard needs from the listener, on a real daemon over
//! loopback: the page at `/` and its assets under `/ui/` (no token, each
//! with its content type, a strict CSP, an ETag that answers 304), the
//! caller's scopes at `/v1/whoami` (never the token), a schedule's fires
//! from any instant with the core's DST notes
//! (`/v1/schedules/{name}/fires`), and the metric history ring
//! (`/v1/metrics/history`): bounded, filled by a completion and a fire,
//! filtered by the token's names.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use chime_native::http::{ASSETS, HttpOptions, TokenDef, Tokens, hash_hex};
use common::{eventually, schedule, start_with};
use serde_json::json;
use std::time::Duration;

fn setup() -> Setup {
    Setup {
        queues: vec![QueueConfig::new("a1"), QueueConfig::new("b1")],
        schedules: vec![
            schedule(
                r#"{"name": "ny", "spec": "30 2 * * *", "tz": "America/New_York", "target": {"queue": "a1"}}"#,
            ),
            schedule(
                r#"{"name": "fold", "spec": "0,30 1 * * *", "tz": "America/New_York", "target": {"queue": "a1"}}"#,
            ),
        ],
        ..Setup::default()
    }
}

fn options() -> HttpOptions {
    let def = |name: &str, token: &str, scopes: &[&str]| {
        let scopes: Vec<String> = scopes.iter().map(|s| (*s).to_owned()).collect();
        TokenDef::new(name, &hash_hex(token), &scopes).unwrap()
    };
    HttpOptions {
        tokens: Tokens::new(vec![
            def("ops", "tok-admin", &["admin"]),
            def("viewer", "tok-read-a", &["read:a*"]),
        ])
        .unwrap(),
        sample_interval: Duration::from_millis(100),
        sample_capacity: 5,
        ..HttpOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_assets_are_served_without_a_token_with_a_strict_policy() {
    let inst = start_with(setup(), options(), |s| Box::new(s)).await;
    let base = inst.base();
    for (path, asset) in std::iter::once(("/".to_owned(), &ASSETS[0]))
        .chain(ASSETS.iter().map(|a| (format!("/ui/{}", a.name), a)))
    {
        let resp = inst
            .client
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{path}");
        let h = resp.headers().clone();
        assert_eq!(h["content-type"], asset.content_type, "{path}");
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(h["cache-control"], "no-cache");
        assert_eq!(resp.text().await.unwrap(), asset.body, "{path}");
        // Revalidation: the same ETag is a 304 without a body.
        let tag = h["etag"].to_str().unwrap().to_owned();
        let again = inst
            .client
            .get(format!("{base}{path}"))
            .header("if-none-match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status().as_u16(), 304, "{path}");
    }
    // Every script the page loads is one of the embedded assets, from this origin.
    let index = ASSETS[0].body;
    for file in ["/ui/app.js", "/ui/style.css"] {
        assert!(index.contains(file), "{file}");
    }
    assert!(!index.contains("http://") && !index.contains("https://"));
    let (status, body) = inst.get("/ui/secrets.txt").await;
    assert_eq!(status, 404, "{body}");
    // The page needs no token, the API still does.
    let (status, _) = inst.get("/v1/queues").await;
    assert_eq!(status, 401);
    inst.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoami_names_the_token_and_its_scopes_never_the_token() {
    let inst = start_with(setup(), options(), |s| Box::new(s)).await;
    let (status, me) = inst
        .send("GET", "/v1/whoami", Some("tok-read-a"), None)
        .await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        me,
        json!({"auth": true, "name": "viewer", "scopes": ["read:a*"]})
    );
    assert!(!me.to_string().contains("tok-"));
    let (_, me) = inst
        .send("GET", "/v1/whoami", Some("tok-admin"), None)
        .await;
    assert_eq!(me["scopes"], json!(["admin"]));
    let (status, _) = inst.send("GET", "/v1/whoami", Some("tok-nope"), None).await;
    assert_eq!(status, 401);
    inst.stop().await;
    // Without tokens: no authentication, everything allowed.
    let open = start_with(setup(), HttpOptions::default(), |s| Box::new(s)).await;
    let (_, me) = open.get_json("/v1/whoami").await;
    assert_eq!(
        me,
        json!({"auth": false, "name": null, "scopes": ["admin"]})
    );
    open.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fires_from_any_instant_carry_the_cores_dst_notes() {
    let inst = start_with(setup(), options(), |s| Box::new(s)).await;
    let admin = Some("tok-admin");
    // 2026-03-06T12:00:00Z: the New York spring-forward is on 03-08.
    let (status, w) = inst
        .send(
            "GET",
            "/v1/schedules/ny/fires?from=1772798400000&count=3",
            admin,
            None,
        )
        .await;
    assert_eq!(status, 200, "{w}");
    assert_eq!(w["tz"], "America/New_York");
    let civil: Vec<(&str, &serde_json::Value)> = w["fires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["civil"].as_str().unwrap(), &f["note"]))
        .collect();
    assert_eq!(
        civil,
        [
            ("2026-03-07T02:30:00", &json!(null)),
            ("2026-03-08T03:00:00", &json!("shiftedFromGap")),
            ("2026-03-09T02:30:00", &json!(null)),
        ]
    );
    // 2026-11-01T04:00:00Z: 01:00 and 01:30 twice, both passes fire.
    let (_, w) = inst
        .send(
            "GET",
            "/v1/schedules/fold/fires?from=1793505600000&count=4",
            admin,
            None,
        )
        .await;
    let notes: Vec<&str> = w["fires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["note"].as_str().unwrap())
        .collect();
    assert_eq!(
        notes,
        ["firstPass", "firstPass", "secondPass", "secondPass"]
    );
    // Without `from`: from the cursor, like the schedule's nextFires.
    let (_, w) = inst
        .send("GET", "/v1/schedules/ny/fires", admin, None)
        .await;
    let (_, d) = inst.send("GET", "/v1/schedules/ny", admin, None).await;
    assert_eq!(w["fires"].as_array().unwrap().len(), 20);
    assert_eq!(w["fires"][0], d["nextFires"][0]);
    // Bounded, checked, scoped.
    let (_, w) = inst
        .send("GET", "/v1/schedules/ny/fires?count=100000", admin, None)
        .await;
    assert_eq!(w["fires"].as_array().unwrap().len(), 500);
    let (status, e) = inst
        .send("GET", "/v1/schedules/ny/fires?from=-5", admin, None)
        .await;
    assert_eq!(
        (status, e["error"].as_str()),
        (400, Some("invalid_request")),
        "{e}"
    );
    let (status, _) = inst
        .send("GET", "/v1/schedules/nope/fires", admin, None)
        .await;
    assert_eq!(status, 404);
    inst.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_ring_counts_outcomes_and_fires_and_keeps_its_bound() {
    let inst = start_with(setup(), options(), |s| Box::new(s)).await;
    let admin = Some("tok-admin");
    // A job in each queue; a1's completed, a fire into a1.
    for q in ["a1", "b1"] {
        let (status, _) = inst
            .send(
                "POST",
                &format!("/v1/queues/{q}/jobs"),
                admin,
                Some(json!({})),
            )
            .await;
        assert_eq!(status, 200);
    }
    let (_, c) = inst
        .send(
            "POST",
            "/v1/queues/a1/claim",
            admin,
            Some(json!({"worker": "w"})),
        )
        .await;
    let job = &c["jobs"][0];
    let (status, _) = inst
        .send(
            "POST",
            &format!("/v1/jobs/{}/complete", job["job"]),
            admin,
            Some(json!({"token": job["token"]})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = inst
        .send("POST", "/v1/schedules/ny/trigger", admin, None)
        .await;
    assert_eq!(status, 200);
    let sum = |h: &serde_json::Value, q: &str, field: &str| -> u64 {
        h["samples"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["queues"].as_array().unwrap().iter())
            .filter(|x| x["queue"] == q)
            .map(|x| x[field].as_u64().unwrap())
            .sum()
    };
    let seen = eventually(Duration::from_secs(5), || async {
        let (_, h) = inst.send("GET", "/v1/metrics/history", admin, None).await;
        sum(&h, "a1", "completed") == 1 && sum(&h, "a1", "fires") == 1
    })
    .await;
    assert!(seen, "the completion and the fire reached the ring");
    let (status, h) = inst.send("GET", "/v1/metrics/history", admin, None).await;
    assert_eq!(status, 200, "{h}");
    assert_eq!(
        (h["intervalMs"].as_u64(), h["capacity"].as_u64()),
        (Some(100), Some(5))
    );
    // Depth is the engine's at the sample: b1 holds one available job.
    let last = h["samples"].as_array().unwrap().last().unwrap();
    let b1 = last["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["queue"] == "b1")
        .unwrap();
    assert_eq!(b1["available"], 1);
    // Bounded: after many intervals, still 5 samples.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (_, h) = inst.send("GET", "/v1/metrics/history", admin, None).await;
    assert_eq!(h["samples"].as_array().unwrap().len(), 5);
    // A token limited to a* sees no b1 in any sample.
    let (status, h) = inst
        .send("GET", "/v1/metrics/history", Some("tok-read-a"), None)
        .await;
    assert_eq!(status, 200);
    assert!(!h.to_string().contains("\"b1\""), "{h}");
    inst.stop().await;
}
