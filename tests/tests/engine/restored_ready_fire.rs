//! A buffered fire whose predecessor ended while the engine was not
//! leading waits, ready, for leadership; restored from a snapshot as a
//! standalone engine (the snapshot's `config.standalone` set to true), it
//! is released at once: `poll_timeout()` is the clock, not the next
//! boundary, and an advance at the clock fires it. (Mutation testing: in
//! `poll_timeout`, `!ready.is_empty() || backlog` turned into `&&` was not
//! noticed: a running leader releases every ready fire before `handle`
//! returns, so only a restore gives a leader one.)

use chime_core::{Command, Engine, EngineConfig, Epoch, Input, LeadershipGrant, Overlap, Snapshot};
use chime_tests::scenario::*;

/// A multiple of 10 s, so `@every 10s` boundaries are `S + k * 10 s`.
const S: i64 = 1_000_000_000_000;
const TEN: i64 = 10_000;

fn drain(e: &mut Engine) -> Vec<Command> {
    std::iter::from_fn(|| e.poll_command()).collect()
}

#[test]
fn a_ready_buffered_fire_is_released_at_once_after_restore() {
    let mut e = Engine::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let grant = Input::Leadership(Some(LeadershipGrant {
        epoch: Epoch(1),
        valid_until: t(S + 25_000),
    }));
    e.handle(t(S), grant).unwrap();
    let mut tick = def("tick", "@every 10s", "q");
    tick.overlap = Overlap::BufferOne;
    e.handle(t(S), Input::UpsertSchedule(tick)).unwrap();
    e.handle(t(S + TEN), Input::Advance).unwrap();
    assert_eq!(nominals(&drain(&mut e)), vec![S + TEN]);
    // The 20 s boundary is buffered behind the 10 s fire's job.
    e.handle(t(S + 2 * TEN), Input::Advance).unwrap();
    assert!(fires(&drain(&mut e)).is_empty());
    // The grant runs out at 25 s; then the first job completes: the
    // buffered fire is ready, but the engine does not lead.
    e.handle(t(S + 25_000), Input::Advance).unwrap();
    let Ok(chime_core::Reply::Claimed { jobs }) = e.handle(
        t(S + 25_000),
        Input::Claim {
            queue: "q".into(),
            worker: "w".into(),
            max: 1,
            lease_ms: None,
        },
    ) else {
        panic!("claim")
    };
    let done = Input::Complete {
        job: jobs[0].job,
        token: jobs[0].token,
    };
    e.handle(t(S + 25_000), done).unwrap();
    assert!(fires(&drain(&mut e)).is_empty());
    assert!(!e.is_leader());

    let mut json: serde_json::Value = serde_json::from_str(&e.snapshot().to_json()).unwrap();
    assert_eq!(json["config"]["standalone"], false);
    json["config"]["standalone"] = true.into();
    let mut r = Engine::restore(Snapshot::from_json(&json.to_string()).unwrap()).unwrap();
    assert!(r.is_leader());
    assert_eq!(
        r.poll_timeout(),
        Some(t(S + 25_000)),
        "the ready fire is due now"
    );
    r.handle(t(S + 25_000), Input::Advance).unwrap();
    assert_eq!(nominals(&drain(&mut r)), vec![S + 2 * TEN]);
}
