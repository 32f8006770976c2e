//! The four overlap policies with a local queue: `skip`, `allow`,
//! `buffer_one` (released when the running job ends) and `cancel_previous`.

use chime_core::{CancelReason, Command, Event, FireReason, Input, Overlap, Reply, SkipReason};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

fn with_policy(overlap: Overlap) -> Harness {
    let mut h = Harness::standalone();
    let mut d = def("job", "@every 10s", "work");
    d.overlap = overlap;
    h.ok(S, Input::UpsertSchedule(d));
    h
}

fn claim(h: &mut Harness, now: i64) -> Vec<chime_core::Claimed> {
    let input = Input::Claim {
        queue: "work".into(),
        worker: "w1".into(),
        max: 10,
        lease_ms: Some(600_000),
    };
    match h.ok(now, input).0 {
        Reply::Claimed { jobs } => jobs,
        other => panic!("{other:?}"),
    }
}

fn complete(h: &mut Harness, now: i64, c: &chime_core::Claimed) -> Vec<Command> {
    h.ok(
        now,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    )
    .1
}

#[test]
fn skip_skips_while_the_job_runs() {
    let mut h = with_policy(Overlap::Skip);
    assert_eq!(nominals(&h.advance(S + 10_000)), vec![S + 10_000]);
    let jobs = claim(&mut h, S + 11_000);
    let cmds = h.advance(S + 20_000);
    assert!(fires(&cmds).is_empty());
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Overlap, 1, S + 20_000, S + 20_000)]
    );
    assert_eq!(h.engine.schedule("job").unwrap().in_flight.len(), 1);
    complete(&mut h, S + 25_000, &jobs[0]);
    assert!(h.engine.schedule("job").unwrap().in_flight.is_empty());
    assert_eq!(nominals(&h.advance(S + 30_000)), vec![S + 30_000]);
}

#[test]
fn allow_fires_every_boundary() {
    let mut h = with_policy(Overlap::Allow);
    for k in 1..=3 {
        assert_eq!(nominals(&h.advance(S + k * 10_000)), vec![S + k * 10_000]);
    }
    assert_eq!(h.engine.queue_stats("work").unwrap().available, 3);
    let info = h.engine.schedule("job").unwrap();
    assert_eq!((info.fires, info.skipped), (3, 0));
}

#[test]
fn buffer_one_keeps_one_and_releases_it_when_the_job_ends() {
    let mut h = with_policy(Overlap::BufferOne);
    h.advance(S + 10_000);
    let jobs = claim(&mut h, S + 11_000);
    let cmds = h.advance(S + 20_000);
    assert!(fires(&cmds).is_empty());
    assert!(events(&cmds).iter().any(|e| matches!(
        e,
        Event::FireBuffered { nominal, .. } if nominal.as_millis() == S + 20_000
    )));
    // A second boundary while one is buffered is skipped.
    let cmds = h.advance(S + 30_000);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Overlap, 1, S + 30_000, S + 30_000)]
    );
    assert!(h.engine.schedule("job").unwrap().buffered);
    // The running job ends: the buffered fire goes out at once.
    let cmds = complete(&mut h, S + 31_000, &jobs[0]);
    let fired = fires(&cmds);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].reason, FireReason::Buffered);
    assert_eq!(fired[0].nominal().as_millis(), S + 20_000);
    assert_eq!(fired[0].fired_at.as_millis(), S + 31_000);
    assert_eq!(fired[0].fire_id.to_string(), format!("job@{}", S + 20_000));
    let info = h.engine.schedule("job").unwrap();
    assert!(!info.buffered);
    assert_eq!((info.fires, info.skipped), (2, 1));
}

#[test]
fn cancel_previous_cancels_the_running_job() {
    let mut h = with_policy(Overlap::CancelPrevious);
    let first = fires(&h.advance(S + 10_000))[0].job.unwrap();
    let jobs = claim(&mut h, S + 11_000);
    assert_eq!(jobs[0].job, first);
    let cmds = h.advance(S + 20_000);
    assert_eq!(nominals(&cmds), vec![S + 20_000]);
    assert!(cmds.iter().any(|c| matches!(
        c,
        Command::Cancel { job, reason: CancelReason::Superseded } if *job == first
    )));
    assert_eq!(
        h.engine.job(first).unwrap().state,
        chime_core::JobState::Cancelled
    );
    let info = h.engine.schedule("job").unwrap();
    assert_eq!(info.in_flight.len(), 1);
    // The cancelled worker is fenced off.
    let (r, _) = h.run(
        S + 21_000,
        Input::Complete {
            job: first,
            token: jobs[0].token,
        },
    );
    assert_eq!(r.unwrap_err().code(), "lease_lost");
}

#[test]
fn manual_trigger_follows_the_policy_unless_overridden() {
    let mut h = with_policy(Overlap::Skip);
    h.advance(S + 10_000);
    let (r, _) = h.ok(
        S + 12_000,
        Input::TriggerSchedule {
            name: "job".into(),
            overlap: None,
        },
    );
    assert_eq!(
        r,
        Reply::Triggered {
            fire: None,
            buffered: false
        }
    );
    let (r, cmds) = h.ok(
        S + 12_000,
        Input::TriggerSchedule {
            name: "job".into(),
            overlap: Some(Overlap::Allow),
        },
    );
    let Reply::Triggered { fire: Some(id), .. } = r else {
        panic!("{r:?}")
    };
    assert_eq!(id.to_string(), format!("job@{}#m2", S + 12_000));
    assert_eq!(fires(&cmds)[0].reason, FireReason::Manual);
}
