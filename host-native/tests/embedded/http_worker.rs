//! The HTTP worker against a local server that records each request:
//! 2xx completes the job, 500 fails it with the status and body in the
//! error, a slow answer fails it on the timeout; the job travels as JSON
//! with its headers as HTTP headers.

use crate::common;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use chime_core::{EnqueueRequest, Input, JobId, JobState, Payload, QueueConfig, Reply};
use chime_native::Setup;
use chime_native::worker::PoolConfig;
use chime_native::worker::http::http_handler;
use common::{Instance, eventually, schedule, start_instance};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the test server saw: path, headers, JSON body.
type Seen = Arc<Mutex<Vec<(String, HeaderMap, Value)>>>;

async fn record(seen: &Seen, path: &str, headers: HeaderMap, body: Bytes) {
    let body = serde_json::from_slice(&body).unwrap();
    seen.lock().unwrap().push((path.to_owned(), headers, body));
}

/// A server on 127.0.0.1: `/ok` → 200, `/fail` → 500 "boom", `/slow`
/// answers after 5 s.
async fn test_server(seen: Seen) -> SocketAddr {
    let app = Router::new()
        .route(
            "/ok",
            post(|State(s): State<Seen>, h: HeaderMap, b: Bytes| async move {
                record(&s, "/ok", h, b).await;
                StatusCode::OK
            }),
        )
        .route(
            "/fail",
            post(|State(s): State<Seen>, h: HeaderMap, b: Bytes| async move {
                record(&s, "/fail", h, b).await;
                (StatusCode::INTERNAL_SERVER_ERROR, "boom\n")
            }),
        )
        .route(
            "/slow",
            post(|State(s): State<Seen>, h: HeaderMap, b: Bytes| async move {
                record(&s, "/slow", h, b).await;
                tokio::time::sleep(Duration::from_secs(5)).await;
                StatusCode::OK
            }),
        )
        .with_state(seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn pool(queue: &str, url: String, timeout_ms: u64) -> (PoolConfig, chime_native::worker::Handler) {
    let handler = http_handler(&url, Duration::from_millis(timeout_ms)).unwrap();
    (PoolConfig::new(queue), handler)
}

fn once(name: &str) -> QueueConfig {
    let mut q = QueueConfig::new(name);
    q.max_attempts = 1;
    q
}

async fn wait_state(inst: &Instance, job: JobId, state: JobState) -> chime_core::JobInfo {
    let reached = eventually(Duration::from_secs(5), || async {
        let info = inst.running.handle().inspect(move |e| e.job(job)).await;
        info.unwrap().is_some_and(|i| i.state == state)
    })
    .await;
    let info = inst
        .running
        .handle()
        .inspect(move |e| e.job(job))
        .await
        .unwrap()
        .unwrap();
    assert!(reached, "job {job:?} never reached {state:?}: {info:?}");
    info
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_are_posted_and_statuses_decide_outcomes() {
    let seen = Seen::default();
    let at = test_server(seen.clone()).await;
    let setup = Setup {
        queues: vec![QueueConfig::new("ok"), once("fail"), once("slow")],
        schedules: vec![schedule(
            r#"{"name": "report", "spec": "@every 24h",
                "target": {"queue": "ok", "payload": {"kind": "daily"}}}"#,
        )],
        pools: vec![
            pool("ok", format!("http://{at}/ok"), 2_000),
            pool("fail", format!("http://{at}/fail"), 2_000),
            pool("slow", format!("http://{at}/slow"), 300),
        ],
        ..Setup::default()
    };
    let inst = start_instance(setup).await;

    // 200: completed, and the request carried the job.
    let mut req = EnqueueRequest::new("ok", Payload::from_json(r#"{"a": [1, 2]}"#).unwrap());
    req.headers.insert("X-Trace".into(), "abc".into());
    req.headers
        .insert("content-type".into(), "text/evil".into());
    let job = inst.enqueue_req(req).await;
    wait_state(&inst, job, JobState::Completed).await;
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        let (path, headers, body) = &seen[0];
        assert_eq!(path, "/ok");
        assert_eq!(
            body,
            &json!({
                "id": job.0,
                "queue": "ok",
                "attempt": 1,
                "payload": {"a": [1, 2]},
                "headers": {"X-Trace": "abc", "content-type": "text/evil"},
                "fire": null,
            })
        );
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(headers["x-trace"], "abc");
        assert_eq!(headers["chime-job-id"], job.0.to_string().as_str());
        assert_eq!(headers["chime-queue"], "ok");
        assert_eq!(headers["chime-attempt"], "1");
        assert!(headers.get("chime-fire-id").is_none());
    }

    // A fire's job names its fire and schedule.
    let fire = match inst
        .call(Input::TriggerSchedule {
            name: "report".into(),
            overlap: None,
        })
        .await
    {
        Reply::Triggered { fire, .. } => fire.unwrap(),
        other => panic!("{other:?}"),
    };
    let fired_job = inst
        .running
        .handle()
        .inspect(|e| e.schedule("report").unwrap().in_flight.len())
        .await
        .unwrap();
    assert_eq!(fired_job, 1);
    let posted = eventually(Duration::from_secs(5), || async {
        seen.lock().unwrap().len() == 2
    })
    .await;
    assert!(posted);
    {
        let seen = seen.lock().unwrap();
        let (_, headers, body) = &seen[1];
        assert_eq!(body["payload"], json!({"kind": "daily"}));
        assert_eq!(body["fire"]["id"], fire.to_string());
        assert_eq!(body["fire"]["schedule"], "report");
        assert_eq!(body["fire"]["nominal"], fire.nominal.as_millis());
        assert_eq!(headers["chime-fire-id"], fire.to_string().as_str());
        assert_eq!(headers["chime-schedule"], "report");
    }

    // 500: the attempt fails with the status and the body's start.
    let job = inst.enqueue("fail", r#"{"b": true}"#).await;
    let info = wait_state(&inst, job, JobState::Dead).await;
    assert_eq!(
        info.last_error.as_deref(),
        Some(
            format!("POST http://{at}/fail answered HTTP 500 Internal Server Error: boom").as_str()
        )
    );

    // No answer within the timeout: the attempt fails.
    let job = inst.enqueue("slow", "null").await;
    let info = wait_state(&inst, job, JobState::Dead).await;
    assert_eq!(
        info.last_error.as_deref(),
        Some(format!("POST http://{at}/slow timed out after 300ms").as_str())
    );
    let paths: Vec<String> = seen.lock().unwrap().iter().map(|s| s.0.clone()).collect();
    assert_eq!(paths, ["/ok", "/ok", "/fail", "/slow"]);
    inst.stop().await;
}

#[test]
fn only_http_urls_are_accepted() {
    for bad in ["ftp://example.com/x", "not a url", "/relative"] {
        let err = http_handler(bad, Duration::from_secs(1)).err().unwrap();
        assert_eq!(
            err.to_string(),
            format!("worker url {bad:?} must be an http:// or https:// URL")
        );
    }
}

#[test]
fn a_worker_has_exactly_one_of_command_and_url() {
    use chime_native::daemon::config::FileConfig;
    let queue = "[[queue]]\nname = \"q\"\n[[worker]]\nqueue = \"q\"\n";
    let cfg = FileConfig::parse(&format!("{queue}url = \"http://127.0.0.1:8080/jobs\"\n")).unwrap();
    assert_eq!(
        cfg.workers[0].url.as_deref(),
        Some("http://127.0.0.1:8080/jobs")
    );
    assert!(cfg.workers[0].command.is_empty());
    for bad in ["", "url = \"http://x/\"\ncommand = [\"true\"]\n"] {
        let err = FileConfig::parse(&format!("{queue}{bad}")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "worker #1: needs exactly one of `command` and `url`"
        );
    }
}
