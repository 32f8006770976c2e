//! The worker and producer examples of `examples/clients/` (Python with
//! the standard library, Node 20 with the global fetch) against a real
//! daemon whose tokens limit each to its queue: the producer enqueues
//! 1,000 jobs in batches, one worker takes part of them and is stopped
//! by SIGTERM mid-run (it must finish what it holds: nothing left
//! claimed), a second finishes the rest and is stopped by SIGINT. Every
//! 7th job fails its first attempt and is retried at the `retryAt` the
//! worker gives; two jobs run twice their lease, kept by the heartbeat.
//!
//! None lost, none doubled: every enqueued id is in the workers' record
//! exactly once, at the attempt expected (1, or 2 for the failing ones:
//! an expired lease would show as a later attempt or a missing id), and
//! the API agrees: 1,000 jobs in the queue, all `completed`, 143 retries,
//! no lease expired.

use crate::api_daemon::{Api, repo, start, text, token_table};
use crate::daemon::{Daemon, read, signal, wait_for};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOBS: usize = 1_000;
const FAIL_EVERY: usize = 7;
const SLOW_EVERY: usize = 500;
const LEASE_MS: u64 = 1_500;
const SLOW_MS: u64 = 2 * LEASE_MS;

/// One language's programs: the interpreter and the two example files.
struct Lang {
    queue: &'static str,
    program: &'static str,
    worker: &'static str,
    producer: &'static str,
}

const PYTHON: Lang = Lang {
    queue: "py-jobs",
    program: "python3",
    worker: "examples/clients/python/worker.py",
    producer: "examples/clients/python/producer.py",
};

const NODE: Lang = Lang {
    queue: "js-jobs",
    program: "node",
    worker: "examples/clients/node/worker.mjs",
    producer: "examples/clients/node/producer.mjs",
};

#[test]
fn the_python_worker_completes_every_job_exactly_once() {
    scenario(&PYTHON);
}

#[test]
fn the_node_worker_completes_every_job_exactly_once() {
    scenario(&NODE);
}

fn scenario(lang: &Lang) {
    let dir = tempfile::tempdir().unwrap();
    let q = lang.queue;
    let config = format!(
        "\n[[queue]]\nname = {q:?}\nretention = {{ completedMax = 1000 }}\n{}{}{}",
        token_table("producer", "chime_producer", &[&format!("enqueue:{q}")]),
        token_table("worker", "chime_worker", &[&format!("work:{q}")]),
        token_table("reader", "chime_reader", &["read"]),
    );
    let api = start(dir.path(), &config);
    let handled = dir.path().join("handled.log");

    let first = worker(lang, &api, dir.path(), "first");
    let ids = produce(lang, &api);
    assert_eq!(ids.len(), JOBS);
    let unique: std::collections::BTreeSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), JOBS, "the producer got {JOBS} distinct ids");

    // SIGTERM mid-run: the worker finishes what it holds and exits 0.
    wait_for("300 jobs handled", &api.log, || {
        read(&handled).lines().count() >= 300
    });
    stop(first, "-TERM", dir.path(), "first");
    let stats = queue_stats(&api, q);
    assert_eq!(
        stats["claimed"], 0,
        "the stopped worker left nothing claimed: {stats}"
    );

    let second = worker(lang, &api, dir.path(), "second");
    // Until every job is handled, or none is left to handle (then the
    // checks below say what went wrong).
    let start = Instant::now();
    while read(&handled).lines().count() < JOBS {
        let s = queue_stats(&api, q);
        if ["scheduled", "available", "claimed"]
            .iter()
            .all(|k| s[*k] == 0)
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "only {} of {JOBS} handled; worker log:\n{}",
            read(&handled).lines().count(),
            read(&dir.path().join("second.log"))
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    stop(second, "-INT", dir.path(), "second");

    // The workers' record: each id once, at the expected attempt.
    let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
    for line in read(&handled).lines() {
        let (id, attempt) = line.split_once(' ').expect("`id attempt`");
        let id: u64 = id.parse().unwrap();
        assert!(
            seen.insert(id, attempt.parse().unwrap()).is_none(),
            "job {id} completed twice"
        );
    }
    let lost: Vec<&u64> = unique.iter().filter(|id| !seen.contains_key(id)).collect();
    let foreign: Vec<&u64> = seen.keys().filter(|id| !unique.contains(id)).collect();
    assert!(lost.is_empty(), "enqueued, never completed: {lost:?}");
    assert!(foreign.is_empty(), "completed, never enqueued: {foreign:?}");
    for (n, id) in ids.iter().enumerate() {
        let expected = if n % FAIL_EVERY == 0 { 2 } else { 1 };
        assert_eq!(seen[id], expected, "job {id} (n = {n}) attempt");
    }

    // The API's view: every job completed, nothing else in the queue.
    let completed = list(&api, q, Some("completed"));
    let not_completed: Vec<&u64> = unique.iter().filter(|id| !completed.contains(id)).collect();
    assert!(not_completed.is_empty(), "not completed: {not_completed:?}");
    assert_eq!(completed.len(), JOBS);
    assert_eq!(list(&api, q, None).len(), JOBS);
    let stats = queue_stats(&api, q);
    assert_eq!(stats["completed"], JOBS, "{stats}");
    let failing = JOBS.div_ceil(FAIL_EVERY);
    assert_eq!(stats["totals"]["retried"], failing, "{stats}");
    assert_eq!(
        stats["totals"]["expired"], 0,
        "the heartbeat kept every lease: {stats}"
    );
    assert_eq!(stats["totals"]["enqueued"], JOBS, "{stats}");
    api.stop();
}

/// Starts the example worker with the `work` token; its stderr goes to
/// `DIR/NAME.log`.
fn worker(lang: &Lang, api: &Api, dir: &Path, name: &str) -> Daemon {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
    let child = Command::new(lang.program)
        .arg(repo().join(lang.worker))
        .arg(lang.queue)
        .env("CHIME_URL", &api.base)
        .env("CHIME_TOKEN", "chime_worker")
        .env("WORKER_NAME", name)
        .env("LEASE_MS", LEASE_MS.to_string())
        .env("HANDLED_LOG", dir.join("handled.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("{} (needed by this test): {e}", lang.program));
    Daemon(child)
}

/// Signals a worker; it must exit 0 within 30 s, having said so.
fn stop(mut w: Daemon, sig: &str, dir: &Path, name: &str) {
    signal(&w.0, sig);
    let log = dir.join(format!("{name}.log"));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = w.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{name} did not stop on {sig}; log:\n{}",
            read(&log)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{name}: {status:?}; log:\n{}", read(&log));
    assert!(read(&log).contains("stopped"), "{}", read(&log));
}

/// Runs the example producer with the `enqueue` token: the ids it printed.
fn produce(lang: &Lang, api: &Api) -> Vec<u64> {
    let out = Command::new(lang.program)
        .arg(repo().join(lang.producer))
        .arg(lang.queue)
        .args(["--count", &JOBS.to_string(), "--batch", "100"])
        .args(["--fail-every", &FAIL_EVERY.to_string()])
        .args(["--slow-every", &SLOW_EVERY.to_string()])
        .args(["--slow-ms", &SLOW_MS.to_string()])
        .env("CHIME_URL", &api.base)
        .env("CHIME_TOKEN", "chime_producer")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "producer: {}", text(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// The queue's `QueueStats`, read with `chime queues --json`.
fn queue_stats(api: &Api, q: &str) -> serde_json::Value {
    let all = api.json("chime_reader", &["queues"]);
    all["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["queue"] == q)
        .cloned()
        .unwrap_or_else(|| panic!("no queue {q}: {all}"))
}

/// Every job id of the queue (in `state`), paging with `chime jobs --cursor`.
fn list(api: &Api, q: &str, state: Option<&str>) -> Vec<u64> {
    let mut ids = Vec::new();
    let mut cursor: Option<u64> = None;
    for _ in 0..100 {
        let mut args = vec!["jobs", q, "--limit", "300"];
        if let Some(s) = state {
            args.extend(["--state", s]);
        }
        let c = cursor.map(|c| c.to_string());
        if let Some(c) = &c {
            args.extend(["--cursor", c]);
        }
        let page = api.json("chime_reader", &args);
        ids.extend(
            page["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["id"].as_u64().unwrap()),
        );
        match page["next"].as_u64() {
            Some(n) => cursor = Some(n),
            None => return ids,
        }
    }
    panic!("more than 100 pages");
}
