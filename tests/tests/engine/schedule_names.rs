//! `Engine::schedule_names` lists the schedules by name, in order, and
//! follows creation and removal (what `chime inspect` and the HTTP views
//! list); `schedule_count` agrees. (Mutation testing: `schedule_names`
//! replaced by an empty iterator or by one name was not noticed: no test
//! of the core called it.)

use chime_core::Input;
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

fn names(h: &Harness) -> Vec<String> {
    h.engine.schedule_names().map(str::to_owned).collect()
}

#[test]
fn names_in_order_through_create_and_remove() {
    let mut h = Harness::standalone();
    assert!(names(&h).is_empty());
    assert_eq!(h.engine.schedule_count(), 0);
    for name in ["nightly", "hourly", "weekly"] {
        h.ok(S, Input::UpsertSchedule(def(name, "@every 1h", "q")));
    }
    assert_eq!(names(&h), ["hourly", "nightly", "weekly"]);
    assert_eq!(h.engine.schedule_count(), 3);
    h.ok(S + 1, Input::remove_schedule("nightly"));
    assert_eq!(names(&h), ["hourly", "weekly"]);
    assert_eq!(h.engine.schedule_count(), 2);
    h.check_replay();
}
