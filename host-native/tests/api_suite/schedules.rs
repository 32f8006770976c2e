//! Schedule and queue writes over HTTP: upsert (the body is core's
//! `ScheduleDef` without `name`), pause with a note, resume, trigger with
//! an overlap override, backfill, remove, and declare a queue; core's
//! refusals keep their code and field, and change nothing. In Postgres
//! mode each write goes to the next replica in turn and through the
//! inbox to the leader: the replies are the engine's all the same.

use super::deploy::{Deployment, Store};
use serde_json::json;

const CONFIG: &str = r#"
[[queue]]
name = "q"
"#;

pub async fn run(store: Store) {
    let d = Deployment::start(store, CONFIG).await;
    let def = json!({"spec": "@every 1h", "target": {"queue": "q", "payload": {"k": 1}}});
    let (status, r) = d
        .api("PUT", "/v1/schedules/hourly", Some(def.clone()))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["scheduleUpserted"]["version"], 1, "{r}");
    assert_eq!(r["scheduleUpserted"]["changed"], true);
    let (_, r) = d.api("PUT", "/v1/schedules/hourly", Some(def)).await;
    assert_eq!(
        r["scheduleUpserted"]["changed"], false,
        "the same def again"
    );
    let one = d
        .read_until("/v1/schedules/hourly", |s| {
            s["schedule"]["def"]["spec"] == "@every 1h"
        })
        .await;
    assert_eq!(one["schedule"]["def"]["spec"], "@every 1h");

    // Refusals: core's code and field, nothing changed.
    let before = d.fingerprint().await;
    let (status, err) = d
        .api(
            "PUT",
            "/v1/schedules/hourly",
            Some(json!({"spec": "@every banana", "target": {"queue": "q"}})),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["field"], "spec", "{err}");
    let (status, err) = d
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
    let (status, err) = d
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
    let (status, err) = d.api("POST", "/v1/schedules/nope/pause", None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (404, Some("unknown_schedule")),
        "{err}"
    );
    let (status, err) = d
        .api(
            "POST",
            "/v1/schedules/hourly/trigger",
            Some(json!({"overlap": "sometimes"})),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(d.fingerprint().await, before, "refusals changed nothing");

    // Pause with a note, resume.
    let (status, r) = d
        .api(
            "POST",
            "/v1/schedules/hourly/pause",
            Some(json!({"note": "maintenance"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let one = d
        .read_until("/v1/schedules/hourly", |s| {
            s["schedule"]["status"] == "paused"
        })
        .await;
    assert_eq!(one["schedule"]["status"], "paused", "{one}");
    let (status, r) = d.api("POST", "/v1/schedules/hourly/resume", None).await;
    assert_eq!(status, 200, "{r}");
    let one = d
        .read_until("/v1/schedules/hourly", |s| {
            s["schedule"]["status"] == "active"
        })
        .await;
    assert_eq!(one["schedule"]["status"], "active");

    // Trigger (overlap override): a job in q with the target's payload.
    let (status, r) = d
        .api(
            "POST",
            "/v1/schedules/hourly/trigger",
            Some(json!({"overlap": "allow"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    d.read_until("/v1/queues", |q| q["queues"][0]["available"] == 1)
        .await;
    let (_, c) = d
        .api("POST", "/v1/queues/q/claim", Some(json!({"worker": "w"})))
        .await;
    assert_eq!(c["jobs"][0]["payload"], json!({"k": 1}), "{c}");
    let (status, r) = d
        .api(
            "POST",
            &format!("/v1/jobs/{}/complete", c["jobs"][0]["job"]),
            Some(json!({"token": c["jobs"][0]["token"]})),
        )
        .await;
    assert_eq!(status, 200, "{r}");

    // Backfill three past hours.
    let next = one["schedule"]["nextNominal"].as_i64().unwrap();
    let (status, r) = d
        .api(
            "POST",
            "/v1/schedules/hourly/backfill",
            Some(json!({"from": next - 4 * 3_600_000, "to": next - 3_600_000, "overlap": "allow"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let q = d
        .read_until("/v1/queues", |q| q["queues"][0]["available"] == 3)
        .await;
    assert_eq!(
        q["queues"][0]["available"], 3,
        "three boundaries backfilled: {q}"
    );

    // Declare a queue; a bad config is core's invalid_input with its field.
    let (status, r) = d
        .api("PUT", "/v1/queues/mail", Some(json!({"leaseMs": 5000})))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["queueDeclared"]["created"], true, "{r}");
    let (status, err) = d
        .api("PUT", "/v1/queues/mail", Some(json!({"leaseMs": -1})))
        .await;
    assert_eq!(
        (status, err["field"].as_str()),
        (400, Some("leaseMs")),
        "{err}"
    );
    let (status, err) = d
        .api("PUT", "/v1/queues/mail", Some(json!({"colour": 1})))
        .await;
    assert_eq!(status, 400, "{err}");

    // Remove.
    let (status, r) = d.api("DELETE", "/v1/schedules/hourly", None).await;
    assert_eq!(status, 200);
    assert_eq!(r["scheduleRemoved"]["existed"], true, "{r}");
    let gone = d
        .eventually(std::time::Duration::from_secs(5), || async {
            d.api("GET", "/v1/schedules/hourly", None).await.0 == 404
        })
        .await;
    assert!(gone, "removed");
}
