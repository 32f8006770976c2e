//! `DeclareQueue` replies `created`/`changed`: a new queue, an identical
//! re-declaration (nothing changes) and a changed config, which applies to
//! later claims. A queue created implicitly gets the defaults with the
//! retention count clamped to `limits.completedPerQueue`. A local queue
//! holding live jobs cannot become `external` (`invalid_input`, nothing
//! changes); one holding only retained history can, keeps it through a
//! snapshot, and retention still forgets it. A job without its own
//! `maxAttempts` reports the queue's current one.

use chime_core::{
    EngineConfig, EnqueueRequest, Input, JobState, Limits, Payload, QueueConfig, QueueMode, Reply,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;
const DAY: i64 = 24 * 3_600_000;

fn declared(created: bool, changed: bool) -> Reply {
    Reply::QueueDeclared { created, changed }
}

#[test]
fn created_unchanged_changed() {
    let mut h = Harness::standalone();
    let cfg = QueueConfig::new("q");
    assert_eq!(
        h.ok(T, Input::DeclareQueue(cfg.clone())).0,
        declared(true, true)
    );
    assert_eq!(
        h.ok(T, Input::DeclareQueue(cfg.clone())).0,
        declared(false, false)
    );
    let mut shorter = cfg.clone();
    shorter.lease_ms = 5;
    assert_eq!(
        h.ok(T, Input::DeclareQueue(shorter)).0,
        declared(false, true)
    );
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    assert_eq!(
        h.claim_one(T + 1, "q").deadline,
        t(T + 6),
        "new lease applies"
    );
}

/// Each kind of work alone keeps a queue local: an available, a delayed,
/// a claimed job, or a dead letter.
#[test]
fn a_queue_holding_jobs_cannot_become_external() {
    for work in ["available", "scheduled", "claimed", "dead"] {
        let mut h = Harness::standalone();
        let mut q = QueueConfig::new("q");
        q.max_attempts = 1;
        h.ok(T, Input::DeclareQueue(q.clone()));
        let mut req = EnqueueRequest::new("q", Payload::null());
        if work == "scheduled" {
            req.delay_ms = Some(DAY);
        }
        h.ok(T, Input::Enqueue(req));
        if work == "claimed" || work == "dead" {
            let c = h.claim_one(T, "q");
            if work == "dead" {
                h.fail(T, &c);
            }
        }
        let stats = h.engine.queue_stats("q").unwrap();
        let counts = [stats.available, stats.scheduled, stats.claimed, stats.dead];
        let want = ["available", "scheduled", "claimed", "dead"].map(|k| u64::from(k == work));
        assert_eq!(counts, want, "{work} alone");
        let mut ext = q;
        ext.mode = QueueMode::External;
        let before = h.engine.snapshot().to_json();
        let (reply, cmds) = h.run(T, Input::DeclareQueue(ext));
        assert_eq!(reply.unwrap_err().code(), "invalid_input", "{work}");
        assert!(cmds.is_empty());
        assert_eq!(h.engine.snapshot().to_json(), before);
    }
}

#[test]
fn implicit_retention_is_clamped_to_the_limit() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            completed_per_queue: 2,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let ids: Vec<_> = (0..3).map(|i| h.complete_one(T + i, "q")).collect();
    assert!(h.engine.job(ids[0]).is_none(), "count bound of 2");
    assert_eq!(h.engine.queue_stats("q").unwrap().completed, 2);
}

#[test]
fn retained_history_survives_a_switch_to_external() {
    let mut h = Harness::standalone();
    let id = h.complete_one(T, "q");
    let mut ext = QueueConfig::new("q");
    ext.mode = QueueMode::External;
    assert_eq!(
        h.ok(T + 1, Input::DeclareQueue(ext)).0,
        declared(false, true)
    );
    h.restart();
    assert_eq!(h.engine.job(id).unwrap().state, JobState::Completed);
    h.advance(T + DAY);
    assert!(h.engine.job(id).is_none(), "retention still applies");
    h.check_replay();
}

/// A job without its own `maxAttempts` reports the queue's, as of now: a
/// re-declaration changes it for the jobs already waiting; a job with its
/// own keeps it.
#[test]
fn a_jobs_max_attempts_follows_the_queue_unless_it_set_one() {
    let mut h = Harness::standalone();
    h.ok(T, Input::DeclareQueue(QueueConfig::new("q")));
    let plain = h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let mut req = EnqueueRequest::new("q", Payload::null());
    req.max_attempts = Some(9);
    let own = h.ok(T, Input::Enqueue(req));
    let id = |r: &(Reply, _)| match r.0 {
        Reply::Enqueued { job, .. } => job,
        ref other => panic!("{other:?}"),
    };
    let (plain, own) = (id(&plain), id(&own));
    let max = |h: &Harness, job| h.engine.job(job).unwrap().max_attempts;
    assert_eq!((max(&h, plain), max(&h, own)), (5, 9), "the default is 5");
    let mut cfg = QueueConfig::new("q");
    cfg.max_attempts = 7;
    h.ok(T, Input::DeclareQueue(cfg));
    assert_eq!((max(&h, plain), max(&h, own)), (7, 9));
}
