//! Pause and resume: paused boundaries are skipped (reason `paused`, one
//! event per advance), resume continues from the next boundary after now,
//! and the accounting identity holds throughout. Also `start_at`, `end_at`,
//! `max_fires` and one-shot completion.

use chime_core::{Event, Input, Reply, ScheduleStatus, SkipReason};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

#[test]
fn paused_boundaries_are_skipped_and_resume_starts_after_now() {
    let mut h = Harness::standalone();
    let mut d = def("p", "@every 1s", "q");
    d.overlap = chime_core::Overlap::Allow;
    h.ok(S, Input::UpsertSchedule(d));
    assert_eq!(nominals(&h.advance(S + 1000)), vec![S + 1000]);
    let (r, _) = h.ok(
        S + 1500,
        Input::PauseSchedule {
            name: "p".into(),
            note: Some("maintenance".into()),
        },
    );
    assert_eq!(
        r,
        Reply::ScheduleStatus {
            status: ScheduleStatus::Paused
        }
    );
    let info = h.engine.schedule("p").unwrap();
    assert_eq!(info.pause_note.as_deref(), Some("maintenance"));
    let cmds = h.advance(S + 10_200);
    assert!(fires(&cmds).is_empty());
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Paused, 9, S + 2000, S + 10_000)]
    );
    let (r, cmds) = h.ok(S + 10_700, Input::ResumeSchedule { name: "p".into() });
    assert_eq!(
        r,
        Reply::ScheduleStatus {
            status: ScheduleStatus::Active
        }
    );
    assert!(fires(&cmds).is_empty());
    let info = h.engine.schedule("p").unwrap();
    assert_eq!(info.next_nominal, Some(t(S + 11_000)));
    assert_eq!(info.pause_note, None);
    let cmds = h.advance(S + 11_000);
    assert_eq!(nominals(&cmds), vec![S + 11_000]);
    let info = h.engine.schedule("p").unwrap();
    assert_eq!((info.fires, info.skipped), (2, 9));
}

#[test]
fn created_paused_and_resumed_by_upsert() {
    let mut h = Harness::standalone();
    let mut d = def("p", "@every 1s", "q");
    d.paused = true;
    h.ok(S, Input::UpsertSchedule(d.clone()));
    assert_eq!(
        skips(&h.advance(S + 3000)),
        vec![(SkipReason::Paused, 3, S + 1000, S + 3000)]
    );
    d.paused = false;
    let (r, _) = h.ok(S + 3500, Input::UpsertSchedule(d));
    assert!(matches!(
        r,
        Reply::ScheduleUpserted {
            version: 2,
            changed: true,
            ..
        }
    ));
    assert_eq!(nominals(&h.advance(S + 4000)), vec![S + 4000]);
}

#[test]
fn unknown_or_completed() {
    let mut h = Harness::standalone();
    let (r, _) = h.run(
        S,
        Input::ResumeSchedule {
            name: "nope".into(),
        },
    );
    assert_eq!(r.unwrap_err().code(), "unknown_schedule");
    let mut d = def("once", "@at 2001-09-09T01:46:41Z", "q");
    d.overlap = chime_core::Overlap::Allow;
    h.ok(S, Input::UpsertSchedule(d));
    let cmds = h.advance(S + 1000);
    assert_eq!(nominals(&cmds), vec![S + 1000]);
    assert!(events(&cmds).iter().any(|e| matches!(
        e,
        Event::ScheduleCompleted { reason, .. } if reason == "exhausted"
    )));
    let info = h.engine.schedule("once").unwrap();
    assert_eq!(info.status, ScheduleStatus::Completed);
    assert_eq!(info.next_nominal, None);
    let (r, _) = h.ok(
        S + 2000,
        Input::PauseSchedule {
            name: "once".into(),
            note: None,
        },
    );
    assert_eq!(
        r,
        Reply::ScheduleStatus {
            status: ScheduleStatus::Completed
        }
    );
    assert_eq!(h.engine.poll_timeout(), None);
}

#[test]
fn start_end_and_max_fires() {
    let mut h = Harness::standalone();
    let mut d = def("w", "@every 1s", "q");
    d.overlap = chime_core::Overlap::Allow;
    d.start_at = Some(t(S + 5000));
    d.end_at = Some(t(S + 8000));
    let (r, _) = h.ok(S, Input::UpsertSchedule(d));
    assert!(matches!(r, Reply::ScheduleUpserted { next_fire: Some(n), .. } if n == t(S + 5000)));
    let cmds = h.advance(S + 20_000);
    assert_eq!(nominals(&cmds), vec![S + 5000, S + 6000, S + 7000]);
    assert!(events(&cmds).iter().any(|e| matches!(
        e,
        Event::ScheduleCompleted { reason, .. } if reason == "end_at"
    )));

    let mut d = def("m", "@every 1s", "q");
    d.overlap = chime_core::Overlap::Allow;
    d.max_fires = Some(2);
    h.ok(S + 20_000, Input::UpsertSchedule(d));
    let cmds = h.advance(S + 30_000);
    // All ten due boundaries are selected; the first two fire, then max_fires completes it.
    assert_eq!(nominals(&cmds), vec![S + 21_000, S + 22_000]);
    assert_eq!(
        h.engine.schedule("m").unwrap().status,
        ScheduleStatus::Completed
    );
}
