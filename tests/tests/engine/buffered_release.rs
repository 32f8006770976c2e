//! Issue 6, bug H: a buffered fire released after `jitterMs` was raised
//! reported `dueAt > firedAt` and the new definition's version and
//! payload. A buffered fire keeps the due time, version and payload it was
//! buffered with.

use chime_core::{Event, FireReason, Input, Overlap, Payload, Reply};
use chime_tests::scenario::*;

/// Hour-aligned: `@every 1m` boundaries are `T0 + k * MIN`.
const T0: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;
const DAY: i64 = 86_400_000;

#[test]
fn released_buffered_fire_keeps_due_time_version_and_payload() {
    let mut h = Harness::standalone();
    let mut d = def("b", "@every 1m", "q");
    d.overlap = Overlap::BufferOne;
    d.target = target("q", r#"{"v": 1}"#);
    h.ok(T0, Input::UpsertSchedule(d.clone()));
    let cmds = h.advance(T0 + MIN);
    assert_eq!(nominals(&cmds), vec![T0 + MIN]);
    let running = h.claim(T0 + MIN, "q", 1, Some(DAY)).pop().unwrap();
    let cmds = h.advance(T0 + 2 * MIN);
    assert_eq!(
        events(&cmds),
        vec![&Event::FireBuffered {
            schedule: "b".into(),
            nominal: t(T0 + 2 * MIN)
        }]
    );

    // Raise the jitter (and change the payload) while T0+2m is buffered.
    d.jitter_ms = 50_000;
    d.target = target("q", r#"{"v": 2}"#);
    let (r, cmds) = h.ok(T0 + 2 * MIN + 1000, Input::UpsertSchedule(d));
    assert!(matches!(
        r,
        Reply::ScheduleUpserted {
            version: 2,
            changed: true,
            ..
        }
    ));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(h.engine.schedule("b").unwrap().buffered);

    let (_, cmds) = h.ok(
        T0 + 2 * MIN + 2000,
        Input::Complete {
            job: running.job,
            token: running.token,
        },
    );
    let fs = fires(&cmds);
    assert_eq!(fs.len(), 1, "{cmds:?}");
    let f = fs[0];
    assert_eq!(f.fire_id.to_string(), format!("b@{}", T0 + 2 * MIN));
    assert_eq!(f.reason, FireReason::Buffered);
    assert_eq!(f.nominal(), t(T0 + 2 * MIN));
    assert_eq!(
        f.due_at,
        t(T0 + 2 * MIN),
        "the due time it was buffered with"
    );
    assert_eq!(f.fired_at, t(T0 + 2 * MIN + 2000));
    assert!(f.due_at <= f.fired_at);
    assert_eq!(f.version, 1, "the version it was buffered with");
    let job = h.engine.job(f.job.unwrap()).unwrap();
    assert_eq!(job.payload, Payload::from_json(r#"{"v": 1}"#).unwrap());

    // Later fires use the new definition.
    let c = h
        .claim(T0 + 2 * MIN + 2000, "q", 1, Some(DAY))
        .pop()
        .unwrap();
    h.ok(
        T0 + 2 * MIN + 3000,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    let cmds = h.advance(T0 + 4 * MIN);
    let next = fires(&cmds)[0];
    assert_eq!(next.nominal(), t(T0 + 3 * MIN));
    assert_eq!(next.version, 2);
    assert!(next.due_at <= next.fired_at);
    let job = h.engine.job(next.job.unwrap()).unwrap();
    assert_eq!(job.payload, Payload::from_json(r#"{"v": 2}"#).unwrap());
    h.check_replay();
}
