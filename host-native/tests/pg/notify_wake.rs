//! Long-poll claims on replica B wake on what replica A commits, by
//! LISTEN/NOTIFY and timers, never by polling: an enqueue, a delayed job
//! coming due, a retry after its delay, a redrive, a rescued lease — and
//! again after B's listener connection is killed (it reconnects).
//!
//! The long-poll is the HTTP API's (`http/work.rs`): mark the signal
//! seen, claim, wait for the signal or the deadline, claim again. The
//! bounds asserted are generous (a loaded CI machine); the measured
//! latency is in `BENCHMARKS.md` (`examples/pg_pools.rs`).

use crate::pg_support;
use chime_core::{Backoff, Claimed, EngineConfig, EnqueueRequest, Payload, QueueConfig};
use chime_native::backend::{Failed, QueueBackend};
use chime_native::pg::{PgConfig, PgListener, PgQueues};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Far above the ~1–3 ms a wake-up takes, far below the wait: a claim
/// back within this was woken, not timed out.
const WOKEN_WITHIN: Duration = Duration::from_millis(250);

const WAIT: Duration = Duration::from_secs(5);

/// The HTTP long-poll claim's loop on `b`: one job, or none by `wait`.
async fn long_poll(b: &dyn QueueBackend, queue: &str, wait: Duration) -> Option<Claimed> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut signal = b
        .availability(queue)
        .expect("the Postgres queues with a listener have a signal");
    loop {
        signal.borrow_and_update();
        let mut jobs = b.claim(queue, "w-b", 1, None).await.unwrap();
        if let Some(job) = jobs.pop() {
            return Some(job);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::select! {
            r = signal.changed() => r.expect("the listener lives"),
            () = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// Starts a long-poll on `b` and, once it waits, runs `act` (on replica
/// A); how long after `act` began the claim came back, and what it got.
async fn poll_then<F, Fut, T>(
    b: &Arc<PgQueues>,
    queue: &str,
    act: F,
) -> (Duration, Option<Claimed>, T)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let (b, q) = (b.clone(), queue.to_owned());
    let poll = tokio::spawn(async move {
        let got = long_poll(b.as_ref(), &q, WAIT).await;
        (got, Instant::now())
    });
    // Let it claim nothing and start waiting.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let started = Instant::now();
    let out = act().await;
    let (got, at) = poll.await.unwrap();
    (at.duration_since(started), got, out)
}

fn queue(name: &str) -> QueueConfig {
    let mut q = QueueConfig::new(name);
    q.max_attempts = 2;
    q.backoff = Backoff {
        base_ms: 300,
        cap_ms: 300,
    };
    q
}

fn job(queue: &str) -> EnqueueRequest {
    EnqueueRequest::new(queue, Payload::from_json("{}").unwrap())
}

async fn replica(cfg: &PgConfig, listener: Option<Arc<PgListener>>) -> Arc<PgQueues> {
    let q = PgQueues::connect(cfg, EngineConfig::default())
        .await
        .unwrap();
    Arc::new(match listener {
        Some(l) => q.with_listener(l),
        None => q,
    })
}

#[tokio::test]
async fn long_polls_on_b_wake_on_commits_on_a() {
    let Some(cfg) = pg_support::config("notify_wake") else {
        return;
    };
    let a = replica(&cfg, None).await;
    a.declare(&queue("work")).await.unwrap();
    let listener = PgListener::start(&cfg, tokio::sync::broadcast::channel(16).0).unwrap();
    let b = replica(&cfg, Some(listener.clone())).await;
    listener.listening().await;

    // An enqueue.
    let (took, got, _) = poll_then(&b, "work", || async {
        a.enqueue(&job("work")).await.unwrap();
    })
    .await;
    let claimed = got.expect("the enqueued job");
    eprintln!("enqueue on A -> claim on B: {took:?}");
    assert!(took < WOKEN_WITHIN, "enqueue: {took:?}");

    // A retry after its delay (150-300 ms, core's backoff): woken by the
    // timer the retry's notification armed.
    let (took, got, failed) = poll_then(&b, "work", || async {
        a.fail(claimed.job, claimed.token, "boom", None)
            .await
            .unwrap()
    })
    .await;
    let retried = got.expect("the retried job");
    let Failed::Retry { delay_ms, .. } = failed else {
        panic!("a retry: {failed:?}");
    };
    let delay = Duration::from_millis(delay_ms as u64);
    eprintln!("retry due in {delay:?} -> claim on B: {took:?}");
    assert!(
        delay >= Duration::from_millis(150),
        "core's backoff: {delay:?}"
    );
    assert!(took + Duration::from_millis(50) >= delay, "retry: {took:?}");
    assert!(took < delay + WOKEN_WITHIN, "retry: {took:?}");

    // A redrive: out of attempts, dead, redriven on A.
    a.fail(retried.job, retried.token, "boom", None)
        .await
        .unwrap();
    let (took, got, _) = poll_then(&b, "work", || async {
        assert_eq!(a.redrive("work", None).await.unwrap().count, 1);
    })
    .await;
    let redriven = got.expect("the redriven job");
    eprintln!("redrive on A -> claim on B: {took:?}");
    assert!(took < WOKEN_WITHIN, "redrive: {took:?}");
    a.complete(redriven.job, redriven.token).await.unwrap();

    // A job due in 400 ms: woken on time, by a timer.
    let (took, got, _) = poll_then(&b, "work", || async {
        let mut later = job("work");
        later.delay_ms = Some(400);
        a.enqueue(&later).await.unwrap();
    })
    .await;
    let due = got.expect("the delayed job");
    eprintln!("job due in 400 ms -> claim on B: {took:?}");
    assert!(took >= Duration::from_millis(350), "delayed: {took:?}");
    assert!(
        took < Duration::from_millis(400) + WOKEN_WITHIN,
        "delayed: {took:?}"
    );
    a.complete(due.job, due.token).await.unwrap();

    // A lease that runs out, rescued on A: claimable after the retry
    // delay.
    let held = a.enqueue(&job("work")).await.unwrap().job;
    let lease = a.claim("work", "w-a", 1, Some(100)).await.unwrap();
    assert_eq!(lease[0].job, held);
    let (took, got, _) = poll_then(&b, "work", || async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        a.rescue_expired(10).await.unwrap();
    })
    .await;
    let rescued = got.expect("the rescued job");
    assert_eq!(rescued.job, held);
    eprintln!("rescue on A (+150 ms) -> claim on B: {took:?}");
    assert!(
        took < Duration::from_millis(450) + WOKEN_WITHIN,
        "rescue: {took:?}"
    );
    a.complete(rescued.job, rescued.token).await.unwrap();

    // B's listener connection dies: it reconnects and wakes on the next
    // commit as before.
    let killer = chime_native::pg::connect(&cfg.url).await.unwrap();
    let name = chime_native::pg::notify::application_name(&cfg.schema);
    let killed: i64 = killer
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = left($1, 63)) t",
            &[&name],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(killed, 1, "one listener connection");
    let deadline = Instant::now() + Duration::from_secs(10);
    while listener.is_listening() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    listener.listening().await;
    let (took, got, _) = poll_then(&b, "work", || async {
        a.enqueue(&job("work")).await.unwrap();
    })
    .await;
    assert!(got.is_some(), "a job after the reconnection");
    eprintln!("after a reconnection: enqueue on A -> claim on B: {took:?}");
    assert!(took < WOKEN_WITHIN, "after the reconnection: {took:?}");
    pg_support::drop_schema(&cfg).await;
}
