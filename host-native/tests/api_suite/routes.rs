//! Every route once, with its answer, requests alternating between the
//! nodes: queue declare; enqueue one and a batch (ids, `deduplicated`),
//! a batch with one bad job adds nothing; get; list with cursor pages;
//! cancel; claim, heartbeat, complete, fail (one and batch); dead
//! letters, redrive and purge; schedules: list, detail, pause, resume,
//! trigger, backfill; queues, inspect, metrics, health; the event
//! stream; JSON 404 and 405. Engine refusals carry core's code and field.

use super::deploy::{ADMIN, Deployment, Store};
use serde_json::json;
use std::time::Duration;

const CONFIG: &str = r#"
[[queue]]
name = "rq"

[[schedule]]
name = "rs"
spec = "@every 1h"
overlap = "allow"
target = { queue = "rq" }
"#;

pub async fn run(store: Store) {
    let d = Deployment::start(store, CONFIG).await;
    let dd = &d;
    let api = move |m: &'static str, p: String, b: Option<serde_json::Value>| async move {
        dd.send(m, &p, ADMIN, b).await
    };

    // Declare a queue (through the control port).
    let (status, r) = api(
        "PUT",
        "/v1/queues/q".into(),
        Some(json!({"maxAttempts": 1})),
    )
    .await;
    assert_eq!(status, 200, "{r}");

    // One job, with every option; the same key again is deduplicated.
    let (status, one) = api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"payload": {"to": "a@b"}, "key": "k1", "priority": 5,
                    "maxAttempts": 1, "headers": {"h": "v"}})),
    )
    .await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["deduplicated"], false);
    let id = one["id"].as_u64().unwrap();
    let (_, again) = api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"key": "k1"})),
    )
    .await;
    assert_eq!(again, json!({"id": id, "deduplicated": true}));
    // A batch: ids in order.
    let (status, batch) = api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"jobs": [{"payload": 1}, {"payload": 2, "delayMs": 60000}, {"key": "k1"}]})),
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
    let before = d.fingerprint().await;
    let (status, err) = api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"jobs": [{"payload": 3}, {"payload": 4, "delayMs": 5, "runAt": 5}]})),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"], "invalid_input", "{err}");
    assert!(
        err["field"].as_str().unwrap().starts_with("jobs[1]"),
        "{err}"
    );
    let (status, err) = api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"jobs": [{"payload": 3}, {"paylod": 4}]})),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"], "invalid_request", "{err}");
    assert_eq!(
        d.fingerprint().await,
        before,
        "a refused batch changed nothing"
    );

    // Get one job.
    let (status, job) = api("GET", format!("/v1/jobs/{id}"), None).await;
    assert_eq!(status, 200, "{job}");
    assert_eq!(job["queue"], "q");
    assert_eq!(job["payload"], json!({"to": "a@b"}));
    assert_eq!(job["headers"], json!({"h": "v"}));
    assert_eq!(job["state"], "available");
    let (status, err) = api("GET", "/v1/jobs/999999".into(), None).await;
    assert_eq!((status, err["error"].as_str()), (404, Some("unknown_job")));
    // The code is in `error`; the message does not repeat it.
    assert_eq!(err["message"], "no job 999999", "{err}");

    // List: by state, by key, and in pages of one with the cursor.
    let (_, page) = api("GET", "/v1/queues/q/jobs?state=scheduled".into(), None).await;
    assert_eq!(page["jobs"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["jobs"][0]["id"], ids[1]);
    let (_, page) = api("GET", "/v1/queues/q/jobs?key=k1".into(), None).await;
    assert_eq!(page["jobs"][0]["id"], id);
    let mut seen = Vec::new();
    let mut path = "/v1/queues/q/jobs?limit=1".to_owned();
    loop {
        let (status, page) = api("GET", path.clone(), None).await;
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
    let (status, err) = api("GET", "/v1/queues/q/jobs?colour=red".into(), None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_request"))
    );

    // Cancel; a second cancel is core's invalid_state (409).
    let (status, r) = api("POST", format!("/v1/jobs/{}/cancel", ids[1]), None).await;
    assert_eq!(status, 200, "{r}");
    let (status, err) = api("POST", format!("/v1/jobs/{}/cancel", ids[1]), None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (409, Some("invalid_state")),
        "{err}"
    );

    // Claim, heartbeat, fail one by one and in a batch: dead letters
    // (maxAttempts 1).
    let (status, claimed) = api(
        "POST",
        "/v1/queues/q/claim".into(),
        Some(json!({"worker": "w", "max": 10, "leaseMs": 30000})),
    )
    .await;
    assert_eq!(status, 200, "{claimed}");
    let claimed = claimed["jobs"].as_array().unwrap().clone();
    assert_eq!(claimed.len(), 2, "{claimed:?}");
    assert_eq!(claimed[0]["job"], id, "priority first");
    let (status, hb) = api(
        "POST",
        format!("/v1/jobs/{}/heartbeat", claimed[0]["job"]),
        Some(json!({"token": claimed[0]["token"], "leaseMs": 60000})),
    )
    .await;
    assert_eq!(status, 200, "{hb}");
    assert!(hb["deadline"].as_i64().unwrap() > claimed[0]["deadline"].as_i64().unwrap());
    let (status, r) = api(
        "POST",
        "/v1/jobs/heartbeat".into(),
        Some(json!({"jobs": [{"job": claimed[1]["job"], "token": claimed[1]["token"]}]})),
    )
    .await;
    assert_eq!(
        (status, r["results"][0]["ok"].as_bool()),
        (200, Some(true)),
        "{r}"
    );
    let (status, r) = api(
        "POST",
        format!("/v1/jobs/{}/fail", claimed[0]["job"]),
        Some(json!({"token": claimed[0]["token"], "error": "boom"})),
    )
    .await;
    assert_eq!((status, r["outcome"].as_str()), (200, Some("dead")), "{r}");
    let (status, r) = api(
        "POST",
        "/v1/jobs/fail".into(),
        Some(
            json!({"jobs": [{"job": claimed[1]["job"], "token": claimed[1]["token"],
                              "error": "boom"}]}),
        ),
    )
    .await;
    assert_eq!(
        (status, r["results"][0]["ok"].as_bool()),
        (200, Some(true)),
        "{r}"
    );

    // Dead letters: list, redrive one, purge the rest.
    let (status, dead) = api("GET", "/v1/queues/q/dead".into(), None).await;
    assert_eq!((status, dead["total"].as_u64()), (200, Some(2)), "{dead}");
    assert_eq!(dead["jobs"][0]["id"], id, "oldest death first: {dead}");
    assert_eq!(dead["jobs"][0]["lastError"], "boom", "{dead}");
    let (status, r) = api(
        "POST",
        "/v1/queues/q/dead/redrive".into(),
        Some(json!({"job": id})),
    )
    .await;
    assert_eq!((status, r["count"].as_u64()), (200, Some(1)), "{r}");
    let (status, r) = api("DELETE", "/v1/queues/q/dead".into(), None).await;
    assert_eq!((status, r["count"].as_u64()), (200, Some(1)), "{r}");
    let (status, r) = api("POST", "/v1/queues/q/dead/purge".into(), Some(json!({}))).await;
    assert_eq!((status, r["count"].as_u64()), (200, Some(0)), "{r}");
    let (status, err) = api("POST", "/v1/queues/nope/dead/redrive".into(), None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (404, Some("unknown_queue")),
        "{err}"
    );
    let (status, err) = api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"queue": "other"})),
    )
    .await;
    assert_eq!(
        (status, err["field"].as_str()),
        (400, Some("queue")),
        "{err}"
    );

    // The redriven job: claim and complete (one by one, then a batch of a
    // fresh job).
    let (_, c) = api(
        "POST",
        "/v1/queues/q/claim".into(),
        Some(json!({"worker": "w"})),
    )
    .await;
    assert_eq!(c["jobs"][0]["job"], id, "{c}");
    let (status, r) = api(
        "POST",
        format!("/v1/jobs/{id}/complete"),
        Some(json!({"token": c["jobs"][0]["token"]})),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    api(
        "POST",
        "/v1/queues/q/jobs".into(),
        Some(json!({"payload": 9})),
    )
    .await;
    let (_, c) = api(
        "POST",
        "/v1/queues/q/claim".into(),
        Some(json!({"worker": "w"})),
    )
    .await;
    let (status, r) = api(
        "POST",
        "/v1/jobs/complete".into(),
        Some(json!({"jobs": [{"job": c["jobs"][0]["job"], "token": c["jobs"][0]["token"]}]})),
    )
    .await;
    assert_eq!(
        (status, r["results"][0]["ok"].as_bool()),
        (200, Some(true)),
        "{r}"
    );

    // Schedules: list, detail, pause, resume, trigger, backfill.
    let (status, list) = api("GET", "/v1/schedules".into(), None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["schedules"][0]["name"], "rs", "{list}");
    assert_eq!(list["schedules"][0]["queue"], "rq", "{list}");
    let (status, s) = api("GET", "/v1/schedules/rs".into(), None).await;
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["schedule"]["def"]["spec"], "@every 1h", "{s}");
    assert_eq!(s["nextFires"].as_array().map(Vec::len), Some(5), "{s}");
    let next = s["schedule"]["nextNominal"].as_i64().unwrap();
    let (status, _) = api("GET", "/v1/schedules/nope".into(), None).await;
    assert_eq!(status, 404);
    for (verb, body) in [
        ("pause", Some(json!({"note": "n"}))),
        ("resume", None),
        ("trigger", None),
    ] {
        let (status, r) = api("POST", format!("/v1/schedules/rs/{verb}"), body).await;
        assert_eq!(status, 200, "{verb}: {r}");
    }
    let (status, r) = api(
        "POST",
        "/v1/schedules/rs/backfill".into(),
        Some(json!({"from": next - 3 * 3_600_000, "to": next - 3_600_000, "overlap": "allow"})),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let (status, err) = api("POST", "/v1/schedules/nope/pause".into(), None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (404, Some("unknown_schedule")),
        "{err}"
    );
    // The trigger's and the backfill's fires arrive as jobs of `rq`.
    let fired = d
        .eventually(Duration::from_secs(10), || async {
            let (_, q) = d.send("GET", "/v1/queues", ADMIN, None).await;
            q["queues"].as_array().is_some_and(|a| {
                a.iter()
                    .any(|q| q["queue"] == "rq" && q["available"].as_u64() >= Some(3))
            })
        })
        .await;
    assert!(fired, "the trigger and backfill fired\n{}", d.logs());

    // Whole-deployment reads.
    let (status, q) = api("GET", "/v1/queues".into(), None).await;
    assert_eq!(status, 200, "{q}");
    let names: Vec<&str> = q["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["queue"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"q") && names.contains(&"rq"), "{q}");
    let (status, view) = api("GET", "/v1/inspect".into(), None).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["schedules"][0]["def"]["name"], "rs", "{view}");
    assert!(
        view["queues"].as_array().is_some_and(|a| !a.is_empty()),
        "{view}"
    );
    let (status, m) = api("GET", "/metrics".into(), None).await;
    assert_eq!(status, 200);
    assert!(
        m.as_str().is_some_and(|m| m.contains("# TYPE chime_")),
        "{m}"
    );
    let (status, h) = d.send("GET", "/healthz", None, None).await;
    assert_eq!((status, h["status"].as_str()), (200, Some("ok")), "{h}");

    // The event stream shows the next fire (on the leader: the node whose
    // engine fires).
    let leader = d.leader().await;
    let client = chime_native::worker::http::client(Duration::from_secs(30)).unwrap();
    let mut stream = client
        .get(format!(
            "{}/v1/events?schedule=rs&kind=fire",
            d.base(leader)
        ))
        .header("authorization", "Bearer tok-admin")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let (status, _) = api("POST", "/v1/schedules/rs/trigger".into(), None).await;
    assert_eq!(status, 200);
    let mut text = String::new();
    let got = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = stream.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            if text.contains("event: fire") {
                return true;
            }
        }
        false
    })
    .await;
    assert!(matches!(got, Ok(true)), "no fire event: {text:?}");
    assert!(text.contains("\"schedule\":\"rs\""), "{text}");

    // JSON 404 and 405.
    let (status, err) = api("GET", "/v1/nope".into(), None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (404, Some("not_found")),
        "{err}"
    );
    let (status, err) = api("DELETE", "/v1/queues".into(), None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (405, Some("method_not_allowed")),
        "{err}"
    );
}
