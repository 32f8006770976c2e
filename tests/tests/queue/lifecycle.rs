//! One job's way through a local queue: `Enqueue` to a queue nobody
//! declared creates it (`queue_created`, reported once, before the `wake`);
//! job ids count up from 1; `Claim` leases it for the queue's `leaseMs`
//! (60 s by default) with attempt 1 and the payload verbatim, and the job's
//! info shows the worker and the deadline; `Complete` finishes it
//! (`job_completed`, `finishedAt`); every claim issues a new token. A
//! `Claim` on a queue that does not exist returns nothing and creates
//! nothing.

use chime_core::{Command, EnqueueRequest, Event, Input, JobId, JobState, Payload, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn enqueue(h: &mut Harness, now: i64) -> (JobId, Vec<Command>) {
    let payload = Payload::from_json(r#"{"n": 1.50}"#).unwrap();
    match h.ok(now, Input::Enqueue(EnqueueRequest::new("mail", payload))) {
        (Reply::Enqueued { job, deduplicated }, cmds) => {
            assert!(!deduplicated);
            (job, cmds)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn enqueue_claim_complete() {
    let mut h = Harness::standalone();
    let (a, cmds) = enqueue(&mut h, T);
    assert_eq!(a, JobId(1));
    assert_eq!(
        cmds,
        vec![
            Command::Event(Event::QueueCreated {
                queue: "mail".into()
            }),
            Command::Wake {
                queue: "mail".into()
            },
        ]
    );
    let (b, cmds) = enqueue(&mut h, T);
    assert_eq!(b, JobId(2));
    assert!(cmds.is_empty(), "created once, already claimable: {cmds:?}");

    let input = Input::Claim {
        queue: "mail".into(),
        worker: "w1".into(),
        max: 1,
        lease_ms: None,
    };
    let Reply::Claimed { jobs } = h.ok(T + 1_000, input).0 else {
        panic!()
    };
    let c = &jobs[0];
    assert_eq!((c.job, c.attempt, c.deadline), (a, 1, t(T + 61_000)));
    assert_eq!(c.payload.as_json(), r#"{"n": 1.50}"#, "payload verbatim");
    let info = h.engine.job(a).unwrap();
    assert_eq!(info.state, JobState::Claimed);
    assert_eq!(
        (info.worker.as_deref(), info.lease_deadline),
        (Some("w1"), Some(t(T + 61_000)))
    );

    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    let (reply, cmds) = h.ok(T + 2_000, done);
    assert_eq!(
        reply,
        Reply::Job {
            job: a,
            state: JobState::Completed,
            run_at: None
        }
    );
    assert_eq!(
        events(&cmds),
        [&Event::JobCompleted {
            job: a,
            queue: "mail".into()
        }]
    );
    let info = h.engine.job(a).unwrap();
    assert_eq!(
        (
            info.state,
            info.finished_at,
            info.worker,
            info.lease_deadline
        ),
        (JobState::Completed, Some(t(T + 2_000)), None, None)
    );
    assert_eq!(h.engine.live_jobs(), 1);
    let d = h.claim_one(T + 2_000, "mail");
    assert_eq!(d.job, b);
    assert_ne!(d.token, c.token, "tokens change on every claim");
    h.check_replay();
}

#[test]
fn a_claim_on_an_unknown_queue_is_empty_and_creates_nothing() {
    let mut h = Harness::standalone();
    let input = Input::Claim {
        queue: "nothing".into(),
        worker: "w".into(),
        max: 5,
        lease_ms: None,
    };
    let (reply, cmds) = h.ok(T, input);
    assert_eq!(reply, Reply::Claimed { jobs: vec![] });
    assert!(cmds.is_empty());
    assert_eq!(h.engine.queue_names().count(), 0);
    assert!(h.engine.queue_stats("nothing").is_none());
}
