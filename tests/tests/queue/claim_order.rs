//! Claim order and availability: jobs are claimed by priority (higher
//! first), then by the time they became available, then by id. A `runAt`
//! in the past means now (no backdating past jobs enqueued since). A job
//! delayed by `delayMs` or `runAt` is `scheduled` and not claimable until
//! then; `poll_timeout()` names that instant, and the advance reaching it
//! makes the job available.

use chime_core::{EnqueueRequest, Input, JobId, JobState, Payload, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn enqueue(h: &mut Harness, now: i64, f: impl FnOnce(&mut EnqueueRequest)) -> JobId {
    let mut req = EnqueueRequest::new("q", Payload::null());
    f(&mut req);
    match h.ok(now, Input::Enqueue(req)).0 {
        Reply::Enqueued { job, .. } => job,
        other => panic!("{other:?}"),
    }
}

fn order(h: &mut Harness, now: i64) -> Vec<JobId> {
    h.claim(now, "q", 10, None).iter().map(|c| c.job).collect()
}

#[test]
fn priority_then_available_time_then_id() {
    let mut h = Harness::standalone();
    let low = enqueue(&mut h, T, |r| r.priority = -1);
    // The lowest id of priority 5, but available only at T+10.
    let hi0 = enqueue(&mut h, T, |r| {
        r.priority = 5;
        r.run_at = Some(t(T + 10));
    });
    let mid = enqueue(&mut h, T, |_| {});
    let hi1 = enqueue(&mut h, T + 5, |r| r.priority = 5);
    let hi2 = enqueue(&mut h, T + 5, |r| r.priority = 5);
    // `runAt` in the past: available at T+10, when it was enqueued, not
    // backdated before hi1 and hi2.
    let past = enqueue(&mut h, T + 10, |r| {
        r.priority = 5;
        r.run_at = Some(t(T + 4));
    });
    assert_eq!(h.engine.job(past).unwrap().run_at, t(T + 10));
    assert_eq!(order(&mut h, T + 20), [hi1, hi2, hi0, past, mid, low]);
}

#[test]
fn delayed_jobs_become_available_at_their_time() {
    let mut h = Harness::standalone();
    let a = enqueue(&mut h, T, |r| r.delay_ms = Some(500));
    let b = enqueue(&mut h, T, |r| r.run_at = Some(t(T + 200)));
    for id in [a, b] {
        assert_eq!(h.engine.job(id).unwrap().state, JobState::Scheduled);
    }
    assert_eq!(h.engine.job(a).unwrap().run_at, t(T + 500));
    assert!(h.claim(T + 100, "q", 5, None).is_empty(), "nothing yet");
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 200)));
    assert!(h.advance(T + 199).is_empty());
    h.advance(T + 200);
    assert_eq!(h.engine.job(b).unwrap().state, JobState::Available);
    assert_eq!(h.engine.job(a).unwrap().state, JobState::Scheduled);
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 500)));
    h.advance(T + 500);
    assert_eq!(h.engine.job(a).unwrap().state, JobState::Available);
    assert_eq!(h.engine.poll_timeout(), None);
    // Available since T+200 before available since T+500.
    assert_eq!(order(&mut h, T + 500), [b, a]);
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 2);
}
