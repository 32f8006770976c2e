//! Retry timing with the default backoff (base 5 s, cap 1 h, equal
//! jitter): the exact bounds per attempt, determinism for one seed, a
//! different spread for another seed, and the `retryAt` override; a retry
//! is reported (`job_retried`) and its time is what `poll_timeout()` names.

use chime_core::{EngineConfig, EnqueueRequest, Input, Payload, QueueConfig, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;
const ATTEMPTS: u32 = 12;

/// Fails `jobs` jobs `ATTEMPTS - 1` times each; returns every wait (ms),
/// job by job, attempt by attempt.
fn waits(seed: u64, jobs: u64) -> Vec<Vec<i64>> {
    let mut h = Harness::new(EngineConfig {
        seed,
        ..EngineConfig::default()
    });
    let mut q = QueueConfig::new("q");
    q.max_attempts = ATTEMPTS;
    h.ok(T, Input::DeclareQueue(q));
    let mut now = T;
    let mut all = Vec::new();
    for _ in 0..jobs {
        let req = EnqueueRequest::new("q", Payload::null());
        h.ok(now, Input::Enqueue(req));
        let mut w = Vec::new();
        for attempt in 1..ATTEMPTS {
            let jobs = h.claim(now, "q", 1, Some(10_000_000));
            assert_eq!(jobs[0].attempt, attempt);
            let fail = Input::Fail {
                job: jobs[0].job,
                token: jobs[0].token,
                error: "e".into(),
                retry_at: None,
            };
            let Reply::Job {
                run_at: Some(run_at),
                ..
            } = h.ok(now, fail).0
            else {
                panic!()
            };
            w.push(run_at.as_millis() - now);
            now = run_at.as_millis();
        }
        // Finish the job so the next one is claimed next.
        let jobs = [h.claim_one(now, "q")];
        let done = Input::Complete {
            job: jobs[0].job,
            token: jobs[0].token,
        };
        h.ok(now, done);
        all.push(w);
    }
    all
}

#[test]
fn waits_are_within_the_equal_jitter_bounds_of_each_attempt() {
    for w in waits(1, 20) {
        for (i, &wait) in w.iter().enumerate() {
            let attempt = i as u32 + 1;
            // d = min(cap, base * 2^(attempt-1)); wait in [d/2, d].
            let d = (5_000_i64 << (attempt - 1)).min(3_600_000);
            assert!(
                (d / 2..=d).contains(&wait),
                "attempt {attempt}: {wait} not in [{}, {d}]",
                d / 2
            );
        }
        // Attempts 1..=4: [2.5, 5] s, [5, 10] s, [10, 20] s, [20, 40] s;
        // from attempt 11 on the cap holds: [30, 60] min.
        assert!((1_800_000..=3_600_000).contains(&w[10]));
    }
}

#[test]
fn the_same_seed_gives_the_same_waits() {
    assert_eq!(waits(42, 5), waits(42, 5));
}

#[test]
fn another_seed_spreads_differently() {
    let (a, b) = (waits(42, 5), waits(43, 5));
    assert_ne!(a, b);
    // Not just one value: most waits differ.
    let same = a
        .iter()
        .flatten()
        .zip(b.iter().flatten())
        .filter(|(x, y)| x == y)
        .count();
    assert!(same < 5, "{same} identical waits");
}

fn claim_and_fail(h: &mut Harness, now: i64, retry_at: i64) -> Reply {
    let jobs = [h.claim_one(now, "q")];
    let fail = Input::Fail {
        job: jobs[0].job,
        token: jobs[0].token,
        error: "e".into(),
        retry_at: Some(t(retry_at)),
    };
    h.ok(now, fail).0
}

#[test]
fn retry_at_overrides_the_backoff_and_the_past_means_now() {
    let mut h = Harness::standalone();
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let Reply::Job { state, run_at, .. } = claim_and_fail(&mut h, T, T + 123_456) else {
        panic!()
    };
    assert_eq!(
        (state.as_str(), run_at),
        ("scheduled", Some(t(T + 123_456)))
    );
    let now = T + 123_456;
    let Reply::Job { state, run_at, .. } = claim_and_fail(&mut h, now, T - 5) else {
        panic!()
    };
    assert_eq!((state.as_str(), run_at), ("available", Some(t(now))));
}

#[test]
fn a_retry_is_reported_and_is_the_next_work() {
    let mut h = Harness::standalone();
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let c = h.claim_one(T, "q");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "boom".into(),
        retry_at: None,
    };
    let (reply, cmds) = h.ok(T + 1, fail);
    let Reply::Job {
        run_at: Some(run_at),
        ..
    } = reply
    else {
        panic!("{reply:?}")
    };
    assert_eq!(
        events(&cmds),
        [&chime_core::Event::JobRetried {
            job: c.job,
            queue: "q".into(),
            attempt: 1,
            run_at,
            error: "boom".into(),
        }]
    );
    assert_eq!(h.engine.poll_timeout(), Some(run_at));
    let info = h.engine.job(c.job).unwrap();
    assert_eq!(
        (info.run_at, info.last_error.as_deref()),
        (run_at, Some("boom"))
    );
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.retried, 1);
}
