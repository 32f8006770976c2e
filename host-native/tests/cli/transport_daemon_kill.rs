//! What `transport_nats_kill` and `transport_redis_kill` share: `kill -9`
//! of a `chime run` daemon mid-run whose queue is in a real broker of the
//! test's own. Three `@every 1s` schedules (`overlap = "allow"`) feed a
//! two-slot `[[worker]]` command pool that logs each attempt's start and
//! end to a file and sleeps 0.6 s, so jobs are running and fires are being
//! published when the daemon is killed; it is restarted on the same data
//! directory and config, runs on, and stops gracefully. Then, from the
//! broker itself and the file: every fire chime delivered (its outbox) is
//! in the work stream exactly once by message id; each was worked to the
//! end or is still in the stream (nothing lost); none started twice except
//! the attempts the crash interrupted (at most one per worker slot, first
//! before the kill, again after); no dead letter.

use crate::transport_daemon::{Broker, eventually, stop_gracefully};
use chime_native::daemon::transports::OUTBOX_FILE;
use chime_native::transport::outbox::{Outbox, OutboxConfig};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Worker slots: at most this many attempts can be cut by the crash.
const SLOTS: usize = 2;

/// The line the test appends to the worker's file right after the kill.
const MARK: &str = "kill";

fn spawn(config: &Path, data: &Path, log: &Path) -> Child {
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--http", "off", "--config"])
        .arg(config)
        .arg("--data")
        .arg(data)
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

/// The worker's file: `start <fire> <attempt>`, `done <fire>`, the mark.
#[derive(Debug, Default)]
struct Log {
    /// Per fire, the attempts started before and after the mark.
    starts: BTreeMap<String, (Vec<u32>, Vec<u32>)>,
    /// Per fire, the ends before and after the mark.
    done: BTreeMap<String, (u32, u32)>,
    /// Attempts started and not (yet) ended, by fire.
    running: BTreeSet<String>,
}

fn read_log(out: &Path) -> Log {
    let mut log = Log::default();
    let mut after = false;
    for line in std::fs::read_to_string(out).unwrap_or_default().lines() {
        let w: Vec<&str> = line.split(' ').collect();
        match w.as_slice() {
            [m] if *m == MARK => after = true,
            ["start", fire, attempt] => {
                let e = log.starts.entry((*fire).to_owned()).or_default();
                let a = attempt.parse().unwrap_or_else(|_| panic!("{line}"));
                if after { &mut e.1 } else { &mut e.0 }.push(a);
                log.running.insert((*fire).to_owned());
            }
            ["done", fire] => {
                let e = log.done.entry((*fire).to_owned()).or_default();
                if after {
                    e.1 += 1
                } else {
                    e.0 += 1
                }
                log.running.remove(*fire);
            }
            _ => panic!("a torn or unknown line in the worker's file: {line:?}"),
        }
    }
    log
}

/// What the broker holds: the message ids still in the work stream (with
/// how often each is there), how many messages the work stream was ever
/// given (`None` where the broker does not say), and dead letters.
struct Held {
    in_stream: BTreeMap<String, u32>,
    ever: Option<u64>,
    dead: u64,
    /// Per fire, the jobs the broker made of it (Redis) — `None` for NATS,
    /// where `ever` counts the copies.
    jobs: Option<BTreeMap<String, u32>>,
    /// Fires the broker holds unfinished: in the stream, or (Redis) out of
    /// it until their retry is due.
    unfinished: BTreeSet<String>,
}

async fn held(broker: &Broker, port: u16) -> Held {
    match broker {
        Broker::Nats(_) => {
            let client = async_nats::connect(format!("127.0.0.1:{port}"))
                .await
                .unwrap();
            let js = async_nats::jetstream::new(client);
            let mut work = js.get_stream("SCHEDULER_PLANNER").await.unwrap();
            let state = work.info().await.unwrap().state.clone();
            let mut in_stream = BTreeMap::new();
            if state.messages > 0 {
                for seq in state.first_sequence..=state.last_sequence {
                    if let Ok(m) = work.get_raw_message(seq).await {
                        let id = m
                            .headers
                            .get("Nats-Msg-Id")
                            .map(|v| v.as_str().to_owned())
                            .unwrap_or_else(|| panic!("message {seq} without Nats-Msg-Id"));
                        *in_stream.entry(id).or_default() += 1;
                    }
                }
            }
            let mut dead = js.get_stream("SCHEDULER_PLANNER_DEAD").await.unwrap();
            Held {
                unfinished: in_stream.keys().cloned().collect(),
                in_stream,
                ever: Some(state.last_sequence),
                dead: dead.info().await.unwrap().state.messages,
                jobs: None,
            }
        }
        Broker::Redis => {
            let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
            let mut c = client.get_multiplexed_async_connection().await.unwrap();
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg("chime:job:*")
                .query_async(&mut c)
                .await
                .unwrap();
            let mut jobs: BTreeMap<String, u32> = BTreeMap::new();
            let mut fire_of: BTreeMap<String, String> = BTreeMap::new();
            let mut unfinished = BTreeSet::new();
            for k in &keys {
                let (fire, st): (String, String) = redis::cmd("HMGET")
                    .arg(k)
                    .arg("fire")
                    .arg("st")
                    .query_async(&mut c)
                    .await
                    .unwrap();
                assert_ne!(st, "dead", "{fire}");
                if st != "completed" {
                    unfinished.insert(fire.clone());
                }
                *jobs.entry(fire.clone()).or_default() += 1;
                fire_of.insert(k.rsplit(':').next().unwrap().to_owned(), fire);
            }
            let entries: Vec<(String, BTreeMap<String, String>)> = redis::cmd("XRANGE")
                .arg("scheduler:planner")
                .arg("-")
                .arg("+")
                .query_async(&mut c)
                .await
                .unwrap();
            let mut in_stream = BTreeMap::new();
            for (_, fields) in &entries {
                let fire = &fire_of[&fields["job"]];
                assert_eq!(
                    fields.get("Chime-Message-Id"),
                    Some(fire),
                    "the entry carries its message id"
                );
                *in_stream.entry(fire.clone()).or_default() += 1;
            }
            let dead: u64 = redis::cmd("XLEN")
                .arg("scheduler:planner:dead")
                .query_async(&mut c)
                .await
                .unwrap();
            Held {
                in_stream,
                ever: None,
                dead,
                jobs: Some(jobs),
                unfinished,
            }
        }
    }
}

/// The whole scenario on `broker`.
pub async fn a_daemon_killed_mid_run_loses_and_repeats_nothing(broker: Broker) {
    let dir = tempfile::tempdir().unwrap();
    let rdir = dir.path().join(broker.name());
    std::fs::create_dir_all(&rdir).unwrap();
    let (mut server, port) = broker.start_anywhere(&rdir);
    let out = dir.path().join("out.txt");
    let schedules: String = ["a", "b", "c"]
        .iter()
        .map(|s| {
            format!(
                "[[schedule]]\nname = \"{s}\"\nspec = \"@every 1s\"\noverlap = \"allow\"\n\
                 target = {{ queue = \"planner\", payload = {{ s = \"{s}\" }} }}\n\n"
            )
        })
        .collect();
    let config = format!(
        r#"
[[queue]]
name = "planner"
transport = "{name}"
maxAttempts = 3
leaseMs = 1500
backoff = {{ baseMs = 100, capMs = 200 }}

{schedules}
[[worker]]
queue = "planner"
concurrency = {SLOTS}
command = ["sh", "-c", "echo \"start $CHIME_FIRE_ID $CHIME_ATTEMPT\" >> {out}; sleep 0.6; echo \"done $CHIME_FIRE_ID\" >> {out}"]

[transport.{name}]
url = "{name}://127.0.0.1:{port}"
"#,
        out = out.display(),
        name = broker.name()
    );
    let path = dir.path().join("chime.toml");
    std::fs::write(&path, config).unwrap();
    let data = dir.path().join("data");
    let log = dir.path().join("daemon.log");
    let mut daemon = spawn(&path, &data, &log);

    // Mid-run: a few attempts started, one running now.
    eventually(Duration::from_secs(10), "jobs running", || {
        let l = read_log(&out);
        async move {
            let started: usize = l.starts.values().map(|(b, _)| b.len()).sum();
            if started >= 4 && !l.running.is_empty() {
                Ok(())
            } else {
                Err(format!("{l:?}"))
            }
        }
    })
    .await;
    // Just after a whole second, when the three schedules fire (`@every`
    // counts from the epoch): their fires are being committed and
    // published as the daemon dies.
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_millis();
    tokio::time::sleep(Duration::from_millis(u64::from(1_002 - ms))).await;
    daemon.kill().unwrap(); // SIGKILL
    daemon.wait().unwrap();
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&out).unwrap();
        writeln!(f, "{MARK}").unwrap();
    }
    let before = read_log(&out);
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The same data and config again; it runs on, then stops gracefully.
    let restarted = Instant::now();
    let mut daemon = spawn(&path, &data, &log);
    eventually(Duration::from_secs(15), "work after the restart", || {
        let l = read_log(&out);
        async move {
            let ended: u32 = l.done.values().map(|(_, a)| a).sum();
            if ended >= 6 && restarted.elapsed() > Duration::from_secs(4) {
                Ok(())
            } else {
                Err(format!("{ended} ended after the restart"))
            }
        }
    })
    .await;
    let status = stop_gracefully(&mut daemon);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "{status}: {logged}");

    // What chime delivered (its outbox), the file, the broker.
    let outbox = Outbox::open(&data.join(OUTBOX_FILE), OutboxConfig::default()).unwrap();
    assert_eq!(outbox.pending_len().unwrap(), 0, "all published");
    let delivered: BTreeSet<String> = outbox.ids(100_000).unwrap().into_iter().collect();
    drop(outbox);
    let l = read_log(&out);
    let h = held(&broker, port).await;
    let _ = server.kill();
    let _ = server.wait();
    eprintln!(
        "{} fires delivered, {} worked, {} still in the stream, {} in flight at the kill",
        delivered.len(),
        l.done.len(),
        h.in_stream.len(),
        before.running.len()
    );
    assert!(delivered.len() >= 10, "{delivered:?}");

    // Exactly once in the work stream, by message id.
    for (id, n) in &h.in_stream {
        assert_eq!(*n, 1, "{id} twice in the work stream");
        assert!(delivered.contains(id), "{id} in the stream, not delivered");
    }
    if let Some(ever) = h.ever {
        assert_eq!(ever, delivered.len() as u64, "one message per fire, ever");
    }
    if let Some(jobs) = &h.jobs {
        assert_eq!(
            jobs.keys().collect::<Vec<_>>(),
            delivered.iter().collect::<Vec<_>>(),
            "a job per delivered fire"
        );
        for (fire, n) in jobs {
            assert_eq!(*n, 1, "{fire} published as {n} jobs");
        }
    }
    assert_eq!(h.dead, 0, "no dead letter");

    // Nothing lost: each fire worked to the end, or still in the stream.
    for fire in &delivered {
        let ended = l.done.get(fire).is_some_and(|(b, a)| b + a > 0);
        assert!(
            ended || h.unfinished.contains(fire),
            "{fire} neither worked nor held by the broker: {l:?}"
        );
    }
    for fire in l.starts.keys() {
        assert!(delivered.contains(fire), "{fire} worked, not delivered");
    }

    // Nothing repeated but what the crash interrupted.
    let mut interrupted = Vec::new();
    for (fire, (b, a)) in &l.starts {
        assert!(b.len() <= 1, "{fire} started twice before the kill: {b:?}");
        assert!(a.len() <= 1, "{fire} started twice after the kill: {a:?}");
        if !b.is_empty() && !a.is_empty() {
            assert!(a[0] > b[0], "{fire}: a retry is a later attempt");
            interrupted.push(fire.clone());
        }
        let (db, da) = l.done.get(fire).copied().unwrap_or_default();
        assert!(da <= 1 && db <= 1, "{fire} ended {db} + {da} times");
        if h.unfinished.contains(fire) {
            assert_eq!(da, 0, "{fire} ended after the restart, yet unfinished");
        }
    }
    assert!(
        interrupted.len() <= SLOTS,
        "more repeats than attempts the crash could cut: {interrupted:?}"
    );
    for fire in &interrupted {
        assert!(
            before.running.contains(fire) || before.done.get(fire).is_some_and(|d| d.0 == 1),
            "{fire} repeated, but was not in flight at the kill"
        );
    }
}
