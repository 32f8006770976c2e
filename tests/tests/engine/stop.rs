//! Stop means stop (field report, issue 21, item 4): once `Stop` is
//! handled nothing new fires — no boundary fires and none is skipped
//! (cursors stay put, as in a leadership gap), a buffered fire waits,
//! `TriggerSchedule`/`Backfill` are `stopping` and `Claim` returns no jobs
//! — while running jobs may still heartbeat and complete. The state is in
//! the snapshot; the next start's `Recover` ends it and the missed
//! boundaries go through catch-up (item 2: the job still claimed at the
//! end is released at once, so an `overlap: skip` schedule resumes at
//! once instead of skipping until the old lease runs out).

use chime_core::{
    Command, EnqueueRequest, Event, FireReason, Input, Overlap, Payload, QueueConfig, Reply,
    SkipReason,
};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn every_second(h: &mut Harness, overlap: Overlap) {
    let mut d = def("tick", "@every 1s", "q");
    d.overlap = overlap;
    h.ok(T, Input::UpsertSchedule(d));
}

fn stop(h: &mut Harness, now: i64) -> u64 {
    match h.ok(now, Input::Stop) {
        (Reply::Stopping { claimed }, cmds) => {
            assert!(fires(&cmds).is_empty(), "{cmds:?}");
            claimed
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nothing_fires_or_is_skipped_while_stopping() {
    let mut h = Harness::standalone();
    h.ok(T, Input::DeclareQueue(QueueConfig::new("q")));
    every_second(&mut h, Overlap::Allow);
    assert_eq!(nominals(&h.advance(T + 1_000)), [T + 1_000]);
    let job = h.claim_one(T + 1_000, "q");
    assert_eq!(stop(&mut h, T + 1_500), 1);
    assert!(h.engine.is_stopping());
    // Inputs during the grace period (a heartbeat, advances) fire nothing
    // and skip nothing; nothing is due for the host's timer either.
    let beat = Input::Heartbeat {
        job: job.job,
        token: job.token,
        lease_ms: None,
    };
    let (_, cmds) = h.ok(T + 3_000, beat);
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(h.advance(T + 9_000).is_empty());
    assert!(
        h.engine
            .poll_timeout()
            .is_none_or(|t| t.as_millis() > T + 9_000)
    );
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(
        info.next_nominal.map(|t| t.as_millis()),
        Some(T + 2_000),
        "cursor stays put"
    );
    // No new work: triggers and backfills are refused, claims get nothing.
    let trigger = Input::TriggerSchedule {
        name: "tick".into(),
        overlap: None,
    };
    assert_eq!(h.run(T + 9_000, trigger).0.unwrap_err().code(), "stopping");
    let backfill = Input::Backfill {
        name: "tick".into(),
        from: t(T),
        to: t(T + 2_000),
        overlap: None,
    };
    assert_eq!(h.run(T + 9_000, backfill).0.unwrap_err().code(), "stopping");
    h.ok(
        T + 9_000,
        Input::Enqueue(EnqueueRequest::new("q", Payload::null())),
    );
    assert!(h.claim(T + 9_000, "q", 5, None).is_empty());
    // The running job may finish within the grace period.
    let done = Input::Complete {
        job: job.job,
        token: job.token,
    };
    h.ok(T + 9_500, done);
    // A second `Stop` changes nothing.
    assert_eq!(stop(&mut h, T + 9_600), 0);
    // The final snapshot keeps the state; the next start ends it.
    h.restart();
    assert!(h.engine.is_stopping());
    let (r, cmds) = h.ok(T + 12_500, Input::Recover);
    assert!(matches!(r, Reply::Recovered { interrupted: 0 }), "{r:?}");
    assert!(!h.engine.is_stopping());
    // The missed boundaries (T+2 s … T+12 s) go through catch-up in the
    // same call: each one fired or skipped (by catch-up's own rules).
    let f = fires(&cmds);
    assert!(!f.is_empty(), "{cmds:?}");
    assert!(
        f.iter()
            .all(|f| (T + 2_000..=T + 12_000).contains(&f.nominal().as_millis()))
    );
    let skipped: u64 = skips(&cmds).iter().map(|s| s.1).sum();
    assert_eq!(f.len() as u64 + skipped, 11, "{cmds:?}");
    assert!(skips(&cmds).iter().all(|s| s.0 != SkipReason::Overlap));
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(info.next_nominal.map(|t| t.as_millis()), Some(T + 13_000));
    h.check_replay();
}

#[test]
fn a_buffered_fire_waits_for_the_next_start() {
    let mut h = Harness::standalone();
    every_second(&mut h, Overlap::BufferOne);
    h.advance(T + 1_000);
    let job = h.claim_one(T + 1_000, "q");
    h.advance(T + 2_000); // buffered behind the running job
    stop(&mut h, T + 2_500);
    let done = Input::Complete {
        job: job.job,
        token: job.token,
    };
    let (_, cmds) = h.ok(T + 2_600, done);
    assert!(
        fires(&cmds).is_empty(),
        "the buffered fire is not released: {cmds:?}"
    );
    let cmds = h.ok(T + 4_000, Input::Recover).1;
    let reasons: Vec<FireReason> = fires(&cmds).iter().map(|f| f.reason).collect();
    assert!(reasons.contains(&FireReason::Buffered), "{cmds:?}");
    h.check_replay();
}

#[test]
fn overlap_skip_resumes_at_once_after_a_crash() {
    // The report: after a crash, an `overlap: skip` schedule skipped
    // (`overlap`) every boundary for 40 s, until the dead process's lease
    // ran out. With `Recover` the job runs again at once and the schedule
    // fires as soon as it completes.
    let mut h = Harness::standalone();
    h.ok(T, Input::DeclareQueue(QueueConfig::new("q")));
    every_second(&mut h, Overlap::Skip);
    h.advance(T + 1_000);
    let first = h.claim_one(T + 1_000, "q");
    // Crash at T+20.5 s (the job was running, its lease heartbeaten).
    for s in 2..=20 {
        h.advance(T + s * 1_000);
    }
    let beat = Input::Heartbeat {
        job: first.job,
        token: first.token,
        lease_ms: None,
    };
    h.ok(T + 20_000, beat);
    h.restart();
    let cmds = h.ok(T + 21_000, Input::Recover).1;
    assert!(
        events(&cmds)
            .iter()
            .any(|e| matches!(e, Event::JobInterrupted { job, .. } if *job == first.job)),
        "{cmds:?}"
    );
    let again = h.claim_one(T + 21_000, "q");
    assert_eq!(again.job, first.job);
    let done = Input::Complete {
        job: again.job,
        token: again.token,
    };
    h.ok(T + 21_500, done);
    let cmds = h.advance(T + 22_000);
    assert_eq!(nominals(&cmds), [T + 22_000], "{cmds:?}");
    assert!(
        !cmds
            .iter()
            .any(|c| matches!(c, Command::Event(Event::FireSkipped { .. })))
    );
    h.check_replay();
}
