//! Every replica serves the listener with `--database`: two real
//! `chime run --database --http …` processes; `/healthz` and `/metrics`
//! of both show one leader and one follower with the same epoch (the
//! leader's `/healthz` with its engine's turns and commits), and
//! the read endpoints answer on the follower; after the leader is killed
//! (SIGKILL) the other reports itself leader of the next epoch. Prints
//! how long that took. `chime_queue_depth{transport="postgres"}` has the
//! embedded gauge's four states, equal to the `chime_jobs` rows of the
//! same scrape (one statement, one snapshot).

use crate::pg_support;

use chime_native::pg::PgConfig;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const TTL_MS: u64 = 2_000;

const CONFIG: &str = r#"
[[queue]]
name = "ticks"

[[schedule]]
name = "tick"
spec = "@every 1s"
overlap = "allow"
target = { queue = "ticks" }
"#;

struct Replica(Child);

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(pg: &PgConfig, config: &Path, port: u16, log: &Path) -> Replica {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(config)
        .args(["--database", &pg.url, "--schema", &pg.schema])
        .args(["--lease-ttl-ms", &TTL_MS.to_string()])
        .args(["--http", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Replica(child)
}

/// `GET path` on the port: (status, body), or `None` if nothing listens.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n")?.1.to_owned();
    Some((status, body))
}

fn health(port: u16) -> Option<Value> {
    let (status, body) = get(port, "/healthz")?;
    (status == 200).then(|| serde_json::from_str(&body).unwrap())
}

/// A series' value in a Prometheus text (`name` or `name{labels}`).
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// Polls until both replicas report one leader and one follower with
/// the same leader epoch; (leader index, epoch).
fn settled(ports: &[u16], logs: &[&Path], within: Duration) -> (usize, i64) {
    let t = Instant::now();
    loop {
        let hs: Vec<Option<Value>> = ports.iter().map(|&p| health(p)).collect();
        if let [Some(a), Some(b)] = &hs[..] {
            let roles = (a["role"].as_str(), b["role"].as_str());
            let epochs = (a["lease"]["epoch"].as_i64(), b["lease"]["epoch"].as_i64());
            let leader = match roles {
                (Some("leader"), Some("follower")) => Some(0),
                (Some("follower"), Some("leader")) => Some(1),
                _ => None,
            };
            if let (Some(i), (Some(x), Some(y))) = (leader, epochs)
                && x == y
                && hs[i].as_ref().unwrap()["epoch"].as_i64() == Some(x)
            {
                return (i, x);
            }
        }
        if t.elapsed() > within {
            let logs: Vec<String> = logs
                .iter()
                .map(|l| std::fs::read_to_string(l).unwrap_or_default())
                .collect();
            panic!("no leader and follower within {within:?}: {hs:?}\n{logs:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_replicas_serve_health_and_metrics_and_the_survivor_takes_over() {
    let Some(pg) = pg_support::config("replica_http") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("chime.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let ports = [free_port(), free_port()];
    let logs = [dir.path().join("a.log"), dir.path().join("b.log")];
    let log_refs = [logs[0].as_path(), logs[1].as_path()];
    let mut replicas = vec![
        Some(spawn(&pg, &config, ports[0], &logs[0])),
        Some(spawn(&pg, &config, ports[1], &logs[1])),
    ];
    let (leader, epoch) =
        tokio::task::block_in_place(|| settled(&ports, &log_refs, Duration::from_secs(20)));
    let follower = 1 - leader;
    // /metrics: the same epoch on both, one leader.
    let t = Instant::now();
    let metrics: Vec<String> = loop {
        let m: Vec<String> = ports
            .iter()
            .map(|&p| get(p, "/metrics").map(|(_, b)| b).unwrap_or_default())
            .collect();
        let fired = m
            .iter()
            .all(|m| m.contains("chime_fires_total{schedule=\"tick\",kind=\"scheduled\"}"));
        if fired {
            break m;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no fires in /metrics: {m:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for (i, m) in metrics.iter().enumerate() {
        assert_eq!(metric(m, "chime_leader_epoch"), Some(epoch as f64), "{m}");
        let want = if i == leader { 1.0 } else { 0.0 };
        assert_eq!(metric(m, "chime_replica_leader"), Some(want), "{m}");
        assert!(
            m.contains("chime_jobs{queue=\"ticks\",state=\"available\"}"),
            "{m}"
        );
        assert!(metric(m, "chime_database_errors_total").is_some(), "{m}");
        // Depth: the job rows of this scrape, as the embedded gauge names
        // them. Nothing claims `ticks` (no worker), so its fires wait.
        let depth = |state: &str| {
            metric(
                m,
                &format!(
                    r#"chime_queue_depth{{queue="ticks",state="{state}",transport="postgres"}}"#
                ),
            )
        };
        let rows = |state: &str| {
            metric(
                m,
                &format!(r#"chime_jobs{{queue="ticks",state="{state}"}}"#),
            )
            .unwrap_or(0.0)
        };
        assert!(m.contains("# TYPE chime_queue_depth gauge"), "{m}");
        let available = depth("available").expect("available depth");
        assert!(available >= 1.0, "{m}");
        assert_eq!(available, rows("available"), "one snapshot: {m}");
        assert_eq!(depth("scheduled"), Some(rows("scheduled")), "{m}");
        assert_eq!(depth("claimed"), Some(0.0), "{m}");
        assert_eq!(depth("dead"), Some(0.0), "{m}");
        assert!(!m.contains(r#"transport="local""#), "{m}");
    }
    assert!(metric(&metrics[leader], "chime_lease_renew_seconds_count").is_some());
    // /healthz: the leader's engine driver turns and commits (it has
    // fired, so journaled); a follower runs no engine.
    let lead = health(ports[leader]).expect("the leader's health");
    assert!(lead["turns"].as_u64() > Some(0), "{lead}");
    assert!(lead["commits"].as_u64() > Some(0), "{lead}");
    assert!(lead["lastCommitAt"].as_i64().is_some(), "{lead}");
    let follows = health(ports[follower]).expect("the follower's health");
    assert_eq!(follows["turns"].as_u64(), Some(0), "{follows}");
    assert_eq!(follows["commits"].as_u64(), Some(0), "{follows}");
    // The read endpoints on the follower: the leader's schedules and the
    // tables' queues.
    let (status, body) = get(ports[follower], "/v1/schedules").unwrap();
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["schedules"][0]["name"], "tick", "{body}");
    let (status, body) = get(ports[follower], "/v1/schedules/tick").unwrap();
    assert_eq!(status, 200, "{body}");
    let (status, _) = get(ports[follower], "/v1/schedules/nope").unwrap();
    assert_eq!(status, 404);
    let (status, body) = get(ports[follower], "/v1/queues").unwrap();
    assert_eq!(status, 200, "{body}");
    let queues: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(queues["queues"][0]["queue"], "ticks", "{body}");
    // Kill the leader: the survivor reports leader of a later epoch.
    let killed = Instant::now();
    drop(replicas[leader].take());
    let t = Instant::now();
    let took = loop {
        if let Some(h) = health(ports[follower])
            && h["role"] == "leader"
        {
            let e = h["epoch"].as_i64().unwrap();
            assert!(e > epoch, "{h}");
            assert_eq!(h["lease"]["epoch"].as_i64(), Some(e), "{h}");
            break killed.elapsed();
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "the survivor did not take over"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    println!(
        "replica_http: the survivor reported leader {took:?} after the kill (TTL {TTL_MS} ms)"
    );
    assert!(health(ports[leader]).is_none(), "the killed one is gone");
    drop(replicas);
    pg_support::drop_schema(&pg).await;
}
