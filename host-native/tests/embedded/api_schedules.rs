//! Schedule and queue writes over HTTP on a real daemon: upsert (the
//! body is core's `ScheduleDef` without `name`), pause with a note,
//! resume, trigger with an overlap override, backfill, remove, and
//! declare a queue; core's refusals keep their code and field, and
//! change nothing.

use crate::common;

use chime_core::QueueConfig;
use chime_native::Setup;
use common::start_instance;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_and_queues_are_managed_over_http() {
    let inst = start_instance(Setup {
        queues: vec![QueueConfig::new("q")],
        ..Setup::default()
    })
    .await;
    let def = json!({"spec": "@every 1h", "target": {"queue": "q", "payload": {"k": 1}}});
    let (status, r) = inst
        .api("PUT", "/v1/schedules/hourly", Some(def.clone()))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["scheduleUpserted"]["version"], 1, "{r}");
    assert_eq!(r["scheduleUpserted"]["changed"], true);
    let (_, r) = inst.api("PUT", "/v1/schedules/hourly", Some(def)).await;
    assert_eq!(
        r["scheduleUpserted"]["changed"], false,
        "the same def again"
    );
    let (_, one) = inst.api("GET", "/v1/schedules/hourly", None).await;
    assert_eq!(one["schedule"]["def"]["spec"], "@every 1h");

    // Refusals: core's code and field, nothing changed.
    let before = inst.fingerprint().await;
    let (status, err) = inst
        .api(
            "PUT",
            "/v1/schedules/hourly",
            Some(json!({"spec": "@every banana", "target": {"queue": "q"}})),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["field"], "spec", "{err}");
    let (status, err) = inst
        .api(
            "PUT",
            "/v1/schedules/hourly",
            Some(json!({"name": "x", "spec": "@every 1h", "target": {"queue": "q"}})),
        )
        .await;
    assert_eq!(
        (status, err["field"].as_str()),
        (400, Some("name")),
        "{err}"
    );
    let (status, err) = inst
        .api(
            "PUT",
            "/v1/schedules/bad%20name",
            Some(json!({"spec": "@every 1h", "target": {"queue": "q"}})),
        )
        .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_name")),
        "{err}"
    );
    let (status, err) = inst.api("POST", "/v1/schedules/nope/pause", None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (404, Some("unknown_schedule")),
        "{err}"
    );
    let (status, err) = inst
        .api(
            "POST",
            "/v1/schedules/hourly/trigger",
            Some(json!({"overlap": "sometimes"})),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(inst.fingerprint().await, before, "refusals changed nothing");

    // Pause with a note, resume.
    let (status, r) = inst
        .api(
            "POST",
            "/v1/schedules/hourly/pause",
            Some(json!({"note": "maintenance"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let (_, one) = inst.api("GET", "/v1/schedules/hourly", None).await;
    assert_eq!(one["schedule"]["status"], "paused", "{one}");
    let (status, r) = inst.api("POST", "/v1/schedules/hourly/resume", None).await;
    assert_eq!(status, 200, "{r}");
    let (_, one) = inst.api("GET", "/v1/schedules/hourly", None).await;
    assert_eq!(one["schedule"]["status"], "active");

    // Trigger (overlap override): a job in q with the target's payload.
    let (status, r) = inst
        .api(
            "POST",
            "/v1/schedules/hourly/trigger",
            Some(json!({"overlap": "allow"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let (_, page) = inst.api("GET", "/v1/queues/q/jobs", None).await;
    assert_eq!(page["jobs"][0]["payload"], json!({"k": 1}), "{page}");

    // Backfill three past hours.
    let (_, one) = inst.api("GET", "/v1/schedules/hourly", None).await;
    let next = one["schedule"]["nextNominal"].as_i64().unwrap();
    let (status, r) = inst
        .api(
            "POST",
            "/v1/schedules/hourly/backfill",
            Some(json!({"from": next - 4 * 3_600_000, "to": next - 3_600_000, "overlap": "allow"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let (_, page) = inst.api("GET", "/v1/queues/q/jobs", None).await;
    assert_eq!(page["jobs"].as_array().unwrap().len(), 4, "{page}");

    // Declare a queue; a bad config is core's invalid_input with its field.
    let (status, r) = inst
        .api("PUT", "/v1/queues/mail", Some(json!({"leaseMs": 5000})))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["queueDeclared"]["created"], true, "{r}");
    let (status, err) = inst
        .api("PUT", "/v1/queues/mail", Some(json!({"leaseMs": -1})))
        .await;
    assert_eq!(
        (status, err["field"].as_str()),
        (400, Some("leaseMs")),
        "{err}"
    );
    let (status, err) = inst
        .api("PUT", "/v1/queues/mail", Some(json!({"colour": 1})))
        .await;
    assert_eq!(status, 400, "{err}");

    // Remove.
    let (status, r) = inst.api("DELETE", "/v1/schedules/hourly", None).await;
    assert_eq!(status, 200);
    assert_eq!(r["scheduleRemoved"]["existed"], true, "{r}");
    let (status, _) = inst.api("GET", "/v1/schedules/hourly", None).await;
    assert_eq!(status, 404);
    inst.stop().await;
}
