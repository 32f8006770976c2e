//! Fencing: every claim issues a new token; after a re-claim the old
//! token is `lease_lost` for heartbeat, complete and fail, and the
//! rejected call changes nothing (the snapshot is byte-identical); a job
//! that does not exist is `unknown_job`.

use chime_core::{EnqueueRequest, Input, JobState, LeaseToken, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

#[test]
fn a_stale_token_after_a_reclaim_is_fenced_off() {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("q");
    q.lease_ms = 5_000;
    h.ok(T, Input::DeclareQueue(q));
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let claim = || Input::Claim {
        queue: "q".into(),
        worker: "w".into(),
        max: 1,
        lease_ms: None,
    };
    let Reply::Claimed { jobs } = h.ok(T, claim()).0 else {
        panic!()
    };
    let old = jobs[0].clone();
    // The first worker stalls: its lease expires, the job is retried and
    // claimed again by someone else with a new token.
    h.advance(T + 5_000);
    let run_at = h.engine.job(old.job).unwrap().run_at.as_millis();
    let Reply::Claimed { jobs } = h.ok(run_at, claim()).0 else {
        panic!()
    };
    let new = jobs[0].clone();
    assert_eq!(new.job, old.job);
    assert!(new.token > old.token, "tokens strictly increase");

    let stale: [Input; 3] = [
        Input::Heartbeat {
            job: old.job,
            token: old.token,
            lease_ms: None,
        },
        Input::Complete {
            job: old.job,
            token: old.token,
        },
        Input::Fail {
            job: old.job,
            token: old.token,
            error: "late".into(),
            retry_at: None,
        },
    ];
    for input in stale {
        let before = h.engine.snapshot().to_json();
        let (reply, cmds) = h.run(run_at, input);
        assert_eq!(reply.unwrap_err().code(), "lease_lost");
        assert!(cmds.is_empty());
        assert_eq!(h.engine.snapshot().to_json(), before, "nothing changed");
    }
    // A token never issued is fenced off too.
    let bogus = Input::Complete {
        job: old.job,
        token: LeaseToken(999),
    };
    assert_eq!(h.run(run_at, bogus).0.unwrap_err().code(), "lease_lost");
    // A job that does not exist is unknown, whatever the token.
    let unknown = Input::Heartbeat {
        job: chime_core::JobId(77),
        token: new.token,
        lease_ms: None,
    };
    assert_eq!(h.run(run_at, unknown).0.unwrap_err().code(), "unknown_job");
    // The current holder is unaffected.
    let done = Input::Complete {
        job: new.job,
        token: new.token,
    };
    let (reply, _) = h.ok(run_at + 1, done);
    assert_eq!(
        reply,
        Reply::Job {
            job: new.job,
            state: JobState::Completed,
            run_at: None
        }
    );
    // And after completion its own token is stale as well.
    let late = Input::Heartbeat {
        job: new.job,
        token: new.token,
        lease_ms: None,
    };
    assert_eq!(h.run(run_at + 2, late).0.unwrap_err().code(), "lease_lost");
}
