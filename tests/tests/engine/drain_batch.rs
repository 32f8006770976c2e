//! `Engine::drain_commands` hands out exactly what draining with
//! `poll_command` would, in the same order, and leaves nothing behind.

use chime_core::{Command, Engine, EngineConfig, Input, ScheduleDef, Timestamp};

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

fn engine() -> Engine {
    let mut e = Engine::new(EngineConfig::default());
    for (name, spec) in [("a", "@every 1s"), ("b", "* * * * * *"), ("c", "@every 2s")] {
        let def: ScheduleDef = serde_json::from_value(serde_json::json!({
            "name": name, "spec": spec, "overlap": "allow", "target": {"queue": "q"}
        }))
        .unwrap();
        e.handle(t(1_000_000), Input::UpsertSchedule(def)).unwrap();
    }
    e
}

#[test]
fn batch_drain_equals_polling() {
    let (mut polled, mut batched) = (engine(), engine());
    let mut batch: Vec<Command> = Vec::new();
    for step in 0..20 {
        let now = t(1_000_000 + step * 700);
        polled.handle(now, Input::Advance).unwrap();
        batched.handle(now, Input::Advance).unwrap();
        let one_by_one: Vec<Command> = std::iter::from_fn(|| polled.poll_command()).collect();
        batch.clear();
        let moved = batched.drain_commands(&mut batch);
        assert_eq!(moved, batch.len());
        assert_eq!(batch, one_by_one, "step {step}");
        assert_eq!(batched.pending_commands(), 0);
        assert!(batched.poll_command().is_none());
    }
    assert!(batch.len() > 1, "the last step drained several commands");
    assert_eq!(polled.snapshot().to_json(), batched.snapshot().to_json());
}
