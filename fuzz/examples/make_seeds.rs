//! Writes the committed seed corpus: real snapshots for `snapshot_restore`,
//! real journals for `journal_replay`, a few specs for `spec_parse`.
//!
//!     cd fuzz && cargo run --example make_seeds
use chime_core::{
    Engine, EngineConfig, EnqueueRequest, Epoch, Input, JournalEntry, LeadershipGrant, Payload,
    Reply, ScheduleDef, Timestamp,
};
use chime_fuzz::jr;
use std::fs;

fn def(json: &str) -> Input {
    Input::UpsertSchedule(serde_json::from_str::<ScheduleDef>(json).unwrap())
}

fn run(config: EngineConfig, steps: &[(i64, Input)]) -> (Engine, Vec<JournalEntry>) {
    let mut engine = Engine::new(config);
    let mut entries = Vec::new();
    let mut claims = Vec::new();
    for (ms, input) in steps {
        let now = Timestamp::from_millis(*ms).unwrap();
        let input = match input {
            // A Complete with token 0 stands for "complete the first claim".
            Input::Complete { token, .. } if token.0 == 0 && !claims.is_empty() => {
                let (job, token) = claims.remove(0);
                Input::Complete { job, token }
            }
            i => i.clone(),
        };
        entries.push(JournalEntry {
            now,
            input: input.clone(),
        });
        if let Ok(Reply::Claimed { jobs }) = engine.handle(now, input) {
            claims.extend(jobs.iter().map(|c| (c.job, c.token)));
        }
        while engine.poll_command().is_some() {}
        engine.check_invariants();
    }
    (engine, entries)
}

fn main() {
    let t0 = 1_767_225_600_000; // 2026-01-01T00:00Z
    let h = 3_600_000;
    let enqueue = |k: Option<&str>| {
        let mut r = EnqueueRequest::new("emails", Payload::from_json(r#"{"to":"a@b"}"#).unwrap());
        r.key = k.map(str::to_owned);
        Input::Enqueue(r)
    };
    let scenarios: Vec<(&str, EngineConfig, Vec<(i64, Input)>)> = vec![
        ("empty", EngineConfig::default(), vec![(t0, Input::Advance)]),
        (
            "schedules",
            EngineConfig::default(),
            vec![
                (
                    t0,
                    def(r#"{"name":"backup","spec":"@every 1h","target":{"queue":"jobs"}}"#),
                ),
                (
                    t0,
                    def(
                        r#"{"name":"ny","spec":"30 2 * * *","tz":"America/New_York","jitterMs":5000,"overlap":"buffer_one","target":{"queue":"jobs","payload":{"x":1}}}"#,
                    ),
                ),
                (
                    t0,
                    def(
                        r#"{"name":"once","spec":"@at 2026-03-08T02:30","tz":"America/New_York","target":{"queue":"ext"}}"#,
                    ),
                ),
                (
                    t0 + 1,
                    Input::DeclareQueue(
                        serde_json::from_str(r#"{"name":"ext","mode":"external"}"#).unwrap(),
                    ),
                ),
                (t0 + 3 * h, Input::Advance),
                (
                    t0 + 3 * h,
                    Input::PauseSchedule {
                        name: "ny".into(),
                        note: Some("maint".into()),
                    },
                ),
                (
                    t0 + 3 * h,
                    Input::TriggerSchedule {
                        name: "backup".into(),
                        overlap: None,
                    },
                ),
                (t0 + 30 * h, Input::Advance),
            ],
        ),
        (
            "queues",
            EngineConfig::default(),
            vec![
                (t0, enqueue(Some("k1"))),
                (t0, enqueue(None)),
                (t0, enqueue(Some("k1"))),
                (
                    t0 + 5,
                    Input::Claim {
                        queue: "emails".into(),
                        worker: "w1".into(),
                        max: 1,
                        lease_ms: Some(30_000),
                    },
                ),
                (
                    t0 + 10,
                    Input::Complete {
                        job: chime_core::JobId(0),
                        token: chime_core::LeaseToken(0),
                    },
                ),
                (
                    t0 + 20,
                    Input::Claim {
                        queue: "emails".into(),
                        worker: "w2".into(),
                        max: 2,
                        lease_ms: None,
                    },
                ),
                (t0 + 200_000, Input::Advance),
                (
                    t0 + 300_000,
                    Input::AcquireLease {
                        name: "cron-lock".into(),
                        owner: "me".into(),
                        ttl_ms: 60_000,
                    },
                ),
            ],
        ),
        (
            "follower",
            EngineConfig {
                standalone: false,
                seed: 7,
                ..EngineConfig::default()
            },
            vec![
                (
                    t0,
                    def(
                        r#"{"name":"tick","spec":"*/10 * * * * *","catchup":{"windowMs":60000,"max":3},"target":{"queue":"jobs"}}"#,
                    ),
                ),
                (
                    t0,
                    Input::Leadership(Some(LeadershipGrant {
                        epoch: Epoch(3),
                        valid_until: Timestamp::from_millis(t0 + 60_000).unwrap(),
                    })),
                ),
                (t0 + 45_000, Input::Advance),
                (
                    t0 + 120_000,
                    Input::PauseSchedule {
                        name: "tick".into(),
                        note: None,
                    },
                ),
                (
                    t0 + 130_000,
                    Input::ResumeSchedule {
                        name: "tick".into(),
                    },
                ),
                (
                    t0 + 200_000,
                    Input::Leadership(Some(LeadershipGrant {
                        epoch: Epoch(4),
                        valid_until: Timestamp::from_millis(t0 + 400_000).unwrap(),
                    })),
                ),
                (
                    t0 + 210_000,
                    Input::Backfill {
                        name: "tick".into(),
                        from: Timestamp::from_millis(t0).unwrap(),
                        to: Timestamp::from_millis(t0 + 30_000).unwrap(),
                        overlap: None,
                    },
                ),
            ],
        ),
    ];
    for dir in [
        "corpus/snapshot_restore",
        "corpus/journal_replay",
        "corpus/spec_parse",
    ] {
        fs::create_dir_all(dir).unwrap();
    }
    for (name, config, steps) in scenarios {
        let (engine, entries) = run(config.clone(), &steps);
        fs::write(
            format!("corpus/snapshot_restore/seed-{name}.json"),
            engine.snapshot().to_json(),
        )
        .unwrap();
        let mode = if config.standalone {
            0u8
        } else {
            1 + 2 * config.seed as u8
        };
        let mut bytes = vec![mode];
        bytes.extend_from_slice(jr::write(&entries).as_bytes());
        fs::write(format!("corpus/journal_replay/seed-{name}.jsonl"), bytes).unwrap();
    }
    // spec_parse: [zone, dst, base, step lo, step hi] + text
    let specs: &[(u8, u8, u8, &str)] = &[
        (0, 0, 1, "* * * * *"),
        (2, 0, 2, "30 2 * * *"),
        (3, 4, 4, "0 30 1 * * *"),
        (4, 1, 7, "0,30 * * * *"),
        (5, 0, 3, "0 0 L-2 * *"),
        (2, 5, 5, "0 9 15W * +FRI"),
        (0, 0, 8, "0 0 31 12 * 9999"),
        (1, 0, 1, "@every 1h30m+15m"),
        (2, 0, 2, "@at 2026-03-08T02:30"),
        (0, 0, 0, "@at 1970-01-01T00:00:00Z"),
        (8, 0, 6, "CRON_TZ=Pacific/Apia 0 12 * * *"),
        (0, 0, 1, "0 0 12 25 12 ? 2026-2030"),
        (6, 2, 4, "0 12 * * 5#3"),
        (9, 7, 3, "@weekly"),
    ];
    for (i, (z, d, b, text)) in specs.iter().enumerate() {
        let mut bytes = vec![*z, *d, *b, 0, 0];
        bytes.extend_from_slice(text.as_bytes());
        fs::write(format!("corpus/spec_parse/seed-{i:02}"), bytes).unwrap();
    }
}
