//! `Engine::drain_commands` appends to a vector that already holds
//! commands: what was there stays in front, the new commands follow in
//! order, and the count returned is the number moved, not the vector's
//! length. (Mutation testing: `into.len() - before` turned into
//! `into.len() + before` was not noticed: every caller drained into an
//! empty vector.)

use chime_core::{Command, Engine, EngineConfig, Input, Overlap};
use chime_tests::scenario::*;

/// A multiple of 10 s, so `@every 10s` boundaries are `S + k * 10 s`.
const S: i64 = 1_000_000_000_000;
const TEN: i64 = 10_000;

#[test]
fn a_second_drain_appends_and_counts_only_what_it_moved() {
    let mut e = Engine::new(EngineConfig::default());
    let mut tick = def("tick", "@every 10s", "q");
    tick.overlap = Overlap::Allow;
    e.handle(t(S), Input::UpsertSchedule(tick)).unwrap();

    let mut into: Vec<Command> = Vec::new();
    e.drain_commands(&mut into);
    e.handle(t(S + TEN), Input::Advance).unwrap();
    let first = e.drain_commands(&mut into);
    assert!(first > 0);
    assert_eq!(nominals(&into), vec![S + TEN]);
    let kept = into.clone();

    e.handle(t(S + 2 * TEN), Input::Advance).unwrap();
    let pending = e.pending_commands();
    assert!(pending > 0);
    let moved = e.drain_commands(&mut into);
    assert_eq!(moved, pending, "the count is what was moved");
    assert_eq!(into.len(), kept.len() + moved);
    assert_eq!(
        into[..kept.len()],
        kept[..],
        "earlier contents stay in front"
    );
    assert_eq!(nominals(&into[kept.len()..]), vec![S + 2 * TEN]);
    assert_eq!(e.pending_commands(), 0);
    assert_eq!(e.drain_commands(&mut into), 0);
}
