//! Idempotency keys: within the window (live, claimed and finished jobs),
//! after the window, after retention pruned the job, and per queue; the
//! key's expiry is work `poll_timeout()` names.

use chime_core::{EnqueueRequest, Input, JobId, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn enqueue(h: &mut Harness, now: i64, queue: &str, key: &str, payload: &str) -> (u64, bool) {
    let mut req = EnqueueRequest::new(queue, Payload::from_json(payload).unwrap());
    req.key = Some(key.into());
    match h.ok(now, Input::Enqueue(req)).0 {
        Reply::Enqueued { job, deduplicated } => (job.0, deduplicated),
        other => panic!("{other:?}"),
    }
}

fn finish(h: &mut Harness, now: i64, queue: &str) {
    let c = &h.claim_one(now, queue);
    h.ok(
        now,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
}

fn setup() -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("mail");
    q.dedup_window_ms = 60_000;
    q.retention.completed_ms = 10_000;
    h.ok(T, Input::DeclareQueue(q));
    h.ok(T, Input::DeclareQueue(QueueConfig::new("other")));
    h
}

#[test]
fn a_live_job_is_returned_whatever_the_request_says() {
    let mut h = setup();
    assert_eq!(enqueue(&mut h, T, "mail", "k", r#"{"v":1}"#), (1, false));
    assert_eq!(enqueue(&mut h, T + 5, "mail", "k", r#"{"v":2}"#), (1, true));
    let job = h.engine.job(JobId(1)).unwrap();
    assert_eq!(job.payload.as_json(), r#"{"v":1}"#, "first payload kept");
    assert_eq!(h.engine.queue_stats("mail").unwrap().totals.enqueued, 1);
}

#[test]
fn a_finished_job_is_returned_for_the_window_after_it_finished() {
    let mut h = setup();
    enqueue(&mut h, T, "mail", "k", "{}");
    finish(&mut h, T + 1_000, "mail");
    // The window runs from the finish (T+1s), not from the enqueue.
    assert_eq!(enqueue(&mut h, T + 60_999, "mail", "k", "{}"), (1, true));
    assert_eq!(enqueue(&mut h, T + 61_000, "mail", "k", "{}"), (2, false));
    // The new job owns the key now.
    assert_eq!(enqueue(&mut h, T + 61_001, "mail", "k", "{}"), (2, true));
}

#[test]
fn the_key_outlives_retention_of_its_job() {
    let mut h = setup();
    enqueue(&mut h, T, "mail", "k", "{}");
    finish(&mut h, T, "mail");
    h.advance(T + 10_000);
    assert!(h.engine.job(JobId(1)).is_none(), "pruned by retention");
    assert_eq!(enqueue(&mut h, T + 30_000, "mail", "k", "{}"), (1, true));
    assert_eq!(enqueue(&mut h, T + 60_000, "mail", "k", "{}"), (2, false));
}

#[test]
fn keys_are_per_queue() {
    let mut h = setup();
    assert_eq!(enqueue(&mut h, T, "mail", "k", "{}"), (1, false));
    assert_eq!(enqueue(&mut h, T, "other", "k", "{}"), (2, false));
    assert_eq!(enqueue(&mut h, T, "other", "k", "{}"), (2, true));
}

#[test]
fn a_claimed_job_is_returned_and_the_key_expiry_is_due_work() {
    let mut h = setup();
    enqueue(&mut h, T, "mail", "k", "{}");
    let c = h.claim_one(T + 1, "mail");
    assert_eq!(enqueue(&mut h, T + 2, "mail", "k", "{}"), (1, true));
    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    h.ok(T + 100, done);
    // Retention (10 s) first, then the key's window (60 s).
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 10_100)));
    h.advance(T + 10_100);
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 60_100)));
    h.advance(T + 60_100);
    assert_eq!(h.engine.poll_timeout(), None, "the key is forgotten");
    assert_eq!(enqueue(&mut h, T + 60_100, "mail", "k", "{}"), (2, false));
}
