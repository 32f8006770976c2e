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
            job: None,
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
            job: None,
        },
    );
    let never: FireId = format!("sync@{}", S + 90_000).parse().unwrap();
    let (r, _) = h.run(
        S + 21_000,
        Input::FireSettled {
            fire: never,
            outcome: FireOutcome::Succeeded,
            job: None,
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

#[test]
fn enqueue_carries_the_targets_priority_and_attempts() {
    let mut h = setup();
    // Without them: nothing extra on the wire (the traces stay as they were).
    let plain = h.advance(S + 10_000);
    let wire = serde_json::to_value(&plain[1]).unwrap();
    assert!(wire["enqueue"].get("priority").is_none(), "{wire}");
    assert!(wire["enqueue"].get("maxAttempts").is_none(), "{wire}");

    let mut d = def("urgent", "@every 10s", "nats");
    d.target.priority = 7;
    d.target.max_attempts = Some(2);
    d.overlap = chime_core::Overlap::Allow;
    h.ok(S + 10_000, Input::UpsertSchedule(d));
    let cmds = h.advance(S + 20_000);
    let (priority, max_attempts) = cmds
        .iter()
        .find_map(|c| match c {
            Command::Enqueue {
                fire,
                priority,
                max_attempts,
                ..
            } if &*fire.schedule == "urgent" => Some((*priority, *max_attempts)),
            _ => None,
        })
        .expect("urgent fired");
    assert_eq!((priority, max_attempts), (7, Some(2)));
    let wire = cmds
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .find(|w| {
            w["enqueue"]["fire"]
                .as_str()
                .is_some_and(|f| f.starts_with("urgent@"))
        })
        .unwrap();
    assert_eq!(wire["enqueue"]["priority"], 7);
    assert_eq!(wire["enqueue"]["maxAttempts"], 2);
    // And back: the wire form reads into the same command.
    let back: Command = serde_json::from_value(wire).unwrap();
    assert!(matches!(
        back,
        Command::Enqueue {
            priority: 7,
            max_attempts: Some(2),
            ..
        }
    ));
}
