//! Redrive never makes two live jobs with one key. A redriven dead letter
//! takes its idempotency key back if no other live job holds it (its own
//! entry, a forgotten key, or a key last used by a job that has finished);
//! if another live job holds the key now (it was reused after the dedup
//! window), the dead letter is redriven without its key and the reply
//! counts it in `keysDropped`.

use chime_core::{EnqueueRequest, Input, JobId, JobState, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;
const WINDOW: i64 = 1_000;

fn setup() -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("q");
    q.max_attempts = 1;
    q.dedup_window_ms = WINDOW;
    h.ok(T, Input::DeclareQueue(q));
    h
}

fn enqueue(h: &mut Harness, now: i64, key: &str) -> (JobId, bool) {
    let mut req = EnqueueRequest::new("q", Payload::null());
    req.key = Some(key.into());
    match h.ok(now, Input::Enqueue(req)).0 {
        Reply::Enqueued { job, deduplicated } => (job, deduplicated),
        other => panic!("{other:?}"),
    }
}

/// Claims the next job and fails it (one attempt: dead).
fn kill(h: &mut Harness, now: i64) -> JobId {
    let c = h.claim_one(now, "q");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "x".into(),
        retry_at: None,
    };
    h.ok(now, fail);
    assert_eq!(h.engine.job(c.job).unwrap().state, JobState::Dead);
    c.job
}

fn redrive(h: &mut Harness, now: i64, job: Option<JobId>) -> Reply {
    h.ok(
        now,
        Input::Redrive {
            queue: "q".into(),
            job,
        },
    )
    .0
}

/// Live jobs carrying `key`.
fn live_with(h: &Harness, key: &str, ids: &[JobId]) -> Vec<JobId> {
    ids.iter()
        .copied()
        .filter(|&id| {
            let j = h.engine.job(id).unwrap();
            !j.state.is_terminal() && j.key.as_deref() == Some(key)
        })
        .collect()
}

#[test]
fn a_key_held_by_another_live_job_is_dropped() {
    let mut h = setup();
    let (dead, _) = enqueue(&mut h, T, "k");
    kill(&mut h, T);
    // After the window the key is free and reused by a new, live job.
    let (live, dedup) = enqueue(&mut h, T + WINDOW + 1, "k");
    assert!(!dedup);
    let reply = redrive(&mut h, T + WINDOW + 2, Some(dead));
    assert_eq!(
        reply,
        Reply::Count {
            count: 1,
            keys_dropped: 1
        }
    );
    let info = h.engine.job(dead).unwrap();
    assert_eq!((info.state, info.key), (JobState::Available, None));
    assert_eq!(live_with(&h, "k", &[dead, live]), [live]);
    // The key still answers with the job that holds it.
    assert_eq!(enqueue(&mut h, T + WINDOW + 3, "k"), (live, true));
    // On the wire the count is added only when something was dropped.
    let json = serde_json::to_string(&reply).unwrap();
    assert_eq!(json, r#"{"count":{"count":1,"keysDropped":1}}"#);
}

#[test]
fn a_free_key_is_taken_back() {
    let mut h = setup();
    let (dead, _) = enqueue(&mut h, T, "k");
    kill(&mut h, T);
    // Window over, key forgotten, nobody reused it.
    h.advance(T + WINDOW + 1);
    let reply = redrive(&mut h, T + WINDOW + 2, None);
    assert_eq!(
        reply,
        Reply::Count {
            count: 1,
            keys_dropped: 0
        }
    );
    assert_eq!(
        serde_json::to_string(&reply).unwrap(),
        r#"{"count":{"count":1}}"#
    );
    assert_eq!(h.engine.job(dead).unwrap().key.as_deref(), Some("k"));
    // The redriven job holds the key again: no second live job with it.
    assert_eq!(enqueue(&mut h, T + WINDOW + 3, "k"), (dead, true));
}

#[test]
fn a_key_last_used_by_a_finished_job_is_taken_over() {
    let mut h = setup();
    let (dead, _) = enqueue(&mut h, T, "k");
    kill(&mut h, T);
    let (other, _) = enqueue(&mut h, T + WINDOW + 1, "k");
    let c = h.claim_one(T + WINDOW + 1, "q");
    assert_eq!(c.job, other);
    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    h.ok(T + WINDOW + 1, done);
    let reply = redrive(&mut h, T + WINDOW + 2, Some(dead));
    assert_eq!(
        reply,
        Reply::Count {
            count: 1,
            keys_dropped: 0
        }
    );
    assert_eq!(enqueue(&mut h, T + WINDOW + 3, "k"), (dead, true));
}

#[test]
fn redrive_all_counts_every_dropped_key() {
    let mut h = setup();
    let (a, _) = enqueue(&mut h, T, "a");
    let (b, _) = enqueue(&mut h, T, "b");
    let (c, _) = enqueue(&mut h, T, "c");
    for _ in 0..3 {
        kill(&mut h, T);
    }
    let (a2, _) = enqueue(&mut h, T + WINDOW + 1, "a");
    let (c2, _) = enqueue(&mut h, T + WINDOW + 1, "c");
    let reply = redrive(&mut h, T + WINDOW + 2, None);
    assert_eq!(
        reply,
        Reply::Count {
            count: 3,
            keys_dropped: 2
        }
    );
    assert_eq!(live_with(&h, "a", &[a, a2]), [a2]);
    assert_eq!(live_with(&h, "b", &[b]), [b]);
    assert_eq!(live_with(&h, "c", &[c, c2]), [c2]);
}
