//! A consumer that is not chime completes jobs in chime's group, on a
//! real Redis: it reads entries (fires published as the outbox publisher
//! does, and jobs enqueued through the queue port) and completes them the
//! documented way, `XACK` + `XDEL`. chime's maintenance finds the waiting
//! jobs whose entry is gone, at most `VANISHED_COUNT` per queue and pass,
//! and ends each once as completed: the job reads `completed` through the
//! queue port, it is in the queue's retention (`<stream>:done`), its
//! idempotency key is kept for the dedup window, its fire is settled
//! `Succeeded` once, and it is counted as acked; another pass changes
//! nothing. A job chime's worker holds is not ended by the pass even when
//! its entry is deleted under it (the worker's complete ends it, once);
//! an entry the foreign consumer read but did not delete is left alone
//! while it heartbeats, and after its lease comes to chime's workers as
//! attempt 2.

use crate::redis_support::{self, Foreign, Recorder};
use chime_core::{
    EngineConfig, EnqueueRequest, FireId, FireOutcome, Headers, JobState, Payload, QueueConfig,
};
use chime_native::backend::QueueBackend;
use chime_native::driver::{TransportCounters, TransportEvent};
// The stream's `job` fields and key names hold the transport's own
// numbers; the port's ids carry Redis's tag.
use chime_native::transport::ids::{redis_job, redis_local};
use chime_native::transport::redis::{NAME, RedisTransport, VANISHED_COUNT};
use chime_native::transport::{Message, Transport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many jobs the foreign consumer completes: more than one pass
/// looks at, so the scan's cursor has to carry on.
const FIRES: u32 = 10;
const ENQUEUED: u32 = VANISHED_COUNT + 10;

async fn states(t: &RedisTransport, jobs: &[u64]) -> HashMap<JobState, usize> {
    let mut out = HashMap::new();
    for j in jobs {
        let info = t.job(redis_job(*j)).await.unwrap().expect("job kept");
        *out.entry(info.state).or_default() += 1;
    }
    out
}

#[tokio::test]
async fn foreign_consumer_completes_with_xack_xdel() {
    let Some(options) = redis_support::fresh_options().await else {
        return;
    };
    let url = options.url.clone();
    let recorder = Arc::new(Recorder::default());
    let counters = TransportCounters::default();
    let t = Arc::new(
        RedisTransport::new(
            options,
            EngineConfig::default(),
            Vec::new(),
            recorder.clone(),
        )
        .unwrap()
        .with_counters(counters.clone()),
    );
    let acked = || counters.get(TransportEvent::Acked, NAME, "runner");
    let mut q = QueueConfig::new("runner");
    q.lease_ms = 1_000;
    q.max_attempts = 2;
    q.backoff.base_ms = 20;
    q.backoff.cap_ms = 40;
    q.dedup_window_ms = 60_000;
    t.declare(&q).await.unwrap();
    let names = t.names("runner");
    let fire = |name: &str| -> FireId { format!("{name}@1700000060000").parse().unwrap() };
    let publish = |f: FireId| {
        let t = t.clone();
        async move {
            let m = Message::of_fire(&f, "runner", &Payload::null(), &Headers::new(), 0, None);
            t.publish(&m).await.unwrap();
        }
    };

    // Held by chime's worker before the foreign consumer reads.
    publish(fire("held-by-chime")).await;
    let mine = t.claim("runner", "w1", 10, Some(60_000)).await.unwrap();
    assert_eq!(mine.len(), 1);
    let mine = mine.into_iter().next().unwrap();

    for i in 0..FIRES {
        publish(fire(&format!("f{i}"))).await;
    }
    let mut keyed = None;
    for i in 0..ENQUEUED {
        let mut r = EnqueueRequest::new("runner", Payload::null());
        if i == 0 {
            r.key = Some("k-1".into());
        }
        let e = t.enqueue(&r).await.unwrap();
        if i == 0 {
            keyed = Some(e.job);
        }
    }
    let keyed = keyed.unwrap();
    // Read by the foreign consumer and never deleted: the last job.
    publish(fire("kept-pending")).await;

    let mut foreign = Foreign::connect(&url, names.clone(), "elsewhere").await;
    let read = foreign.read(1_000).await;
    assert_eq!(read.len() as u32, FIRES + ENQUEUED + 1, "everything new");
    let (pending_entry, pending_fields) = read.last().unwrap().clone();
    assert_eq!(pending_fields["runId"], "kept-pending@1700000060000");
    let pending_job: u64 = pending_fields["job"].parse().unwrap();
    let read_at = Instant::now();
    let mut done_jobs = Vec::new();
    let mut done_fires = Vec::new();
    for (entry, fields) in &read[..read.len() - 1] {
        foreign.complete(entry).await;
        done_jobs.push(fields["job"].parse::<u64>().unwrap());
        if let Some(f) = fields.get("runId") {
            done_fires.push(f.parse::<FireId>().unwrap());
        }
    }
    assert_eq!(done_fires.len() as u32, FIRES);
    // A delete under chime's worker (not the documented complete: the
    // entry is in chime's pending list): the worker's hold stands.
    let mine_entry: String = redis::cmd("HGET")
        .arg(format!("chime:job:{}", redis_local(mine.job).unwrap()))
        .arg("ent")
        .query_async(&mut foreign.conn)
        .await
        .unwrap();
    let deleted: u64 = redis::cmd("XDEL")
        .arg(&names.stream)
        .arg(&mine_entry)
        .query_async(&mut foreign.conn)
        .await
        .unwrap();
    assert_eq!(deleted, 1);

    // Not told yet: the records wait, the key has no end.
    let before = states(&t, &done_jobs).await;
    assert_eq!(before.get(&JobState::Available), Some(&done_jobs.len()));
    let idk = format!("{}{}", names.idemp, Message::key_id("k-1"));
    let pttl = |c: &mut redis::aio::MultiplexedConnection| {
        let mut c = c.clone();
        let idk = idk.clone();
        async move {
            redis::cmd("PTTL")
                .arg(idk)
                .query_async::<i64>(&mut c)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        pttl(&mut foreign.conn).await,
        -1,
        "kept while the job lives"
    );

    // Pass 1 looks at VANISHED_COUNT waiting jobs (the lowest ids, all
    // deleted); pass 2 at the rest. The pending entry heartbeats before
    // each, so its lease does not run out meanwhile.
    foreign.heartbeat(&pending_entry).await;
    t.maintain_now().await.unwrap();
    assert_eq!(acked(), u64::from(VANISHED_COUNT), "one batch per pass");
    foreign.heartbeat(&pending_entry).await;
    t.maintain_now().await.unwrap();
    let n = done_jobs.len();
    assert_eq!(acked(), n as u64);
    let after = states(&t, &done_jobs).await;
    assert_eq!(after.get(&JobState::Completed), Some(&n), "{after:?}");
    let by_fire = recorder.by_fire();
    assert_eq!(by_fire.len(), done_fires.len(), "{by_fire:?}");
    for f in &done_fires {
        assert_eq!(by_fire[f], vec![FireOutcome::Succeeded], "{f}");
    }
    // As chime's own completions: in the retention set, the attempt
    // counted, the key kept for the dedup window only.
    let done: Vec<String> = redis::cmd("ZRANGE")
        .arg(format!("{}:done", names.stream))
        .arg(0)
        .arg(-1)
        .query_async(&mut foreign.conn)
        .await
        .unwrap();
    let done: Vec<u64> = done.iter().map(|m| m.parse().unwrap()).collect();
    let mut sorted = done_jobs.clone();
    sorted.sort();
    assert_eq!(done, sorted, "retained as completions");
    let info = t.job(keyed).await.unwrap().unwrap();
    assert_eq!((info.state, info.attempt), (JobState::Completed, 1));
    assert!(info.finished_at.is_some());
    let ttl = pttl(&mut foreign.conn).await;
    assert!(ttl > 0 && ttl <= 60_000, "dedup window: {ttl}");
    let mut again = EnqueueRequest::new("runner", Payload::null());
    again.key = Some("k-1".into());
    let again = t.enqueue(&again).await.unwrap();
    assert!(again.deduplicated);
    assert_eq!(again.job, keyed);

    // Untouched: chime's held job and the pending entry.
    let held = t.job(mine.job).await.unwrap().unwrap();
    assert_eq!(held.state, JobState::Claimed);
    let pending = t.job(redis_job(pending_job)).await.unwrap().unwrap();
    assert_eq!((pending.state, pending.attempt), (JobState::Available, 0));
    let d = t.depth("runner").await.unwrap();
    assert_eq!(d.available, 0, "{d:?}");

    // Another pass changes nothing.
    foreign.heartbeat(&pending_entry).await;
    t.maintain_now().await.unwrap();
    assert_eq!(acked(), n as u64);
    assert_eq!(recorder.0.lock().unwrap().len(), done_fires.len());
    assert_eq!(
        states(&t, &done_jobs).await.get(&JobState::Completed),
        Some(&n)
    );
    assert_eq!(
        t.job(mine.job).await.unwrap().unwrap().state,
        JobState::Claimed
    );

    // chime's worker ends its own job, once.
    t.complete(mine.job, mine.token).await.unwrap();
    t.maintain_now().await.unwrap();
    assert_eq!(acked(), n as u64 + 1);
    assert_eq!(
        recorder.by_fire()[&fire("held-by-chime")],
        vec![FireOutcome::Succeeded]
    );

    // The pending entry, no longer heartbeating, comes back after its
    // lease as attempt 2 and is completed once.
    let maintenance = t.spawn_maintenance(Duration::from_millis(50));
    let second = loop {
        if let Some(c) = t.claim("runner", "w1", 10, None).await.unwrap().pop() {
            break c;
        }
        assert!(
            read_at.elapsed() < Duration::from_secs(20),
            "never reclaimed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!((second.job, second.attempt), (redis_job(pending_job), 2));
    t.complete(second.job, second.token).await.unwrap();
    maintenance.abort();
    assert_eq!(acked(), n as u64 + 2);
    let by_fire = recorder.by_fire();
    assert_eq!(by_fire.len(), done_fires.len() + 2);
    assert!(
        by_fire.values().all(|o| o == &vec![FireOutcome::Succeeded]),
        "{by_fire:?}"
    );
    let index: u64 = redis::cmd("ZCARD")
        .arg(format!("{}:available", names.stream))
        .query_async(&mut foreign.conn)
        .await
        .unwrap();
    assert_eq!(index, 0, "nothing waits");
    let d = t.depth("runner").await.unwrap();
    assert_eq!((d.available, d.claimed), (0, 0), "{d:?}");
}
