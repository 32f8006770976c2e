//! The job routes on a real daemon (redb data dir, real HTTP): enqueue
//! one and a batch (ids, `deduplicated`), a batch with one bad job adds
//! nothing, get, list by state and key with cursor pages, cancel,
//! redrive and purge of dead letters; engine refusals carry core's code
//! and field.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use common::start_instance;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_are_enqueued_listed_cancelled_redriven_and_purged() {
    let mut q = QueueConfig::new("q");
    q.max_attempts = 1;
    let inst = start_instance(Setup {
        queues: vec![q],
        ..Setup::default()
    })
    .await;

    // One job, with every option; the same key again is deduplicated.
    let (status, one) = inst
        .api(
            "POST",
            "/v1/queues/q/jobs",
            Some(json!({"payload": {"to": "a@b"}, "key": "k1", "priority": 5,
                        "maxAttempts": 1, "headers": {"h": "v"}})),
        )
        .await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["deduplicated"], false);
    let id = one["id"].as_u64().unwrap();
    let (_, again) = inst
        .api("POST", "/v1/queues/q/jobs", Some(json!({"key": "k1"})))
        .await;
    assert_eq!(again, json!({"id": id, "deduplicated": true}));

    // A batch: ids in order.
    let (status, batch) = inst
        .api(
            "POST",
            "/v1/queues/q/jobs",
            Some(
                json!({"jobs": [{"payload": 1}, {"payload": 2, "delayMs": 60000}, {"key": "k1"}]}),
            ),
        )
        .await;
    assert_eq!(status, 200, "{batch}");
    let ids: Vec<u64> = batch["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[2], id, "the key matched");
    assert_eq!(batch["jobs"][2]["deduplicated"], true);

    // A batch with one bad job: 400 naming it, nothing added.
    let before = inst.fingerprint().await;
    let (status, err) = inst
        .api(
            "POST",
            "/v1/queues/q/jobs",
            Some(json!({"jobs": [{"payload": 3}, {"payload": 4, "delayMs": 5, "runAt": 5}]})),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"], "invalid_input", "{err}");
    assert!(
        err["field"].as_str().unwrap().starts_with("jobs[1]"),
        "{err}"
    );
    let (status, err) = inst
        .api(
            "POST",
            "/v1/queues/q/jobs",
            Some(json!({"jobs": [{"payload": 3}, {"paylod": 4}]})),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"], "invalid_request", "{err}");
    assert_eq!(
        inst.fingerprint().await,
        before,
        "a refused batch changed nothing"
    );

    // Get one job.
    let (status, job) = inst.api("GET", &format!("/v1/jobs/{id}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(job["queue"], "q");
    assert_eq!(job["payload"], json!({"to": "a@b"}));
    assert_eq!(job["headers"], json!({"h": "v"}));
    assert_eq!(job["state"], "available");
    let (status, err) = inst.api("GET", "/v1/jobs/999999", None).await;
    assert_eq!((status, err["error"].as_str()), (404, Some("unknown_job")));

    // List: by state, by key, and in pages of one with the cursor.
    let (_, page) = inst
        .api("GET", "/v1/queues/q/jobs?state=scheduled", None)
        .await;
    assert_eq!(page["jobs"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["jobs"][0]["id"], ids[1]);
    let (_, page) = inst.api("GET", "/v1/queues/q/jobs?key=k1", None).await;
    assert_eq!(page["jobs"][0]["id"], id);
    let mut seen = Vec::new();
    let mut path = "/v1/queues/q/jobs?limit=1".to_owned();
    loop {
        let (status, page) = inst.api("GET", &path, None).await;
        assert_eq!(status, 200, "{page}");
        seen.extend(
            page["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["id"].as_u64().unwrap()),
        );
        match page["next"].as_u64() {
            Some(after) => path = format!("/v1/queues/q/jobs?limit=1&after={after}"),
            None => break,
        }
    }
    assert_eq!(seen, [id, ids[0], ids[1]]);
    let (status, err) = inst.api("GET", "/v1/queues/q/jobs?colour=red", None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_request"))
    );

    // Cancel; a second cancel is core's invalid_state (409).
    let (status, r) = inst
        .api("POST", &format!("/v1/jobs/{}/cancel", ids[1]), None)
        .await;
    assert_eq!(status, 200, "{r}");
    let (status, err) = inst
        .api("POST", &format!("/v1/jobs/{}/cancel", ids[1]), None)
        .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (409, Some("invalid_state")),
        "{err}"
    );

    // A dead letter: claimed and failed once (maxAttempts 1).
    let (_, claimed) = inst
        .api(
            "POST",
            "/v1/queues/q/claim",
            Some(json!({"worker": "w", "max": 10})),
        )
        .await;
    for c in claimed["jobs"].as_array().unwrap() {
        let path = format!("/v1/jobs/{}/fail", c["job"]);
        let (status, r) = inst
            .api(
                "POST",
                &path,
                Some(json!({"token": c["token"], "error": "boom"})),
            )
            .await;
        assert_eq!((status, r["outcome"].as_str()), (200, Some("dead")), "{r}");
    }
    let (_, dead) = inst.api("GET", "/v1/queues/q/dead", None).await;
    assert_eq!(dead["total"], 2, "{dead}");
    let (status, r) = inst
        .api(
            "POST",
            "/v1/queues/q/dead/redrive",
            Some(json!({"job": id})),
        )
        .await;
    assert_eq!((status, r["count"].as_u64()), (200, Some(1)), "{r}");
    let (status, r) = inst.api("DELETE", "/v1/queues/q/dead", None).await;
    assert_eq!((status, r["count"].as_u64()), (200, Some(1)), "{r}");
    let (status, r) = inst
        .api("POST", "/v1/queues/q/dead/purge", Some(json!({})))
        .await;
    assert_eq!((status, r["count"].as_u64()), (200, Some(0)), "{r}");
    let (status, err) = inst.api("POST", "/v1/queues/nope/dead/redrive", None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (404, Some("unknown_queue")),
        "{err}"
    );
    let (status, err) = inst
        .api("POST", "/v1/queues/q/jobs", Some(json!({"queue": "other"})))
        .await;
    assert_eq!(
        (status, err["field"].as_str()),
        (400, Some("queue")),
        "{err}"
    );
    inst.stop().await;
}
