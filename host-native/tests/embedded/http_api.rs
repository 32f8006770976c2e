//! The read-only HTTP API against a running instance on a real redb file:
//! health, schedules with their next fires, queues, dead letters, and
//! JSON 404s for unknown names.

use crate::common;

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig, Reply};
use chime_native::Setup;
use common::{schedule, start_instance};
use serde_json::json;

const HOUR_MS: i64 = 3_600_000;

fn setup() -> Setup {
    Setup {
        queues: vec![QueueConfig::new("q"), QueueConfig::new("mail")],
        schedules: vec![
            schedule(r#"{"name": "hourly", "spec": "@every 1h", "target": {"queue": "q"}}"#),
            schedule(
                r#"{"name": "nightly", "spec": "30 2 * * *", "tz": "Europe/Paris",
                    "maxFires": 3, "target": {"queue": "mail"}}"#,
            ),
        ],
        ..Setup::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_reports_the_engine_state() {
    let inst = start_instance(setup()).await;

    // Health: the driver answers and its commits succeeded.
    let (status, health) = inst.get_json("/healthz").await;
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["driver"], "running");
    assert_eq!(health["store"], "ok");
    assert_eq!(health["schedules"], 2);
    assert_eq!(health["liveJobs"], 0);
    assert_eq!(health["leader"], true);
    assert!(health["commits"].as_u64().unwrap() >= 4, "{health}");
    assert!(health["turns"].as_u64().unwrap() >= health["commits"].as_u64().unwrap());
    assert!(health.get("error").is_none());

    // Schedules, in name order.
    let (status, list) = inst.get_json("/v1/schedules").await;
    assert_eq!(status, 200);
    let list = list["schedules"].as_array().unwrap().clone();
    let names: Vec<&str> = list.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["hourly", "nightly"]);
    assert_eq!(list[0]["spec"], "@every 1h");
    assert_eq!(list[0]["queue"], "q");
    assert_eq!(list[0]["status"], "active");
    assert_eq!(list[0]["fires"], 0);
    assert_eq!(list[1]["tz"], "Europe/Paris");
    let next = list[0]["nextNominal"].as_i64().unwrap();
    assert_eq!(next % HOUR_MS, 0, "an epoch-aligned hour");

    // One schedule: the core's view plus its next five boundaries.
    let (status, one) = inst.get_json("/v1/schedules/hourly").await;
    assert_eq!(status, 200);
    assert_eq!(one["schedule"]["def"]["name"], "hourly");
    assert_eq!(one["schedule"]["version"], 1);
    assert_eq!(one["schedule"]["nextNominal"], next);
    let fires: Vec<i64> = one["nextFires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["at"].as_i64().unwrap())
        .collect();
    assert_eq!(
        fires,
        (0..5).map(|k| next + k * HOUR_MS).collect::<Vec<_>>()
    );
    assert_eq!(one["nextFires"][0]["offsetSeconds"], 0);

    // maxFires = 3 caps the list; civil times are Paris wall time.
    let (_, nightly) = inst.get_json("/v1/schedules/nightly").await;
    let fires = nightly["nextFires"].as_array().unwrap();
    assert_eq!(fires.len(), 3);
    for f in fires {
        assert!(f["civil"].as_str().unwrap().ends_with("T02:30:00"), "{f}");
        let offset = f["offsetSeconds"].as_i64().unwrap();
        assert!(offset == 3600 || offset == 7200, "{f}");
    }

    // Queues: stats as the core counts them.
    inst.enqueue("mail", r#"{"to": "a@example.com"}"#).await;
    inst.enqueue("mail", r#"{"to": "b@example.com"}"#).await;
    let (status, queues) = inst.get_json("/v1/queues").await;
    assert_eq!(status, 200);
    let queues = queues["queues"].as_array().unwrap();
    let mail = queues.iter().find(|q| q["queue"] == "mail").unwrap();
    assert_eq!(mail["available"], 2);
    assert_eq!(mail["claimed"], 0);
    assert_eq!(mail["totals"]["enqueued"], 2);
    let q = queues.iter().find(|q| q["queue"] == "q").unwrap();
    assert_eq!(q["available"], 0);

    // A dead letter: one attempt allowed, claimed and failed by hand.
    let mut req = EnqueueRequest::new("q", Payload::from_json(r#"{"n": 7}"#).unwrap());
    req.max_attempts = Some(1);
    let job = inst.enqueue_req(req).await;
    let claimed = match inst
        .call(Input::Claim {
            queue: "q".into(),
            worker: "test".into(),
            max: 1,
            lease_ms: None,
        })
        .await
    {
        Reply::Claimed { jobs } => jobs,
        other => panic!("{other:?}"),
    };
    assert_eq!(claimed.len(), 1);
    inst.call(Input::Fail {
        job,
        token: claimed[0].token,
        error: "disk full".into(),
        retry_at: None,
    })
    .await;
    let (status, dead) = inst.get_json("/v1/queues/q/dead").await;
    assert_eq!(status, 200);
    assert_eq!(dead["queue"], "q");
    assert_eq!(dead["total"], 1);
    assert_eq!(dead["jobs"][0]["id"], job.0);
    assert_eq!(dead["jobs"][0]["state"], "dead");
    assert_eq!(dead["jobs"][0]["lastError"], "disk full");
    assert_eq!(dead["jobs"][0]["payload"], json!({"n": 7}));
    let (_, none) = inst.get_json("/v1/queues/mail/dead?limit=5").await;
    assert_eq!(none["total"], 0);
    assert_eq!(none["jobs"], json!([]));

    // Unknown names and routes: 404 with a JSON error.
    for path in [
        "/v1/schedules/nope",
        "/v1/queues/nope/dead",
        "/v1/nothing-here",
    ] {
        let (status, body) = inst.get_json(path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"], "not_found", "{path}");
    }
    let (_, body) = inst.get_json("/v1/schedules/nope").await;
    assert_eq!(body["message"], "no such schedule \"nope\"");

    inst.stop().await;
}
