//! A `now` earlier than the engine clock is clamped to the clock: each
//! such call emits exactly one `clock_clamped{given, clock}` event, the
//! clock never goes back, and no boundary fires twice.

use chime_core::{Command, Event, Input, Overlap, Reply};
use chime_tests::scenario::*;

const T0: i64 = 1_800_000_000_000;

fn clamped(cmds: &[Command]) -> Vec<(i64, i64)> {
    events(cmds)
        .into_iter()
        .filter_map(|e| match e {
            Event::ClockClamped { given, clock } => Some((given.as_millis(), clock.as_millis())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_earlier_now_is_clamped_reported_once_and_never_double_fires() {
    let mut h = Harness::standalone();
    let mut d = def("c", "@every 1s", "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));
    let cmds = h.advance(T0 + 5000);
    assert_eq!(
        nominals(&cmds),
        (1..=5).map(|k| T0 + k * 1000).collect::<Vec<_>>()
    );
    assert_eq!(clamped(&cmds), vec![]);

    // An Advance in the past: one event, nothing else.
    let cmds = h.advance(T0 + 3000);
    assert_eq!(clamped(&cmds), vec![(T0 + 3000, T0 + 5000)]);
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    assert_eq!(
        serde_json::to_value(&cmds[0]).unwrap(),
        serde_json::json!({"event": {"kind": "clock_clamped", "given": T0 + 3000, "clock": T0 + 5000}})
    );
    assert_eq!(h.engine.clock(), t(T0 + 5000));

    // Another input in the past runs at the clock.
    let (r, cmds) = h.ok(
        T0 + 2000,
        Input::TriggerSchedule {
            name: "c".into(),
            overlap: None,
        },
    );
    assert_eq!(
        r,
        Reply::Triggered {
            fire: Some(format!("c@{}#m1", T0 + 5000).parse().unwrap()),
            buffered: false
        }
    );
    assert_eq!(clamped(&cmds), vec![(T0 + 2000, T0 + 5000)]);
    assert_eq!(fires(&cmds).len(), 1);
    assert_eq!(fires(&cmds)[0].fired_at, t(T0 + 5000));

    // Moving forward again fires only the new boundary.
    let cmds = h.advance(T0 + 6000);
    assert_eq!(nominals(&cmds), vec![T0 + 6000]);
    assert_eq!(clamped(&cmds), vec![]);
    let grid: Vec<i64> = fires(&h.commands)
        .iter()
        .filter(|f| f.fire_id.extra.is_none())
        .map(|f| f.nominal().as_millis())
        .collect();
    assert_eq!(grid, (1..=6).map(|k| T0 + k * 1000).collect::<Vec<_>>());
    let info = h.engine.schedule("c").unwrap();
    assert_eq!((info.fires, info.skipped), (7, 0));
    h.check_replay();
}
