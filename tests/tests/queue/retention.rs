//! Retention of finished jobs: a queue keeps at most
//! `retention.completedMax` completed (cancelled, dropped) jobs, the
//! oldest forgotten first, and each for `retention.completedMs` after it
//! finished; `poll_timeout()` names the next expiry. Lowering the count
//! bound trims at once. The totals are not affected by forgetting.

use chime_core::{Input, JobId, JobState, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn config(completed_max: u32) -> QueueConfig {
    let mut q = QueueConfig::new("q");
    q.retention.completed_max = completed_max;
    q.retention.completed_ms = 1_000;
    q
}

#[test]
fn by_count_and_by_age() {
    let mut h = Harness::standalone();
    h.ok(T, Input::DeclareQueue(config(2)));
    let ids: Vec<JobId> = (0..3).map(|i| h.complete_one(T + i, "q")).collect();
    assert!(h.engine.job(ids[0]).is_none(), "count bound");
    assert_eq!(h.engine.queue_stats("q").unwrap().completed, 2);
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 1_001)));
    h.advance(T + 1_001);
    assert!(h.engine.job(ids[1]).is_none(), "age bound");
    assert_eq!(h.engine.job(ids[2]).unwrap().state, JobState::Completed);
    h.advance(T + 1_002);
    assert!(h.engine.job(ids[2]).is_none());
    assert_eq!(h.engine.poll_timeout(), None);
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.completed, 3);
}

#[test]
fn lowering_the_count_bound_trims_at_once() {
    let mut h = Harness::standalone();
    h.ok(T, Input::DeclareQueue(config(2)));
    let ids: Vec<JobId> = (0..2).map(|_| h.complete_one(T, "q")).collect();
    let (reply, cmds) = h.ok(T, Input::DeclareQueue(config(0)));
    assert_eq!(
        reply,
        Reply::QueueDeclared {
            created: false,
            changed: true
        }
    );
    assert!(cmds.is_empty());
    assert!(ids.iter().all(|&id| h.engine.job(id).is_none()));
    let s = h.engine.queue_stats("q").unwrap();
    assert_eq!((s.completed, s.totals.completed), (0, 2));
    // With a bound of zero a job is forgotten as it finishes.
    let id = h.complete_one(T + 1, "q");
    assert!(h.engine.job(id).is_none());
}
