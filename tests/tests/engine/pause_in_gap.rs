//! Issue 6, bug B: during a leadership gap a boundary's fate (paused or
//! not) is decided by the schedule's pause state at the boundary's nominal
//! time, not when the backlog is processed. (1) Pause + resume in a gap
//! does not turn the boundaries that came due while active into `paused`
//! skips: the next grant catches them up. (2) A schedule paused in its
//! definition and unpaused by an upsert in a gap does not fire the
//! boundaries that came due while it was paused.

use chime_core::{
    EngineConfig, Epoch, Event, FireReason, Input, Overlap, Reply, ScheduleStatus, SkipReason,
};
use chime_tests::scenario::*;

/// Hour-aligned, so `@every 1m` boundaries are `T0 + k * MIN`.
const T0: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;

fn replica() -> Harness {
    Harness::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    })
}

fn pause() -> Input {
    Input::PauseSchedule {
        name: "tick".into(),
        note: None,
    }
}

fn resume() -> Input {
    Input::ResumeSchedule {
        name: "tick".into(),
    }
}

fn minutes(range: std::ops::RangeInclusive<i64>) -> Vec<i64> {
    range.map(|k| T0 + k * MIN).collect()
}

/// A replica leading until T0+90s with `tick` (`@every 1m`) that fired
/// T0+1m, then lost leadership.
fn lapsed(overlap: Overlap) -> Harness {
    let mut h = replica();
    h.ok(T0, grant(1, T0 + 90_000));
    let mut d = def("tick", "@every 1m", "q");
    d.overlap = overlap;
    h.ok(T0, Input::UpsertSchedule(d));
    assert_eq!(nominals(&h.advance(T0 + MIN)), vec![T0 + MIN]);
    let cmds = h.advance(T0 + 90_000);
    assert_eq!(
        events(&cmds),
        vec![&Event::LeadershipLost { epoch: Epoch(1) }]
    );
    h
}

#[test]
fn pause_and_resume_at_one_instant_in_a_gap_keep_the_backlog() {
    let mut h = lapsed(Overlap::Allow);
    // 10 boundaries (T0+2m ..= T0+11m) came due while active.
    let (r, cmds) = h.ok(T0 + 11 * MIN + 30_000, pause());
    assert_eq!(
        r,
        Reply::ScheduleStatus {
            status: ScheduleStatus::Paused
        }
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    let (r, cmds) = h.ok(T0 + 11 * MIN + 30_000, resume());
    assert_eq!(
        r,
        Reply::ScheduleStatus {
            status: ScheduleStatus::Active
        }
    );
    assert!(
        cmds.is_empty(),
        "no paused skips for active boundaries: {cmds:?}"
    );
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (1, 0));
    assert_eq!(info.next_nominal, Some(t(T0 + 2 * MIN)), "backlog kept");

    let (_, cmds) = h.ok(T0 + 12 * MIN + 30_000, grant(2, T0 + 60 * MIN));
    assert_eq!(nominals(&cmds), minutes(2..=12));
    let reasons: Vec<FireReason> = fires(&cmds).iter().map(|f| f.reason).collect();
    let mut expected = vec![FireReason::Catchup; 10];
    expected.push(FireReason::Scheduled);
    assert_eq!(reasons, expected);
    assert!(fires(&cmds).iter().all(|f| f.epoch == Epoch(2)));
    assert_eq!(skips(&cmds), vec![]);
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (12, 0));
    h.check_replay();
}

#[test]
fn pause_then_later_resume_in_a_gap_skips_only_the_paused_stretch() {
    let mut h = lapsed(Overlap::Allow);
    let (_, cmds) = h.ok(T0 + 11 * MIN + 30_000, pause());
    assert!(cmds.is_empty(), "{cmds:?}");
    // T0+12m, 13m, 14m have their nominal time inside the pause.
    let (_, cmds) = h.ok(T0 + 14 * MIN + 30_000, resume());
    assert_eq!(skips(&cmds), vec![], "not leader: nothing processed yet");
    let (_, cmds) = h.ok(T0 + 15 * MIN + 30_000, grant(2, T0 + 60 * MIN));
    let mut expected = minutes(2..=11);
    expected.push(T0 + 15 * MIN);
    assert_eq!(nominals(&cmds), expected);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 3, T0 + 12 * MIN, T0 + 14 * MIN)]
    );
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (12, 3));
    h.check_replay();
}

#[test]
fn default_skip_fires_the_most_recent_and_skips_the_rest_as_superseded() {
    let mut h = replica();
    h.ok(T0, grant(1, T0 + 30_000));
    h.ok(T0, Input::UpsertSchedule(def("tick", "@every 1m", "q")));
    let cmds = h.advance(T0 + 30_000);
    assert_eq!(
        events(&cmds),
        vec![&Event::LeadershipLost { epoch: Epoch(1) }]
    );
    // T0+1m ..= T0+10m came due while active.
    h.ok(T0 + 10 * MIN + 30_000, pause());
    let (_, cmds) = h.ok(T0 + 10 * MIN + 30_000, resume());
    assert!(cmds.is_empty(), "{cmds:?}");
    let (_, cmds) = h.ok(T0 + 10 * MIN + 30_000, grant(2, T0 + 60 * MIN));
    assert_eq!(nominals(&cmds), vec![T0 + 10 * MIN]);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Superseded, 9, T0 + MIN, T0 + 9 * MIN)]
    );
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (1, 9));
    h.check_replay();
}

#[test]
fn unpausing_upsert_in_a_gap_does_not_fire_the_paused_boundaries() {
    let mut h = replica();
    h.ok(T0, grant(1, T0 + 90_000));
    let mut d = def("tick", "@every 1m", "q");
    d.overlap = Overlap::Allow;
    d.paused = true;
    h.ok(T0, Input::UpsertSchedule(d.clone()));
    assert_eq!(
        skips(&h.advance(T0 + MIN)),
        vec![(SkipReason::Paused, 1, T0 + MIN, T0 + MIN)]
    );
    let cmds = h.advance(T0 + 90_000);
    assert_eq!(
        events(&cmds),
        vec![&Event::LeadershipLost { epoch: Epoch(1) }]
    );
    // T0+2m ..= T0+11m came due while paused.
    d.paused = false;
    let (r, cmds) = h.ok(T0 + 11 * MIN + 30_000, Input::UpsertSchedule(d));
    assert_eq!(
        r,
        Reply::ScheduleUpserted {
            version: 2,
            next_fire: Some(t(T0 + 2 * MIN)),
            changed: true
        }
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    let (_, cmds) = h.ok(T0 + 12 * MIN + 30_000, grant(2, T0 + 60 * MIN));
    assert_eq!(nominals(&cmds), vec![T0 + 12 * MIN]);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 10, T0 + 2 * MIN, T0 + 11 * MIN)]
    );
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!(info.status, ScheduleStatus::Active);
    assert_eq!((info.fires, info.skipped), (1, 11));
    h.check_replay();
}
