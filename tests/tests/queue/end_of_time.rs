//! End of time. The clock cannot pass `Timestamp::MAX` (the last
//! millisecond of year 9999), so a lease granted near it is cut at `MAX`
//! and lasts until the end of time: at `MAX` it has not expired, and
//! `Heartbeat`/`Complete` (or `RenewLease` for a named lease) presented
//! there with the current token succeed. Nothing is left due at `MAX`, so
//! `poll_timeout()` does not ask the host to advance again and again.

use chime_core::{EnqueueRequest, Event, Input, JobState, Payload, Reply, Timestamp};
use chime_tests::scenario::*;

const MAX: i64 = Timestamp::MAX.as_millis();

fn claimed(now: i64, lease_ms: i64) -> (Harness, chime_core::Claimed) {
    let mut h = Harness::standalone();
    h.ok(
        now,
        Input::Enqueue(EnqueueRequest::new("q", Payload::null())),
    );
    let c = h.claim(now, "q", 1, Some(lease_ms)).pop().unwrap();
    (h, c)
}

fn expired(cmds: &[chime_core::Command]) -> usize {
    events(cmds)
        .iter()
        .filter(|e| matches!(e, Event::LeaseExpired { .. }))
        .count()
}

#[test]
fn a_lease_cut_at_max_can_be_completed_at_max() {
    let (mut h, c) = claimed(MAX - 1_000, 60_000);
    assert_eq!(c.deadline, Timestamp::MAX, "cut at the end of time");
    assert_eq!(expired(&h.advance(MAX)), 0);
    assert_eq!(h.engine.poll_timeout(), None, "nothing left due at MAX");
    let beat = Input::Heartbeat {
        job: c.job,
        token: c.token,
        lease_ms: Some(5_000),
    };
    assert_eq!(
        h.ok(MAX, beat).0,
        Reply::LeaseExtended {
            deadline: Timestamp::MAX
        }
    );
    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    let (reply, _) = h.ok(MAX, done);
    assert!(matches!(
        reply,
        Reply::Job {
            state: JobState::Completed,
            ..
        }
    ));
}

#[test]
fn a_lease_ending_before_max_still_expires_at_max() {
    let (mut h, c) = claimed(MAX - 1_000, 999);
    assert_eq!(c.deadline, t(MAX - 1));
    assert_eq!(expired(&h.advance(MAX)), 1);
    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    assert_eq!(h.run(MAX, done).0.unwrap_err().code(), "lease_lost");
}

#[test]
fn a_named_lease_cut_at_max_can_be_renewed_at_max() {
    let mut h = Harness::standalone();
    let acquire = Input::AcquireLease {
        name: "leader".into(),
        owner: "a".into(),
        ttl_ms: 3_600_000,
    };
    let Reply::Lease { token, expires_at } = h.ok(MAX - 10, acquire).0 else {
        panic!()
    };
    assert_eq!(expires_at, Timestamp::MAX);
    let cmds = h.advance(MAX);
    assert!(events(&cmds).is_empty(), "{cmds:?}");
    assert_eq!(h.engine.poll_timeout(), None);
    let renew = Input::RenewLease {
        name: "leader".into(),
        token,
        ttl_ms: 1_000,
    };
    assert_eq!(
        h.ok(MAX, renew).0,
        Reply::Lease {
            token,
            expires_at: Timestamp::MAX
        }
    );
    let other = Input::AcquireLease {
        name: "leader".into(),
        owner: "b".into(),
        ttl_ms: 1_000,
    };
    assert_eq!(h.run(MAX, other).0.unwrap_err().code(), "lease_held");
}
