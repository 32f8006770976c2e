//! What `transport_nats` and `transport_redis` share: `chime run` with a
//! queue in a real broker of the test's own, as processes. The daemon
//! publishes its schedule's fires there and works them with a `[[worker]]`
//! command pool; `/healthz` shows the transport and turns 503 within 5 s of
//! the broker being killed (`kill -9`), 200 again after its restart on the
//! same store, and work goes on; `/metrics` has
//! `chime_queue_depth{…,transport=NAME}` and no engine (`local`) series
//! for a queue in a broker, and the transport counters move exactly: three
//! manual fires of a queue whose jobs succeed are three published, three
//! acked; three of a queue whose jobs always fail (two attempts) are three
//! published, three retried, three dead-lettered, three dead in depth.

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The broker under test, and how to start it.
pub enum Broker {
    /// nats-server at this path (JetStream, `sync_interval: always`).
    Nats(String),
    /// redis-server (AOF, `appendfsync always`).
    Redis,
}

impl Broker {
    /// The transport's name in the config, URL scheme and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            Broker::Nats(_) => "nats",
            Broker::Redis => "redis",
        }
    }

    /// Starts the broker on `port` with its files in `dir`; waits until it
    /// answers.
    pub fn start(&self, dir: &Path, port: u16) -> Option<Child> {
        match self {
            Broker::Nats(bin) => nats(bin, dir, port),
            Broker::Redis => redis(dir, port),
        }
    }

    /// Starts the broker on a free port (tries up to 20), its files in
    /// `dir`: the server and its port. The port is one the system just
    /// handed out, and nothing answers on it before the start: a test of
    /// this binary running at the same time with a server of its own
    /// must not be mistaken for ours.
    pub fn start_anywhere(&self, dir: &Path) -> (Child, u16) {
        for _ in 0..20 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                continue;
            }
            if let Some(s) = self.start(dir, port) {
                return (s, port);
            }
        }
        panic!("a {} server started", self.name())
    }
}

/// Starts nats-server on `port` with its store in `dir`; waits until it
/// answers.
fn nats(bin: &str, dir: &Path, port: u16) -> Option<Child> {
    let conf = dir.join("nats.conf");
    std::fs::write(
        &conf,
        format!(
            "listen: \"127.0.0.1:{port}\"\njetstream {{\n  store_dir: \"{d}/js\"\n  sync_interval: always\n}}\n",
            d = dir.display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join(format!("nats-{port}.log"))).unwrap();
    let mut child = Command::new(bin)
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    None
}

fn redis_bin() -> String {
    std::env::var("CHIME_TEST_REDIS_BIN").unwrap_or_else(|_| "/usr/bin/redis-server".into())
}

/// Starts redis-server on `port` in `dir`; waits until it answers.
fn redis(dir: &Path, port: u16) -> Option<Child> {
    let conf = dir.join("redis.conf");
    std::fs::write(
        &conf,
        format!(
            "bind 127.0.0.1\nport {port}\ndir {d}\nappendonly yes\nappendfsync always\n\
             save \"\"\nlogfile {d}/redis.log\n",
            d = dir.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(redis_bin()).arg(&conf).spawn().unwrap();
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    None
}

async fn get(client: &reqwest::Client, url: &str) -> (u16, String) {
    match client.get(url).send().await {
        Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
        Err(e) => (0, e.to_string()),
    }
}

/// Polls `check` every 100 ms for up to `within`.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let end = Instant::now() + within;
    loop {
        match check().await {
            Ok(()) => return,
            Err(e) if Instant::now() > end => panic!("{what}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Stops `daemon` with SIGTERM (a graceful stop) and waits for it.
pub fn stop_gracefully(daemon: &mut Child) -> std::process::ExitStatus {
    let pid = daemon.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    daemon.wait().unwrap()
}

/// A series' value (`name{labels}`) in a Prometheus text; 0 when absent.
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

/// Three manual fires of `good` and of `bad`: the counters of
/// `transport` move by exactly what the jobs did.
async fn counters_move_exactly(client: &reqwest::Client, address: &str, transport: &str) {
    for schedule in ["good", "bad"] {
        for _ in 0..3 {
            let r = client
                .post(format!("http://{address}/v1/schedules/{schedule}/trigger"))
                .header("content-type", "application/json")
                .body(r#"{"overlap": "allow"}"#)
                .send()
                .await
                .unwrap();
            assert!(
                r.status().is_success(),
                "trigger {schedule}: {}",
                r.status()
            );
        }
    }
    let series = |name: &str, queue: &str| {
        format!(r#"chime_transport_{name}_total{{transport="{transport}",queue="{queue}"}}"#)
    };
    let metrics_url = format!("http://{address}/metrics");
    // Polled by hand (not `eventually`): the last scrape is asserted on.
    let (acked, dead) = (series("acked", "good"), series("dead_lettered", "bad"));
    let dead_depth =
        format!(r#"chime_queue_depth{{queue="bad",state="dead",transport="{transport}"}}"#);
    let end = Instant::now() + Duration::from_secs(30);
    let text = loop {
        let (_, m) = get(client, &metrics_url).await;
        // A scrape reads the brokers' depth before it renders the
        // counters: a dead-lettering between the two shows in the
        // counters first, so both are waited for.
        if value(&m, &acked) == 3.0
            && value(&m, &dead) == 3.0
            && value(&m, &dead_depth) == 3.0
            && value(&m, "chime_transport_outbox_pending") == 0.0
        {
            break m;
        }
        assert!(
            Instant::now() < end,
            "three acked, three dead-lettered within 30 s: {m}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let m = &text;
    for (name, queue, want) in [
        ("published", "good", 3.0),
        ("acked", "good", 3.0),
        ("retried", "good", 0.0),
        ("dead_lettered", "good", 0.0),
        ("published", "bad", 3.0),
        ("retried", "bad", 3.0),
        ("dead_lettered", "bad", 3.0),
        ("acked", "bad", 0.0),
        ("dropped", "bad", 0.0),
        ("duplicates", "good", 0.0),
        ("duplicates", "bad", 0.0),
        ("publish_refused", "bad", 0.0),
    ] {
        assert_eq!(value(m, &series(name, queue)), want, "{name} {queue}: {m}");
    }
    assert!(
        m.contains("# TYPE chime_transport_published counter"),
        "{m}"
    );
    assert!(m.contains("# HELP chime_transport_dead_lettered "), "{m}");
    assert!(
        value(
            m,
            &format!(r#"chime_transport_publish_seconds_count{{transport="{transport}"}}"#)
        ) >= 6.0,
        "{m}"
    );
    for state in ["scheduled", "available", "claimed"] {
        let series =
            format!(r#"chime_queue_depth{{queue="bad",state="{state}",transport="{transport}"}}"#);
        assert_eq!(value(m, &series), 0.0, "{state}: {m}");
    }
    // Every queue lives in the broker: the engine shows no depth of its own.
    assert!(!m.contains(r#"transport="local""#), "{m}");
}

/// The whole scenario on `broker`.
pub async fn a_queue_in_a_broker_is_published_worked_and_health_checked(broker: Broker) {
    let dir = tempfile::tempdir().unwrap();
    let rdir = dir.path().join(broker.name());
    std::fs::create_dir_all(&rdir).unwrap();
    let (mut server, port) = broker.start_anywhere(&rdir);
    let out = dir.path().join("out.txt");
    let config = format!(
        r#"
[[queue]]
name = "planner"
transport = "{name}"
maxAttempts = 2
leaseMs = 10000

[[schedule]]
name = "plan"
spec = "@every 1s"
target = {{ queue = "planner", payload = {{ runId = "r" }} }}

[[worker]]
queue = "planner"
command = ["sh", "-c", "echo \"$CHIME_PAYLOAD\" >> {out}"]

# Fired by hand only (the counts are exact): one queue whose jobs
# succeed, one whose jobs always fail.
[[queue]]
name = "good"
transport = "{name}"
leaseMs = 10000

[[queue]]
name = "bad"
transport = "{name}"
maxAttempts = 2
leaseMs = 10000
backoff = {{ baseMs = 50, capMs = 100 }}

[[schedule]]
name = "good"
spec = "@yearly"
target = {{ queue = "good" }}

[[schedule]]
name = "bad"
spec = "@yearly"
target = {{ queue = "bad" }}

[[worker]]
queue = "good"
command = ["true"]

[[worker]]
queue = "bad"
command = ["sh", "-c", "exit 3"]

[transport.{name}]
url = "{name}://127.0.0.1:{port}"
"#,
        out = out.display(),
        name = broker.name()
    );
    let mut api = crate::api_daemon::start(dir.path(), &config);
    let address = api.base.trim_start_matches("http://").to_owned();
    let daemon = &mut api.daemon.0;
    let client = chime_native::worker::http::client(Duration::from_secs(10)).unwrap();
    let health_url = format!("http://{address}/healthz");

    // Fires published, worked from the broker, settled (so `skip` lets the next
    // one fire): several lines within a few seconds.
    let lines = || {
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .count()
    };
    // A bound, not a speed: the stream's creation and the first fires wait
    // for fsyncs, slow on a CI machine running other daemons' tests.
    eventually(
        Duration::from_secs(30),
        "three jobs worked from the broker",
        || {
            let n = lines();
            async move {
                if n >= 3 {
                    Ok(())
                } else {
                    Err(format!("{n} lines"))
                }
            }
        },
    )
    .await;
    let (status, body) = get(&client, &health_url).await;
    assert_eq!(status, 200, "{body}");
    let h: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["transports"][0]["transport"], broker.name(), "{body}");
    assert_eq!(h["transports"][0]["status"], "ok", "{body}");
    assert!(h["transports"][0]["roundTripMicros"].is_u64(), "{body}");
    let (_, metrics) = get(&client, &format!("http://{address}/metrics")).await;
    assert!(
        metrics.contains(&format!(
            r#"chime_queue_depth{{queue="planner",state="dead",transport="{}"}} 0"#,
            broker.name()
        )),
        "{metrics}"
    );

    counters_move_exactly(&client, &address, broker.name()).await;

    // The broker dies: 503 within 5 s, naming it.
    server.kill().unwrap();
    server.wait().unwrap();
    let died = Instant::now();
    eventually(Duration::from_secs(5), "503 after the broker died", || {
        let (client, url) = (client.clone(), health_url.clone());
        async move {
            let (status, body) = get(&client, &url).await;
            if status == 503 && body.contains("\"unavailable\"") {
                Ok(())
            } else {
                Err(format!("{status} {body}"))
            }
        }
    })
    .await;
    eprintln!("503 after {} ms", died.elapsed().as_millis());

    // Back: healthy again, and work goes on.
    let mut server = broker.start(&rdir, port).expect("the broker restarted");
    let before = lines();
    eventually(Duration::from_secs(10), "healthy and working again", || {
        let (client, url, n) = (client.clone(), health_url.clone(), lines());
        async move {
            let (status, _) = get(&client, &url).await;
            if status == 200 && n >= before + 2 {
                Ok(())
            } else {
                Err(format!("{status}, {n} lines (before {before})"))
            }
        }
    })
    .await;

    assert!(stop_gracefully(daemon).success());
    let _ = server.kill();
    let _ = server.wait();
}
