//! Seeded simulation in virtual time with crash/restart.
//!
//! Each seed drives one engine through a random workload: `@every` and
//! cron schedules (some zoned), local and external queues, workers that
//! complete, fail, heartbeat or vanish (lease expiry), settlements of
//! external fires, triggers, pauses, removals, leadership grants and
//! losses, and the host clock following `poll_timeout()` or jumping.
//!
//! The host keeps a snapshot plus the journal of inputs since, and the
//! commands recorded since. At random points it "crashes": the engine is
//! restored from the snapshot, the journal replayed, and the replayed
//! command stream must be byte-identical to the recorded one (and the
//! engine state identical); the run continues on the restored engine.
//! After every input: `check_invariants`, the accounting identity and
//! fire-id uniqueness ([`Accounting`]), every job live or terminal exactly
//! once; at every snapshot: JSON round trip byte-identical.

use chime_core::journal;
use chime_core::{
    Command, Engine, EngineConfig, Epoch, Event, FireId, FireOutcome, Input, JobId, JournalEntry,
    LeadershipGrant, LeaseToken, QueueConfig, QueueMode, Reply, ScheduleDef, Snapshot, Timestamp,
};
use chime_tests::accounting::{Accounting, Grid};
use std::collections::{BTreeMap, BTreeSet};

const START: i64 = 1_767_225_600_000; // 2026-01-01T00:00Z

/// SplitMix64: the simulation's own deterministic randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const SPECS: [(&str, Option<&str>); 8] = [
    ("@every 1s", None),
    ("@every 5s", None),
    ("@every 1m +7s", None),
    ("*/15 * * * * *", None),
    ("*/2 * * * *", Some("America/New_York")),
    ("0,30 * * * * *", Some("Europe/London")),
    ("@every 10m", None),
    ("*/20 * * * * *", Some("Australia/Lord_Howe")),
];
const OVERLAPS: [&str; 4] = ["skip", "allow", "buffer_one", "cancel_previous"];

struct Sim {
    rng: Rng,
    engine: Engine,
    config: EngineConfig,
    now: i64,
    /// Durable state: snapshot JSON, journal since, commands since (JSON).
    snapshot: String,
    journal: Vec<JournalEntry>,
    recorded: Vec<String>,
    acct: Accounting,
    /// Jobs not yet terminal, by id.
    live: BTreeSet<u64>,
    /// Claimed jobs and their tokens (the workers' view).
    held: BTreeMap<u64, (u64, String)>,
    /// Dead letters by id, with their queue.
    dead: BTreeMap<u64, String>,
    ext_fires: Vec<FireId>,
    epoch: u64,
    crashes: u32,
    fires: u64,
}

impl Sim {
    fn new(seed: u64) -> Sim {
        let mut rng = Rng(seed);
        let config = EngineConfig {
            seed: rng.next(),
            standalone: !rng.chance(30),
            ..EngineConfig::default()
        };
        let engine = Engine::new(config.clone());
        let snapshot = engine.snapshot().to_json();
        let mut sim = Sim {
            rng,
            engine,
            config,
            now: START,
            snapshot,
            journal: Vec::new(),
            recorded: Vec::new(),
            acct: Accounting::default(),
            live: BTreeSet::new(),
            held: BTreeMap::new(),
            dead: BTreeMap::new(),
            ext_fires: Vec::new(),
            epoch: 0,
            crashes: 0,
            fires: 0,
        };
        let mut q = QueueConfig::new("work");
        q.lease_ms = 8_000;
        q.max_attempts = 3;
        q.backoff.base_ms = 1_000;
        q.backoff.cap_ms = 20_000;
        sim.input(Input::DeclareQueue(q)).unwrap();
        let mut ext = QueueConfig::new("ext");
        ext.mode = QueueMode::External;
        ext.lease_ms = 12_000;
        sim.input(Input::DeclareQueue(ext)).unwrap();
        let mut nodl = QueueConfig::new("nodl");
        nodl.dead_letter = false;
        nodl.max_attempts = 2;
        sim.input(Input::DeclareQueue(nodl)).unwrap();
        for i in 0..6 {
            sim.upsert(i);
        }
        sim
    }

    /// Handles one input: journal, drain, record, observe, check.
    fn input(&mut self, input: Input) -> Result<Reply, chime_core::Error> {
        let now = Timestamp::from_millis(self.now).unwrap();
        self.journal.push(JournalEntry {
            now,
            input: input.clone(),
        });
        let reply = self.engine.handle(now, input);
        let cmds: Vec<Command> = std::iter::from_fn(|| self.engine.poll_command()).collect();
        for cmd in cmds {
            self.recorded.push(serde_json::to_string(&cmd).unwrap());
            self.observe(&cmd);
        }
        if let Ok(Reply::Enqueued {
            job,
            deduplicated: false,
        }) = &reply
        {
            assert!(self.live.insert(job.0), "job {} created twice", job.0);
        }
        if let Ok(Reply::Claimed { jobs }) = &reply {
            for c in jobs {
                assert!(self.live.contains(&c.job.0));
                self.held.insert(c.job.0, (c.token.0, "w".into()));
            }
        }
        match (&self.journal.last().unwrap().input, &reply) {
            (Input::RemoveSchedule { name }, Ok(Reply::ScheduleRemoved { existed: true })) => {
                self.acct.removed(name);
            }
            (
                Input::Redrive { queue, job: None }
                | Input::PurgeDead {
                    queue,
                    before: None,
                },
                Ok(Reply::Count { count, .. }),
            ) => {
                let redrive = matches!(self.journal.last().unwrap().input, Input::Redrive { .. });
                let of_queue: Vec<u64> = self
                    .dead
                    .iter()
                    .filter(|(_, q)| *q == queue)
                    .map(|(&id, _)| id)
                    .collect();
                assert_eq!(of_queue.len() as u64, *count, "dead letters of {queue}");
                for id in of_queue {
                    self.dead.remove(&id);
                    if redrive {
                        self.live.insert(id);
                    }
                }
            }
            _ => {}
        }
        self.check();
        reply
    }

    fn observe(&mut self, cmd: &Command) {
        self.acct.observe(cmd);
        match cmd {
            Command::Fire(f) => {
                self.fires += 1;
                if !self.config.standalone {
                    assert_eq!(f.epoch, Epoch(self.epoch), "fire epoch");
                }
                match f.job {
                    Some(job) => {
                        assert!(self.live.insert(job.0), "fire job {} reused", job.0);
                    }
                    None => self.ext_fires.push(f.fire_id.clone()),
                }
            }
            Command::Event(Event::JobDead { job, queue, .. }) => {
                assert!(self.live.remove(&job.0), "job {} ended twice", job.0);
                self.held.remove(&job.0);
                self.dead.insert(job.0, queue.to_string());
            }
            Command::Event(
                Event::JobCompleted { job, .. }
                | Event::JobDropped { job, .. }
                | Event::JobCancelled { job, .. },
            ) => {
                assert!(self.live.remove(&job.0), "job {} ended twice", job.0);
                self.held.remove(&job.0);
            }
            Command::Event(Event::JobRetried { job, .. }) => {
                self.held.remove(&job.0);
            }
            _ => {}
        }
    }

    fn check(&mut self) {
        self.engine.check_invariants();
        self.acct.check(&self.engine);
        let mut live = 0;
        for q in ["work", "nodl"] {
            let Some(st) = self.engine.queue_stats(q) else {
                continue;
            };
            live += st.scheduled + st.available + st.claimed;
        }
        assert_eq!(live, self.live.len() as u64, "live jobs");
    }

    fn upsert(&mut self, i: u64) {
        let name = format!("sched-{i}");
        if self.engine.schedule(&name).is_some() {
            return;
        }
        let (spec, tz) = SPECS[self.rng.below(SPECS.len() as u64) as usize];
        let ext = self.rng.chance(40);
        let def: ScheduleDef = serde_json::from_value(serde_json::json!({
            "name": name,
            "spec": spec,
            "tz": tz,
            "overlap": OVERLAPS[self.rng.below(4) as usize],
            "jitterMs": if self.rng.chance(30) { 900 } else { 0 },
            "catchup": {"max": 1 + self.rng.below(64), "windowMs": 60_000 + self.rng.below(3_600_000)},
            "target": {"queue": if ext { "ext" } else { "work" }, "payload": {"i": i}},
        }))
        .unwrap();
        let grid = Grid::of(&def, &self.config);
        let reply = self.input(Input::UpsertSchedule(def)).unwrap();
        let Reply::ScheduleUpserted {
            next_fire: Some(n), ..
        } = reply
        else {
            panic!("{reply:?}")
        };
        self.acct.start_grid(&name, grid, n.as_millis(), None);
    }

    /// Restores from the snapshot, replays the journal, compares.
    fn crash(&mut self) {
        self.crashes += 1;
        let snap = Snapshot::from_json(&self.snapshot).unwrap();
        let replayed = journal::replay(snap, &self.journal).unwrap();
        assert_eq!(
            replayed.commands.len(),
            self.recorded.len(),
            "replayed command count"
        );
        for (i, (a, b)) in replayed.commands.iter().zip(&self.recorded).enumerate() {
            assert_eq!(a, b, "replayed command {i} differs");
        }
        assert_eq!(
            replayed.engine.snapshot().to_json(),
            self.engine.snapshot().to_json(),
            "replayed state differs"
        );
        self.engine = replayed.engine;
        self.engine.check_invariants();
    }

    /// Takes a new snapshot (truncating the journal), checking its round trip.
    fn checkpoint(&mut self) {
        let json = self.engine.snapshot().to_json();
        let back = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
        assert_eq!(back.snapshot().to_json(), json, "snapshot round trip");
        assert_eq!(back.poll_timeout(), self.engine.poll_timeout());
        self.snapshot = json;
        self.journal.clear();
        self.recorded.clear();
    }

    fn step(&mut self) {
        let r = self.rng.below(100);
        match r {
            0..=29 => {
                // Time passes: to the next wake-up, a little, or a lot.
                let next = self.engine.poll_timeout().map(|t| t.as_millis());
                self.now = match (next, self.rng.below(10)) {
                    (Some(n), 0..=5) => n.max(self.now),
                    (_, 6..=8) => self.now + 1 + self.rng.below(20_000) as i64,
                    _ => self.now + self.rng.below(900_000) as i64,
                };
                self.input(Input::Advance).unwrap();
            }
            30..=44 => {
                let queue = if self.rng.chance(80) { "work" } else { "nodl" };
                let mut req = chime_core::EnqueueRequest::new(
                    queue,
                    chime_core::Payload::from_json(r#"{"x":[1,2.50]}"#).unwrap(),
                );
                if self.rng.chance(30) {
                    req.key = Some(format!("k{}", self.rng.below(5)));
                }
                if self.rng.chance(20) {
                    req.delay_ms = Some(self.rng.below(30_000) as i64);
                }
                req.priority = self.rng.below(3) as i32 - 1;
                self.input(Input::Enqueue(req)).unwrap();
            }
            45..=59 => {
                let queue = if self.rng.chance(80) { "work" } else { "nodl" };
                let max = 1 + self.rng.below(4) as u32;
                let claim = Input::Claim {
                    queue: queue.into(),
                    worker: "w".into(),
                    max,
                    lease_ms: None,
                };
                self.input(claim).unwrap();
            }
            60..=79 => {
                // A worker finishes (or not) one held job.
                let n = self.held.len().max(1) as u64;
                let k = self.rng.below(n) as usize;
                let Some((&job, &(token, _))) = self.held.iter().nth(k) else {
                    return;
                };
                let (job, token) = (JobId(job), LeaseToken(token));
                let input = match self.rng.below(10) {
                    0..=5 => Input::Complete { job, token },
                    6..=7 => Input::Fail {
                        job,
                        token,
                        error: "sim".into(),
                        retry_at: None,
                    },
                    8 => Input::Heartbeat {
                        job,
                        token,
                        lease_ms: None,
                    },
                    _ => {
                        // The worker vanishes: its lease will expire.
                        self.held.remove(&job.0);
                        return;
                    }
                };
                if let Err(e) = self.input(input) {
                    // Only a lease that expired meanwhile.
                    assert_eq!(e.code(), "lease_lost");
                    self.held.remove(&job.0);
                }
            }
            80..=84 => {
                if self.ext_fires.is_empty() {
                    return;
                }
                let k = self.rng.below(self.ext_fires.len() as u64) as usize;
                let fire = self.ext_fires.swap_remove(k);
                let r = self.input(Input::FireSettled {
                    fire,
                    outcome: FireOutcome::Succeeded,
                });
                assert!(r.is_ok() || r.as_ref().unwrap_err().code() == "unknown_fire");
            }
            85..=89 => {
                let i = self.rng.below(6);
                let name = format!("sched-{i}");
                let input = match self.rng.below(5) {
                    0 => Input::PauseSchedule { name, note: None },
                    1 => Input::ResumeSchedule { name },
                    2 => Input::TriggerSchedule {
                        name,
                        overlap: None,
                    },
                    3 => Input::RemoveSchedule { name },
                    _ => return self.upsert(i),
                };
                if let Err(e) = self.input(input) {
                    assert!(matches!(e.code(), "unknown_schedule" | "not_leader"), "{e}");
                }
            }
            90..=93 if !self.config.standalone => {
                if self.rng.chance(75) {
                    self.epoch += u64::from(self.rng.chance(50) || self.epoch == 0);
                    let until = self.now + 1_000 + self.rng.below(120_000) as i64;
                    let grant = LeadershipGrant {
                        epoch: Epoch(self.epoch),
                        valid_until: Timestamp::from_millis(until).unwrap(),
                    };
                    self.input(Input::Leadership(Some(grant))).unwrap();
                } else {
                    self.input(Input::Leadership(None)).unwrap();
                }
            }
            90..=93 => {
                let queue = if self.rng.chance(50) { "work" } else { "nodl" };
                let input = if self.rng.chance(50) {
                    Input::Redrive {
                        queue: queue.into(),
                        job: None,
                    }
                } else {
                    Input::PurgeDead {
                        queue: queue.into(),
                        before: None,
                    }
                };
                self.input(input).unwrap();
            }
            94..=96 => self.crash(),
            _ => self.checkpoint(),
        }
    }
}

fn simulate(seed: u64, steps: u32) -> (u32, u64) {
    let mut sim = Sim::new(seed);
    for _ in 0..steps {
        sim.step();
    }
    sim.crash();
    (sim.crashes, sim.fires)
}

#[test]
fn seeded_workloads_survive_crashes() {
    let (mut crashes, mut fires) = (0, 0);
    for seed in 0..48u64 {
        let (c, f) = simulate(seed, 400);
        crashes += c;
        fires += f;
    }
    assert!(crashes > 48 * 5, "crashes exercised: {crashes}");
    assert!(fires > 10_000, "fires exercised: {fires}");
}

/// One long run: many checkpoints and crashes on the same history.
#[test]
fn one_long_run() {
    let (crashes, fires) = simulate(0xC41E, 4_000);
    assert!(
        crashes > 50 && fires > 1_000,
        "{crashes} crashes, {fires} fires"
    );
}
