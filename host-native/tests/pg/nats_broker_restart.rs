//! `kill -9` of nats-server mid-run, started again on the same store
//! (JetStream with `sync_interval: always`): while four workers complete
//! fires, the broker dies and comes back; then it dies again while fires
//! are being published (the publisher retries while it is away, as
//! chime's outbox does). After it all: every fire is in the work stream
//! exactly once by message id (the stream's last sequence is the number
//! of fires: no second copy of any), every job ran and was acknowledged
//! away, none completed twice, none handed to a worker again after its
//! completion was confirmed (only attempts the crash interrupted run
//! again), and no dead letter.

use crate::nats_support::{self, OwnServer};
use chime_core::{EngineConfig, FireId, Headers, Payload, QueueConfig};
use chime_native::backend::{PortError, QueueBackend};
use chime_native::transport::nats::NatsQueues;
use chime_native::transport::{Message, Published, Transport};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FIRST: u64 = 120;
const SECOND: u64 = 60;

fn message(i: u64) -> Message {
    let fire: FireId = format!("scan@{}", 1_700_000_000_000 + i * 60_000)
        .parse()
        .unwrap();
    let payload = Payload::from_json(&format!("{{\"n\":{i}}}")).unwrap();
    Message::of_fire(&fire, "planner", &payload, &Headers::new(), 0, None)
}

/// What the workers saw, by fire id.
#[derive(Default)]
struct Seen {
    /// Attempts handed out.
    runs: BTreeMap<String, u32>,
    /// Completions the broker confirmed.
    confirmed: BTreeMap<String, u32>,
    /// When the first one was.
    confirmed_at: BTreeMap<String, Instant>,
    /// Completions whose outcome the crash hid.
    unknown: BTreeSet<String>,
    /// A fire handed out by a claim that began after its completion was
    /// confirmed (a claim under way while the completion was confirmed
    /// may still have taken a delivery the broker's crash repeated: an
    /// interrupted attempt).
    after_completion: Vec<String>,
}

async fn publish_retrying(t: &NatsQueues, m: &Message) -> Published {
    let start = Instant::now();
    loop {
        match t.publish(m).await {
            Ok(p) => return p,
            Err(PortError::Unavailable(_)) if start.elapsed() < Duration::from_secs(30) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("publish {}: {e}", m.id),
        }
    }
}

async fn worker(
    t: Arc<NatsQueues>,
    seen: Arc<Mutex<Seen>>,
    run: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) {
    while !stop.load(Ordering::Relaxed) {
        if !run.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        let asked = Instant::now();
        let claimed = match t.claim("planner", "w", 8, None).await {
            Ok(c) => c,
            Err(PortError::Unavailable(_)) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            Err(e) => panic!("claim: {e}"),
        };
        if claimed.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for c in claimed {
            let fire = c.fire.as_ref().unwrap().to_string();
            {
                let mut s = seen.lock().unwrap();
                if s.confirmed_at.get(&fire).is_some_and(|at| *at < asked) {
                    s.after_completion.push(fire.clone());
                }
                *s.runs.entry(fire.clone()).or_default() += 1;
            }
            match t.complete(c.job, c.token).await {
                Ok(()) => {
                    let mut s = seen.lock().unwrap();
                    s.confirmed_at
                        .entry(fire.clone())
                        .or_insert_with(Instant::now);
                    *s.confirmed.entry(fire).or_default() += 1;
                }
                Err(PortError::Unavailable(_)) => {
                    seen.lock().unwrap().unknown.insert(fire);
                }
                Err(PortError::Refused(e)) if e.code() == "lease_lost" => {}
                Err(e) => panic!("complete: {e}"),
            }
        }
    }
}

/// Waits until the work stream is empty and nothing is in flight, and
/// every one of `fires` ran.
async fn drained(t: &NatsQueues, seen: &Mutex<Seen>, fires: u64) {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(60), "did not drain");
        let depth = t.depth("planner").await;
        let ran = seen.lock().unwrap().runs.len() as u64;
        if let Ok(d) = depth
            && d.available == 0
            && d.claimed == 0
            && ran == fires
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_killed_and_restarted_mid_run() {
    let Some(bin) = nats_support::binary() else {
        return;
    };
    let mut server = OwnServer::start(bin).await;
    let config = EngineConfig::default();
    let t = Arc::new(nats_support::connect(&server.url(), "restart", &config).await);
    let mut q = QueueConfig::new("planner");
    q.lease_ms = 1_000;
    q.max_attempts = 10;
    t.declare(&q).await.unwrap();

    // Every fire published, and published again (the outbox's retry
    // after its own crash): the second is a duplicate.
    for i in 0..FIRST {
        assert_eq!(t.publish(&message(i)).await.unwrap(), Published::New);
    }
    for i in 0..FIRST {
        assert_eq!(t.publish(&message(i)).await.unwrap(), Published::Duplicate);
    }

    let seen = Arc::new(Mutex::new(Seen::default()));
    let (run, stop) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicBool::new(false)),
    );
    let workers: Vec<_> = (0..4)
        .map(|_| tokio::spawn(worker(t.clone(), seen.clone(), run.clone(), stop.clone())))
        .collect();

    // Mid-run: kill -9 and restart on the same store.
    let start = Instant::now();
    while seen.lock().unwrap().confirmed.len() < (FIRST / 3) as usize {
        assert!(start.elapsed() < Duration::from_secs(30), "no progress");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    server.kill();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.restart().await;
    drained(&t, &seen, FIRST).await;

    // Killed while publishing: the workers pause (so nothing consumes a
    // message whose PubAck the crash lost before the publisher retries).
    run.store(false, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let publisher = {
        let t = t.clone();
        tokio::spawn(async move {
            let mut new = 0;
            for i in FIRST..FIRST + SECOND {
                if publish_retrying(&t, &message(i)).await == Published::New {
                    new += 1;
                }
            }
            new
        })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    server.kill();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.restart().await;
    let new = publisher.await.unwrap();
    assert!(new <= SECOND);
    run.store(true, Ordering::Relaxed);
    drained(&t, &seen, FIRST + SECOND).await;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }

    let names = t.names("planner");
    let mut work = t.jetstream().get_stream(&names.stream).await.unwrap();
    let state = work.info().await.unwrap().state.clone();
    assert_eq!(
        state.last_sequence,
        FIRST + SECOND,
        "every fire stored exactly once by message id"
    );
    assert_eq!(state.messages, 0, "every job acknowledged away");
    let mut dead = t.jetstream().get_stream(&names.dead_stream).await.unwrap();
    assert_eq!(
        dead.info().await.unwrap().state.messages,
        0,
        "no dead letter"
    );

    let s = seen.lock().unwrap();
    assert!(
        s.after_completion.is_empty(),
        "ran after completion: {:?}",
        s.after_completion
    );
    assert_eq!(s.runs.len() as u64, FIRST + SECOND);
    for i in 0..FIRST + SECOND {
        let id = message(i).id;
        let confirmed = s.confirmed.get(&id).copied().unwrap_or(0);
        assert!(confirmed <= 1, "{id} completed {confirmed} times");
        assert!(
            confirmed == 1 || s.unknown.contains(&id),
            "{id} neither completed nor interrupted"
        );
    }
    eprintln!(
        "broker restart: {} fires, {} attempts, {} completions hidden by the crash",
        FIRST + SECOND,
        s.runs.values().sum::<u32>(),
        s.unknown.len()
    );
}
