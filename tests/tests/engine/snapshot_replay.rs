//! Snapshots round-trip byte for byte, and replaying the journal from a
//! mid-way snapshot reproduces the recorded command stream byte for byte.

use chime_core::journal;
use chime_core::{Command, EngineConfig, Input, Overlap, QueueConfig, QueueMode, Reply, Snapshot};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_000_000;

fn json(cmds: &[Command]) -> Vec<String> {
    cmds.iter()
        .map(|c| serde_json::to_string(c).unwrap())
        .collect()
}

/// A workload touching schedules, jitter, overlap, queues and external fires.
fn workload(h: &mut Harness, from: i64, steps: i64) {
    for k in 0..steps {
        let now = from + k * 1700;
        h.advance(now);
        if k % 3 == 0 {
            let (r, _) = h.ok(
                now,
                Input::Claim {
                    queue: "work".into(),
                    worker: "w".into(),
                    max: 2,
                    lease_ms: Some(4000),
                },
            );
            let Reply::Claimed { jobs } = r else { panic!() };
            for (i, c) in jobs.iter().enumerate() {
                let input = if i % 2 == 0 {
                    Input::Complete {
                        job: c.job,
                        token: c.token,
                    }
                } else {
                    Input::Fail {
                        job: c.job,
                        token: c.token,
                        error: "boom".into(),
                        retry_at: None,
                    }
                };
                h.ok(now + 10, input);
            }
        }
        if k % 7 == 3 {
            h.ok(
                now,
                Input::TriggerSchedule {
                    name: "jit".into(),
                    overlap: None,
                },
            );
        }
        if k == 11 {
            // A bad input is part of the journal too.
            let _ = h.run(
                now,
                Input::ResumeSchedule {
                    name: "nope".into(),
                },
            );
        }
    }
}

fn setup() -> Harness {
    let mut h = Harness::new(EngineConfig {
        seed: 42,
        ..EngineConfig::default()
    });
    let mut q = QueueConfig::new("ext");
    q.mode = QueueMode::External;
    q.lease_ms = 5000;
    h.ok(S, Input::DeclareQueue(q));
    let mut a = def("jit", "@every 3s", "work");
    a.jitter_ms = 2500;
    a.overlap = Overlap::BufferOne;
    a.target = target("work", r#"{"n": 1.50, "s": "é"}"#);
    h.ok(S, Input::UpsertSchedule(a));
    let mut b = def("ext", "@every 5s", "ext");
    b.overlap = Overlap::Skip;
    h.ok(S, Input::UpsertSchedule(b));
    let mut c = def("cron", "*/10 * * * * *", "work");
    c.overlap = Overlap::CancelPrevious;
    h.ok(S, Input::UpsertSchedule(c));
    h
}

#[test]
fn snapshot_json_round_trips_byte_for_byte() {
    let mut h = setup();
    workload(&mut h, S + 1000, 40);
    let snap = h.engine.snapshot();
    let text = snap.to_json();
    let back = Snapshot::from_json(&text).unwrap();
    assert_eq!(back, snap);
    let restored = chime_core::Engine::restore(back).unwrap();
    restored.check_invariants();
    assert_eq!(restored.snapshot().to_json(), text);
    assert_eq!(restored.poll_timeout(), h.engine.poll_timeout());
    assert!(
        text.contains(r#"{"n": 1.50, "s": "é"}"#),
        "payload kept verbatim"
    );
}

#[test]
fn replay_from_a_midway_snapshot_reproduces_the_commands() {
    let mut h = setup();
    workload(&mut h, S + 1000, 30);
    let mid = Snapshot::from_json(&h.engine.snapshot().to_json()).unwrap();
    let (journal_at, commands_at) = (h.journal().len(), h.commands.len());
    workload(&mut h, S + 60_000, 60);
    let tail = &h.journal()[journal_at..];
    let expected = json(&h.commands[commands_at..]);
    assert!(
        expected.len() > 50,
        "a meaningful stream: {}",
        expected.len()
    );

    // Through JSON Lines, as a host would store it.
    let lines = journal::write(tail);
    let entries = journal::read(&lines).unwrap();
    let replayed = journal::replay(mid, &entries).unwrap();
    assert_eq!(replayed.commands, expected);
    assert_eq!(
        replayed.engine.snapshot().to_json(),
        h.engine.snapshot().to_json()
    );
    assert_eq!(replayed.replies.iter().filter(|r| r.is_err()).count(), 1);

    // From the beginning too.
    let first = chime_core::Engine::new(EngineConfig {
        seed: 42,
        ..EngineConfig::default()
    })
    .snapshot();
    let all = journal::replay(first, h.journal()).unwrap();
    assert_eq!(all.commands, json(&h.commands));
    assert_eq!(all.replies.iter().filter(|r| r.is_err()).count(), 2);
}
