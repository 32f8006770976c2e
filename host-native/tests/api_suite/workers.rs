//! The worker routes: claim (at most `max`, with lease token and
//! deadline), heartbeat, complete, fail with `retryAt`, and the batch
//! forms; a stale token is `409 lease_lost` and changes nothing; bad
//! claims are refused with core's code and field. Requests alternate
//! between the nodes, so in Postgres mode a job claimed on one replica is
//! heartbeated and settled on the other.

use super::deploy::{Deployment, Store};
use serde_json::json;

const CONFIG: &str = r#"
[[queue]]
name = "q"
"#;

pub async fn run(store: Store) {
    let d = Deployment::start(store, CONFIG).await;
    let jobs: Vec<serde_json::Value> = (0..5).map(|i| json!({"payload": {"n": i}})).collect();
    let (status, _) = d
        .api("POST", "/v1/queues/q/jobs", Some(json!({ "jobs": jobs })))
        .await;
    assert_eq!(status, 200);

    // At most `max`, in claim order, with payload, token and deadline.
    let (status, c) = d
        .api(
            "POST",
            "/v1/queues/q/claim",
            Some(json!({"worker": "w1", "max": 2, "leaseMs": 30000})),
        )
        .await;
    assert_eq!(status, 200, "{c}");
    let claimed = c["jobs"].as_array().unwrap().clone();
    assert_eq!(claimed.len(), 2);
    assert_eq!(claimed[0]["payload"], json!({"n": 0}));
    assert_eq!(claimed[0]["attempt"], 1);
    assert!(claimed[0]["deadline"].as_i64().unwrap() > 0);
    let (a, b) = (&claimed[0], &claimed[1]);
    let path = |id: &serde_json::Value, verb: &str| format!("/v1/jobs/{id}/{verb}");

    // Heartbeat extends the lease.
    let (status, hb) = d
        .api(
            "POST",
            &path(&a["job"], "heartbeat"),
            Some(json!({"token": a["token"], "leaseMs": 60000})),
        )
        .await;
    assert_eq!(status, 200, "{hb}");
    assert!(hb["deadline"].as_i64().unwrap() > a["deadline"].as_i64().unwrap());

    // A stale token: 409 lease_lost, and nothing changes.
    let before = d.fingerprint().await;
    let stale = a["token"].as_u64().unwrap() + 1_000;
    for (verb, body) in [
        ("heartbeat", json!({"token": stale})),
        ("complete", json!({"token": stale})),
        ("fail", json!({"token": stale, "error": "x"})),
    ] {
        let (status, err) = d.api("POST", &path(&a["job"], verb), Some(body)).await;
        assert_eq!(status, 409, "{verb}: {err}");
        assert_eq!(err["error"], "lease_lost", "{err}");
        assert_eq!(err["field"], "token", "{err}");
    }
    assert_eq!(
        d.fingerprint().await,
        before,
        "a stale token changed nothing"
    );

    // Complete one; fail the other with retryAt.
    let (status, r) = d
        .api(
            "POST",
            &path(&a["job"], "complete"),
            Some(json!({"token": a["token"]})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let retry_at = c["jobs"][1]["deadline"].as_i64().unwrap() + 3_600_000;
    let (status, r) = d
        .api(
            "POST",
            &path(&b["job"], "fail"),
            Some(json!({"token": b["token"], "error": "later", "retryAt": retry_at})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["outcome"], "retry");
    assert_eq!(r["runAt"], retry_at);
    let (_, job) = d.api("GET", &format!("/v1/jobs/{}", b["job"]), None).await;
    assert_eq!(job["state"], "scheduled");
    assert_eq!(job["lastError"], "later");

    // Batch forms: claim three, complete two with a stale third.
    let (_, c) = d
        .api(
            "POST",
            "/v1/queues/q/claim",
            Some(json!({"worker": "w2", "max": 10})),
        )
        .await;
    let claimed = c["jobs"].as_array().unwrap().clone();
    assert_eq!(claimed.len(), 3, "{c}");
    let (status, r) = d
        .api(
            "POST",
            "/v1/jobs/heartbeat",
            Some(json!({"jobs": [{"job": claimed[2]["job"], "token": claimed[2]["token"]}]})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    let items = json!([
        {"job": claimed[0]["job"], "token": claimed[0]["token"]},
        {"job": claimed[1]["job"], "token": claimed[1]["token"]},
        {"job": claimed[2]["job"], "token": 1},
    ]);
    let (status, r) = d
        .api("POST", "/v1/jobs/complete", Some(json!({ "jobs": items })))
        .await;
    assert_eq!(status, 200, "{r}");
    let results = r["results"].as_array().unwrap();
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[1]["ok"], true);
    assert_eq!(results[2]["ok"], false);
    assert_eq!(results[2]["error"]["error"], "lease_lost");
    let (status, r) = d.api(
            "POST",
            "/v1/jobs/fail",
            Some(json!({"jobs": [{"job": claimed[2]["job"], "token": claimed[2]["token"], "error": "e"}]})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["results"][0]["outcome"], "retry", "{r}");
    let (_, stats) = d.api("GET", "/v1/queues", None).await;
    let q = &stats["queues"][0];
    assert_eq!(q["completed"], 3, "{stats}");
    assert_eq!(q["scheduled"], 2, "{stats}");

    // Bad claims: core's rules (max 0), the listener's (waitMs).
    let (status, err) = d
        .api(
            "POST",
            "/v1/queues/q/claim",
            Some(json!({"worker": "w", "max": 0})),
        )
        .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_input")),
        "{err}"
    );
    assert_eq!(err["field"], "max");
    let (status, err) = d
        .api(
            "POST",
            "/v1/queues/q/claim",
            Some(json!({"worker": "w", "waitMs": 25001})),
        )
        .await;
    assert_eq!(
        (status, err["field"].as_str()),
        (400, Some("waitMs")),
        "{err}"
    );
}
