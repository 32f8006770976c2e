//! A snapshot whose queue state contradicts itself is refused with
//! `invalid_input` naming the contradiction, one fault at a time, and the
//! nearest coherent state at each edge is accepted: every check of the
//! queue restore (`queue::view::build_indexes`, `check_key`, and
//! `Job::check_shape`) both fires and stays quiet where it should.
//!
//! The snapshot holds, in queue `main`: job 1 (a fire's job, claimed under
//! token 1, fire key), job 2 (completed, its user key `k2` remembered with
//! an expiry), job 3 (available, user key `k3`, live); in queue `dead`:
//! job 4 (a dead letter). `lastJob` 4, `lastToken` 3.

use chime_core::{Engine, EnqueueRequest, Input, Payload, QueueConfig, Snapshot};
use chime_tests::scenario::*;
use serde_json::{Value, json};

const T: i64 = 1_000_000_000_000;
const HOUR: i64 = 3_600_000;
/// The first hourly boundary after `T`.
const B: i64 = (T / HOUR + 1) * HOUR;

fn good() -> Value {
    let mut h = Harness::standalone();
    let mut dead = QueueConfig::new("dead");
    dead.max_attempts = 1;
    h.ok(T, Input::DeclareQueue(dead));
    h.ok(T, Input::UpsertSchedule(def("s", "@every 1h", "main")));
    h.advance(B); // job 1, the fire's
    let keyed = |key: &str| {
        let mut r = EnqueueRequest::new("main", Payload::null());
        r.key = Some(key.into());
        Input::Enqueue(r)
    };
    h.ok(B, keyed("k2")); // job 2
    let c = h.claim_one(B + 100, "main");
    assert_eq!(c.token.0, 1, "the fire's job first");
    let c = h.claim_one(B + 100, "main");
    h.ok(
        B + 200,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    h.ok(B + 300, keyed("k3")); // job 3
    h.ok(
        B + 300,
        Input::Enqueue(EnqueueRequest::new("dead", Payload::null())),
    ); // job 4
    let c = h.claim_one(B + 400, "dead");
    h.fail(B + 400, &c);
    let v: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    let q = &v["queues"];
    assert_eq!(
        (q["lastJob"].clone(), q["lastToken"].clone()),
        (json!(4), json!(3))
    );
    let state = |id: &str| q["jobs"][id]["state"].as_str().unwrap().to_owned();
    assert_eq!(
        ["1", "2", "3", "4"].map(state),
        ["claimed", "completed", "available", "dead"]
    );
    assert!(q["queues"]["main"]["dedup"]["k2"]["expiresAt"].is_i64());
    assert!(q["queues"]["main"]["dedup"]["k3"]["expiresAt"].is_null());
    v
}

fn restore(v: &Value) -> Result<Engine, chime_core::Error> {
    Snapshot::from_json(&v.to_string()).and_then(Engine::restore)
}

/// `edit` applied to the good snapshot makes it refused, for `why`.
fn refused(edit: impl FnOnce(&mut Value), why: &str) {
    let good = good();
    let mut bad = good.clone();
    edit(&mut bad);
    assert_ne!(bad, good, "edit applied ({why})");
    let err = restore(&bad).map(|_| ()).unwrap_err();
    assert_eq!(err.code(), "invalid_input", "{err}");
    let text = err.to_string();
    assert!(
        text.contains(why),
        "refused for another reason: {text} (want {why:?})"
    );
}

/// `edit` applied to the good snapshot keeps it acceptable.
fn accepted(edit: impl FnOnce(&mut Value)) {
    let mut v = good();
    edit(&mut v);
    if let Err(e) = restore(&v) {
        panic!("refused: {e}");
    }
}

fn jobs(v: &mut Value) -> &mut Value {
    &mut v["queues"]["jobs"]
}

fn queue<'a>(v: &'a mut Value, name: &str) -> &'a mut Value {
    &mut v["queues"]["queues"][name]
}

/// Removes user key `key` from queue `main`'s table.
fn forget_user_key(v: &mut Value, key: &str) {
    let dedup = queue(v, "main")["dedup"].as_object_mut().unwrap();
    assert!(dedup.remove(key).is_some(), "{key} remembered");
}

/// Moves job `from` to id `to` (and its key entry with it).
fn renumber(v: &mut Value, from: &str, to: u64) {
    let job = jobs(v).as_object_mut().unwrap().remove(from).unwrap();
    jobs(v)[to.to_string()] = job;
}

#[test]
fn the_good_snapshot_restores() {
    accepted(|_| {});
}

#[test]
fn a_queue_under_another_name() {
    refused(
        |v| queue(v, "dead")["config"]["name"] = "other".into(),
        "holds the config of",
    );
}

#[test]
fn job_ids_must_have_been_issued() {
    // Job 4 (a dead letter, no key) as job 0 or job 5; `lastJob` is 4.
    refused(|v| renumber(v, "4", 0), "id not issued yet");
    refused(|v| renumber(v, "4", 5), "id not issued yet");
    accepted(|v| {
        renumber(v, "4", 5);
        v["queues"]["lastJob"] = 5.into();
    });
}

#[test]
fn a_job_in_an_unknown_queue() {
    refused(|v| jobs(v)["4"]["queue"] = "gone".into(), "unknown queue");
}

#[test]
fn optional_fields_agree_with_the_state() {
    // A lease exactly while claimed.
    refused(
        |v| jobs(v)["3"]["lease"] = json!({"token": 3, "deadline": B + 60_000, "worker": "w"}),
        "lease exactly while claimed",
    );
    refused(
        |v| {
            jobs(v)["1"].as_object_mut().unwrap().remove("lease");
        },
        "lease exactly while claimed",
    );
    // `finishedAt` exactly while terminal.
    refused(
        |v| jobs(v)["3"]["finishedAt"] = B.into(),
        "finishedAt exactly while terminal",
    );
    refused(
        |v| {
            jobs(v)["4"].as_object_mut().unwrap().remove("finishedAt");
        },
        "finishedAt exactly while terminal",
    );
    // `retainUntil` exactly while completed, cancelled or dropped (not dead).
    refused(
        |v| jobs(v)["4"]["retainUntil"] = (B + HOUR).into(),
        "retainUntil exactly while",
    );
    refused(
        |v| {
            jobs(v)["2"].as_object_mut().unwrap().remove("retainUntil");
        },
        "retainUntil exactly while",
    );
    // A claimed job has started an attempt.
    refused(|v| jobs(v)["1"]["attempt"] = 0.into(), "started an attempt");
    // `maxAttempts` 0 is never valid; 1 is.
    refused(
        |v| jobs(v)["3"]["maxAttempts"] = 0.into(),
        "maxAttempts is at least 1",
    );
    accepted(|v| jobs(v)["3"]["maxAttempts"] = 1.into());
}

#[test]
fn external_queues_keep_history_but_no_work() {
    let external = |v: &mut Value, name: &str| queue(v, name)["config"]["mode"] = "external".into();
    // `main` holds live jobs (1 claimed, 3 available): refused.
    refused(
        |v| external(v, "main"),
        "live or dead job in an external queue",
    );
    // `dead` holds a dead letter: refused too.
    refused(
        |v| external(v, "dead"),
        "live or dead job in an external queue",
    );
    // Only the completed job 2 left in `main`: retained history is fine.
    accepted(|v| {
        let jobs = jobs(v).as_object_mut().unwrap();
        jobs.remove("1");
        jobs.remove("3");
        let main = queue(v, "main");
        main.as_object_mut().unwrap().remove("fireKeys");
        main["dedup"].as_object_mut().unwrap().remove("k3");
        external(v, "main");
    });
}

#[test]
fn lease_tokens_were_issued_and_are_unique() {
    let lease = |token: u64| json!({"token": token, "deadline": B + 60_000, "worker": "w"});
    refused(
        |v| jobs(v)["1"]["lease"]["token"] = 0.into(),
        "token not issued or not unique",
    );
    refused(
        |v| jobs(v)["1"]["lease"]["token"] = 4.into(),
        "token not issued or not unique",
    );
    accepted(|v| jobs(v)["1"]["lease"]["token"] = 3.into());
    // Job 3 claimed too, under job 1's token, or under a token of its own.
    let claim = |v: &mut Value, token: u64| {
        let j = &mut jobs(v)["3"];
        j["state"] = "claimed".into();
        j["attempt"] = 1.into();
        j["lease"] = lease(token);
    };
    refused(|v| claim(v, 1), "token not issued or not unique");
    accepted(|v| claim(v, 2));
}

#[test]
fn remembered_keys_point_at_issued_jobs() {
    // An expired-or-not key of a job since forgotten is fine; of a job never
    // issued (0, or past `lastJob`) it is not.
    for job in [0, 5] {
        refused(
            |v| queue(v, "main")["dedup"]["k2"]["job"] = job.into(),
            "points at an unissued job",
        );
    }
    accepted(|v| {
        jobs(v).as_object_mut().unwrap().remove("2");
    });
}

#[test]
fn a_live_key_needs_its_live_job() {
    let why = "without its live job";
    // `k2` live (no expiry) but its job completed.
    refused(
        |v| {
            queue(v, "main")["dedup"]["k2"]
                .as_object_mut()
                .unwrap()
                .remove("expiresAt");
        },
        why,
    );
    // `k3` pointing at another live job (job 1 carries a fire key).
    refused(|v| queue(v, "main")["dedup"]["k3"]["job"] = 1.into(), why);
    // `k3` pointing at its job, which sits in another queue.
    refused(
        |v| {
            let j = &mut jobs(v)["3"];
            j["queue"] = "dead".into();
        },
        why,
    );
    // The fire key in the user table (and the user key in the fire table).
    refused(
        |v| {
            let main = queue(v, "main");
            let fire = main["fireKeys"]
                .as_object_mut()
                .unwrap()
                .remove("s@1000000800000");
            main["dedup"]["s@1000000800000"] = fire.unwrap();
        },
        why,
    );
    refused(
        |v| {
            let main = queue(v, "main");
            let user = main["dedup"].as_object_mut().unwrap().remove("k3");
            main["fireKeys"]["k3"] = user.unwrap();
        },
        why,
    );
}

#[test]
fn an_expiring_key_of_a_live_job() {
    refused(
        |v| queue(v, "main")["dedup"]["k3"]["expiresAt"] = (B + HOUR).into(),
        "expires while its job is live",
    );
    // The same expiry on a key whose job is terminal is what `k2` has.
    accepted(|v| queue(v, "main")["dedup"]["k2"]["expiresAt"] = (B + HOUR).into());
}

#[test]
fn a_live_job_holds_its_key() {
    let why = "does not hold its key";
    // Job 3's key forgotten.
    refused(
        |v| {
            forget_user_key(v, "k3");
        },
        why,
    );
    // Job 3 under the key of the completed job 2 (whose entry, expiring,
    // is coherent on its own).
    refused(
        |v| {
            forget_user_key(v, "k3");
            jobs(v)["3"]["key"] = "k2".into();
        },
        why,
    );
    // A second live job under job 3's key (the key points at job 3): two
    // live jobs would share it.
    refused(
        |v| {
            jobs(v)["5"] = jobs(v)["3"].clone();
            v["queues"]["lastJob"] = 5.into();
        },
        why,
    );
    // A terminal job need not hold its key: job 2's entry gone is fine.
    accepted(|v| {
        forget_user_key(v, "k2");
    });
}

#[test]
fn finished_jobs_were_issued() {
    refused(
        |v| v["queues"]["finished"] = json!([[0, null]]),
        "finished job 0 not issued yet",
    );
    refused(
        |v| v["queues"]["finished"] = json!([[5, null]]),
        "finished job 5 not issued yet",
    );
    accepted(|v| v["queues"]["finished"] = json!([[4, null]]));
}
