//! `queue_stats()`: jobs per state, the age of the oldest available job
//! (from when it became available), the instant the stats are as of (the
//! engine clock), the running totals; `None` for a queue that does not
//! exist. `live_jobs()` counts every job not yet terminal.

use chime_core::{EnqueueRequest, Input, JobId, Payload};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn enqueue(h: &mut Harness, now: i64, f: impl FnOnce(&mut EnqueueRequest)) {
    let mut req = EnqueueRequest::new("q", Payload::null());
    f(&mut req);
    h.ok(now, Input::Enqueue(req));
}

#[test]
fn counts_ages_and_totals() {
    let mut h = Harness::standalone();
    enqueue(&mut h, T + 100, |_| {});
    enqueue(&mut h, T + 200, |_| {});
    enqueue(&mut h, T + 200, |r| r.priority = 9);
    enqueue(&mut h, T + 200, |r| r.delay_ms = Some(1_000));
    assert_eq!(
        h.claim_one(T + 300, "q").job,
        JobId(3),
        "the priority-9 job"
    );
    h.advance(T + 1_000);
    let s = h.engine.queue_stats("q").unwrap();
    assert_eq!(
        (
            s.scheduled,
            s.available,
            s.claimed,
            s.completed,
            s.dead,
            s.cancelled
        ),
        (1, 2, 1, 0, 0, 0)
    );
    assert_eq!(s.oldest_available_age_ms, Some(900));
    assert_eq!(s.as_of, Some(t(T + 1_000)));
    assert_eq!(s.totals.enqueued, 4);
    assert_eq!(s.queue, "q");
    assert!(h.engine.queue_stats("none").is_none());
    assert_eq!(h.engine.live_jobs(), 4);
}
