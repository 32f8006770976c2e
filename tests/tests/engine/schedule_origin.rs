//! A schedule's `origin`: the API (`api`) may not overwrite or remove a
//! schedule the config declares (`schedule_declared`, nothing changes),
//! a declaration takes over an API schedule of the same name, and the
//! origin survives snapshots and journal replay (a host's start prunes
//! only declared schedules it no longer declares, so it must know).

use chime_core::{Error, Input, Origin, Reply, ScheduleDef};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

fn api(mut d: ScheduleDef) -> ScheduleDef {
    d.origin = Origin::Api;
    d
}

fn origin(h: &Harness, name: &str) -> Origin {
    h.engine.schedule(name).expect("schedule").def.origin
}

#[test]
fn the_api_cannot_overwrite_or_remove_a_declared_schedule() {
    let mut h = Harness::standalone();
    h.ok(S, Input::UpsertSchedule(def("nightly", "@every 1h", "q")));
    let before = h.engine.schedule("nightly").unwrap();
    let (r, cmds) = h.run(
        S + 1,
        Input::UpsertSchedule(api(def("nightly", "@every 1m", "q"))),
    );
    assert!(
        matches!(&r, Err(Error::ScheduleDeclared(n)) if n == "nightly"),
        "{r:?}"
    );
    assert_eq!(r.unwrap_err().code(), "schedule_declared");
    assert!(cmds.is_empty(), "{cmds:?}");
    let removal = Input::RemoveSchedule {
        name: "nightly".into(),
        origin: Origin::Api,
    };
    let (r, _) = h.run(S + 2, removal);
    assert_eq!(r.unwrap_err().field(), Some("schedule"));
    let after = h.engine.schedule("nightly").unwrap();
    assert_eq!(after.def, before.def);
    assert_eq!(after.version, before.version);
    h.check_replay();
}

#[test]
fn api_schedules_are_the_apis_and_a_declaration_takes_one_over() {
    let mut h = Harness::standalone();
    h.ok(
        S,
        Input::UpsertSchedule(api(def("adhoc", "@every 1h", "q"))),
    );
    assert_eq!(origin(&h, "adhoc"), Origin::Api);
    // The API changes its own schedule, and an identical upsert is no change.
    let (r, _) = h.ok(
        S + 1,
        Input::UpsertSchedule(api(def("adhoc", "@every 2h", "q"))),
    );
    assert!(
        matches!(r, Reply::ScheduleUpserted { changed: true, .. }),
        "{r:?}"
    );
    let (r, _) = h.ok(
        S + 2,
        Input::UpsertSchedule(api(def("adhoc", "@every 2h", "q"))),
    );
    assert!(
        matches!(r, Reply::ScheduleUpserted { changed: false, .. }),
        "{r:?}"
    );
    // The same definition declared: a change of owner only, same grid.
    let next = h.engine.schedule("adhoc").unwrap().next_nominal;
    let (r, _) = h.ok(S + 3, Input::UpsertSchedule(def("adhoc", "@every 2h", "q")));
    assert!(
        matches!(r, Reply::ScheduleUpserted { changed: true, .. }),
        "{r:?}"
    );
    assert_eq!(origin(&h, "adhoc"), Origin::Declared);
    assert_eq!(h.engine.schedule("adhoc").unwrap().next_nominal, next);
    // Now the API may no longer touch it; the declaring host may.
    assert!(
        h.run(
            S + 4,
            Input::UpsertSchedule(api(def("adhoc", "@every 1h", "q")))
        )
        .0
        .is_err()
    );
    h.ok(
        S + 5,
        Input::UpsertSchedule(api(def("mine", "@every 1h", "q"))),
    );
    let removal = Input::RemoveSchedule {
        name: "mine".into(),
        origin: Origin::Api,
    };
    let (r, _) = h.ok(S + 6, removal);
    assert_eq!(r, Reply::ScheduleRemoved { existed: true });
    let (r, _) = h.ok(S + 7, Input::remove_schedule("adhoc"));
    assert_eq!(r, Reply::ScheduleRemoved { existed: true });
    h.check_replay();
}

#[test]
fn the_origin_survives_a_snapshot_and_is_omitted_when_declared() {
    let mut h = Harness::standalone();
    h.ok(
        S,
        Input::UpsertSchedule(api(def("adhoc", "@every 1h", "q"))),
    );
    h.ok(S, Input::UpsertSchedule(def("nightly", "@every 1h", "q")));
    let json = h.engine.snapshot().to_json();
    assert_eq!(json.matches("\"origin\":\"api\"").count(), 1, "{json}");
    assert!(
        !json.contains("declared"),
        "the default is not written: {json}"
    );
    let restored =
        chime_core::Engine::restore(chime_core::Snapshot::from_json(&json).unwrap()).unwrap();
    assert_eq!(restored.schedule("adhoc").unwrap().def.origin, Origin::Api);
    assert_eq!(
        restored.schedule("nightly").unwrap().def.origin,
        Origin::Declared
    );
}
