//! Issue 6, bug A: a buffered manual fire waiting for leadership, then a
//! pause (in the definition or by `PauseSchedule` plus a changing upsert),
//! used to panic at the next grant ("ready schedule has a buffered fire"),
//! break `check_invariants` and make the journal unreplayable. A pause
//! never drops a fire that was already accepted: the buffered fire fires
//! at the grant. Removing the schedule reports the buffered fire as
//! `fire_dropped{reason: "removed"}`.

use chime_core::{
    Command, EngineConfig, Epoch, Event, FireId, FireReason, Input, JobState, Overlap, Payload,
    Reply, ScheduleStatus,
};
use chime_tests::scenario::*;

/// Hour-aligned, so `@every 1h` has no boundary within the scenario.
const T0: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;
const DAY: i64 = 86_400_000;

fn trigger() -> Input {
    Input::TriggerSchedule {
        name: "p".into(),
        overlap: None,
    }
}

fn manual(n: u64) -> FireId {
    format!("p@{T0}#m{n}").parse().unwrap()
}

/// The issue's steps up to "complete the job at t0+7m": a replica with a
/// running manual fire (#m1, completed while not leader) and a buffered
/// one (#m2) waiting for leadership.
fn buffered_while_not_leader() -> Harness {
    let mut h = Harness::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    h.ok(T0, grant(1, T0 + 5 * MIN));
    let mut d = def("p", "@every 1h", "q");
    d.overlap = Overlap::BufferOne;
    d.target = target("q", r#"{"v": 1}"#);
    let (r, _) = h.ok(T0, Input::UpsertSchedule(d));
    assert_eq!(
        r,
        Reply::ScheduleUpserted {
            version: 1,
            next_fire: Some(t(T0 + 60 * MIN)),
            changed: true
        }
    );
    let (r, cmds) = h.ok(T0, trigger());
    assert_eq!(
        r,
        Reply::Triggered {
            fire: Some(manual(1)),
            buffered: false
        }
    );
    let first = fires(&cmds)[0].clone();
    assert_eq!(first.reason, FireReason::Manual);
    let (r, cmds) = h.ok(T0, trigger());
    assert_eq!(
        r,
        Reply::Triggered {
            fire: None,
            buffered: true
        }
    );
    assert_eq!(
        events(&cmds),
        vec![&Event::FireBuffered {
            schedule: "p".into(),
            nominal: t(T0)
        }]
    );
    let claimed = h.claim(T0, "q", 1, Some(DAY));
    assert_eq!(claimed.len(), 1);
    assert_eq!(Some(claimed[0].job), first.job);
    assert_eq!(claimed[0].fire, Some(manual(1)));

    let cmds = h.advance(T0 + 6 * MIN);
    assert_eq!(
        events(&cmds),
        vec![&Event::LeadershipLost { epoch: Epoch(1) }]
    );
    let (r, cmds) = h.ok(
        T0 + 7 * MIN,
        Input::Complete {
            job: claimed[0].job,
            token: claimed[0].token,
        },
    );
    assert!(matches!(
        r,
        Reply::Job {
            state: JobState::Completed,
            ..
        }
    ));
    assert!(
        fires(&cmds).is_empty(),
        "not leader: the buffered fire waits"
    );
    let info = h.engine.schedule("p").unwrap();
    assert!(info.buffered);
    assert!(info.in_flight.is_empty());
    h
}

/// Asserts that the grant at t0+9m releases exactly the buffered #m2 with
/// the version and payload it was buffered with.
fn grant_releases_buffered(h: &mut Harness, epoch: u64) {
    let (r, cmds) = h.ok(T0 + 9 * MIN, grant(epoch, T0 + 20 * MIN));
    assert_eq!(r, Reply::Leadership { leader: true });
    let fs = fires(&cmds);
    assert_eq!(
        fs.len(),
        1,
        "the buffered fire fires at the grant: {cmds:?}"
    );
    let f = fs[0];
    assert_eq!(f.fire_id, manual(2));
    assert_eq!(f.reason, FireReason::Buffered);
    assert_eq!(f.epoch, Epoch(epoch));
    assert_eq!(f.version, 1, "the version it was buffered with");
    assert_eq!(f.nominal(), t(T0));
    assert_eq!(f.due_at, t(T0));
    assert_eq!(f.fired_at, t(T0 + 9 * MIN));
    let job = h.engine.job(f.job.expect("local job")).unwrap();
    assert_eq!(job.payload, Payload::from_json(r#"{"v": 1}"#).unwrap());
    assert_eq!(job.fire, Some(manual(2)));
    assert!(
        !cmds
            .iter()
            .any(|c| matches!(c, Command::Event(Event::FireDropped { .. }))),
        "nothing dropped"
    );
    let info = h.engine.schedule("p").unwrap();
    assert!(!info.buffered);
    assert_eq!(info.in_flight, vec![manual(2)]);
    assert_eq!(info.status, ScheduleStatus::Paused);
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 2);
}

#[test]
fn paused_upsert_then_grant_fires_the_buffered_manual_fire() {
    let mut h = buffered_while_not_leader();
    let mut d = def("p", "@every 1h", "q");
    d.overlap = Overlap::BufferOne;
    d.target = target("q", r#"{"v": 1}"#);
    d.paused = true;
    let (r, cmds) = h.ok(T0 + 8 * MIN, Input::UpsertSchedule(d));
    assert_eq!(
        r,
        Reply::ScheduleUpserted {
            version: 2,
            next_fire: Some(t(T0 + 60 * MIN)),
            changed: true
        }
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(h.engine.schedule("p").unwrap().buffered, "pause keeps it");
    grant_releases_buffered(&mut h, 2);
    h.check_replay();
}

#[test]
fn pause_then_changing_upsert_keeps_the_buffered_fire() {
    let mut h = buffered_while_not_leader();
    let (r, _) = h.ok(
        T0 + 8 * MIN,
        Input::PauseSchedule {
            name: "p".into(),
            note: None,
        },
    );
    assert_eq!(
        r,
        Reply::ScheduleStatus {
            status: ScheduleStatus::Paused
        }
    );
    // A changing upsert (new payload) of the schedule paused at runtime.
    let mut d = def("p", "@every 1h", "q");
    d.overlap = Overlap::BufferOne;
    d.target = target("q", r#"{"v": 2}"#);
    let (r, cmds) = h.ok(T0 + 8 * MIN + 1000, Input::UpsertSchedule(d));
    assert_eq!(
        r,
        Reply::ScheduleUpserted {
            version: 2,
            next_fire: Some(t(T0 + 60 * MIN)),
            changed: true
        }
    );
    assert!(cmds.is_empty(), "{cmds:?}");
    let info = h.engine.schedule("p").unwrap();
    assert!(info.buffered, "the changing upsert keeps it");
    assert_eq!(info.status, ScheduleStatus::Paused);
    grant_releases_buffered(&mut h, 2);
    h.check_replay();
}

#[test]
fn standalone_pause_and_changing_upsert_then_release() {
    let mut h = Harness::standalone();
    let mut d = def("p", "@every 1h", "q");
    d.overlap = Overlap::BufferOne;
    h.ok(T0, Input::UpsertSchedule(d.clone()));
    h.ok(T0, trigger());
    let (r, _) = h.ok(T0, trigger());
    assert_eq!(
        r,
        Reply::Triggered {
            fire: None,
            buffered: true
        }
    );
    let c = h.claim(T0, "q", 1, Some(DAY)).pop().unwrap();
    h.ok(
        T0 + MIN,
        Input::PauseSchedule {
            name: "p".into(),
            note: None,
        },
    );
    d.jitter_ms = 1000;
    let (r, _) = h.ok(T0 + 2 * MIN, Input::UpsertSchedule(d));
    assert!(matches!(r, Reply::ScheduleUpserted { version: 2, .. }));
    assert!(h.engine.schedule("p").unwrap().buffered);
    let (_, cmds) = h.ok(
        T0 + 3 * MIN,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    let fs = fires(&cmds);
    assert_eq!(fs.len(), 1);
    assert_eq!(fs[0].fire_id, manual(2));
    assert_eq!(fs[0].reason, FireReason::Buffered);
    assert_eq!(fs[0].version, 1);
    assert_eq!(fs[0].fired_at, t(T0 + 3 * MIN));
    h.check_replay();
}

#[test]
fn removing_a_schedule_with_a_buffered_fire_reports_it_dropped() {
    let mut h = buffered_while_not_leader();
    let (r, cmds) = h.ok(T0 + 8 * MIN, Input::remove_schedule("p"));
    assert_eq!(r, Reply::ScheduleRemoved { existed: true });
    assert_eq!(
        events(&cmds),
        vec![&Event::FireDropped {
            fire: manual(2),
            reason: "removed".into()
        }]
    );
    let (_, cmds) = h.ok(T0 + 9 * MIN, grant(2, T0 + 20 * MIN));
    assert!(fires(&cmds).is_empty(), "{cmds:?}");
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 1);
    h.check_replay();
}
