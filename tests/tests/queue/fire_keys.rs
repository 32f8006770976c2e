//! User keys never capture a fire: fire keys (`<schedule>@<nominal>`) and
//! the keys of `Enqueue` inputs live in separate namespaces. A user job
//! with key `k@<nominal>` does not swallow the scheduled fire of `k` at
//! that nominal, nor does the fire's job answer the user's enqueue; user
//! keys still de-duplicate among themselves. Snapshots holding both kinds
//! round-trip byte for byte.

use chime_core::{Engine, EnqueueRequest, Input, JobId, Payload, Reply, Snapshot};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;
const HOUR: i64 = 3_600_000;
/// The first hourly boundary after `T`.
const B: i64 = (T / HOUR + 1) * HOUR;

fn enqueue(h: &mut Harness, now: i64, key: &str) -> (JobId, bool) {
    let mut req = EnqueueRequest::new("q", Payload::from_json(r#""user""#).unwrap());
    req.key = Some(key.into());
    match h.ok(now, Input::Enqueue(req)).0 {
        Reply::Enqueued { job, deduplicated } => (job, deduplicated),
        other => panic!("{other:?}"),
    }
}

fn setup() -> Harness {
    let mut h = Harness::standalone();
    h.ok(T, Input::UpsertSchedule(def("k", "@every 1h", "q")));
    h
}

fn fire_key() -> String {
    format!("k@{B}")
}

#[test]
fn a_user_key_in_the_fire_format_does_not_swallow_the_fire() {
    let mut h = setup();
    let (user, dedup) = enqueue(&mut h, T, &fire_key());
    assert!(!dedup);
    let cmds = h.advance(B);
    let fired = fires(&cmds);
    assert_eq!(fired.len(), 1);
    let job = fired[0].job.expect("a local fire has a job");
    assert_ne!(job, user, "the fire got its own job");
    let info = h.engine.job(job).unwrap();
    assert_eq!(info.fire.as_ref().map(|f| f.to_string()), Some(fire_key()));
    assert_eq!(info.key.as_deref(), Some(fire_key().as_str()));
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 2);
    assert_eq!(h.engine.queue_stats("q").unwrap().available, 2);
    // The user's key still de-duplicates user enqueues.
    assert_eq!(enqueue(&mut h, B + 1, &fire_key()), (user, true));
}

#[test]
fn a_fire_key_does_not_answer_a_user_enqueue() {
    let mut h = setup();
    let cmds = h.advance(B);
    let job = fires(&cmds)[0].job.unwrap();
    let (user, dedup) = enqueue(&mut h, B + 1, &fire_key());
    assert!(!dedup, "not de-duplicated against the fire's job");
    assert_ne!(user, job);
    assert_eq!(enqueue(&mut h, B + 2, &fire_key()), (user, true));
}

#[test]
fn both_namespaces_round_trip_and_expire() {
    let mut h = setup();
    enqueue(&mut h, T, &fire_key());
    h.advance(B);
    let json = h.engine.snapshot().to_json();
    let back = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
    back.check_invariants();
    assert_eq!(back.snapshot().to_json(), json);
    // Finish both jobs; the keys expire with the window and are forgotten.
    for c in h.claim(B, "q", 2, None) {
        let done = Input::Complete {
            job: c.job,
            token: c.token,
        };
        h.ok(B, done);
    }
    h.advance(B + 25 * HOUR);
    let json = h.engine.snapshot().to_json();
    // Forgotten by the queue (the schedule's run history still names the
    // fire, as history does).
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let q = &v["queues"]["queues"]["q"];
    assert!(q["fireKeys"].get(fire_key()).is_none(), "{json}");
    assert!(q["dedup"].get(fire_key()).is_none(), "{json}");
    let back = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
    assert_eq!(back.snapshot().to_json(), json);
}

#[test]
fn a_format_one_snapshot_is_refused() {
    let h = setup();
    let json = h.engine.snapshot().to_json();
    let old = json.replacen(r#""format":3"#, r#""format":1"#, 1);
    assert_ne!(old, json);
    let err = Engine::restore(Snapshot::from_json(&old).unwrap()).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
}
