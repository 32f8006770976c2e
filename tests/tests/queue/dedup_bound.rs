//! The table of remembered idempotency keys is bounded
//! (`limits.dedupKeys`). When it is full, a new key makes room by
//! forgetting the finished job's key that expires soonest (that key then
//! no longer de-duplicates); if every remembered key belongs to a live job,
//! the enqueue is `limit_exceeded{what: "dedup_keys"}` and changes nothing.
//! Jobs without a key are not limited by it.

use chime_core::{EngineConfig, EnqueueRequest, Error, Input, JobId, Limits, Payload, Reply};
use chime_tests::scenario::*;

const T: i64 = 1_000_000_000_000;

fn request(key: Option<&str>) -> Input {
    let mut req = EnqueueRequest::new("q", Payload::null());
    req.key = key.map(str::to_owned);
    Input::Enqueue(req)
}

fn enqueue(h: &mut Harness, now: i64, key: Option<&str>) -> JobId {
    match h.ok(now, request(key)).0 {
        Reply::Enqueued {
            job,
            deduplicated: false,
        } => job,
        other => panic!("{other:?}"),
    }
}

fn refused(h: &mut Harness, now: i64, key: &str) {
    h.advance(now);
    let before = h.engine.snapshot().to_json();
    let (reply, cmds) = h.run(now, request(Some(key)));
    assert_eq!(
        reply.unwrap_err(),
        Error::LimitExceeded {
            what: "dedup_keys",
            limit: 2
        }
    );
    assert!(cmds.is_empty());
    assert_eq!(h.engine.snapshot().to_json(), before);
}

fn complete(h: &mut Harness, now: i64, job: JobId) {
    let c = h
        .claim(now, "q", 10, None)
        .into_iter()
        .find(|c| c.job == job)
        .expect("claimable");
    let done = Input::Complete {
        job: c.job,
        token: c.token,
    };
    h.ok(now, done);
}

#[test]
fn a_full_table_forgets_the_oldest_finished_key_or_refuses() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            dedup_keys: 2,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let k1 = enqueue(&mut h, T, Some("k1"));
    enqueue(&mut h, T, Some("k2"));
    // Both keys belong to live jobs: nothing can be forgotten.
    refused(&mut h, T + 1, "k3");
    // Without a key there is no limit on keys.
    enqueue(&mut h, T + 1, None);
    complete(&mut h, T + 2, k1);
    // k1 is a finished job's key now, inside its window: forgotten to
    // make room for k3.
    let k3 = enqueue(&mut h, T + 3, Some("k3"));
    // k1 was forgotten (a new key, not de-duplicated), and the table is
    // full of live keys again.
    refused(&mut h, T + 4, "k1");
    complete(&mut h, T + 5, k3);
    let again = enqueue(&mut h, T + 6, Some("k1"));
    assert_ne!(again, k1);
    h.check_replay();
}
