//! Dead letters are bounded per queue (`limits.deadLettersPerQueue`): a
//! death beyond the bound drops the oldest dead letter, reported as
//! `job_dropped{reason: "dead_letter_limit"}` after the `job_dead`. With a
//! bound of zero a job is dropped as it dies, and the `Fail` reply says so.

use chime_core::{
    Command, EngineConfig, EnqueueRequest, Event, Input, JobId, JobState, Limits, Payload,
    QueueConfig, Reply,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn harness(bound: usize) -> Harness {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            dead_letters_per_queue: bound,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let mut q = QueueConfig::new("q");
    q.max_attempts = 1;
    h.ok(T, Input::DeclareQueue(q));
    h
}

/// Enqueues, claims and fails one job; returns it, the reply and the commands.
fn kill(h: &mut Harness, now: i64) -> (JobId, Reply, Vec<Command>) {
    h.ok(
        now,
        Input::Enqueue(EnqueueRequest::new("q", Payload::null())),
    );
    let c = h.claim_one(now, "q");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "x".into(),
        retry_at: None,
    };
    let (reply, cmds) = h.ok(now, fail);
    (c.job, reply, cmds)
}

#[test]
fn the_oldest_dead_letter_is_dropped_beyond_the_bound() {
    let mut h = harness(2);
    let (a, ..) = kill(&mut h, T + 10);
    let (b, ..) = kill(&mut h, T + 11);
    let (c, _, cmds) = kill(&mut h, T + 12);
    assert_eq!(
        events(&cmds),
        [
            &Event::JobDead {
                job: c,
                queue: "q".into(),
                attempts: 1,
                reason: "exhausted".into()
            },
            &Event::JobDropped {
                job: a,
                queue: "q".into(),
                reason: "dead_letter_limit".into()
            },
        ]
    );
    let dead: Vec<JobId> = h
        .engine
        .dead_letters("q", 10)
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(dead, [b, c]);
    assert_eq!(h.engine.job(a).unwrap().state, JobState::Dropped);
    let s = h.engine.queue_stats("q").unwrap();
    assert_eq!((s.dead, s.totals.dead, s.totals.dropped), (2, 3, 1));
}

#[test]
fn with_a_bound_of_zero_a_job_is_dropped_as_it_dies() {
    let mut h = harness(0);
    let (a, reply, cmds) = kill(&mut h, T);
    assert_eq!(
        reply,
        Reply::Job {
            job: a,
            state: JobState::Dropped,
            run_at: None
        }
    );
    assert!(matches!(
        &events(&cmds)[..],
        [Event::JobDead { .. }, Event::JobDropped { reason, .. }] if reason == "dead_letter_limit"
    ));
    assert_eq!(h.engine.job(a).unwrap().state, JobState::Dropped);
    assert!(h.engine.dead_letters("q", 10).is_empty());
}
