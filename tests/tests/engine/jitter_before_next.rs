//! Jitter is clamped to stay before the next boundary (docs/semantics.md,
//! "Jitter"): with a jitter far wider than the grid step, every fire is
//! due strictly before the next boundary, and the offsets reach the last
//! millisecond before it (so the clamp is exactly one short of the step,
//! not merely somewhere below it).

use chime_core::{Command, Engine, EngineConfig, Input, Overlap, QueueConfig, QueueMode};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;
const STEP: i64 = 1_000;
const BOUNDARIES: i64 = 20_000;

#[test]
fn jitter_wider_than_the_step_stays_before_the_next_boundary() {
    let mut e = Engine::new(EngineConfig::default());
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    e.handle(t(S), Input::DeclareQueue(q)).unwrap();
    let mut d = def("s", "@every 1s", "out");
    d.overlap = Overlap::Allow;
    d.jitter_ms = 86_400_000;
    e.handle(t(S), Input::UpsertSchedule(d)).unwrap();
    let mut offsets = Vec::new();
    // Advance at every boundary and at the last millisecond before the next.
    for k in 1..=BOUNDARIES {
        for now in [S + k * STEP, S + (k + 1) * STEP - 1] {
            e.handle(t(now), Input::Advance).unwrap();
            while let Some(c) = e.poll_command() {
                if let Command::Fire(f) = c {
                    let nominal = f.nominal().as_millis();
                    assert!(f.due_at.as_millis() <= now, "fired before due");
                    offsets.push(f.due_at.as_millis() - nominal);
                }
            }
        }
    }
    assert_eq!(
        offsets.len() as i64,
        BOUNDARIES,
        "every boundary fired once"
    );
    let max = *offsets.iter().max().unwrap();
    assert_eq!(
        max,
        STEP - 1,
        "offsets reach the last millisecond before the next boundary"
    );
    assert!(offsets.iter().all(|&o| o >= 0));
}
