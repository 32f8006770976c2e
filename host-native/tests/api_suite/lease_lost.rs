//! A stale lease token is `409 lease_lost` (field `token`) and changes
//! nothing — on every verb, one by one and in a batch, on whichever
//! node it reaches: the claim goes to one node, the stale calls
//! alternate over all of them, and the real token still works after.

use super::deploy::{ADMIN, Deployment, Store};
use serde_json::json;

const CONFIG: &str = r#"
[[queue]]
name = "q"
"#;

pub async fn run(store: Store) {
    let d = Deployment::start(store, CONFIG).await;
    let (status, e) = d
        .send(
            "POST",
            "/v1/queues/q/jobs",
            ADMIN,
            Some(json!({"payload": 1})),
        )
        .await;
    assert_eq!(status, 200, "{e}");
    let id = e["id"].as_u64().unwrap();
    let (status, c) = d
        .send_at(
            0,
            "POST",
            "/v1/queues/q/claim",
            ADMIN,
            Some(json!({"worker": "w", "leaseMs": 60000})),
        )
        .await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["jobs"][0]["job"], id, "{c}");
    let token = c["jobs"][0]["token"].as_u64().unwrap();
    let stale = token + 1_000;

    let before = d.fingerprint().await;
    let (_, job_before) = d.send("GET", &format!("/v1/jobs/{id}"), ADMIN, None).await;
    for _round in 0..d.len() {
        for (verb, body) in [
            ("heartbeat", json!({"token": stale, "leaseMs": 90000})),
            ("complete", json!({"token": stale})),
            ("fail", json!({"token": stale, "error": "x"})),
        ] {
            let (status, err) = d
                .send("POST", &format!("/v1/jobs/{id}/{verb}"), ADMIN, Some(body))
                .await;
            assert_eq!(status, 409, "{verb}: {err}");
            assert_eq!(err["error"], "lease_lost", "{err}");
            assert_eq!(err["field"], "token", "{err}");
            let batch = json!({"jobs": [{"job": id, "token": stale, "error": "x"}]});
            let (status, r) = d
                .send("POST", &format!("/v1/jobs/{verb}"), ADMIN, Some(batch))
                .await;
            assert_eq!(status, 200, "{verb} batch: {r}");
            assert_eq!(r["results"][0]["error"]["error"], "lease_lost", "{r}");
            // The code is in `error`; the message does not repeat it.
            let message = format!("job {id} is not held with that token");
            assert_eq!(r["results"][0]["error"]["message"], message.as_str(), "{r}");
        }
    }
    assert_eq!(
        d.fingerprint().await,
        before,
        "a stale token changed nothing"
    );
    let (_, job_after) = d.send("GET", &format!("/v1/jobs/{id}"), ADMIN, None).await;
    assert_eq!(job_after, job_before, "the job is as it was");
    assert_eq!(job_after["state"], "claimed", "{job_after}");

    // The real token still holds the lease, on any node.
    let last = d.len() - 1;
    let (status, r) = d
        .send_at(
            last,
            "POST",
            &format!("/v1/jobs/{id}/complete"),
            ADMIN,
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let (_, job) = d.send("GET", &format!("/v1/jobs/{id}"), ADMIN, None).await;
    assert_eq!(job["state"], "completed", "{job}");
    // And once used up, it is stale too.
    let (status, err) = d
        .send(
            "POST",
            &format!("/v1/jobs/{id}/complete"),
            ADMIN,
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "lease_lost", "{err}");
}
