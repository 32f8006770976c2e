//! Queues in a snapshot: with jobs in every state (a fire's job, keys,
//! headers, priority, a delayed job, a dead letter, a completed and a
//! claimed job) the snapshot round-trips byte for byte, payloads verbatim,
//! and the restored engine behaves exactly like the original. A snapshot
//! whose queue state contradicts itself (job or token counters behind the
//! ids in use, a job in an unknown queue, a claimed job without a lease) is
//! refused with `invalid_input`, not restored to fail later. Fields at
//! their defaults (priority 0, no attempt yet, no key…) are left out.

use chime_core::{Command, Engine, EnqueueRequest, Input, Payload, QueueConfig, Reply, Snapshot};
use chime_tests::scenario::*;
use serde_json::Value;

const T: i64 = 1_000_000_000_000;
const HOUR: i64 = 3_600_000;
/// The first hourly boundary after `T`.
const B: i64 = (T / HOUR + 1) * HOUR;

fn busy() -> Harness {
    let mut h = Harness::standalone();
    let mut dead = QueueConfig::new("dead");
    dead.max_attempts = 1;
    h.ok(T, Input::DeclareQueue(dead));
    let mut s = def("s", "@every 1h", "main");
    s.target = target("main", r#"{"n": 1.50}"#);
    h.ok(T, Input::UpsertSchedule(s));
    h.advance(B);
    let mut keyed = EnqueueRequest::new("main", Payload::from_json(r#"{"n": 1.50}"#).unwrap());
    keyed.key = Some("k2".into());
    keyed.priority = 3;
    keyed.headers = [("h".into(), "v".into())].into();
    h.ok(B, Input::Enqueue(keyed));
    let mut delayed = EnqueueRequest::new("main", Payload::null());
    delayed.delay_ms = Some(5_000);
    h.ok(B, Input::Enqueue(delayed));
    h.ok(
        B,
        Input::Enqueue(EnqueueRequest::new("main", Payload::null())),
    );
    h.ok(
        B,
        Input::Enqueue(EnqueueRequest::new("dead", Payload::null())),
    );
    let c = h.claim_one(B + 100, "dead");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "x".into(),
        retry_at: None,
    };
    h.ok(B + 100, fail);
    let c = h.claim_one(B + 200, "main");
    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    h.ok(B + 300, done);
    h.claim_one(B + 400, "main");
    h
}

/// A change to a snapshot's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

fn drain(e: &mut Engine) -> Vec<Command> {
    std::iter::from_fn(|| e.poll_command()).collect()
}

#[test]
fn a_busy_snapshot_round_trips_and_behaves_the_same() {
    let mut h = busy();
    let json = h.engine.snapshot().to_json();
    assert!(
        json.contains(r#""payload":{"n": 1.50}"#),
        "payload verbatim: {json}"
    );
    let mut a = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
    let mut b = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
    b.check_invariants();
    assert_eq!(b.snapshot().to_json(), json, "byte for byte");
    for now in [B + 2_000, B + 61_400, B + 70_000, B + 100_000_000] {
        for e in [&mut a, &mut b] {
            e.handle(t(now), Input::Advance).unwrap();
        }
        assert_eq!(drain(&mut a), drain(&mut b));
        let claim = Input::Claim {
            queue: "main".into(),
            worker: "w".into(),
            max: 5,
            lease_ms: None,
        };
        let ra = a.handle(t(now), claim.clone()).unwrap();
        let rb = b.handle(t(now), claim).unwrap();
        assert_eq!(ra, rb);
        assert_eq!(drain(&mut a), drain(&mut b));
        assert_eq!(a.snapshot().to_json(), b.snapshot().to_json());
        b.check_invariants();
    }
    // The harness's own restart checks the same round trip and goes on.
    h.restart();
    assert!(matches!(h.ok(B + 500, Input::Advance).0, Reply::Advanced));
    h.check_replay();
}

#[test]
fn a_contradictory_queue_state_is_refused() {
    let h = busy();
    let good: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let jobs = good["queues"]["jobs"].as_object().unwrap();
    let first_in = |state: &str| {
        jobs.iter()
            .find(|(_, j)| j["state"] == state)
            .map(|(id, _)| id.clone())
            .unwrap()
    };
    let (available, any) = (first_in("available"), first_in("completed"));
    let edits: [Edit; 4] = [
        Box::new(|v| v["queues"]["lastJob"] = 2.into()),
        Box::new(|v| v["queues"]["lastToken"] = 1.into()),
        Box::new(move |v| v["queues"]["jobs"][&any]["queue"] = "gone".into()),
        Box::new(move |v| v["queues"]["jobs"][&available]["state"] = "claimed".into()),
    ];
    for edit in edits {
        let mut bad = good.clone();
        edit(&mut bad);
        assert_ne!(bad, good, "edit applied");
        let err = Snapshot::from_json(&bad.to_string())
            .and_then(Engine::restore)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{err}");
    }
}

/// A job's fields at their defaults are not written: a fresh job is its
/// queue, state, payload and run time; priority and attempt appear once
/// they are not 0.
#[test]
fn default_fields_are_left_out() {
    let mut h = Harness::standalone();
    h.ok(T, Input::Enqueue(EnqueueRequest::new("q", Payload::null())));
    let mut urgent = EnqueueRequest::new("q", Payload::null());
    urgent.priority = 3;
    h.ok(T, Input::Enqueue(urgent));
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let fields = |id: &str| {
        let mut keys: Vec<String> = v["queues"]["jobs"][id]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(fields("1"), ["payload", "queue", "runAt", "state"]);
    assert_eq!(
        fields("2"),
        ["payload", "priority", "queue", "runAt", "state"]
    );
    h.claim_one(T, "q"); // job 2, the higher priority: attempt 1
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    assert_eq!(v["queues"]["jobs"]["2"]["attempt"], 1);
    assert!(v["queues"]["jobs"]["1"].get("attempt").is_none());
}
