//! `CancelJob` ends a job that is not terminal: a claimed job also gets
//! `Command::Cancel` (before `job_cancelled`), and its worker's token is
//! void from then on; a scheduled job just ends. Cancelling a terminal job
//! is `invalid_state`. Cancelled jobs are counted and kept for the queue's
//! retention like completed ones.

use chime_core::{CancelReason, Command, EnqueueRequest, Event, Input, JobState, Payload, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;
const DAY: i64 = 24 * 3_600_000;

fn cancelled(job: chime_core::JobId) -> Reply {
    Reply::Job {
        job,
        state: JobState::Cancelled,
        run_at: None,
    }
}

#[test]
fn cancel_a_claimed_and_a_scheduled_job() {
    let mut h = Harness::standalone();
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let mut later = EnqueueRequest::new("q", Payload::null());
    later.delay_ms = Some(50);
    let Reply::Enqueued { job: b, .. } = h.ok(T, Input::Enqueue(later)).0 else {
        panic!()
    };
    let c = h.claim_one(T, "q");
    let a = c.job;

    let (reply, cmds) = h.ok(T + 1, Input::CancelJob { job: a });
    assert_eq!(reply, cancelled(a));
    assert_eq!(
        cmds,
        vec![
            Command::Cancel {
                job: a,
                reason: CancelReason::Requested
            },
            Command::Event(Event::JobCancelled {
                job: a,
                queue: "q".into(),
                reason: CancelReason::Requested
            }),
        ]
    );
    let done = Input::Complete {
        job: a,
        token: c.token,
    };
    assert_eq!(h.run(T + 2, done).0.unwrap_err().code(), "lease_lost");

    let (reply, cmds) = h.ok(T + 2, Input::CancelJob { job: b });
    assert_eq!(reply, cancelled(b));
    assert_eq!(
        cmds,
        vec![Command::Event(Event::JobCancelled {
            job: b,
            queue: "q".into(),
            reason: CancelReason::Requested
        })]
    );
    let again = h.run(T + 3, Input::CancelJob { job: b }).0.unwrap_err();
    assert_eq!(again.code(), "invalid_state");

    let s = h.engine.queue_stats("q").unwrap();
    assert_eq!((s.cancelled, s.totals.cancelled, s.scheduled), (2, 2, 0));
    assert_eq!(h.engine.live_jobs(), 0);
    // Nothing is due before the retention of the first cancel.
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 1 + DAY)));
    h.advance(T + 1 + DAY);
    assert!(h.engine.job(a).is_none());
    assert_eq!(h.engine.job(b).unwrap().state, JobState::Cancelled);
}
