//! Seeded simulation in virtual time with crash/restart: the harness of
//! `tests/engine/simulation.rs` (the seed sweeps) and
//! `tests/engine/planted_bugs.rs` (each planted bug found at a recorded seed).
//!
//! Each seed drives one engine through a random workload: `@every`, cron
//! (some zoned, across DST transitions in March and November for
//! America/New_York) and `@at` schedules; upserts that change spec, tz,
//! dst, startAt/endAt, jitter (also larger than the catch-up window),
//! paused, overlap, payload and maxFires — also while boundaries are due or
//! pending and during leadership gaps; remove + re-create of the same name
//! followed by triggers and backfills; backfill windows touching the epoch,
//! ending in the past or in the future; double triggers under
//! `buffer_one` while a job is claimed; local and external queues, workers
//! that complete, fail, heartbeat or vanish, bursts of jobs whose leases
//! expire together; leadership grants that expire and are re-granted with
//! higher epochs, stale and expired grants; inputs that a stateless check
//! must refuse; the host clock following `poll_timeout()`, jumping hours,
//! days or years, or going back. Some seeds run with small limits, where
//! the per-call command bound is enforced.
//!
//! The host keeps a snapshot plus the journal of inputs since, and the
//! commands recorded since. At random points it "crashes": the engine is
//! restored from the snapshot, the journal replayed, and the replayed
//! command stream must be byte-identical to the recorded one (and the
//! engine state identical); the run continues on the restored engine. At
//! the end the whole journal is replayed from the initial snapshot. After
//! every input the shared [`Checker`] checks every invariant it documents
//! (accounting, fire ids, jobs, leadership and `leadership_lost`, overlap
//! outcomes, incarnations, pause intervals, jitter,
//! backfill, `too_old`, stateless refusals, command bound); here, every job
//! live or terminal exactly once; at every snapshot: JSON round trip
//! byte-identical.
//!
//! A run can plant one [`PlantedBug`] in the engine (re-planted on every
//! engine restored after a crash, since a planted bug is not persisted).
//!
//! Running: the default run is CI-sized. `CHIME_SIM_SEED=<seed>` runs one
//! seed (of `seeded_workloads_survive_crashes`); `CHIME_SIM_SEEDS=<n>` runs
//! seeds `k..k+n` (`CHIME_SIM_FIRST=<k>`, default 0; 480 is 10× the
//! default), `CHIME_SIM_STEPS=<n>` sets the steps per seed (default 400);
//! `CHIME_SIM_SELF_CHECK_EVERY=<n>` runs the engine's own (costly) check
//! after every n-th input only; `CHIME_SIM_OFF=invalid,backfill,...`
//! turns input classes off (to find seeds for other bugs while one class
//! fails everywhere): `invalid`, `backfill`, `jumps`, `back`, `regrid`,
//! `recreate`, `pause`, `storm`, `leader`. On failure every failing seed is
//! printed with its first failure and the command that replays it.

use crate::checker::{self, Checker, panic_message};
use chime_core::testing::PlantedBug;
use chime_core::{
    Command, Engine, EngineConfig, Epoch, Event, FireId, FireOutcome, Input, JobId, JournalEntry,
    LeadershipGrant, LeaseToken, Limits, QueueConfig, QueueMode, Reply, ScheduleDef, Snapshot,
    Timestamp,
};
use std::collections::{BTreeMap, BTreeSet};

const STARTS: [i64; 4] = [
    1_767_225_600_000, // 2026-01-01T00:00Z
    1_772_884_800_000, // 2026-03-07T12:00Z (US spring forward on the 8th)
    1_793_448_000_000, // 2026-10-31T12:00Z (US fall back on 1 Nov)
    1_804_939_200_000, // 2027-03-13T12:00Z (US spring forward on the 14th)
];
const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

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
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const NY: Option<&str> = Some("America/New_York");
const SPECS: [(&str, Option<&str>); 16] = [
    ("@every 1s", None),
    ("@every 5s", None),
    ("@every 1m +7s", None),
    ("*/15 * * * * *", None),
    ("*/2 * * * *", NY),
    ("0,30 * * * * *", Some("Europe/London")),
    ("@every 10m", None),
    ("*/20 * * * * *", Some("Australia/Lord_Howe")),
    ("@every 1h", None),
    ("@every 60m", None),
    ("@every 1h +15m", None),
    ("0 12 * * *", None),
    ("30 2 * * *", NY),
    ("0 1 * * *", NY),
    ("*/30 * * * *", NY),
    ("@at", None),
];
const OVERLAPS: [&str; 4] = ["skip", "allow", "buffer_one", "cancel_previous"];
const JITTERS: [i64; 5] = [0, 0, 900, 1_800_000, 7_200_000];
const NAMES: u64 = 6;

struct Sim {
    rng: Rng,
    engine: Engine,
    chk: Checker,
    now: i64,
    off: BTreeSet<String>,
    /// Durable state: snapshot JSON, and where the journal and the
    /// recorded commands stood when it was taken.
    snapshot: String,
    since: (usize, usize),
    /// Jobs not yet terminal, by id.
    live: BTreeSet<u64>,
    /// Claimed jobs and their tokens (the workers' view).
    held: BTreeMap<u64, u64>,
    /// Dead letters by id, with their queue.
    dead: BTreeMap<u64, String>,
    ext_fires: Vec<FireId>,
    epoch: u64,
    crashes: u32,
    /// Host incarnations ([`sweep_incarnations`]): every restart sends
    /// `Recover` (the workers of the crashed run are gone), and some
    /// restarts follow a graceful `Stop` with a grace period.
    incarnations: bool,
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms - ms.rem_euclid(1000))
        .unwrap()
        .to_string()
}

impl Sim {
    fn new(seed: u64, planted: Option<PlantedBug>, self_check: bool) -> Sim {
        let mut rng = Rng(seed);
        let small = rng.chance(30);
        let limits = if small {
            Limits {
                fires_per_advance: 8,
                claim_batch: 128,
                backfill_fires: 40,
                payload_bytes: 1024,
                ..Limits::default()
            }
        } else {
            Limits::default()
        };
        let config = EngineConfig {
            seed: rng.next(),
            standalone: !rng.chance(35),
            limits,
            ..EngineConfig::default()
        };
        let now = STARTS[rng.below(STARTS.len() as u64) as usize];
        let mut engine = Engine::new(config);
        if let Some(bug) = planted {
            engine.plant(bug);
        }
        let mut chk = Checker::new(&engine);
        chk.planted = planted;
        chk.self_check = self_check;
        chk.self_check_every = env_u64("CHIME_SIM_SELF_CHECK_EVERY").map_or(1, |n| n as u32);
        let snapshot = engine.snapshot().to_json();
        let off = std::env::var("CHIME_SIM_OFF")
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let mut sim = Sim {
            rng,
            engine,
            chk,
            now,
            off,
            snapshot,
            since: (0, 0),
            live: BTreeSet::new(),
            held: BTreeMap::new(),
            dead: BTreeMap::new(),
            ext_fires: Vec::new(),
            epoch: 0,
            crashes: 0,
            incarnations: INCARNATIONS.with(std::cell::Cell::get),
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
        if !sim.chk.config.standalone {
            // Often short: the grant runs out while schedules are due.
            let valid = 1_000 + sim.rng.below(30 * 60_000) as i64;
            sim.grant(true, valid);
        }
        for i in 0..NAMES {
            sim.create(i);
        }
        sim
    }

    fn on(&self, class: &str) -> bool {
        !self.off.contains(class)
    }

    /// Handles one input through the checker, then follows the jobs.
    fn input(&mut self, input: Input) -> Result<Reply, chime_core::Error> {
        self.input_expect(input, false)
    }

    fn input_expect(
        &mut self,
        input: Input,
        stateless_refusal: bool,
    ) -> Result<Reply, chime_core::Error> {
        let (reply, cmds) =
            self.chk
                .handle_expect(&mut self.engine, self.now, input.clone(), stateless_refusal);
        for cmd in &cmds {
            self.observe(cmd);
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
                self.held.insert(c.job.0, c.token.0);
            }
        }
        if let (
            Input::Redrive { queue, job: None }
            | Input::PurgeDead {
                queue,
                before: None,
            },
            Ok(Reply::Count { count, .. }),
        ) = (&input, &reply)
        {
            let redrive = matches!(input, Input::Redrive { .. });
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
        let mut live = 0;
        for q in ["work", "nodl"] {
            if let Some(st) = self.engine.queue_stats(q) {
                live += st.scheduled + st.available + st.claimed;
            }
        }
        assert_eq!(live, self.live.len() as u64, "live jobs");
        reply
    }

    fn observe(&mut self, cmd: &Command) {
        match cmd {
            Command::Fire(f) => match f.job {
                Some(job) => {
                    assert!(self.live.insert(job.0), "fire job {} reused", job.0);
                }
                None => self.ext_fires.push(f.fire_id.clone()),
            },
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
            Command::Event(Event::JobRetried { job, .. } | Event::JobInterrupted { job, .. }) => {
                self.held.remove(&job.0);
            }
            _ => {}
        }
    }

    fn spec(&mut self) -> (String, Option<&'static str>) {
        let (spec, tz) = self.rng.pick(&SPECS);
        if spec == "@at" {
            let at = self.now + 1_000 + self.rng.below(3 * DAY as u64) as i64;
            return (format!("@at {}", iso(at)), None);
        }
        (spec.to_owned(), tz)
    }

    fn fresh_def(&mut self, i: u64) -> ScheduleDef {
        let name = format!("sched-{i}");
        let (spec, tz) = self.spec();
        let ext = self.rng.chance(40);
        let window = if self.rng.chance(30) {
            60_000
        } else {
            60_000 + self.rng.below(3_600_000) as i64
        };
        let jitter = self.rng.pick(&JITTERS);
        serde_json::from_value(serde_json::json!({
            "name": name,
            "spec": spec,
            "tz": tz,
            "overlap": self.rng.pick(&OVERLAPS),
            "jitterMs": jitter,
            "catchup": {"max": 1 + self.rng.below(64), "windowMs": window},
            "maxFires": if self.rng.chance(10) { Some(1 + self.rng.below(20)) } else { None },
            "paused": self.on("pause") && self.rng.chance(10),
            "target": {"queue": if ext { "ext" } else { "work" }, "payload": {"i": i}},
        }))
        .unwrap()
    }

    /// A changed copy of the current definition: one to three fields.
    fn changed_def(&mut self, old: &ScheduleDef) -> ScheduleDef {
        let mut d = old.clone();
        for _ in 0..1 + self.rng.below(3) {
            match self.rng.below(11) {
                0 if self.on("regrid") => {
                    let (spec, tz) = self.spec();
                    d.spec = spec;
                    d.tz = tz.map(str::to_owned);
                }
                1 if self.on("regrid") => {
                    // The same cadence written differently.
                    d.spec = match d.spec.as_str() {
                        "@every 1h" => "@every 60m".into(),
                        "@every 60m" => "@every 1h".into(),
                        "@every 1s" => "@every 1000ms".into(),
                        "@every 10m" => "@every 600s".into(),
                        other => other.to_owned(),
                    };
                }
                2 if self.on("regrid") => {
                    d.tz = match d.tz {
                        Some(_) => None,
                        None => Some("America/New_York".into()),
                    };
                }
                3 if self.on("regrid") => {
                    d.dst = serde_json::from_value(if self.rng.chance(50) {
                        serde_json::json!({"gap": "skip", "fold": "both"})
                    } else {
                        serde_json::json!({"gap": "shift"})
                    })
                    .unwrap();
                }
                4 if self.on("regrid") => {
                    let at = self.now + self.rng.below(2 * HOUR as u64) as i64;
                    d.start_at = Some(Timestamp::from_millis(at).unwrap());
                }
                5 => d.jitter_ms = self.rng.pick(&JITTERS),
                6 if self.on("pause") => d.paused = !d.paused,
                7 => d.overlap = serde_json::from_value(self.rng.pick(&OVERLAPS).into()).unwrap(),
                8 => {
                    d.target.payload =
                        chime_core::Payload::from_json(&format!("{{\"v\":{}}}", self.rng.below(9)))
                            .unwrap();
                }
                9 => {
                    d.catchup.window_ms = if self.rng.chance(50) { 60_000 } else { DAY };
                }
                _ => {
                    if self.rng.chance(50) {
                        let at = self.now + 1 + self.rng.below(DAY as u64) as i64;
                        d.end_at = Some(Timestamp::from_millis(at).unwrap());
                    } else {
                        d.max_fires = Some(1 + self.rng.below(30));
                    }
                }
            }
        }
        if d.start_at >= d.end_at && d.end_at.is_some() {
            d.end_at = None;
        }
        d
    }

    fn create(&mut self, i: u64) {
        let def = self.fresh_def(i);
        self.upsert(def);
    }

    fn upsert(&mut self, def: ScheduleDef) {
        if let Err(e) = self.input(Input::UpsertSchedule(def)) {
            assert!(
                matches!(
                    e.code(),
                    "spec_never_fires" | "invalid_input" | "payload_too_large"
                ),
                "upsert refused: {e}"
            );
        }
    }

    fn grant(&mut self, bump: bool, valid_ms: i64) {
        self.epoch += u64::from(bump || self.epoch == 0);
        let grant = LeadershipGrant {
            epoch: Epoch(self.epoch),
            valid_until: Timestamp::from_millis(self.chk.clock.max(self.now) + valid_ms).unwrap(),
        };
        self.input(Input::Leadership(Some(grant))).unwrap();
    }

    /// Restores from the snapshot, replays the journal since, compares.
    fn crash(&mut self) {
        self.crashes += 1;
        let entries: &[JournalEntry] = &self.chk.journal[self.since.0..];
        let recorded = &self.chk.commands[self.since.1..];
        let replayed = checker::replay(&self.snapshot, entries, self.chk.planted);
        assert_eq!(
            replayed.commands.len(),
            recorded.len(),
            "replay: command count from the snapshot"
        );
        for (i, (a, b)) in replayed.commands.iter().zip(recorded).enumerate() {
            assert_eq!(a, b, "replay: command {i} after the snapshot differs");
        }
        assert_eq!(
            replayed.engine.snapshot().to_json(),
            self.engine.snapshot().to_json(),
            "replay: state after the snapshot differs"
        );
        self.engine = replayed.engine;
        if self.chk.self_check {
            self.engine.check_invariants();
        }
        if self.incarnations {
            // A new incarnation: its workers hold nothing, and the first
            // input releases every claim as interrupted.
            self.held.clear();
            let claimed = |e: &Engine| {
                ["work", "nodl"]
                    .iter()
                    .filter_map(|q| e.queue_stats(q))
                    .map(|s| s.claimed)
                    .sum::<u64>()
            };
            let before = claimed(&self.engine);
            let r = self.input(Input::Recover).unwrap();
            assert_eq!(
                r,
                Reply::Recovered {
                    interrupted: before
                },
                "Recover releases every claim"
            );
            assert!(!self.engine.is_stopping(), "Recover ends a stop");
        }
    }

    /// A graceful stop (incarnations only): `Stop`, a grace period in
    /// which some running jobs finish and time passes without any fire,
    /// then the process ends (a crash: the restart recovers).
    fn graceful_stop(&mut self) {
        self.input(Input::Stop).unwrap();
        assert!(self.engine.is_stopping());
        let held: Vec<(u64, u64)> = self.held.iter().map(|(&j, &t)| (j, t)).collect();
        for (job, token) in held {
            if self.rng.chance(50) {
                let done = Input::Complete {
                    job: JobId(job),
                    token: LeaseToken(token),
                };
                if let Err(e) = self.input(done) {
                    assert!(matches!(e.code(), "lease_lost" | "unknown_job"), "{e}");
                }
                self.held.remove(&job);
            }
        }
        let fires_before = self.chk.stats.fires.iter().sum::<u64>();
        self.now = self.chk.clock + self.rng.below(20_000) as i64;
        self.input(Input::Advance).unwrap();
        let claim = Input::Claim {
            queue: "work".into(),
            worker: "w".into(),
            max: 4,
            lease_ms: None,
        };
        let r = self.input(claim).unwrap();
        assert!(
            matches!(&r, Reply::Claimed { jobs } if jobs.is_empty()),
            "{r:?}"
        );
        let fires_after = self.chk.stats.fires.iter().sum::<u64>();
        assert_eq!(fires_before, fires_after, "a fire while stopping");
        self.crash();
    }

    /// Takes a new snapshot (truncating the journal), checking its round trip.
    fn checkpoint(&mut self) {
        let json = self.engine.snapshot().to_json();
        let back = Engine::restore(Snapshot::from_json(&json).unwrap()).unwrap();
        assert_eq!(back.snapshot().to_json(), json, "snapshot round trip");
        assert_eq!(back.poll_timeout(), self.engine.poll_timeout());
        self.snapshot = json;
        self.since = (self.chk.journal.len(), self.chk.commands.len());
    }

    fn name(&mut self) -> String {
        format!("sched-{}", self.rng.below(NAMES))
    }

    fn time_passes(&mut self) {
        let next = self.engine.poll_timeout().map(|t| t.as_millis());
        let clock = self.chk.clock;
        self.now = match (next, self.rng.below(100)) {
            (Some(n), 0..=54) => n.max(clock),
            (_, 55..=74) => clock + 1 + self.rng.below(20_000) as i64,
            (_, 75..=86) => clock + self.rng.below(900_000) as i64,
            (_, 87..=92) if self.on("jumps") => clock + self.rng.below(6 * HOUR as u64) as i64,
            (_, 93..=95) if self.on("jumps") => clock + self.rng.below(3 * DAY as u64) as i64,
            (_, 96) if self.on("jumps") => clock + self.rng.below(400 * DAY as u64) as i64,
            (_, 97..=99) if self.on("back") => clock - self.rng.below(2 * DAY as u64) as i64,
            _ => clock + 1_000,
        };
        self.input(Input::Advance).unwrap();
        self.now = self.now.max(self.chk.clock);
    }

    fn schedule_op(&mut self) {
        let name = self.name();
        let i: u64 = name[6..].parse().unwrap();
        let r = match self.rng.below(12) {
            0 if self.on("pause") => Input::PauseSchedule { name, note: None },
            1 if self.on("pause") => Input::ResumeSchedule { name },
            2 | 3 => Input::TriggerSchedule {
                name,
                overlap: None,
            },
            4 => {
                // Two triggers in a row (buffer_one buffers the second).
                let _ = self.input(Input::TriggerSchedule {
                    name: name.clone(),
                    overlap: None,
                });
                Input::TriggerSchedule {
                    name,
                    overlap: None,
                }
            }
            5 => Input::remove_schedule(name),
            6 if self.on("recreate") => {
                // Remove + re-create the same name, then trigger or backfill.
                self.input(Input::remove_schedule(name.clone())).unwrap();
                self.create(i);
                if self.rng.chance(50) {
                    Input::TriggerSchedule {
                        name,
                        overlap: None,
                    }
                } else {
                    let to = self.chk.clock;
                    Input::Backfill {
                        name,
                        from: Timestamp::from_millis(to - 3 * HOUR).unwrap(),
                        to: Timestamp::from_millis(to).unwrap(),
                        overlap: None,
                    }
                }
            }
            _ => {
                match self.engine.schedule(&name) {
                    Some(info) => {
                        let def = self.changed_def(&info.def);
                        self.upsert(def);
                    }
                    None => self.create(i),
                }
                return;
            }
        };
        if let Err(e) = self.input(r) {
            assert!(
                matches!(
                    e.code(),
                    "unknown_schedule" | "not_leader" | "limit_exceeded" | "invalid_input"
                ),
                "{e}"
            );
        }
    }

    fn backfill(&mut self) {
        let name = self.name();
        let clock = self.chk.clock;
        let (from, to) = match self.rng.below(6) {
            0 => (0, HOUR + self.rng.below(2 * HOUR as u64) as i64),
            1 => (0, DAY),
            2 => (clock - self.rng.below(4 * HOUR as u64) as i64 - 1, clock),
            3 => (clock - 2 * HOUR, clock - self.rng.below(HOUR as u64) as i64),
            4 => (clock - HOUR, clock + HOUR),
            _ => (clock - 90_000, clock + 1),
        };
        let input = Input::Backfill {
            name,
            from: Timestamp::from_millis(from).unwrap(),
            to: Timestamp::from_millis(to).unwrap(),
            overlap: None,
        };
        if let Err(e) = self.input(input) {
            assert!(
                matches!(
                    e.code(),
                    "unknown_schedule" | "not_leader" | "limit_exceeded" | "invalid_input"
                ),
                "{e}"
            );
        }
    }

    /// An input that a check needing no state must refuse, at a later now.
    fn invalid(&mut self) {
        self.now = self.chk.clock + 10_000;
        let bad = "bad name!".to_string();
        let input = match self.rng.below(13) {
            0 => Input::DeclareQueue(QueueConfig::new(bad)),
            1 => {
                let mut q = QueueConfig::new("work");
                q.lease_ms = 0;
                Input::DeclareQueue(q)
            }
            2 => Input::Enqueue(chime_core::EnqueueRequest::new(
                bad,
                chime_core::Payload::default(),
            )),
            3 => {
                let big = format!("\"{}\"", "x".repeat(self.chk.config.limits.payload_bytes));
                Input::Enqueue(chime_core::EnqueueRequest::new(
                    "work",
                    chime_core::Payload::from_json(&big).unwrap(),
                ))
            }
            4 => {
                let mut req =
                    chime_core::EnqueueRequest::new("work", chime_core::Payload::default());
                req.delay_ms = Some(5);
                req.run_at = Some(Timestamp::from_millis(self.now).unwrap());
                Input::Enqueue(req)
            }
            5 => Input::Claim {
                queue: "work".into(),
                worker: "w".into(),
                max: 0,
                lease_ms: None,
            },
            6 => Input::Claim {
                queue: "work".into(),
                worker: bad,
                max: 1,
                lease_ms: None,
            },
            7 => Input::Heartbeat {
                job: JobId(1),
                token: LeaseToken(1),
                lease_ms: Some(-1),
            },
            8 => Input::AcquireLease {
                name: "l".into(),
                owner: "o".into(),
                ttl_ms: 0,
            },
            9 => Input::ReleaseLease {
                name: bad,
                token: LeaseToken(1),
            },
            10 => {
                let mut d = self.fresh_def(0);
                d.spec = "@every nonsense".into();
                Input::UpsertSchedule(d)
            }
            11 => {
                let mut d = self.fresh_def(0);
                d.name = bad;
                Input::UpsertSchedule(d)
            }
            _ => Input::Backfill {
                name: "sched-0".into(),
                from: Timestamp::from_millis(self.now).unwrap(),
                to: Timestamp::from_millis(self.now - 1).unwrap(),
                overlap: None,
            },
        };
        let _ = self.input_expect(input, true);
    }

    fn leadership(&mut self) {
        match self.rng.below(10) {
            0..=4 => {
                let valid = 1_000 + self.rng.below(120_000) as i64;
                let bump = self.rng.chance(60);
                self.grant(bump, valid);
            }
            5 => {
                // A stale epoch or an already expired grant: refused.
                let stale = self.epoch > 1 && self.rng.chance(50);
                let grant = LeadershipGrant {
                    epoch: Epoch(if stale {
                        self.epoch - 1
                    } else {
                        self.epoch + 1
                    }),
                    valid_until: Timestamp::from_millis(if stale {
                        self.chk.clock + 60_000
                    } else {
                        self.chk.clock
                    })
                    .unwrap(),
                };
                self.now = self.chk.clock;
                let r = self.input(Input::Leadership(Some(grant)));
                assert_eq!(
                    r.map_err(|e| e.code()),
                    Err("invalid_input"),
                    "leader: a stale or expired grant"
                );
            }
            6 => {
                self.input(Input::Leadership(None)).unwrap();
            }
            _ => {
                // A gap: time passes without leadership, then a schedule op.
                self.now = self.chk.clock + self.rng.below(20 * 60_000) as i64;
                self.input(Input::Advance).unwrap();
                self.schedule_op();
            }
        }
    }

    fn storm(&mut self) {
        // Many jobs claimed at once, whose leases expire together.
        for _ in 0..150 {
            let req = chime_core::EnqueueRequest::new("work", chime_core::Payload::default());
            self.input(Input::Enqueue(req)).unwrap();
        }
        for _ in 0..2 {
            self.input(Input::Claim {
                queue: "work".into(),
                worker: "w".into(),
                max: 128,
                lease_ms: Some(5_000),
            })
            .unwrap();
        }
        for j in self.held.keys().copied().collect::<Vec<_>>() {
            self.held.remove(&j);
        }
    }

    fn step(&mut self) {
        let r = self.rng.below(100);
        match r {
            0..=24 => self.time_passes(),
            25..=34 => {
                if self.chk.config.limits.fires_per_advance <= 100
                    && self.on("storm")
                    && self.rng.chance(3)
                {
                    return self.storm();
                }
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
            35..=44 => {
                let queue = if self.rng.chance(80) { "work" } else { "nodl" };
                let max = 1 + self.rng.below(4) as u32;
                let lease_ms = self
                    .rng
                    .chance(20)
                    .then_some(DAY * self.rng.below(2) as i64 + 60_000);
                let claim = Input::Claim {
                    queue: queue.into(),
                    worker: "w".into(),
                    max,
                    lease_ms,
                };
                self.input(claim).unwrap();
            }
            45..=59 => {
                // A worker finishes (or not) one held job.
                let n = self.held.len().max(1) as u64;
                let k = self.rng.below(n) as usize;
                let Some((&job, &token)) = self.held.iter().nth(k) else {
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
                    assert!(matches!(e.code(), "lease_lost" | "unknown_job"), "{e}");
                    self.held.remove(&job.0);
                }
            }
            60..=63 => {
                if self.ext_fires.is_empty() {
                    return;
                }
                let k = self.rng.below(self.ext_fires.len() as u64) as usize;
                let fire = self.ext_fires.swap_remove(k);
                let r = self.input(Input::FireSettled {
                    fire,
                    outcome: FireOutcome::Succeeded,
                    job: None,
                });
                assert!(r.is_ok() || r.as_ref().unwrap_err().code() == "unknown_fire");
            }
            64..=75 => self.schedule_op(),
            76..=81 if !self.chk.config.standalone && self.on("leader") => self.leadership(),
            82..=84 if self.on("backfill") => self.backfill(),
            85..=86 if self.on("invalid") => self.invalid(),
            76..=90 => {
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
            91..=95 if self.incarnations && self.rng.chance(40) => self.graceful_stop(),
            91..=95 => self.crash(),
            _ => self.checkpoint(),
        }
    }
}

/// Counts of one run.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Crashes (restore + replay) performed.
    pub crashes: u32,
    /// Fires of any reason.
    pub fires: u64,
    /// Inputs handled.
    pub inputs: u64,
    /// Virtual time covered (engine clock at the end minus at the start).
    pub simulated_ms: i64,
}

/// Runs seed `seed` for `steps` steps with `planted` in the engine,
/// panicking (with a tagged message, see [`Checker`]) on the first
/// broken invariant. `self_check`: also run the engine's own
/// `check_invariants` after every input (off, only the checks from
/// outside the engine remain).
pub fn simulate(seed: u64, steps: u32, planted: Option<PlantedBug>, self_check: bool) -> Outcome {
    let mut sim = Sim::new(seed, planted, self_check);
    let start = sim.now;
    for _ in 0..steps {
        sim.step();
    }
    sim.crash();
    sim.chk.replay_from_start(&sim.engine);
    Outcome {
        crashes: sim.crashes,
        fires: sim.chk.stats.fires.iter().sum(),
        inputs: sim.chk.stats.inputs,
        simulated_ms: sim.chk.clock - start,
    }
}

/// A numeric environment variable (`CHIME_SIM_SEED`, ...), if set.
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().expect(name))
}

std::thread_local! {
    static LOCATION: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    /// Whether this thread is inside [`run_seed`]: only those panics are
    /// quieted (other tests of the same binary keep the default hook).
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A failed run: the first line of the panic message (which starts with
/// the invariant's tag) and where it was raised.
#[derive(Debug)]
pub struct Failure {
    /// The full panic message.
    pub message: String,
    /// `file:line:col` of the panic.
    pub location: String,
}

/// [`simulate`], catching the panic of a failing run.
pub fn run_seed(
    seed: u64,
    steps: u32,
    planted: Option<PlantedBug>,
    self_check: bool,
) -> Result<Outcome, Failure> {
    quiet_panics();
    QUIET.with(|q| q.set(true));
    let run = std::panic::catch_unwind(|| simulate(seed, steps, planted, self_check));
    QUIET.with(|q| q.set(false));
    run.map_err(|e| Failure {
        message: panic_message(&*e),
        location: LOCATION.with(|l| l.borrow().clone()),
    })
}

/// Replaces the panic hook once: failures inside [`run_seed`] are reported
/// by the sweeps with their seed (`CHIME_SIM_VERBOSE=1` prints every panic
/// in full too). The hook is global to the process, which the simulation
/// shares with the other tests of its binary: their panics (on threads not
/// inside `run_seed`) go to the default hook as before.
fn quiet_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                return default(info);
            }
            let loc = info.location().map(|l| l.to_string()).unwrap_or_default();
            LOCATION.with(|l| *l.borrow_mut() = loc);
            if std::env::var_os("CHIME_SIM_VERBOSE").is_some() {
                default(info);
            }
        }));
    });
}

std::thread_local! {
    /// Whether [`Sim::new`] runs with host incarnations (`Recover` at
    /// every restart, graceful `Stop`s): set by [`sweep_incarnations`].
    static INCARNATIONS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`sweep`] with host incarnations: every restart after a crash sends
/// `Recover`, as both hosts do on a store they own alone, and some
/// restarts follow a graceful `Stop` whose grace period fires nothing.
/// The other sweeps keep their trajectories (and their recorded seeds).
pub fn sweep_incarnations(test: &str, seeds: &[u64], steps: u32) -> Outcome {
    INCARNATIONS.with(|i| i.set(true));
    let run = std::panic::catch_unwind(|| sweep(test, seeds, steps));
    INCARNATIONS.with(|i| i.set(false));
    run.unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Runs `seeds` without a planted bug, catching each failure; panics
/// listing every failing seed with its first failure and the command that
/// replays it (`test`: the test function of `engine_simulation`).
pub fn sweep(test: &str, seeds: &[u64], steps: u32) -> Outcome {
    let mut total = Outcome::default();
    let mut failures = Vec::new();
    for (done, &seed) in seeds.iter().enumerate() {
        if done > 0 && done % 25 == 0 {
            eprintln!("{test}: {done} of {} seeds done", seeds.len());
        }
        match run_seed(seed, steps, None, true) {
            Ok(o) => {
                total.crashes += o.crashes;
                total.fires += o.fires;
                total.inputs += o.inputs;
                total.simulated_ms += o.simulated_ms;
            }
            Err(Failure {
                message: msg,
                location: loc,
            }) => {
                let first = msg.lines().next().unwrap_or("").to_owned();
                eprintln!(
                    "seed {seed} FAILED at {loc}: {first}\n  replay: CHIME_SIM_SEED={seed} \
                     CHIME_SIM_STEPS={steps} cargo test -p chime-tests --test engine \
                     simulation::{test} -- --nocapture"
                );
                failures.push(seed);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} seeds failed: {failures:?} (see above for each first failure and its replay \
         command; CHIME_SIM_VERBOSE=1 prints the full panic)",
        failures.len(),
        seeds.len()
    );
    total
}
