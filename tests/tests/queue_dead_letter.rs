//! Out of attempts: dead-lettered (kept, listable, redrivable, purgeable)
//! or, with `deadLetter: false`, dropped; both reported.

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
