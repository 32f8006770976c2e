//! Out of attempts (the queue's `maxAttempts` or the job's own):
//! dead-lettered (kept, listable, redrivable, purgeable) or, with
//! `deadLetter: false`, dropped; both reported. A dead letter is not
//! forgotten by retention, and its key is remembered for the window after
//! its death. Redrive makes jobs available at once with their attempts
//! reset, the oldest death first, and is refused as a whole when it would
//! pass the live-job limit.

use chime_core::{
    Command, EnqueueRequest, Event, Input, JobId, JobState, Payload, QueueConfig, Reply,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn queue(h: &mut Harness, name: &str, dead_letter: bool) {
    let mut q = QueueConfig::new(name);
    q.max_attempts = 1;
    q.dead_letter = dead_letter;
    h.ok(T, Input::DeclareQueue(q));
}

/// Enqueues, claims and fails one job at `now`; returns it and the commands of the fail.
fn exhaust(h: &mut Harness, now: i64, queue: &str) -> (JobId, Reply, Vec<Command>) {
    let Reply::Enqueued { job, .. } = h
        .ok(
            now,
            Input::Enqueue(EnqueueRequest::new(queue, Payload::null())),
        )
        .0
    else {
        panic!()
    };
    let jobs = [h.claim_one(now, queue)];
    assert_eq!(jobs[0].job, job);
    let fail = Input::Fail {
        job,
        token: jobs[0].token,
        error: "broken".into(),
        retry_at: None,
    };
    let (reply, cmds) = h.ok(now, fail);
    (job, reply, cmds)
}

#[test]
fn dead_letter_versus_drop() {
    let mut h = Harness::standalone();
    queue(&mut h, "dl", true);
    queue(&mut h, "drop", false);
    let (a, reply, cmds) = exhaust(&mut h, T, "dl");
    assert_eq!(
        reply,
        Reply::Job {
            job: a,
            state: JobState::Dead,
            run_at: None
        }
    );
    assert!(matches!(
        events(&cmds)[..],
        [Event::JobDead { attempts: 1, .. }]
    ));
    let info = h.engine.job(a).unwrap();
    assert_eq!(info.last_error.as_deref(), Some("broken"));

    let (b, reply, cmds) = exhaust(&mut h, T, "drop");
    assert_eq!(
        reply,
        Reply::Job {
            job: b,
            state: JobState::Dropped,
            run_at: None
        }
    );
    assert!(
        matches!(&events(&cmds)[..], [Event::JobDropped { reason, .. }] if reason == "exhausted")
    );
    let (dl, drop) = (
        h.engine.queue_stats("dl").unwrap(),
        h.engine.queue_stats("drop").unwrap(),
    );
    assert_eq!((dl.dead, dl.totals.dead, dl.totals.dropped), (1, 1, 0));
    assert_eq!(
        (drop.dead, drop.totals.dead, drop.totals.dropped),
        (0, 0, 1)
    );
    // Dead letters are listable; dropped jobs are not among them.
    let listed: Vec<_> = h
        .engine
        .dead_letters("dl", 10)
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(listed, [a]);
    assert!(h.engine.dead_letters("drop", 10).is_empty());
    assert!(h.engine.dead_letters("no-such-queue", 10).is_empty());
    let names: Vec<_> = h.engine.queue_names().collect();
    assert_eq!(names, ["dl", "drop"]);
    assert_eq!(h.engine.live_jobs(), 0);
}

#[test]
fn redrive_one_or_all_resets_attempts() {
    let mut h = Harness::standalone();
    queue(&mut h, "dl", true);
    let (a, ..) = exhaust(&mut h, T, "dl");
    let (b, ..) = exhaust(&mut h, T + 1, "dl");
    let (c, ..) = exhaust(&mut h, T + 2, "dl");
    // One job.
    let one = Input::Redrive {
        queue: "dl".into(),
        job: Some(b),
    };
    let (reply, cmds) = h.ok(T + 10, one);
    assert_eq!(
        reply,
        Reply::Count {
            count: 1,
            keys_dropped: 0
        }
    );
    assert!(matches!(cmds[..], [Command::Wake { .. }]));
    let info = h.engine.job(b).unwrap();
    assert_eq!((info.state, info.attempt), (JobState::Available, 0));
    // Redriving a live job is refused.
    let again = Input::Redrive {
        queue: "dl".into(),
        job: Some(b),
    };
    assert_eq!(h.run(T + 11, again).0.unwrap_err().code(), "invalid_state");
    // All the rest.
    let all = Input::Redrive {
        queue: "dl".into(),
        job: None,
    };
    assert_eq!(
        h.ok(T + 12, all).0,
        Reply::Count {
            count: 2,
            keys_dropped: 0
        }
    );
    for id in [a, c] {
        assert_eq!(h.engine.job(id).unwrap().state, JobState::Available);
    }
    assert_eq!(h.engine.queue_stats("dl").unwrap().dead, 0);
}

#[test]
fn purge_removes_dead_letters_before_an_instant() {
    let mut h = Harness::standalone();
    queue(&mut h, "dl", true);
    let (a, ..) = exhaust(&mut h, T, "dl");
    let (b, ..) = exhaust(&mut h, T + 5_000, "dl");
    let purge = Input::PurgeDead {
        queue: "dl".into(),
        before: Some(t(T + 5_000)),
    };
    assert_eq!(
        h.ok(T + 6_000, purge).0,
        Reply::Count {
            count: 1,
            keys_dropped: 0
        }
    );
    assert!(h.engine.job(a).is_none());
    assert_eq!(h.engine.job(b).unwrap().state, JobState::Dead);
    let purge = Input::PurgeDead {
        queue: "dl".into(),
        before: None,
    };
    assert_eq!(
        h.ok(T + 6_000, purge).0,
        Reply::Count {
            count: 1,
            keys_dropped: 0
        }
    );
    assert_eq!(h.engine.queue_stats("dl").unwrap().dead, 0);
    let unknown = Input::PurgeDead {
        queue: "nope".into(),
        before: None,
    };
    assert_eq!(
        h.run(T + 6_000, unknown).0.unwrap_err().code(),
        "unknown_queue"
    );
}

#[test]
fn a_redriven_job_runs_now_oldest_death_first() {
    let mut h = Harness::standalone();
    queue(&mut h, "dl", true);
    let ids: Vec<JobId> = (0..3)
        .map(|i| exhaust(&mut h, T + 100 * i, "dl").0)
        .collect();
    let unknown = Input::Redrive {
        queue: "dl".into(),
        job: Some(JobId(99)),
    };
    assert_eq!(h.run(T + 500, unknown).0.unwrap_err().code(), "unknown_job");
    let one = Input::Redrive {
        queue: "dl".into(),
        job: Some(ids[1]),
    };
    h.ok(T + 500, one);
    let info = h.engine.job(ids[1]).unwrap();
    assert_eq!(
        (info.state, info.attempt, info.run_at, info.finished_at),
        (JobState::Available, 0, t(T + 500), None)
    );
    let all = Input::Redrive {
        queue: "dl".into(),
        job: None,
    };
    h.ok(T + 600, all);
    let order: Vec<JobId> = h
        .claim(T + 600, "dl", 10, None)
        .iter()
        .map(|c| c.job)
        .collect();
    assert_eq!(
        order,
        [ids[1], ids[0], ids[2]],
        "redriven first, then oldest death first"
    );
    let purge = Input::PurgeDead {
        queue: "dl".into(),
        before: None,
    };
    assert_eq!(
        h.ok(T + 600, purge).0,
        Reply::Count {
            count: 0,
            keys_dropped: 0
        }
    );
}

#[test]
fn redrive_all_is_refused_as_a_whole_beyond_the_live_job_limit() {
    let mut h = Harness::new(chime_core::EngineConfig {
        limits: chime_core::Limits {
            live_jobs: 2,
            ..chime_core::Limits::default()
        },
        ..chime_core::EngineConfig::default()
    });
    queue(&mut h, "dl", true);
    for i in 0..3 {
        exhaust(&mut h, T + i, "dl");
    }
    let all = || Input::Redrive {
        queue: "dl".into(),
        job: None,
    };
    let before = h.engine.snapshot().to_json();
    let (reply, cmds) = h.run(T + 2, all());
    assert_eq!(
        reply.unwrap_err(),
        chime_core::Error::LimitExceeded {
            what: "live_jobs",
            limit: 2
        }
    );
    assert!(cmds.is_empty());
    assert_eq!(h.engine.snapshot().to_json(), before, "not one redriven");
    let purge = Input::PurgeDead {
        queue: "dl".into(),
        before: Some(t(T + 1)),
    };
    h.ok(T + 2, purge);
    assert!(matches!(
        h.ok(T + 2, all()).0,
        Reply::Count { count: 2, .. }
    ));
}

#[test]
fn dead_letters_outlive_retention_and_keep_their_key_for_the_window() {
    let mut h = Harness::standalone();
    queue(&mut h, "dl", true);
    let mut req = EnqueueRequest::new("dl", Payload::null());
    req.key = Some("k".into());
    h.ok(T, Input::Enqueue(req.clone()));
    let c = h.claim_one(T, "dl");
    h.fail(T, &c);
    // The key is remembered for the window (24 h) after the death.
    let again = h.ok(T + 1, Input::Enqueue(req.clone())).0;
    assert_eq!(
        again,
        Reply::Enqueued {
            job: c.job,
            deduplicated: true
        }
    );
    const DAY: i64 = 24 * 3_600_000;
    h.advance(T + 10 * DAY);
    assert_eq!(
        h.engine.job(c.job).unwrap().state,
        JobState::Dead,
        "not pruned"
    );
    let Reply::Enqueued { job, deduplicated } = h.ok(T + 10 * DAY, Input::Enqueue(req)).0 else {
        panic!()
    };
    assert!(!deduplicated && job != c.job);
}

#[test]
fn a_per_job_max_attempts_overrides_the_queue_and_a_retry_at_does_not_revive() {
    let mut h = Harness::standalone();
    queue(&mut h, "drop", false);
    let mut q = QueueConfig::new("drop");
    q.dead_letter = false;
    h.ok(T, Input::DeclareQueue(q)); // five attempts again
    let mut req = EnqueueRequest::new("drop", Payload::null());
    req.max_attempts = Some(1);
    h.ok(T, Input::Enqueue(req));
    let c = h.claim_one(T, "drop");
    assert_eq!(h.engine.job(c.job).unwrap().max_attempts, 1);
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "x".into(),
        retry_at: Some(t(T + 2)),
    };
    assert_eq!(
        h.ok(T + 1, fail).0,
        Reply::Job {
            job: c.job,
            state: JobState::Dropped,
            run_at: None
        }
    );
}
