//! `limits.pauseChanges`: while boundaries up to now are unprocessed (a
//! leadership gap), every pause state change is logged so that each
//! boundary keeps the state it had at its nominal time; a change beyond
//! the limit is refused with `limit_exceeded` (`pause_changes`) by
//! `PauseSchedule`, `ResumeSchedule` and a pausing `UpsertSchedule` alike,
//! and changes nothing. An upsert that leaves the pause state alone is not
//! limited, nor one that changes the grid (its unprocessed boundaries are
//! dropped as `redefined`, so nothing needs logging). With nothing
//! unprocessed (leader, backlog caught up) nothing is logged and there is
//! no limit. (Mutation testing: `pause_room` replaced by `Ok(())`, its
//! `cursor <= clock` turned into `>`, and the upsert's condition for
//! checking it, were not noticed.)

use chime_core::{
    EngineConfig, Epoch, Error, Event, Input, Limits, Overlap, Reply, ScheduleStatus, SkipReason,
};
use chime_tests::scenario::*;

/// Hour-aligned, so `@every 1m` boundaries are `T0 + k * MIN`.
const T0: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;
const HALF: i64 = 30_000;

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

fn status(h: &Harness) -> ScheduleStatus {
    h.engine.schedule("tick").unwrap().status
}

fn full(limit: usize) -> Error {
    Error::LimitExceeded {
        what: "pause_changes",
        limit: limit as u64,
    }
}

/// A replica with `limits.pauseChanges` = `limit`, leading until T0+90s
/// with `tick` (`@every 1m`, `allow`) that fired T0+1m, then lost
/// leadership: from T0+2m on, boundaries stay unprocessed.
fn lapsed(limit: usize) -> Harness {
    let mut h = Harness::new(EngineConfig {
        standalone: false,
        limits: Limits {
            pause_changes: limit,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    h.ok(T0, grant(1, T0 + 90_000));
    h.ok(T0, Input::UpsertSchedule(tick(false)));
    assert_eq!(nominals(&h.advance(T0 + MIN)), vec![T0 + MIN]);
    let cmds = h.advance(T0 + 90_000);
    assert_eq!(
        events(&cmds),
        vec![&Event::LeadershipLost { epoch: Epoch(1) }]
    );
    h
}

fn tick(paused: bool) -> chime_core::ScheduleDef {
    let mut d = def("tick", "@every 1m", "q");
    d.overlap = Overlap::Allow;
    d.paused = paused;
    d
}

/// `input` at `now` is refused with `full(limit)`; nothing but the clock
/// changes (the refusal needs state: the advance before it stands).
fn refused(h: &mut Harness, now: i64, input: Input, limit: usize) {
    h.advance(now);
    let before = h.engine.snapshot().to_json();
    let (reply, cmds) = h.run(now, input.clone());
    assert_eq!(reply.unwrap_err(), full(limit), "{input:?}");
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before, "{input:?}");
}

#[test]
fn pause_resume_and_upsert_beyond_the_limit_in_a_gap() {
    let mut h = lapsed(2);
    // Two changes fill the log.
    h.ok(T0 + 11 * MIN + HALF, pause());
    h.ok(T0 + 12 * MIN + HALF, resume());
    assert_eq!(status(&h), ScheduleStatus::Active);
    // A third, by either input, is refused.
    refused(&mut h, T0 + 13 * MIN + HALF, pause(), 2);
    refused(
        &mut h,
        T0 + 13 * MIN + HALF,
        Input::UpsertSchedule(tick(true)),
        2,
    );
    assert_eq!(status(&h), ScheduleStatus::Active);
    let info = h.engine.schedule("tick").unwrap();
    assert_eq!((info.version, info.def.paused), (1, false));

    // The next grant processes the backlog with the two logged changes:
    // only T0+12m lies in the paused stretch.
    let (_, cmds) = h.ok(T0 + 14 * MIN + HALF, grant(2, T0 + 60 * MIN));
    let mut expected: Vec<i64> = (2..=11).map(|k| T0 + k * MIN).collect();
    expected.extend([T0 + 13 * MIN, T0 + 14 * MIN]);
    assert_eq!(nominals(&cmds), expected);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 1, T0 + 12 * MIN, T0 + 12 * MIN)]
    );

    // Caught up: nothing is logged, so any number of changes is accepted.
    for k in 0..5 {
        let now = T0 + 15 * MIN + k * 1_000;
        let (r, _) = h.ok(now, if k % 2 == 0 { pause() } else { resume() });
        let want = if k % 2 == 0 {
            ScheduleStatus::Paused
        } else {
            ScheduleStatus::Active
        };
        assert_eq!(r, Reply::ScheduleStatus { status: want });
    }
    assert_eq!(status(&h), ScheduleStatus::Paused);
    h.check_replay();
}

#[test]
fn resume_beyond_the_limit_in_a_gap() {
    let mut h = lapsed(1);
    h.ok(T0 + 11 * MIN + HALF, pause());
    assert_eq!(status(&h), ScheduleStatus::Paused);
    refused(&mut h, T0 + 12 * MIN + HALF, resume(), 1);
    assert_eq!(status(&h), ScheduleStatus::Paused);
    // An upsert that does not change the pause state is not limited.
    let mut d = tick(false);
    d.target.priority = 1;
    let (r, _) = h.ok(T0 + 12 * MIN + HALF, Input::UpsertSchedule(d));
    assert!(
        matches!(r, Reply::ScheduleUpserted { version: 2, .. }),
        "{r:?}"
    );
    assert_eq!(status(&h), ScheduleStatus::Paused);
    // Nor is one that changes the grid, even with the pause flag: the
    // unprocessed boundaries of the old grid are dropped (`redefined`).
    let mut d = tick(true);
    d.spec = "@every 2m".into();
    let (r, cmds) = h.ok(T0 + 12 * MIN + HALF, Input::UpsertSchedule(d));
    assert!(
        matches!(r, Reply::ScheduleUpserted { version: 3, .. }),
        "{r:?}"
    );
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Redefined, 11, T0 + 2 * MIN, T0 + 12 * MIN)]
    );
    assert_eq!(status(&h), ScheduleStatus::Paused);
    h.check_replay();
}
