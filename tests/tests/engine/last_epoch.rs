//! A schedule reports the leadership epoch of its last fire (`lastEpoch` in
//! `ScheduleInfo` and in snapshots): none before it fires, the epoch of the
//! term that fired it after, kept through a restart and across a term that
//! fires nothing, and the next term's once it fires again.

use chime_core::{EngineConfig, Epoch, Input, Overlap};
use chime_tests::scenario::*;

const S: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

#[test]
fn last_epoch_is_the_term_of_the_last_fire() {
    let mut h = Harness::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let mut d = def("tick", "@every 10s", "q");
    d.overlap = Overlap::Allow;
    h.ok(S, Input::UpsertSchedule(d));
    let last = |h: &Harness| h.engine.schedule("tick").unwrap().last_epoch;
    assert_eq!(last(&h), None, "never fired");

    h.ok(S, grant(3, S + 25_000));
    assert!(!fires(&h.advance(S + 20_000)).is_empty());
    assert_eq!(last(&h), Some(Epoch(3)));
    h.restart();
    assert_eq!(last(&h), Some(Epoch(3)), "kept through a restart");

    // Term 3 runs out; term 9 is granted but nothing is due yet.
    h.advance(S + 26_000);
    h.ok(S + 26_000, grant(9, S + 60_000));
    assert_eq!(last(&h), Some(Epoch(3)), "no fire in term 9 yet");
    let late = fires(&h.advance(S + 40_000))
        .iter()
        .map(|f| f.epoch)
        .collect::<Vec<_>>();
    assert!(
        late.iter().all(|&e| e == Epoch(9)) && !late.is_empty(),
        "{late:?}"
    );
    assert_eq!(last(&h), Some(Epoch(9)));
    h.check_replay();
}
