//! Issue 6, decision "Resume decides by nominal time": a boundary whose
//! nominal time fell inside the pause is skipped `paused`, even if its
//! jittered due time is after the resume. A boundary whose nominal time is
//! after the resume fires.

use chime_core::{Input, Overlap, SkipReason};
use chime_tests::scenario::*;

/// Hour-aligned: `@every 1h` boundaries are `T0 + k * HOUR`.
const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;
const MIN: i64 = 60_000;

#[test]
fn a_boundary_due_after_the_resume_but_nominal_inside_the_pause_is_skipped() {
    let mut h = Harness::standalone();
    let mut d = def("r", "@every 1h", "q");
    d.jitter_ms = 1_800_000;
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));
    // Run on time until the cursor's boundary has a jitter above 2 minutes.
    let mut fired = 0;
    let (c, due) = loop {
        let info = h.engine.schedule("r").unwrap();
        let c = info.next_nominal.unwrap().as_millis();
        let due = info.next_due_at.unwrap().as_millis();
        if due - c > 2 * MIN {
            break (c, due);
        }
        assert_eq!(nominals(&h.advance(due)), vec![c]);
        fired += 1;
        assert!(fired < 20, "no boundary with a jitter above 2 minutes");
    };
    // Paused from c − 1m to c + 1m: c's nominal is inside, its due time after.
    let (_, cmds) = h.ok(
        c - MIN,
        Input::PauseSchedule {
            name: "r".into(),
            note: None,
        },
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    let (_, cmds) = h.ok(c + MIN, Input::ResumeSchedule { name: "r".into() });
    assert!(cmds.is_empty(), "c is not due yet: {cmds:?}");
    assert!(due > c + MIN);
    let cmds = h.advance(due);
    assert!(fires(&cmds).is_empty(), "{cmds:?}");
    assert_eq!(skips(&cmds), vec![(SkipReason::Paused, 1, c, c)]);
    // The next boundary (nominal after the resume) fires at its due time.
    let info = h.engine.schedule("r").unwrap();
    assert_eq!(info.next_nominal, Some(t(c + HOUR)));
    let next_due = info.next_due_at.unwrap().as_millis();
    assert_eq!(nominals(&h.advance(next_due)), vec![c + HOUR]);
    let info = h.engine.schedule("r").unwrap();
    assert_eq!((info.fires, info.skipped), (fired + 1, 1));
    h.check_replay();
}
