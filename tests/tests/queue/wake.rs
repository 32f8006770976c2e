//! `Wake` tells the host a queue has claimable work: exactly one per queue
//! per transition from "nothing available" to "something available" —
//! by enqueue, by promotion of delayed jobs, by a retry due at once, or by
//! redrive — and none while the queue already has available jobs.

use chime_core::{Command, EnqueueRequest, Input, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn wakes(cmds: &[Command]) -> Vec<&str> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Wake { queue } => Some(&**queue),
            _ => None,
        })
        .collect()
}

fn enqueue(h: &mut Harness, now: i64, queue: &str, delay_ms: Option<i64>) -> Vec<Command> {
    let mut req = EnqueueRequest::new(queue, Payload::null());
    req.delay_ms = delay_ms;
    h.ok(now, Input::Enqueue(req)).1
}

#[test]
fn one_wake_per_queue_per_transition_to_claimable() {
    let mut h = Harness::standalone();
    for _ in 0..3 {
        assert!(wakes(&enqueue(&mut h, T, "a", Some(10))).is_empty());
        assert!(wakes(&enqueue(&mut h, T, "b", Some(10))).is_empty());
    }
    // Six promotions in one advance: one wake per queue.
    assert_eq!(wakes(&h.advance(T + 10)), ["a", "b"]);
    assert!(wakes(&enqueue(&mut h, T + 11, "a", None)).is_empty());
    assert_eq!(h.claim(T + 12, "a", 10, None).len(), 4);
    assert_eq!(wakes(&enqueue(&mut h, T + 13, "a", None)), ["a"]);
    // A delayed job promoted into a queue that has work: no wake.
    enqueue(&mut h, T + 13, "a", Some(5));
    assert!(wakes(&h.advance(T + 18)).is_empty());
}

#[test]
fn a_retry_due_at_once_and_a_redrive_wake_an_empty_queue_only() {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("q");
    q.max_attempts = 2;
    h.ok(T, Input::DeclareQueue(q));
    let mut d = QueueConfig::new("d");
    d.max_attempts = 1;
    h.ok(T, Input::DeclareQueue(d));
    for queue in ["q", "q", "d", "d"] {
        enqueue(&mut h, T, queue, None);
    }
    // Every job claimed and failed: retries due at once, dead letters.
    let mut wakes_seen = Vec::new();
    for queue in ["q", "d"] {
        for c in h.claim(T, queue, 2, None) {
            let input = Input::Fail {
                job: c.job,
                token: c.token,
                error: "e".into(),
                retry_at: Some(t(T - 5)),
            };
            let cmds = h.ok(T + 1, input).1;
            wakes_seen.push(wakes(&cmds).len());
        }
    }
    // The first retry wakes "q", the second finds it claimable; dead
    // letters wake nothing.
    assert_eq!(wakes_seen, [1, 0, 0, 0]);
    let dead: Vec<_> = h
        .engine
        .dead_letters("d", 10)
        .iter()
        .map(|j| j.id)
        .collect();
    let one = Input::Redrive {
        queue: "d".into(),
        job: Some(dead[0]),
    };
    let (reply, cmds) = h.ok(T + 2, one);
    assert!(matches!(reply, Reply::Count { count: 1, .. }));
    assert_eq!(wakes(&cmds), ["d"]);
    let all = Input::Redrive {
        queue: "d".into(),
        job: None,
    };
    let (reply, cmds) = h.ok(T + 3, all);
    assert!(matches!(reply, Reply::Count { count: 1, .. }));
    assert!(wakes(&cmds).is_empty(), "already claimable: {cmds:?}");
}
