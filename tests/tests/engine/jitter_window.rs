//! Issue 6, bug F: a jitter wider than the catch-up window lost on-time
//! runs (`@every 1h`, `jitterMs: 1800000`, `catchup.windowMs: 60000`, a
//! host advancing exactly at `poll_timeout()` for 48 h gave 1 fire and 47
//! `too_old`). The window is measured from the boundary's due time
//! (nominal + jitter): with no downtime every boundary fires on time.

use chime_core::{FireReason, Input, Overlap};
use chime_tests::scenario::*;

/// Hour-aligned: the boundaries are `T0 + k * HOUR`.
const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

#[test]
fn jitter_wider_than_the_window_fires_every_boundary_on_time() {
    let mut h = Harness::standalone();
    let mut d = def("j", "@every 1h", "q");
    d.jitter_ms = 1_800_000;
    d.catchup.window_ms = 60_000;
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));

    let mut all = Vec::new();
    let mut advances = 0;
    // Boundary 49 (T0 + 49h) is due at or after T0 + 49h.
    while let Some(next) = h
        .engine
        .poll_timeout()
        .filter(|n| n.as_millis() < T0 + 49 * HOUR)
    {
        let cmds = h.advance(next.as_millis());
        advances += 1;
        assert_eq!(skips(&cmds), vec![], "at {next:?}");
        let fs = fires(&cmds);
        assert_eq!(fs.len(), 1, "one fire per wake-up at {next:?}");
        assert_eq!(fs[0].due_at, next);
        all.push(fs[0].clone());
    }
    assert_eq!(advances, 48);
    assert_eq!(
        all.iter()
            .map(|f| f.nominal().as_millis())
            .collect::<Vec<_>>(),
        (1..=48).map(|k| T0 + k * HOUR).collect::<Vec<_>>()
    );
    for f in &all {
        assert_eq!(f.fired_at, f.due_at);
        assert_eq!(f.reason, FireReason::Scheduled);
        let jitter = f.due_at.as_millis() - f.nominal().as_millis();
        assert!((0..=1_800_000).contains(&jitter), "{jitter}");
    }
    // Non-vacuous: most jitters exceed the 60 s window.
    let wide = all
        .iter()
        .filter(|f| f.due_at.as_millis() - f.nominal().as_millis() > 60_000)
        .count();
    assert!(wide >= 24, "only {wide} of 48 jitters exceed the window");
    let info = h.engine.schedule("j").unwrap();
    assert_eq!((info.fires, info.skipped), (48, 0));
    h.check_replay();
}
