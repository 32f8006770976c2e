//! Fault test on a real Redis (`appendfsync always`): the daemon's path —
//! driver on a redb store whose fires go through the transport outbox,
//! the publisher, a consumer through the queue port — while the broker is
//! killed with SIGKILL mid-run and restarted. Afterwards every fire the
//! engine delivered is in Redis exactly once (one job per message id),
//! every job completed or dead-lettered exactly once, the dead letters
//! carry the seed's headers, and the settlements reached the engine (the
//! schedules, `skip` on overlap, kept firing).

use crate::redis_support;
use chime_core::{EngineConfig, Input, QueueConfig, QueueMode, ScheduleDef};
use chime_native::backend::QueueBackend;
use chime_native::driver::{Driver, DriverConfig, SystemClock};
use chime_native::store::RedbStore;
use chime_native::transport::config::RedisOptions;
use chime_native::transport::outbox::{Outbox, OutboxConfig, Outboxed};
use chime_native::transport::redis::RedisTransport;
use chime_native::transport::{Settlements, Transport};
use std::collections::{BTreeMap, HashMap};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A redis-server of the test's own, killable and restartable on its
/// port and directory.
struct Server {
    child: Child,
    conf: std::path::PathBuf,
    url: String,
}

impl Server {
    fn start(dir: &std::path::Path) -> Option<Server> {
        redis_support::redis_url()?;
        let bin = std::env::var("CHIME_TEST_REDIS_BIN").unwrap_or("/usr/bin/redis-server".into());
        for _ in 0..20 {
            let port = 20_000 + (std::process::id() as u16 ^ rand_u16()) % 40_000;
            let conf = dir.join("redis.conf");
            std::fs::write(
                &conf,
                format!(
                    "bind 127.0.0.1\nport {port}\ndir {}\nappendonly yes\nappendfsync always\n\
                     save \"\"\nlogfile {}/server.log\n",
                    dir.display(),
                    dir.display()
                ),
            )
            .unwrap();
            let mut s = Server {
                child: Command::new(&bin).arg(&conf).spawn().unwrap(),
                conf,
                url: format!("redis://127.0.0.1:{port}"),
            };
            if s.wait_up() {
                return Some(s);
            }
            let _ = s.child.kill();
            let _ = s.child.wait();
        }
        panic!("no redis-server started");
    }

    fn wait_up(&mut self) -> bool {
        let client = redis::Client::open(self.url.as_str()).unwrap();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(mut c) = client.get_connection()
                && redis::cmd("PING").query::<String>(&mut c).is_ok()
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    fn kill9(&mut self) {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
    }

    fn restart(&mut self) {
        let bin = std::env::var("CHIME_TEST_REDIS_BIN").unwrap_or("/usr/bin/redis-server".into());
        self.child = Command::new(bin).arg(&self.conf).spawn().unwrap();
        assert!(self.wait_up(), "redis-server restarted");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_u16() -> u16 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u16
}

fn schedule(name: &str, spec: &str, fail: bool) -> ScheduleDef {
    serde_json::from_value(serde_json::json!({
        "name": name, "spec": spec,
        "target": {"queue": "planner", "payload": {"fail": fail}, "headers": {"tenant": "t1"}}
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn broker_killed_and_restarted_mid_run() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(dir.path()) else {
        return;
    };
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let outbox = Outbox::open(&data.join("outbox.redb"), OutboxConfig::default()).unwrap();
    let store = Outboxed::new(
        RedbStore::open(&data).unwrap(),
        outbox.clone(),
        ["planner".to_owned()],
    );
    let engine = EngineConfig::default();
    let driver = Driver::recover(
        Box::new(store),
        Arc::new(SystemClock),
        DriverConfig::default(),
    )
    .unwrap();
    let handle = driver.handle();
    let driver_task = tokio::spawn(driver.run());

    let mut queue = QueueConfig::new("planner");
    queue.mode = QueueMode::External;
    queue.max_attempts = 2;
    queue.lease_ms = 30_000;
    queue.backoff.base_ms = 20;
    queue.backoff.cap_ms = 40;
    handle
        .call(Input::DeclareQueue(queue.clone()))
        .await
        .unwrap()
        .unwrap();
    // Every second (the shortest interval): eight that succeed, three
    // that always fail.
    let names: Vec<(String, bool)> = (0..8)
        .map(|i| (format!("ok-{i}"), false))
        .chain((0..3).map(|i| (format!("bad-{i}"), true)))
        .collect();
    for (name, fail) in &names {
        let s = schedule(name, "@every 1s", *fail);
        handle
            .call(Input::UpsertSchedule(s))
            .await
            .unwrap()
            .unwrap();
    }

    let settlements: Arc<dyn Settlements> = Arc::new(handle.clone());
    let options = RedisOptions {
        url: server.url.clone(),
        ..RedisOptions::default()
    };
    let t = Arc::new(
        RedisTransport::new(options, engine, vec!["planner".into()], settlements).unwrap(),
    );
    t.declare(&queue).await.unwrap();
    let maintenance = t.spawn_maintenance(Duration::from_millis(200));
    let stop = Arc::new(tokio::sync::Notify::new());
    let mut by_queue: HashMap<String, Arc<dyn Transport>> = HashMap::new();
    by_queue.insert("planner".into(), t.clone());
    let publisher = tokio::spawn(outbox.clone().publish_loop(
        by_queue,
        HashMap::new(),
        stop.clone(),
    ));

    // The consumer: completes `fail: false` jobs, fails the others.
    let completed: Arc<Mutex<BTreeMap<u64, u32>>> = Arc::default();
    let consuming = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let consumer = {
        let (t, completed, consuming) = (t.clone(), completed.clone(), consuming.clone());
        tokio::spawn(async move {
            while consuming.load(std::sync::atomic::Ordering::Relaxed) {
                let jobs = match t.claim("planner", "w", 16, Some(2_000)).await {
                    Ok(j) => j,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if jobs.is_empty() {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                for c in jobs {
                    if c.payload.as_json().contains("true") {
                        let _ = t.fail(c.job, c.token, "always fails", None).await;
                    } else if t.complete(c.job, c.token).await.is_ok() {
                        *completed.lock().unwrap().entry(c.job.0).or_default() += 1;
                    }
                }
            }
        })
    };

    tokio::time::sleep(Duration::from_millis(2_300)).await;
    server.kill9();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    server.restart();
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    for (s, _) in &names {
        let pause = Input::PauseSchedule {
            name: s.clone(),
            note: None,
        };
        handle.call(pause).await.unwrap().unwrap();
    }

    // Drained: nothing left to publish, nothing left to work.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let d = t.depth("planner").await;
        let idle = outbox.pending_len().unwrap() == 0
            && d.as_ref()
                .is_ok_and(|d| d.available + d.claimed + d.scheduled == 0);
        if idle {
            break;
        }
        assert!(Instant::now() < deadline, "not drained: {d:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    consuming.store(false, std::sync::atomic::Ordering::Relaxed);
    consumer.await.unwrap();
    stop.notify_one();
    publisher.await.unwrap();
    maintenance.abort();

    // What chime delivered, and what Redis holds, by message id.
    let delivered = outbox.ids(100_000).unwrap();
    let client = redis::Client::open(server.url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("chime:job:*")
        .query_async(&mut c)
        .await
        .unwrap();
    let mut jobs_by_fire: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for k in &keys {
        let (fire, st): (String, String) = redis::cmd("HMGET")
            .arg(k)
            .arg("fire")
            .arg("st")
            .query_async(&mut c)
            .await
            .unwrap();
        // The key's number is the transport's own; the port's ids carry
        // Redis's tag (transport::ids).
        let n: u64 = k.rsplit(':').next().unwrap().parse().unwrap();
        let id = chime_native::transport::ids::redis_job(n).0;
        jobs_by_fire.entry(fire).or_default().push((id, st));
    }
    let ok_fires = delivered.iter().filter(|f| f.starts_with("ok-")).count();
    let bad_fires = delivered.iter().filter(|f| f.starts_with("bad-")).count();
    // About six fires per schedule in 6.3 s, less what `skip` dropped while
    // the broker was away: for more than one fire per schedule the
    // settlements must have reached the engine.
    eprintln!(
        "delivered {} fires ({ok_fires} ok, {bad_fires} bad), {} jobs in redis",
        delivered.len(),
        keys.len()
    );
    assert!(
        ok_fires >= 8 * 3 && bad_fires >= 3 * 2,
        "fires: ok {ok_fires}, bad {bad_fires}"
    );
    let in_redis: Vec<&String> = jobs_by_fire.keys().collect();
    assert_eq!(
        in_redis,
        delivered.iter().collect::<Vec<_>>(),
        "published = delivered"
    );
    let done = completed.lock().unwrap().clone();
    for (fire, jobs) in &jobs_by_fire {
        assert_eq!(jobs.len(), 1, "{fire} published once: {jobs:?}");
        let (id, st) = &jobs[0];
        if fire.starts_with("ok-") {
            assert_eq!(st, "completed", "{fire}");
            assert_eq!(done.get(id), Some(&1), "{fire} completed exactly once");
        } else {
            assert_eq!(st, "dead", "{fire}");
            assert!(!done.contains_key(id), "{fire}");
        }
    }
    assert_eq!(done.len(), ok_fires, "no completion of anything else");

    // One dead letter per `bad` fire, with the seed's headers.
    let dead: Vec<(String, HashMap<String, String>)> = redis::cmd("XRANGE")
        .arg("scheduler:planner:dead")
        .arg("-")
        .arg("+")
        .query_async(&mut c)
        .await
        .unwrap();
    let mut runs: Vec<&str> = dead.iter().map(|(_, h)| h["runId"].as_str()).collect();
    runs.sort();
    let mut bad: Vec<&str> = delivered
        .iter()
        .filter(|f| f.starts_with("bad-"))
        .map(String::as_str)
        .collect();
    bad.sort();
    assert_eq!(runs, bad, "each bad fire dead-lettered exactly once");
    for (_, h) in &dead {
        assert!(h["scheduleId"].starts_with("bad-"), "{h:?}");
        assert!(
            h["runId"].starts_with(&format!("{}@", h["scheduleId"])),
            "{h:?}"
        );
        assert_eq!(h["attempts"], "2");
        // The handler's error; or, when its `fail` was lost to the broker's
        // kill, the lease that ran out meanwhile (core's failed attempt).
        assert!(
            ["always fails", "lease_expired"].contains(&h["reason"].as_str()),
            "{h:?}"
        );
        assert_eq!(h["Chime-Message-Id"], h["runId"]);
        let m = chime_native::transport::Message::parse(&h["body"]).unwrap();
        assert_eq!(m.headers["tenant"], "t1");
    }
    handle.stop();
    let _ = driver_task.await;
}
