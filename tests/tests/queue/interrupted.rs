//! Interrupted is not failed (field report, issue 21, items 2 and 3): a
//! host that restarts on a store it owns alone sends `Recover`, which
//! releases every claim of the dead incarnation at once — also one whose
//! lease ran out while the host was down, which is an interruption, not
//! `lease_expired` — without using an attempt or a backoff (a crontab
//! queue with `maxAttempts: 1` runs the job again instead of
//! dead-lettering it). One interruption more than `maxInterruptions`
//! makes the job dead with reason `interrupted`; redrive resets the count.

use chime_core::{
    Claimed, Command, EnqueueRequest, Event, Input, JobId, JobState, Payload, QueueConfig, Reply,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn setup(max_attempts: u32, max_interruptions: u32, dead_letter: bool) -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("cron");
    q.max_attempts = max_attempts;
    q.max_interruptions = max_interruptions;
    q.dead_letter = dead_letter;
    h.ok(T, Input::DeclareQueue(q));
    h.ok(
        T,
        Input::Enqueue(EnqueueRequest::new("cron", Payload::null())),
    );
    h
}

fn recover(h: &mut Harness, now: i64) -> (u64, Vec<Command>) {
    match h.ok(now, Input::Recover) {
        (Reply::Recovered { interrupted }, cmds) => (interrupted, cmds),
        other => panic!("{other:?}"),
    }
}

fn interrupted(cmds: &[Command]) -> Vec<(JobId, u32, u32)> {
    events(cmds)
        .into_iter()
        .filter_map(|e| match e {
            Event::JobInterrupted {
                job,
                attempt,
                interruptions,
                ..
            } => Some((*job, *attempt, *interruptions)),
            _ => None,
        })
        .collect()
}

#[test]
fn recover_releases_a_live_lease_at_once_without_using_an_attempt() {
    let mut h = setup(1, 3, true);
    let c: Claimed = h.claim_one(T, "cron");
    assert_eq!(c.attempt, 1);
    // The host dies 1 s into a 60 s lease and is back 1 s later.
    h.restart();
    let (n, cmds) = recover(&mut h, T + 2_000);
    assert_eq!(n, 1);
    assert_eq!(interrupted(&cmds), [(c.job, 1, 1)]);
    assert!(
        cmds.iter()
            .any(|c| matches!(c, Command::Wake { queue } if &**queue == "cron")),
        "{cmds:?}"
    );
    let job = h.engine.job(c.job).unwrap();
    assert_eq!((job.state, job.attempt), (JobState::Available, 0));
    // Runs again at once, under the same attempt number, and completes:
    // with `maxAttempts: 1` the interruption did not use the only attempt.
    let again = h.claim_one(T + 2_000, "cron");
    assert_eq!((again.job, again.attempt), (c.job, 1));
    assert_ne!(again.token, c.token, "a fresh lease");
    let done = Input::Complete {
        job: again.job,
        token: again.token,
    };
    h.ok(T + 3_000, done);
    // The old token is void.
    let stale = Input::Complete {
        job: c.job,
        token: c.token,
    };
    assert_eq!(h.run(T + 3_000, stale).0.unwrap_err().code(), "lease_lost");
    let totals = h.engine.queue_stats("cron").unwrap().totals;
    assert_eq!(
        (
            totals.interrupted,
            totals.completed,
            totals.retried,
            totals.dead,
            totals.expired
        ),
        (1, 1, 0, 0, 0)
    );
    h.check_replay();
}

#[test]
fn a_lease_that_ran_out_during_the_downtime_is_an_interruption() {
    let mut h = setup(1, 3, true);
    let c = h.claim_one(T, "cron");
    // Down for two minutes: the 60 s lease ran out meanwhile. Recover
    // comes before the advance, so it is not `lease_expired` (a failed
    // attempt, which would dead-letter a `maxAttempts: 1` job).
    let (n, cmds) = recover(&mut h, T + 120_000);
    assert_eq!(n, 1);
    assert_eq!(interrupted(&cmds), [(c.job, 1, 1)]);
    assert!(
        !events(&cmds)
            .iter()
            .any(|e| matches!(e, Event::LeaseExpired { .. } | Event::JobDead { .. })),
        "{cmds:?}"
    );
    assert_eq!(h.engine.job(c.job).unwrap().state, JobState::Available);
    // A lease that runs out while the host is up is still a failure.
    let again = h.claim_one(T + 120_000, "cron");
    let cmds = h.advance(T + 180_000);
    assert!(matches!(
        events(&cmds)[..],
        [Event::LeaseExpired { job, .. }, Event::JobDead { reason, .. }]
            if *job == again.job && reason == "exhausted"
    ));
    h.check_replay();
}

#[test]
fn one_interruption_beyond_the_bound_is_dead_with_reason_interrupted() {
    let mut h = setup(5, 2, true);
    let mut now = T;
    for n in 1..=2 {
        let c = h.claim_one(now, "cron");
        assert_eq!(c.attempt, 1, "interruptions use no attempt");
        now += 1_000;
        let (_, cmds) = recover(&mut h, now);
        assert_eq!(interrupted(&cmds), [(c.job, 1, n)]);
        assert_eq!(h.engine.job(c.job).unwrap().state, JobState::Available);
    }
    let c = h.claim_one(now, "cron");
    let (n, cmds) = recover(&mut h, now + 1_000);
    assert_eq!(n, 1);
    assert!(
        matches!(
            events(&cmds)[..],
            [
                Event::JobInterrupted { interruptions: 3, .. },
                Event::JobDead { job, attempts: 1, reason, .. },
            ] if *job == c.job && reason == "interrupted"
        ),
        "{cmds:?}"
    );
    let job = h.engine.job(c.job).unwrap();
    assert_eq!(job.state, JobState::Dead);
    assert_eq!(job.last_error.as_deref(), Some("interrupted"));
    // Redrive gives the job its interruptions back too.
    h.ok(
        now + 2_000,
        Input::Redrive {
            queue: "cron".into(),
            job: Some(c.job),
        },
    );
    h.claim_one(now + 2_000, "cron");
    let (_, cmds) = recover(&mut h, now + 3_000);
    assert_eq!(interrupted(&cmds), [(c.job, 1, 1)]);
    let totals = h.engine.queue_stats("cron").unwrap().totals;
    assert_eq!((totals.interrupted, totals.dead, totals.retried), (4, 1, 0));
    h.restart();
    h.check_replay();
}

#[test]
fn without_dead_letters_it_is_dropped_and_zero_means_never_again() {
    let mut h = setup(5, 0, false);
    let c = h.claim_one(T, "cron");
    let (_, cmds) = recover(&mut h, T + 1_000);
    assert!(
        matches!(
            events(&cmds)[..],
            [
                Event::JobInterrupted { interruptions: 1, .. },
                Event::JobDropped { job, reason, .. },
            ] if *job == c.job && reason == "interrupted"
        ),
        "{cmds:?}"
    );
    h.check_replay();
}

#[test]
fn recover_without_claims_changes_nothing_but_the_clock() {
    let mut h = setup(1, 3, true);
    let (n, cmds) = recover(&mut h, T + 1_000);
    assert_eq!(n, 0);
    assert!(cmds.is_empty(), "{cmds:?}");
    // The default bound.
    assert_eq!(QueueConfig::new("x").max_interruptions, 3);
    h.check_replay();
}

#[test]
fn released_within_the_advance_budget_and_void_at_once() {
    // Like lease expiries, the releases are budgeted per advance
    // (`firesPerAdvance`): the rest follow at the next advances, which
    // `poll_timeout` asks for at once; every old token is void from the
    // `Recover` on.
    let mut config = chime_core::EngineConfig::default();
    config.limits.fires_per_advance = 2;
    let mut h = Harness::new(config);
    h.ok(T, Input::DeclareQueue(QueueConfig::new("q")));
    for _ in 0..5 {
        h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    }
    let claimed = h.claim(T, "q", 5, None);
    assert_eq!(claimed.len(), 5);
    let (n, cmds) = recover(&mut h, T + 1_000);
    assert_eq!(n, 5);
    assert_eq!(interrupted(&cmds).len(), 2, "{cmds:?}");
    assert_eq!(h.engine.poll_timeout(), Some(t(T + 1_000)));
    let stale = Input::Complete {
        job: claimed[4].job,
        token: claimed[4].token,
    };
    // (Its own advance releases the next two.)
    let (r, more) = h.run(T + 1_000, stale);
    assert_eq!(r.unwrap_err().code(), "lease_lost");
    assert_eq!(interrupted(&more).len(), 2, "{more:?}");
    let mut seen = interrupted(&cmds).len() + 2;
    while seen < 5 {
        let cmds = h.advance(T + 1_000);
        assert!(!cmds.is_empty());
        seen += interrupted(&cmds).len();
        assert!(
            !events(&cmds)
                .iter()
                .any(|e| matches!(e, Event::LeaseExpired { .. })),
            "{cmds:?}"
        );
    }
    assert_eq!(seen, 5);
    let again = h.claim(T + 1_000, "q", 5, None);
    assert!(again.iter().all(|c| c.attempt == 1), "{again:?}");
    h.check_replay();
}
