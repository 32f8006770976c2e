//! `Engine::handle` with arbitrary sequences of `(now delta, Input)`.
//!
//! A compact op enum (built with `arbitrary`) maps to real inputs: upserts
//! with cron/`@every`/`@at` specs in several zones, pause/resume/remove,
//! triggers, backfills, queue declarations, enqueue/claim/heartbeat/
//! complete/fail/cancel/redrive/purge, settled external fires, leadership
//! grants (stale and expired too), named leases, the clock going back and
//! jumping years, tiny limits, and restarts from a snapshot.
//!
//! After every handle: commands drained, `check_invariants()`, the timer
//! never in the past, no fire id twice. At the end: snapshot → JSON →
//! restore → JSON byte-identical, the journal round-trips through its text
//! form, and replaying it from the initial snapshot reproduces the same
//! command stream, replies and final snapshot.
#![no_main]

use arbitrary::Arbitrary;
use chime_core::{
    Command, Engine, EngineConfig, EnqueueRequest, Epoch, FireId, FireOutcome, Input, JobId,
    JournalEntry, LeadershipGrant, LeaseToken, Payload, QueueConfig, QueueMode, Reply, ScheduleDef,
    Snapshot, Timestamp,
};
use chime_fuzz::{journal_round_trip, jr, round_trip};
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;

#[derive(Arbitrary, Debug)]
struct Scenario {
    cfg: Cfg,
    steps: Vec<Step>,
}

#[derive(Arbitrary, Debug)]
struct Cfg {
    standalone: bool,
    seed: u8,
    tiny: bool,
    lim: [u8; 8],
    start: u8,
}

#[derive(Arbitrary, Debug)]
struct Step {
    dt: Dt,
    op: Op,
}

#[derive(Arbitrary, Debug)]
enum Dt {
    Same,
    Ms(u16),
    Secs(u8),
    Mins(u8),
    Hours(u8),
    Days(u8),
    Years(u8),
    BackSecs(u16),
    BackDays(u8),
    ToTimeout,
    PastTimeout(u16),
}

#[derive(Arbitrary, Debug)]
enum SpecPick {
    EverySecs(u16),
    EveryMs(u16),
    EveryOffset(u8, u8),
    Cron(u8),
    AtRel(i32),
    AtCivilRel(i32),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
struct Upsert {
    sched: u8,
    spec: SpecPick,
    tz: u8,
    dst: u8,
    queue: u8,
    jitter: u8,
    start_at: Option<i16>,
    end_at: Option<i16>,
    max_fires: Option<u8>,
    paused: bool,
    overlap: u8,
    catchup: Option<(u16, u8)>,
    max_attempts: Option<u8>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Advance,
    Upsert(Upsert),
    Remove(u8),
    Pause(u8, bool),
    Resume(u8),
    Trigger(u8, Option<u8>),
    Backfill {
        sched: u8,
        from_back_mins: u16,
        len_mins: u16,
        overlap: Option<u8>,
    },
    BackfillEpoch {
        sched: u8,
        len_mins: u16,
    },
    DeclareQueue {
        queue: u8,
        external: bool,
        lease_secs: u16,
        max_attempts: u8,
        dead_letter: bool,
        backoff: (u8, u8),
        retention: (u8, u8),
        dedup_mins: u8,
    },
    Enqueue {
        queue: u8,
        key: Option<u8>,
        delay: Option<i16>,
        run_at: Option<i16>,
        priority: i8,
        max_attempts: Option<u8>,
        payload: u8,
        headers: u8,
    },
    Claim {
        queue: u8,
        worker: u8,
        max: u8,
        lease_secs: Option<u16>,
    },
    Heartbeat(u8, Option<u16>),
    Complete(u8),
    Fail(u8, Option<i16>),
    CancelJob(u8),
    Redrive(u8, Option<u8>),
    PurgeDead(u8, Option<i16>),
    Settle(u8, bool),
    Grant {
        epoch_delta: i8,
        valid_secs: i16,
    },
    Revoke,
    Acquire {
        name: u8,
        owner: u8,
        ttl_secs: i16,
    },
    Renew {
        name: u8,
        token: u8,
        ttl_secs: i16,
    },
    Release {
        name: u8,
        token: u8,
    },
    Restart,
}

const SCHEDS: &[&str] = &["a", "b", "c", "bad name"];
const QUEUES: &[&str] = &["q", "r", "x", ""];
const ZONES: &[Option<&str>] = &[
    None,
    Some("America/New_York"),
    Some("Europe/London"),
    Some("Australia/Lord_Howe"),
    Some("Africa/Casablanca"),
    Some("Pacific/Chatham"),
    Some("No/Such_Zone"),
];
const DSTS: &[&str] = &[
    "{}",
    r#"{"gap":"skip"}"#,
    r#"{"gap":"shift","fold":"last"}"#,
    r#"{"fold":"both"}"#,
];
const CRONS: &[&str] = &[
    "* * * * *",
    "*/5 * * * * *",
    "30 2 * * *",
    "0 * * * *",
    "0 0 L * *",
    "0 9 15W * *",
    "0 12 * * 5#3",
    "0 0 29 2 *",
    "0 30 1 * * *",
    "15,45 1-3 * * *",
    "0 0 1 1 * 2030",
    "@daily",
    "@hourly",
    "0 0 13 * +FRI",
    "* * * * * * 2026",
    "0 0 31 2 *",
];
const OVERLAPS: &[&str] = &[
    "\"skip\"",
    "\"allow\"",
    "\"buffer_one\"",
    "\"cancel_previous\"",
];
const PAYLOADS: &[&str] = &[
    "null",
    "{}",
    "{\"k\":[1,2,{\"z\":\"é\"}]}",
    "\"x\"",
    "12345678901234567890",
];

/// 2026-01-01T00:00Z, 2026-03-07T12:00Z, 2026-10-24T12:00Z, 2011-12-29,
/// near the epoch, and near the end of year 9999.
const STARTS: &[i64] = &[
    1_767_225_600_000,
    1_772_884_800_000,
    1_792_843_200_000,
    1_325_116_800_000,
    1_000,
    253_402_000_000_000,
];

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[i as usize % list.len()]
}

fn overlap(i: u8) -> chime_core::Overlap {
    serde_json::from_str(pick(OVERLAPS, i)).unwrap()
}

fn clamp1(v: u8, max: u8) -> u8 {
    1 + v % max
}

fn config(c: &Cfg) -> EngineConfig {
    let mut cfg = EngineConfig {
        seed: u64::from(c.seed),
        standalone: c.standalone,
        ..EngineConfig::default()
    };
    if c.tiny {
        let l = &mut cfg.limits;
        l.schedules = clamp1(c.lim[0], 3) as usize;
        l.queues = clamp1(c.lim[1], 3) as usize;
        l.claim_batch = u32::from(clamp1(c.lim[2], 3));
        l.catchup_fires = u32::from(clamp1(c.lim[3], 4));
        l.backfill_fires = u32::from(clamp1(c.lim[4], 8));
        l.fires_per_advance = u32::from(clamp1(c.lim[5], 6));
        l.live_jobs = clamp1(c.lim[6], 8) as usize;
        l.dedup_keys = clamp1(c.lim[7], 4) as usize;
        l.dead_letters_per_queue = clamp1(c.lim[0] >> 4, 3) as usize;
        l.completed_per_queue = clamp1(c.lim[1] >> 4, 3) as usize;
        l.pending_commands = 4 + (c.lim[2] >> 4) as usize * 4;
        l.text_bytes = 8 + (c.lim[3] >> 4) as usize;
        l.headers = (c.lim[4] >> 4) as usize % 3;
        l.pause_changes = clamp1(c.lim[5] >> 4, 3) as usize;
        l.payload_bytes = 8 + (c.lim[6] >> 4) as usize * 4;
    }
    cfg
}

struct Harness {
    engine: Engine,
    now: Timestamp,
    entries: Vec<JournalEntry>,
    commands: Vec<String>,
    replies: Vec<Result<Reply, chime_core::Error>>,
    fires: Vec<FireId>,
    seen_fires: HashSet<String>,
    claims: Vec<(JobId, LeaseToken)>,
    jobs: Vec<JobId>,
    leases: Vec<(String, LeaseToken)>,
    epoch: u64,
}

impl Harness {
    fn at(&self, delta_ms: i64) -> Timestamp {
        self.now.saturating_add_ms(delta_ms)
    }

    fn claim(&self, i: u8) -> (JobId, LeaseToken) {
        if self.claims.is_empty() || i == 255 {
            (JobId(u64::from(i)), LeaseToken(u64::from(i) * 7))
        } else {
            self.claims[i as usize % self.claims.len()]
        }
    }

    fn job(&self, i: u8) -> JobId {
        if self.jobs.is_empty() || i == 255 {
            JobId(u64::from(i))
        } else {
            self.jobs[i as usize % self.jobs.len()]
        }
    }

    fn step(&mut self, step: Step) {
        let delta: i64 = match step.dt {
            Dt::Same => 0,
            Dt::Ms(n) => i64::from(n),
            Dt::Secs(n) => i64::from(n) * 1000,
            Dt::Mins(n) => i64::from(n) * 60_000,
            Dt::Hours(n) => i64::from(n) * 3_600_000,
            Dt::Days(n) => i64::from(n) * 86_400_000,
            Dt::Years(n) => i64::from(n % 16) * 365 * 86_400_000,
            Dt::BackSecs(n) => -i64::from(n) * 1000,
            Dt::BackDays(n) => -i64::from(n) * 86_400_000,
            Dt::ToTimeout | Dt::PastTimeout(_) => {
                let extra = if let Dt::PastTimeout(n) = step.dt {
                    i64::from(n)
                } else {
                    0
                };
                match self.engine.poll_timeout() {
                    Some(t) => t.as_millis() - self.now.as_millis() + extra,
                    None => extra,
                }
            }
        };
        self.now = self.at(delta);
        let Some(input) = self.input(step.op) else {
            return;
        };
        self.handle(input);
    }

    fn input(&mut self, op: Op) -> Option<Input> {
        let now = self.now;
        Some(match op {
            Op::Advance => Input::Advance,
            Op::Upsert(u) => Input::UpsertSchedule(self.def(u)),
            Op::Remove(s) => Input::RemoveSchedule {
                name: pick(SCHEDS, s).into(),
            },
            Op::Pause(s, note) => Input::PauseSchedule {
                name: pick(SCHEDS, s).into(),
                note: note.then(|| "maintenance window, a long note é".into()),
            },
            Op::Resume(s) => Input::ResumeSchedule {
                name: pick(SCHEDS, s).into(),
            },
            Op::Trigger(s, o) => Input::TriggerSchedule {
                name: pick(SCHEDS, s).into(),
                overlap: o.map(overlap),
            },
            Op::Backfill {
                sched,
                from_back_mins,
                len_mins,
                overlap: o,
            } => {
                let from = self.at(-i64::from(from_back_mins) * 60_000);
                Input::Backfill {
                    name: pick(SCHEDS, sched).into(),
                    from,
                    to: from.saturating_add_ms(i64::from(len_mins) * 60_000),
                    overlap: o.map(overlap),
                }
            }
            Op::BackfillEpoch { sched, len_mins } => Input::Backfill {
                name: pick(SCHEDS, sched).into(),
                from: Timestamp::MIN,
                to: Timestamp::MIN.saturating_add_ms(i64::from(len_mins) * 60_000),
                overlap: None,
            },
            Op::DeclareQueue {
                queue,
                external,
                lease_secs,
                max_attempts,
                dead_letter,
                backoff,
                retention,
                dedup_mins,
            } => {
                let mut q = QueueConfig::new(pick(QUEUES, queue));
                q.mode = if external {
                    QueueMode::External
                } else {
                    QueueMode::Local
                };
                q.lease_ms = i64::from(lease_secs) * 1000;
                q.max_attempts = u32::from(max_attempts % 6);
                q.dead_letter = dead_letter;
                q.backoff.base_ms = i64::from(backoff.0) * 100;
                q.backoff.cap_ms = i64::from(backoff.1) * 1000;
                q.retention.completed_max = u32::from(retention.0 % 5);
                q.retention.completed_ms = i64::from(retention.1) * 1000;
                q.dedup_window_ms = i64::from(dedup_mins) * 60_000;
                Input::DeclareQueue(q)
            }
            Op::Enqueue {
                queue,
                key,
                delay,
                run_at,
                priority,
                max_attempts,
                payload,
                headers,
            } => {
                let mut r = EnqueueRequest::new(
                    pick(QUEUES, queue),
                    Payload::from_json(pick(PAYLOADS, payload)).unwrap(),
                );
                r.key = key.map(|k| format!("k{}", k % 4));
                r.delay_ms = delay.map(|d| i64::from(d) * 1000);
                r.run_at = run_at.map(|d| self.at(i64::from(d) * 1000));
                r.priority = i32::from(priority);
                r.max_attempts = max_attempts.map(|m| u32::from(m % 4));
                for h in 0..headers % 4 {
                    r.headers.insert(format!("h{h}"), "v".into());
                }
                Input::Enqueue(r)
            }
            Op::Claim {
                queue,
                worker,
                max,
                lease_secs,
            } => Input::Claim {
                queue: pick(QUEUES, queue).into(),
                worker: format!("w{}", worker % 3),
                max: u32::from(max % 5),
                lease_ms: lease_secs.map(|s| i64::from(s) * 100),
            },
            Op::Heartbeat(c, lease) => {
                let (job, token) = self.claim(c);
                Input::Heartbeat {
                    job,
                    token,
                    lease_ms: lease.map(|s| i64::from(s) * 100),
                }
            }
            Op::Complete(c) => {
                let (job, token) = self.claim(c);
                Input::Complete { job, token }
            }
            Op::Fail(c, retry) => {
                let (job, token) = self.claim(c);
                Input::Fail {
                    job,
                    token,
                    error: "boom: a failure text longer than tiny limits".into(),
                    retry_at: retry.map(|s| self.at(i64::from(s) * 1000)),
                }
            }
            Op::CancelJob(j) => Input::CancelJob { job: self.job(j) },
            Op::Redrive(q, j) => Input::Redrive {
                queue: pick(QUEUES, q).into(),
                job: j.map(|j| self.job(j)),
            },
            Op::PurgeDead(q, before) => Input::PurgeDead {
                queue: pick(QUEUES, q).into(),
                before: before.map(|s| self.at(i64::from(s) * 1000)),
            },
            Op::Settle(f, failed) => {
                let fire = if self.fires.is_empty() {
                    FireId {
                        schedule: "a".into(),
                        nominal: now,
                        extra: None,
                    }
                } else {
                    self.fires[f as usize % self.fires.len()].clone()
                };
                Input::FireSettled {
                    fire,
                    outcome: if failed {
                        FireOutcome::Failed
                    } else {
                        FireOutcome::Succeeded
                    },
                    job: None,
                }
            }
            Op::Grant {
                epoch_delta,
                valid_secs,
            } => {
                let epoch = (self.epoch as i64 + i64::from(epoch_delta)).max(0) as u64;
                if epoch > self.epoch {
                    self.epoch = epoch;
                }
                Input::Leadership(Some(LeadershipGrant {
                    epoch: Epoch(epoch),
                    valid_until: self.at(i64::from(valid_secs) * 1000),
                }))
            }
            Op::Revoke => Input::Leadership(None),
            Op::Acquire {
                name,
                owner,
                ttl_secs,
            } => Input::AcquireLease {
                name: format!("l{}", name % 2),
                owner: format!("o{}", owner % 2),
                ttl_ms: i64::from(ttl_secs) * 1000,
            },
            Op::Renew {
                name,
                token,
                ttl_secs,
            } => Input::RenewLease {
                name: format!("l{}", name % 2),
                token: self.lease_token(token),
                ttl_ms: i64::from(ttl_secs) * 1000,
            },
            Op::Release { name, token } => Input::ReleaseLease {
                name: format!("l{}", name % 2),
                token: self.lease_token(token),
            },
            Op::Restart => {
                // A crash and restart: the host drained, snapshotted and
                // restores. Not a journal entry.
                self.engine = round_trip(&self.engine);
                return None;
            }
        })
    }

    fn lease_token(&self, i: u8) -> LeaseToken {
        if self.leases.is_empty() || i == 255 {
            LeaseToken(u64::from(i))
        } else {
            self.leases[i as usize % self.leases.len()].1
        }
    }

    fn def(&self, u: Upsert) -> ScheduleDef {
        let spec = match u.spec {
            SpecPick::EverySecs(n) => format!("@every {n}s"),
            SpecPick::EveryMs(n) => format!("@every {n}ms"),
            SpecPick::EveryOffset(h, m) => format!("@every {}h+{}m", h % 30, m % 90),
            SpecPick::Cron(i) => pick(CRONS, i).to_owned(),
            SpecPick::AtRel(s) => format!("@at {}", self.at(i64::from(s) * 1000)),
            SpecPick::AtCivilRel(s) => {
                let t = self.at(i64::from(s) * 1000).to_string();
                format!("@at {}", &t[..19])
            }
            SpecPick::Raw(s) => s.chars().take(40).collect(),
        };
        let mut def: ScheduleDef = serde_json::from_value(serde_json::json!({
            "name": pick(SCHEDS, u.sched),
            "spec": spec,
            "target": {"queue": pick(QUEUES, u.queue)},
        }))
        .unwrap();
        def.tz = ZONES[u.tz as usize % ZONES.len()].map(str::to_owned);
        def.dst = serde_json::from_str(pick(DSTS, u.dst)).unwrap();
        def.jitter_ms = i64::from(u.jitter % 8) * 250;
        def.start_at = u.start_at.map(|m| self.at(i64::from(m) * 60_000));
        def.end_at = u.end_at.map(|m| self.at(i64::from(m) * 60_000));
        def.max_fires = u.max_fires.map(|n| u64::from(n % 8));
        def.paused = u.paused;
        def.overlap = overlap(u.overlap);
        if let Some((w, m)) = u.catchup {
            def.catchup.window_ms = i64::from(w) * 60_000;
            def.catchup.max = u32::from(m % 6);
        }
        def.target.max_attempts = u.max_attempts.map(|m| u32::from(m % 4));
        def
    }

    fn handle(&mut self, input: Input) {
        self.entries.push(JournalEntry {
            now: self.now,
            input: input.clone(),
        });
        let reply = self.engine.handle(self.now, input);
        if let Ok(r) = &reply {
            self.note_reply(r);
        }
        self.replies.push(reply);
        while let Some(cmd) = self.engine.poll_command() {
            self.commands
                .push(serde_json::to_string(&cmd).expect("commands serialize"));
            match &cmd {
                Command::Fire(f) => {
                    assert!(
                        self.seen_fires.insert(f.fire_id.to_string()),
                        "fire id {} emitted twice",
                        f.fire_id
                    );
                    self.fires.push(f.fire_id.clone());
                }
                Command::Enqueue { fire, .. } => self.fires.push(fire.clone()),
                _ => {}
            }
        }
        self.engine.check_invariants();
        let clock = self.engine.clock();
        if let Some(t) = self.engine.poll_timeout() {
            assert!(t >= clock, "poll_timeout {t:?} before the clock {clock:?}");
        }
    }

    fn note_reply(&mut self, r: &Reply) {
        match r {
            Reply::Enqueued { job, .. } => self.jobs.push(*job),
            Reply::Claimed { jobs } => {
                for c in jobs {
                    self.claims.push((c.job, c.token));
                    self.jobs.push(c.job);
                }
            }
            Reply::Lease { token, .. } => {
                self.leases.push((String::new(), *token));
            }
            _ => {}
        }
        // Bound the memory of the harness.
        for v in [&mut self.jobs] {
            if v.len() > 64 {
                v.drain(..32);
            }
        }
        if self.claims.len() > 64 {
            self.claims.drain(..32);
        }
        if self.fires.len() > 64 {
            self.fires.drain(..32);
        }
    }
}

fuzz_target!(|s: Scenario| {
    if s.steps.len() > 64 {
        return;
    }
    let config = config(&s.cfg);
    let engine = Engine::new(config);
    let initial = engine.snapshot();
    let mut h = Harness {
        engine,
        now: Timestamp::from_millis(STARTS[s.cfg.start as usize % STARTS.len()]).unwrap(),
        entries: Vec::new(),
        commands: Vec::new(),
        replies: Vec::new(),
        fires: Vec::new(),
        seen_fires: HashSet::new(),
        claims: Vec::new(),
        jobs: Vec::new(),
        leases: Vec::new(),
        epoch: 0,
    };
    for step in s.steps {
        h.step(step);
    }

    // Snapshot round trip, byte for byte.
    round_trip(&h.engine);

    // The journal reproduces the run: same text round trip, same commands,
    // same replies, same final state.
    journal_round_trip(&h.entries);
    let replayed = jr::replay(restore(&initial), &h.entries).expect("initial snapshot restores");
    assert_eq!(replayed.replies, h.replies, "replay replies differ");
    assert_eq!(
        replayed.commands, h.commands,
        "replay command stream differs"
    );
    assert_eq!(
        replayed.engine.snapshot().to_json(),
        h.engine.snapshot().to_json(),
        "replay ends in another state"
    );
});

fn restore(s: &Snapshot) -> Snapshot {
    Snapshot::from_json(&s.to_json()).unwrap()
}
