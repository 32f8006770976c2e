//! A message that always fails, on a real nats-server: it is retried at
//! core's `after_failure` delays (a `-NAK` with that delay), and after
//! its last attempt it is copied to the dead-letter stream with the
//! seed's headers (`runId` = the fire id, `scheduleId`, `attempts`,
//! `reason`) and its canonical body byte for byte, removed from the work
//! stream, and its fire settled as failed; redriven, it runs again from
//! attempt 1 and settles as succeeded.

use crate::nats_support;
use chime_core::{
    AfterFailure, EngineConfig, FireId, FireOutcome, Headers, JobEnd, JobState, Payload,
    QueueConfig, after_failure,
};
use chime_native::backend::{Failed, PortFuture, QueueBackend};
use chime_native::transport::{Message, Published, Settlements, Transport};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Every settlement, as the engine would get them.
#[derive(Default)]
struct Recorder(Mutex<Vec<(FireId, FireOutcome, Option<JobEnd>)>>);

impl Settlements for Recorder {
    fn settle(
        &self,
        fire: FireId,
        outcome: FireOutcome,
        job: Option<JobEnd>,
    ) -> PortFuture<'_, ()> {
        self.0.lock().unwrap().push((fire, outcome, job));
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn always_failing_message_is_dead_lettered_with_the_seed_headers() {
    let Some(url) = nats_support::url() else {
        return;
    };
    let config = EngineConfig {
        seed: 77,
        ..EngineConfig::default()
    };
    let ns = nats_support::namespace("always_fails");
    let recorder = Arc::new(Recorder::default());
    let t = nats_support::connect(&url, &ns, &config)
        .await
        .with_settlements(recorder.clone());
    let mut q = QueueConfig::new("planner");
    q.max_attempts = 3;
    q.backoff.base_ms = 40;
    q.backoff.cap_ms = 100;
    t.declare(&q).await.unwrap();

    let fire: FireId = "nightly-scan@1700000000000".parse().unwrap();
    let mut headers = Headers::new();
    headers.insert("tenantId".into(), "t1".into());
    let payload = Payload::from_json(r#"{"runId":"r1","digests":["sha256:aa"]}"#).unwrap();
    let m = Message::of_fire(&fire, "planner", &payload, &headers, 0, None);
    assert_eq!(t.publish(&m).await.unwrap(), Published::New);
    assert_eq!(t.publish(&m).await.unwrap(), Published::Duplicate);

    let mut outcomes = Vec::new();
    let mut job = None;
    let mut failed_at: Option<(Instant, i64)> = None;
    for attempt in 1..=3 {
        let c = loop {
            if let Some(c) = t.claim("planner", "w", 1, None).await.unwrap().pop() {
                break c;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        if let Some((at, delay_ms)) = failed_at {
            // JetStream held it back for the retry delay.
            assert!(
                at.elapsed() >= Duration::from_millis(delay_ms as u64),
                "attempt {attempt} came after {:?}, before its {delay_ms} ms delay",
                at.elapsed()
            );
        }
        assert_eq!(c.attempt, attempt);
        assert_eq!(c.fire.as_ref(), Some(&fire));
        assert_eq!(c.payload, payload);
        assert_eq!(c.headers, headers);
        assert!(job.is_none_or(|j| j == c.job), "one job throughout");
        job = Some(c.job);
        let f = t.fail(c.job, c.token, "boom: exit 1", None).await.unwrap();
        if let Failed::Retry { delay_ms, .. } = f {
            failed_at = Some((Instant::now(), delay_ms));
        }
        outcomes.push(f);
    }
    let job = job.unwrap();
    let expected: Vec<Option<i64>> = (1..=3)
        .map(|a| match after_failure(&q, None, config.seed, job, a) {
            AfterFailure::Retry { delay_ms } => Some(delay_ms),
            AfterFailure::Exhausted { .. } => None,
        })
        .collect();
    let got: Vec<Option<i64>> = outcomes
        .iter()
        .map(|f| match f {
            Failed::Retry { delay_ms, .. } => Some(*delay_ms),
            Failed::Dead => None,
            Failed::Dropped => panic!("dropped on a queue with dead letters"),
        })
        .collect();
    assert_eq!(got, expected, "core's delays, then dead");
    assert_eq!(outcomes[2], Failed::Dead);

    // The dead letter: one, with the seed's headers and the body as published.
    let names = t.names("planner");
    let js = t.jetstream();
    let mut dead = js.get_stream(&names.dead_stream).await.unwrap();
    assert_eq!(dead.info().await.unwrap().state.messages, 1);
    let letter = dead
        .get_first_raw_message_by_subject(&names.dead_subject, 1)
        .await
        .unwrap();
    let h = |name: &str| letter.headers.get(name).map(|v| v.as_str().to_owned());
    assert_eq!(h("runId").as_deref(), Some("nightly-scan@1700000000000"));
    assert_eq!(h("scheduleId").as_deref(), Some("nightly-scan"));
    assert_eq!(h("attempts").as_deref(), Some("3"));
    assert_eq!(h("reason").as_deref(), Some("boom: exit 1"));
    assert_eq!(h("Chime-Message-Id").as_deref(), Some(m.id.as_str()));
    assert_eq!(&letter.payload[..], m.body().as_bytes(), "byte for byte");
    assert_eq!(
        Message::parse(std::str::from_utf8(&letter.payload).unwrap()).unwrap(),
        m
    );
    // Gone from the work stream; nothing more to claim.
    let mut work = js.get_stream(&names.stream).await.unwrap();
    assert_eq!(work.info().await.unwrap().state.messages, 0);
    assert!(t.claim("planner", "w", 10, None).await.unwrap().is_empty());
    assert_eq!(t.depth("planner").await.unwrap().dead, 1);
    assert_eq!(t.job(job).await.unwrap().unwrap().state, JobState::Dead);

    {
        let s = recorder.0.lock().unwrap();
        assert_eq!(s.len(), 1, "settled once: {s:?}");
        let (f, outcome, end) = &s[0];
        assert_eq!((f, *outcome), (&fire, FireOutcome::Failed));
        let end = end.as_ref().unwrap();
        assert_eq!((end.id, end.state, end.attempts), (job, JobState::Dead, 3));
        assert_eq!(end.error.as_deref(), Some("boom: exit 1"));
    }

    // Redriven: attempts start again, same job; it succeeds this time.
    let r = t.redrive("planner", Some(job)).await.unwrap();
    assert_eq!((r.count, r.keys_dropped), (1, 0));
    assert_eq!(dead.info().await.unwrap().state.messages, 0);
    let c = t.claim("planner", "w", 1, None).await.unwrap().remove(0);
    assert_eq!((c.job, c.attempt), (job, 1));
    t.complete(c.job, c.token).await.unwrap();
    let outcomes: Vec<FireOutcome> = recorder.0.lock().unwrap().iter().map(|s| s.1).collect();
    assert_eq!(outcomes, [FireOutcome::Failed, FireOutcome::Succeeded]);
    nats_support::drop_streams(&url, &ns).await;
}
