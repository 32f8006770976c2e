//! PgQueues on a real PostgreSQL (see `pg_support`): claim order and
//! SKIP LOCKED, fencing by token, retries at exactly core's backoff, dead
//! letters and drops, lease-expiry rescue, idempotency keys, the engine's
//! error codes for bad input, and debounced NOTIFY on enqueue.

use crate::pg_support;

use chime_core::{
    AfterFailure, Backoff, EngineConfig, EnqueueRequest, JobId, JobState, LeaseToken, Payload,
    QueueConfig, after_failure,
};
use chime_native::backend::Failed;
use chime_native::pg::{PgConfig, PgQueues, QueueError};
use std::collections::BTreeSet;
use std::time::Duration;

async fn queues(cfg: &PgConfig) -> PgQueues {
    let engine = EngineConfig {
        seed: 77,
        ..EngineConfig::default()
    };
    PgQueues::connect(cfg, engine).await.unwrap()
}

fn queue(name: &str) -> QueueConfig {
    let mut q = QueueConfig::new(name);
    q.backoff = Backoff {
        base_ms: 1_000,
        cap_ms: 60_000,
    };
    q.max_attempts = 3;
    q
}

fn job(queue: &str, n: u32) -> EnqueueRequest {
    EnqueueRequest::new(
        queue,
        Payload::from_json(&format!("{{\"n\": {n}}}")).unwrap(),
    )
}

fn code(e: QueueError) -> &'static str {
    match e {
        QueueError::Refused(e) => e.code(),
        QueueError::Db(e) => panic!("database error: {e}"),
    }
}

#[tokio::test]
async fn claim_order_priority_then_time_then_id_and_payload_verbatim() {
    let Some(cfg) = pg_support::config("q_order") else {
        return;
    };
    let q = queues(&cfg).await;
    q.declare(&queue("work")).await.unwrap();
    let low = q.enqueue(&job("work", 1)).await.unwrap().job;
    let mut high = job("work", 2);
    high.priority = 5;
    high.headers.insert("h".into(), "é".into());
    let high = q.enqueue(&high).await.unwrap().job;
    let low2 = q.enqueue(&job("work", 3)).await.unwrap().job;
    let mut later = job("work", 4);
    later.delay_ms = Some(60_000);
    q.enqueue(&later).await.unwrap();
    // Verbatim payload text, not re-formatted.
    let spaced = EnqueueRequest::new("work", Payload::from_json("{ \"a\" : 1.50 }").unwrap());
    let spaced = q.enqueue(&spaced).await.unwrap().job;

    let got = q.claim("work", "w1", 10, None).await.unwrap();
    let ids: Vec<JobId> = got.iter().map(|c| c.job).collect();
    assert_eq!(
        ids,
        vec![high, low, low2, spaced],
        "delayed job not runnable yet"
    );
    assert_eq!(got[0].headers["h"], "é");
    assert_eq!(got[3].payload.as_json(), "{ \"a\" : 1.50 }");
    assert!(got.iter().all(|c| c.attempt == 1));
    let tokens: BTreeSet<LeaseToken> = got.iter().map(|c| c.token).collect();
    assert_eq!(tokens.len(), 4, "a fresh token per claim");
    // Lease: the queue's 60 s default, counted on the database clock.
    let now = q.db_now().await.unwrap().as_millis();
    let deadline = got[0].deadline.as_millis();
    assert!(
        (now + 59_000..=now + 60_000).contains(&deadline),
        "{deadline} vs {now}"
    );
    assert!(q.claim("work", "w1", 10, None).await.unwrap().is_empty());
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn tokens_fence_heartbeat_complete_and_fail() {
    let Some(cfg) = pg_support::config("q_fence") else {
        return;
    };
    let q = queues(&cfg).await;
    q.declare(&queue("work")).await.unwrap();
    let id = q.enqueue(&job("work", 1)).await.unwrap().job;
    let c = q.claim("work", "w1", 1, Some(300)).await.unwrap().remove(0);
    let stale = LeaseToken(c.token.0 + 1_000);
    assert_eq!(code(q.complete(id, stale).await.unwrap_err()), "lease_lost");
    assert_eq!(
        code(q.heartbeat(id, stale, None).await.unwrap_err()),
        "lease_lost"
    );
    assert_eq!(
        code(q.fail(id, stale, "x", None).await.unwrap_err()),
        "lease_lost"
    );
    assert_eq!(
        code(q.complete(JobId(999_999), c.token).await.unwrap_err()),
        "unknown_job"
    );
    // A heartbeat extends; then the lease runs out and the rescue retries it.
    let extended = q.heartbeat(id, c.token, Some(400)).await.unwrap();
    assert!(extended > c.deadline);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        code(q.complete(id, c.token).await.unwrap_err()),
        "lease_lost"
    );
    assert_eq!(q.rescue_expired(100).await.unwrap(), 1);
    assert_eq!(q.rescue_expired(100).await.unwrap(), 0, "rescued once");
    let row = q.job(id).await.unwrap().unwrap();
    assert_eq!(row.state, JobState::Scheduled);
    assert_eq!(row.last_error.as_deref(), Some("lease_expired"));
    // The rescued worker's token stays dead after the job is claimed again.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let again = q.claim("work", "w2", 1, None).await.unwrap().remove(0);
    assert_eq!(again.job, id);
    assert_eq!(again.attempt, 2);
    assert_eq!(
        code(q.complete(id, c.token).await.unwrap_err()),
        "lease_lost"
    );
    let batch = q
        .complete_many(&[
            (id, c.token),
            (JobId(999_999), again.token),
            (id, again.token),
        ])
        .await
        .unwrap();
    let codes: Vec<&str> = batch
        .into_iter()
        .map(|r| r.err().map_or("ok", code))
        .collect();
    assert_eq!(codes, ["lease_lost", "unknown_job", "ok"]);
    assert_eq!(q.job(id).await.unwrap().unwrap().state, JobState::Completed);
    assert_eq!(
        code(q.complete(id, again.token).await.unwrap_err()),
        "lease_lost"
    );
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn retries_follow_core_backoff_then_dead_or_dropped() {
    let Some(cfg) = pg_support::config("q_retry") else {
        return;
    };
    let q = queues(&cfg).await;
    let mut fast = queue("fast");
    fast.backoff = Backoff {
        base_ms: 40,
        cap_ms: 100,
    };
    q.declare(&fast).await.unwrap();
    let mut drop_q = fast.clone();
    drop_q.name = "drop".into();
    drop_q.dead_letter = false;
    drop_q.max_attempts = 1;
    q.declare(&drop_q).await.unwrap();

    let id = q.enqueue(&job("fast", 1)).await.unwrap().job;
    for attempt in 1..=3u32 {
        let c = loop {
            if let Some(c) = q.claim("fast", "w", 1, None).await.unwrap().pop() {
                break c;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!((c.job, c.attempt), (id, attempt));
        let failed = q.fail(id, c.token, "boom", None).await.unwrap();
        match after_failure(&fast, None, 77, id, attempt) {
            AfterFailure::Retry { delay_ms } => {
                // Exactly core's delay for (seed 77, job, attempt).
                let Failed::Retry { delay_ms: got, .. } = failed else {
                    panic!("attempt {attempt}: {failed:?}");
                };
                assert_eq!(got, delay_ms, "attempt {attempt}");
            }
            AfterFailure::Exhausted { dead_letter } => {
                assert!(dead_letter);
                assert_eq!(failed, Failed::Dead, "attempt {attempt}");
            }
        }
    }
    let row = q.job(id).await.unwrap().unwrap();
    assert_eq!((row.state, row.attempt), (JobState::Dead, 3));
    assert_eq!(row.last_error.as_deref(), Some("boom"));

    // retryAt overrides the backoff; one in the past means now.
    let id2 = q.enqueue(&job("fast", 2)).await.unwrap().job;
    let c = q.claim("fast", "w", 1, None).await.unwrap().remove(0);
    let past = chime_core::Timestamp::from_millis(1_000).unwrap();
    let Failed::Retry { delay_ms, .. } = q.fail(id2, c.token, "later", Some(past)).await.unwrap()
    else {
        panic!("retry expected");
    };
    assert_eq!(delay_ms, 0);
    assert_eq!(q.claim("fast", "w", 1, None).await.unwrap()[0].job, id2);

    // Without dead letters the last attempt drops the job.
    let id3 = q.enqueue(&job("drop", 3)).await.unwrap().job;
    let c = q.claim("drop", "w", 1, None).await.unwrap().remove(0);
    assert_eq!(
        q.fail(id3, c.token, "x", None).await.unwrap(),
        Failed::Dropped
    );
    assert_eq!(q.job(id3).await.unwrap().unwrap().state, JobState::Dropped);
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn keys_dedupe_while_live_and_within_the_window() {
    let Some(cfg) = pg_support::config("q_keys") else {
        return;
    };
    let q = queues(&cfg).await;
    let mut k = queue("k");
    k.dedup_window_ms = 2_000;
    q.declare(&k).await.unwrap();
    let mut req = job("k", 1);
    req.key = Some("once".into());
    let first = q.enqueue(&req).await.unwrap();
    assert!(!first.deduplicated);
    let again = q.enqueue(&req).await.unwrap();
    assert_eq!((again.job, again.deduplicated), (first.job, true));
    let c = q.claim("k", "w", 5, None).await.unwrap();
    assert_eq!(c.len(), 1, "one job for one key");
    q.complete(first.job, c[0].token).await.unwrap();
    // Finished: still remembered for the window, then a new job.
    assert_eq!(q.enqueue(&req).await.unwrap().job, first.job);
    tokio::time::sleep(Duration::from_millis(2_300)).await;
    let fresh = q.enqueue(&req).await.unwrap();
    assert!(!fresh.deduplicated);
    assert_ne!(fresh.job, first.job);
    // Concurrent enqueues of one new key on two connections make one job.
    let q2 = queues(&cfg).await;
    let mut race = job("k", 2);
    race.key = Some("race".into());
    let (a, b) = tokio::join!(q.enqueue(&race), q2.enqueue(&race));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.job, b.job);
    assert!(a.deduplicated != b.deduplicated);
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn bad_input_gets_the_engines_error_and_changes_nothing() {
    let Some(cfg) = pg_support::config("q_bad") else {
        return;
    };
    let q = queues(&cfg).await;
    let mut bad = queue("bad");
    bad.lease_ms = 0;
    assert_eq!(code(q.declare(&bad).await.unwrap_err()), "invalid_input");
    q.declare(&queue("work")).await.unwrap();
    let big = "x".repeat(EngineConfig::default().limits.payload_bytes + 1);
    let req = EnqueueRequest::new("work", Payload::from_json(&format!("\"{big}\"")).unwrap());
    assert_eq!(
        code(q.enqueue(&req).await.unwrap_err()),
        "payload_too_large"
    );
    let mut both = job("work", 1);
    both.delay_ms = Some(5);
    both.run_at = Some(chime_core::Timestamp::from_millis(5).unwrap());
    assert_eq!(code(q.enqueue(&both).await.unwrap_err()), "invalid_input");
    assert_eq!(
        code(q.claim("work", "w", 0, None).await.unwrap_err()),
        "invalid_input"
    );
    assert!(
        q.claim("work", "w", 10, None).await.unwrap().is_empty(),
        "nothing was added"
    );
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn concurrent_claimers_take_every_job_exactly_once() {
    let Some(cfg) = pg_support::config("q_skip") else {
        return;
    };
    let q = queues(&cfg).await;
    q.declare(&queue("work")).await.unwrap();
    let mut all = BTreeSet::new();
    for n in 0..400 {
        all.insert(q.enqueue(&job("work", n)).await.unwrap().job);
    }
    let mut tasks = Vec::new();
    for w in 0..4 {
        let cfg = cfg.clone();
        tasks.push(tokio::spawn(async move {
            let q = queues(&cfg).await;
            let mut mine = Vec::new();
            loop {
                let got = q.claim("work", &format!("w{w}"), 7, None).await.unwrap();
                if got.is_empty() {
                    return mine;
                }
                // Half the workers complete one by one, half in batches.
                if w % 2 == 0 {
                    for c in got {
                        q.complete(c.job, c.token).await.unwrap();
                        mine.push(c.job);
                    }
                } else {
                    let done: Vec<_> = got.iter().map(|c| (c.job, c.token)).collect();
                    for r in q.complete_many(&done).await.unwrap() {
                        r.unwrap();
                    }
                    mine.extend(got.iter().map(|c| c.job));
                }
            }
        }));
    }
    let mut seen = Vec::new();
    for t in tasks {
        seen.extend(t.await.unwrap());
    }
    let unique: BTreeSet<JobId> = seen.iter().copied().collect();
    assert_eq!(seen.len(), 400, "no job claimed twice");
    assert_eq!(unique, all, "every job claimed");
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn enqueue_notifies_listeners() {
    let Some(cfg) = pg_support::config("q_notify") else {
        return;
    };
    let q = queues(&cfg).await;
    q.declare(&queue("work")).await.unwrap();
    let (_client, mut rx) = pg_support::listen(&cfg.url, q.channel()).await;
    q.enqueue(&job("work", 1)).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a notification within 5 s")
        .unwrap();
    assert_eq!((got.0, got.1), (q.channel().to_owned(), "work".to_owned()));
    // A burst is debounced: with one wake-up per second at most, 200
    // enqueues send a handful, and the last of them arrives after the last
    // enqueue returned (the jobs at the burst's end are announced too).
    let q = queues(&cfg).await.with_wake_every(Duration::from_secs(1));
    while rx.try_recv().is_ok() {}
    let start = std::time::Instant::now();
    for n in 0..200 {
        q.enqueue(&job("work", n)).await.unwrap();
    }
    let (secs, last_enqueue) = (start.elapsed().as_secs(), std::time::Instant::now());
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let mut burst = 0;
    let mut last_wake = None;
    while let Ok((_, _, at)) = rx.try_recv() {
        burst += 1;
        last_wake = Some(at);
    }
    assert!(
        last_wake.is_some_and(|at| at > last_enqueue),
        "no wake-up after the burst"
    );
    assert!(
        (1..=secs + 2).contains(&burst),
        "{burst} notifications for 200 enqueues in {secs} s"
    );
    let got = tokio::time::timeout(Duration::from_millis(1_500), rx.recv()).await;
    assert!(got.is_err(), "no wake-up without an enqueue: {got:?}");
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn a_failure_uses_the_queue_config_in_the_table_not_a_cached_one() {
    let Some(cfg) = pg_support::config("q_redeclare") else {
        return;
    };
    let a = queues(&cfg).await;
    let b = queues(&cfg).await;
    a.declare(&queue("work")).await.unwrap(); // 3 attempts, cached by `a`
    let id = a.enqueue(&job("work", 1)).await.unwrap().job;
    let c = a.claim("work", "w", 1, None).await.unwrap().remove(0);
    // Another replica makes it a one-attempt queue without dead letters.
    let mut strict = queue("work");
    strict.max_attempts = 1;
    strict.dead_letter = false;
    b.declare(&strict).await.unwrap();
    assert_eq!(
        a.fail(id, c.token, "x", None).await.unwrap(),
        Failed::Dropped
    );
    pg_support::drop_schema(&cfg).await;
}

#[tokio::test]
async fn enqueue_many_in_request_order_all_or_nothing() {
    let Some(cfg) = pg_support::config("q_many") else {
        return;
    };
    let q = queues(&cfg).await;
    q.declare(&queue("work")).await.unwrap();
    let mut reqs: Vec<EnqueueRequest> = (0..50).map(|n| job("work", n)).collect();
    reqs[7].key = Some("k".into());
    reqs[9].priority = 3;
    reqs[11].delay_ms = Some(60_000);
    let done = q.enqueue_many(&reqs).await.unwrap();
    assert_eq!(done.len(), 50);
    // Each result names the job made from that request.
    let got = q.claim("work", "w", 100, None).await.unwrap();
    assert_eq!(got.len(), 49, "the delayed one waits");
    for c in &got {
        let i = done.iter().position(|d| d.job == c.job).unwrap();
        assert_eq!(c.payload.as_json(), format!("{{\"n\": {i}}}"));
    }
    assert_eq!(got[0].job, done[9].job, "priority first");
    let again = q.enqueue_many(&reqs[7..8]).await.unwrap();
    assert_eq!((again[0].job, again[0].deduplicated), (done[7].job, true));
    // One bad request refuses the batch.
    let mut bad: Vec<EnqueueRequest> = (0..3).map(|n| job("work", n)).collect();
    bad[2].max_attempts = Some(0);
    assert_eq!(
        code(q.enqueue_many(&bad).await.unwrap_err()),
        "invalid_input"
    );
    assert!(q.claim("work", "w", 100, None).await.unwrap().is_empty());
    pg_support::drop_schema(&cfg).await;
}
