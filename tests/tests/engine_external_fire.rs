//! Fires to an external queue: `Enqueue` with the fire id as key, in
//! flight until `FireSettled` or until the queue's `lease_ms` passes
//! (`fire_unsettled`, then it counts as settled).

use chime_core::{
    Command, Event, FireId, FireOutcome, Input, QueueConfig, QueueMode, Reply, SkipReason,
};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

fn setup() -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("nats");
    q.mode = QueueMode::External;
    q.lease_ms = 25_000;
    h.ok(S, Input::DeclareQueue(q));
    let mut d = def("sync", "@every 10s", "nats");
    d.target = target("nats", r#"{"full": true}"#);
    h.ok(S, Input::UpsertSchedule(d));
    h
}

#[test]
fn enqueue_command_and_settlement() {
    let mut h = setup();
    let cmds = h.advance(S + 10_000);
    let id: FireId = format!("sync@{}", S + 10_000).parse().unwrap();
    let [
        Command::Fire(f),
        Command::Enqueue {
            fire,
            queue,
            payload,
            epoch,
            ..
        },
    ] = &cmds[..]
    else {
        panic!("{cmds:?}")
    };
    assert_eq!((&f.fire_id, f.job), (&id, None));
    assert_eq!((fire, &**queue), (&id, "nats"));
    // On the wire the idempotency key is the fire id.
    let wire = serde_json::to_value(&cmds[1]).unwrap();
    assert_eq!(wire["enqueue"]["key"], id.to_string());
    assert_eq!(payload.as_json(), r#"{"full": true}"#);
    assert_eq!(epoch.0, 0);
    assert_eq!(
        h.engine.schedule("sync").unwrap().in_flight,
        vec![id.clone()]
    );

    // In flight: the next boundary is skipped (default overlap `skip`).
    assert_eq!(
        skips(&h.advance(S + 20_000)),
        vec![(SkipReason::Overlap, 1, S + 20_000, S + 20_000)]
    );
    let (r, _) = h.ok(
        S + 21_000,
        Input::FireSettled {
            fire: id.clone(),
            outcome: FireOutcome::Succeeded,
        },
    );
    assert_eq!(r, Reply::FireSettled);
    assert!(h.engine.schedule("sync").unwrap().in_flight.is_empty());
    // Settling again is harmless; a fire never made is unknown.
    h.ok(
        S + 21_000,
        Input::FireSettled {
            fire: id,
            outcome: FireOutcome::Failed,
        },
    );
    let never: FireId = format!("sync@{}", S + 90_000).parse().unwrap();
    let (r, _) = h.run(
        S + 21_000,
        Input::FireSettled {
            fire: never,
            outcome: FireOutcome::Succeeded,
        },
    );
    assert_eq!(r.unwrap_err().code(), "unknown_fire");
    assert_eq!(nominals(&h.advance(S + 30_000)), vec![S + 30_000]);
}

#[test]
fn an_unsettled_fire_expires_after_lease_ms() {
    let mut h = setup();
    h.advance(S + 10_000);
    assert_eq!(h.engine.poll_timeout(), Some(t(S + 20_000)));
    h.advance(S + 20_000);
    h.advance(S + 30_000);
    // Deadline 10 s + 25 s = 35 s.
    assert_eq!(h.engine.poll_timeout(), Some(t(S + 35_000)));
    let cmds = h.advance(S + 35_000);
    let id: FireId = format!("sync@{}", S + 10_000).parse().unwrap();
    assert_eq!(events(&cmds), vec![&Event::FireUnsettled { fire: id }]);
    assert!(h.engine.schedule("sync").unwrap().in_flight.is_empty());
    assert_eq!(nominals(&h.advance(S + 40_000)), vec![S + 40_000]);
    let info = h.engine.schedule("sync").unwrap();
    assert_eq!((info.fires, info.skipped), (2, 2));
}
