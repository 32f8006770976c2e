//! A transport queue worked through the HTTP API and the `chime` CLI, as
//! a program in another language would: `chime run` with one engine
//! queue and one queue in a real broker (Redis, then NATS, each of the
//! test's own). Every id the API hands out names one backend
//! (`transport::ids`): the engine's below 2^40, the broker's above, so a
//! complete, fail, cancel or get reaches the job it names and no other.
//! Enqueue (with a key: de-duplicated), claim, heartbeat, complete, fail
//! into the dead letters, cancel; `/v1/queues` shows the broker's depth,
//! `chime dead` lists the letter with its attempts and error, `chime
//! redrive` brings it back at attempt 1; `chime jobs` lists a Redis
//! queue's jobs (NATS: 501 unsupported); an id of a backend the daemon
//! does not have is `unknown_job`; the transport's counters count what
//! the API did.

use crate::transport_daemon::{Broker, eventually, stop_gracefully};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut r = self
            .client
            .request(method.parse().unwrap(), format!("{}{path}", self.base));
        if let Some(b) = body {
            r = r
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let r = r.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method, path, body).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {v}"
        );
        v
    }

    async fn enqueue(&self, queue: &str, body: Value) -> (u64, bool) {
        let v = self
            .ok("POST", &format!("/v1/queues/{queue}/jobs"), Some(body))
            .await;
        (
            v["id"].as_u64().unwrap(),
            v["deduplicated"].as_bool().unwrap(),
        )
    }

    async fn claim(&self, queue: &str, max: u32) -> Vec<Value> {
        let v = self
            .ok(
                "POST",
                &format!("/v1/queues/{queue}/claim"),
                Some(json!({"worker": "w-py", "max": max})),
            )
            .await;
        v["jobs"].as_array().unwrap().clone()
    }

    async fn job(&self, id: u64) -> Value {
        self.ok("GET", &format!("/v1/jobs/{id}"), None).await
    }

    /// `chime ARGS --json` against this daemon.
    fn chime(&self, args: &[&str]) -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_chime"))
            .args(args)
            .args(["--json", "--url", &self.base])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "chime {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn token(c: &Value) -> Value {
    c["token"].clone()
}

/// The whole scenario on `broker`.
async fn the_api_works_a_transport_queue(broker: Broker) {
    let dir = tempfile::tempdir().unwrap();
    let bdir = dir.path().join(broker.name());
    std::fs::create_dir_all(&bdir).unwrap();
    let (mut server, port) = broker.start_anywhere(&bdir);
    let name = broker.name();
    let config = format!(
        r#"
[[queue]]
name = "local"

[[queue]]
name = "remote"
transport = "{name}"
maxAttempts = 2
leaseMs = 10000
backoff = {{ baseMs = 50, capMs = 100 }}

[transport.{name}]
url = "{name}://127.0.0.1:{port}"
"#
    );
    let mut running = crate::api_daemon::start(dir.path(), &config);
    let api = Api {
        client: chime_native::worker::http::client(Duration::from_secs(10)).unwrap(),
        base: running.base.clone(),
    };

    // Until the queue is declared in its broker its verbs are 503.
    eventually(
        Duration::from_secs(20),
        "the queue declared in its broker",
        || {
            let api = &api;
            async move {
                match api
                    .call(
                        "POST",
                        "/v1/queues/remote/claim",
                        Some(json!({"worker": "w-py"})),
                    )
                    .await
                {
                    (200, _) => Ok(()),
                    (s, v) => Err(format!("{s} {v}")),
                }
            }
        },
    )
    .await;

    let (local, _) = api
        .enqueue("local", json!({"payload": {"n": "local"}}))
        .await;
    let (r1, _) = api.enqueue("remote", json!({"payload": {"n": 1}})).await;
    let (r2, d) = api
        .enqueue("remote", json!({"payload": {"n": 2}, "key": "k2"}))
        .await;
    assert!(!d);
    assert_eq!(
        api.enqueue("remote", json!({"payload": {"n": 2}, "key": "k2"}))
            .await,
        (r2, true)
    );
    let (r3, _) = api.enqueue("remote", json!({"payload": {"n": 3}})).await;
    assert!(local < 1 << 40, "an engine id: {local}");
    for r in [r1, r2, r3] {
        let tag = r >> 40;
        match name {
            "redis" => assert_eq!(tag, 8191, "{r}"),
            _ => assert!((1..=8190).contains(&tag), "{r}"),
        }
        assert!(r < 1 << 53, "exact in JSON: {r}");
    }

    let l = api.claim("local", 1).await;
    assert_eq!(l[0]["job"], local);
    let got = api.claim("remote", 3).await;
    let ids: Vec<u64> = got.iter().map(|c| c["job"].as_u64().unwrap()).collect();
    assert_eq!(ids, [r1, r2, r3], "in publish order");
    assert_eq!(got[1]["payload"], json!({"n": 2}));
    assert_eq!(got[1]["attempt"], 1);
    // Each id reaches its own backend's job, whatever the tokens.
    assert_eq!(api.job(local).await["queue"], "local");
    let j2 = api.job(r2).await;
    assert_eq!(
        (j2["queue"].as_str(), j2["state"].as_str()),
        (Some("remote"), Some("claimed")),
        "{j2}"
    );

    api.ok(
        "POST",
        &format!("/v1/jobs/{local}/complete"),
        Some(json!({"token": token(&l[0])})),
    )
    .await;
    api.ok(
        "POST",
        &format!("/v1/jobs/{r1}/complete"),
        Some(json!({"token": token(&got[0])})),
    )
    .await;
    assert_eq!(api.job(r1).await["state"], "completed");
    assert_eq!(api.job(local).await["state"], "completed");
    let hb = api
        .ok(
            "POST",
            &format!("/v1/jobs/{r2}/heartbeat"),
            Some(json!({"token": token(&got[1])})),
        )
        .await;
    assert!(hb["deadline"].is_i64(), "{hb}");
    // A stale token is refused by the broker's rules, as the engine's.
    let (s, v) = api
        .call(
            "POST",
            &format!("/v1/jobs/{r2}/complete"),
            Some(json!({"token": 987_654})),
        )
        .await;
    assert_eq!((s, v["error"].as_str()), (409, Some("lease_lost")), "{v}");

    // Fail twice: a retry after core's backoff, then a dead letter.
    let f = api
        .ok(
            "POST",
            &format!("/v1/jobs/{r2}/fail"),
            Some(json!({"token": token(&got[1]), "error": "boom 1"})),
        )
        .await;
    assert_eq!(f["outcome"], "retry", "{f}");
    let again = loop {
        let c = api.claim("remote", 1).await;
        if let Some(c) = c.into_iter().next() {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        (again["job"].as_u64(), again["attempt"].as_u64()),
        (Some(r2), Some(2))
    );
    let f = api
        .ok(
            "POST",
            &format!("/v1/jobs/{r2}/fail"),
            Some(json!({"token": token(&again), "error": "boom 2"})),
        )
        .await;
    assert_eq!(f["outcome"], "dead", "{f}");

    api.ok("POST", &format!("/v1/jobs/{r3}/cancel"), Some(json!({})))
        .await;
    assert_eq!(api.job(r3).await["state"], "cancelled");

    // The broker's depth in the queue list, by the CLI.
    eventually(
        Duration::from_secs(10),
        "the depth read from the broker",
        || {
            let q = api.chime(&["queues"]);
            async move {
                let remote = q["queues"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|q| q["queue"] == "remote")
                    .cloned();
                match remote {
                    Some(r) if r["dead"] == 1 && r["available"] == 0 && r["claimed"] == 0 => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            }
        },
    )
    .await;

    let dead = api.chime(&["dead", "remote"]);
    assert_eq!(dead["total"], 1, "{dead}");
    let letter = &dead["jobs"][0];
    assert_eq!(letter["id"], r2, "{dead}");
    assert_eq!(letter["state"], "dead");
    assert_eq!(letter["attempt"], 2);
    assert_eq!(letter["lastError"], "boom 2");
    assert_eq!(letter["payload"], json!({"n": 2}));

    let redriven = api.chime(&["redrive", "remote"]);
    assert_eq!(redriven["count"], 1, "{redriven}");
    let back = loop {
        if let Some(c) = api.claim("remote", 1).await.into_iter().next() {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        (back["job"].as_u64(), back["attempt"].as_u64()),
        (Some(r2), Some(1))
    );
    api.ok(
        "POST",
        &format!("/v1/jobs/{r2}/complete"),
        Some(json!({"token": token(&back)})),
    )
    .await;
    assert_eq!(api.chime(&["dead", "remote"])["total"], 0);

    // Listing a queue's jobs: Redis walks its ids as the engine does
    // (state, key, pages by cursor); JetStream has no such index, and
    // says so (501 unsupported).
    if name == "redis" {
        let all = api.chime(&["jobs", "remote"]);
        let ids: Vec<&Value> = all["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| &j["id"])
            .collect();
        assert_eq!(ids, [&json!(r1), &json!(r2), &json!(r3)], "{all}");
        let done = api.chime(&["jobs", "remote", "--state", "completed"]);
        assert_eq!(done["jobs"].as_array().unwrap().len(), 2, "{done}");
        let keyed = api.chime(&["jobs", "remote", "--key", "k2"]);
        assert_eq!(keyed["jobs"][0]["id"], r2, "{keyed}");
        let page = api.chime(&["jobs", "remote", "--limit", "2"]);
        assert_eq!(page["jobs"].as_array().unwrap().len(), 2, "{page}");
        let cursor = page["next"].as_u64().expect("a next page").to_string();
        let rest = api.chime(&["jobs", "remote", "--limit", "2", "--cursor", &cursor]);
        assert_eq!(rest["jobs"][0]["id"], r3, "{rest}");
        assert_eq!(rest["next"], Value::Null, "{rest}");
        // Cursors outside Redis's ids (an engine id, the largest u64) are
        // empty ranges, not errors or other backends' jobs.
        for q in [
            format!("after={}", u64::MAX),
            "before=1".to_owned(),
            format!("after={r3}"),
        ] {
            let v = api
                .ok("GET", &format!("/v1/queues/remote/jobs?{q}"), None)
                .await;
            assert_eq!(
                (v["jobs"].as_array().map(Vec::len), &v["next"]),
                (Some(0), &Value::Null),
                "{q}: {v}"
            );
        }
    } else {
        let (s, v) = api.call("GET", "/v1/queues/remote/jobs", None).await;
        assert_eq!((s, v["error"].as_str()), (501, Some("unsupported")), "{v}");
    }

    // An id of a backend this daemon has not: no job of another is hit.
    let other = if name == "redis" {
        17u64 << 40 | 1
    } else {
        8191u64 << 40 | 1
    };
    let (s, v) = api
        .call(
            "POST",
            &format!("/v1/jobs/{other}/complete"),
            Some(json!({"token": 1})),
        )
        .await;
    assert_eq!((s, v["error"].as_str()), (404, Some("unknown_job")), "{v}");

    let metrics = api
        .client
        .get(format!("{}/metrics", api.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series =
        |n: &str| format!(r#"chime_transport_{n}_total{{transport="{name}",queue="remote"}} "#);
    for (n, want) in [("acked", 2), ("retried", 1), ("dead_lettered", 1)] {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(&series(n)))
            .unwrap_or_default();
        assert_eq!(
            line.rsplit(' ').next(),
            Some(want.to_string().as_str()),
            "{n}: {metrics}"
        );
    }

    assert!(stop_gracefully(&mut running.daemon.0).success());
    server.kill().unwrap();
    server.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_works_a_queue_in_redis() {
    if crate::transport_redis::wanted() {
        the_api_works_a_transport_queue(Broker::Redis).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_works_a_queue_in_nats() {
    if let Some(bin) = crate::transport_nats::nats_bin() {
        the_api_works_a_transport_queue(Broker::Nats(bin)).await;
    }
}
