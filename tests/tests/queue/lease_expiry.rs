//! A lease past its deadline counts as a failed attempt (`lease_expired`):
//! retried with backoff, and dead-lettered once attempts run out; a
//! heartbeat moves the deadline.

use chime_core::{EnqueueRequest, Event, Input, JobId, JobState, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn setup() -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("q");
    q.lease_ms = 10_000;
    q.max_attempts = 2;
    h.ok(T, Input::DeclareQueue(q));
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    h
}

fn claim(h: &mut Harness, now: i64) -> chime_core::Claimed {
    h.claim_one(now, "q")
}

#[test]
fn expiry_is_a_failed_attempt_then_a_dead_letter() {
    let mut h = setup();
    let c = claim(&mut h, T);
    assert_eq!(c.deadline, t(T + 10_000));
    assert!(h.advance(T + 9_999).is_empty(), "not yet");
    let cmds = h.advance(T + 10_000);
    let evs = events(&cmds);
    assert!(matches!(
        evs[0],
        Event::LeaseExpired {
            job: JobId(1),
            attempt: 1,
            ..
        }
    ));
    let Event::JobRetried {
        attempt,
        run_at,
        error,
        ..
    } = evs[1]
    else {
        panic!("{evs:?}")
    };
    assert_eq!((*attempt, error.as_str()), (1, "lease_expired"));
    let wait = run_at.as_millis() - (T + 10_000);
    assert!((2_500..=5_000).contains(&wait), "default backoff: {wait}");
    let job = h.engine.job(JobId(1)).unwrap();
    assert_eq!((job.state, job.attempt), (JobState::Scheduled, 1));
    assert_eq!(job.last_error.as_deref(), Some("lease_expired"));

    // Second (last) attempt also expires: dead letter.
    let now = run_at.as_millis();
    let c2 = claim(&mut h, now);
    assert_eq!(c2.attempt, 2);
    let cmds = h.advance(now + 10_000);
    assert_eq!(
        events(&cmds),
        [
            &Event::LeaseExpired {
                job: JobId(1),
                queue: "q".into(),
                attempt: 2
            },
            &Event::JobDead {
                job: JobId(1),
                queue: "q".into(),
                attempts: 2,
                reason: "exhausted".into()
            },
        ]
    );
    let dead = h.engine.dead_letters("q", 10);
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].id, dead[0].state, dead[0].last_error.as_deref()),
        (JobId(1), JobState::Dead, Some("lease_expired"))
    );
    let st = h.engine.queue_stats("q").unwrap();
    assert_eq!((st.dead, st.totals.expired, st.totals.retried), (1, 2, 1));
}

#[test]
fn a_heartbeat_moves_the_deadline() {
    let mut h = setup();
    let c = claim(&mut h, T);
    let hb = Input::Heartbeat {
        job: c.job,
        token: c.token,
        lease_ms: Some(30_000),
    };
    assert_eq!(
        h.ok(T + 9_000, hb).0,
        Reply::LeaseExtended {
            deadline: t(T + 39_000)
        }
    );
    assert!(h.advance(T + 38_999).is_empty());
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 39_000)));
    let cmds = h.advance(T + 39_000);
    assert!(matches!(
        events(&cmds)[0],
        Event::LeaseExpired { attempt: 1, .. }
    ));
}
