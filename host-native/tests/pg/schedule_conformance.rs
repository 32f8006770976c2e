//! Schedule semantics on every backend: the embedded engine with a local
//! queue (the engine is the queue backend, driven in place), and the
//! Postgres path of a replica — the leader's engine with the queue
//! external, its fires delivered through `PgStore` into
//! `chime_fires`/`chime_jobs`, and `FireSettled` sent back from
//! `pg::fires::ended`, as `pg::replica` does. The fire jobs are claimed
//! and finished through the queue port ([`QueueBackend`]) on both. Each
//! scenario is written once against [`Sched`] in virtual time; what it
//! observes (fires with their reasons, skipped boundaries with theirs,
//! the retry delays of failed fire jobs) must be the same on both, and on
//! Postgres it is read back from the tables.
//!
//! What differs per backend is only [`Route`]: how the engine's fires
//! reach the backend's queue, and how their ends come back.

use crate::pg_support;

use chime_core::{
    Claimed, Command, Engine, EngineConfig, Event, Input, JobId, JournalEntry, QueueConfig,
    QueueMode, Reply, ScheduleDef, Timestamp,
};
use chime_native::backend::{EngineQueues, Failed, QueueBackend};
use chime_native::driver::Clock;
use chime_native::pg::{PgConfig, PgQueues, PgStore, fires};
use chime_native::store::{Store, deliverable};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The engine's seed (not zero: a backend that used another seed for a
/// queue's retry jitter would retry at other instants).
const SEED: u64 = 4242;

/// 2026-01-01T00:00:00Z: scenario times are offsets from it.
pub(crate) const T0: i64 = 1_767_225_600_000;

/// What a scenario saw: fires `(offset of the boundary, reason)`,
/// skipped runs `(reason, count)` and retries `(job, attempt, delay_ms)`,
/// each sorted; and the run history of every schedule in the engine
/// (`ScheduleInfo::runs`, see [`comparable`]), by name.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub(crate) fired: Vec<(i64, String)>,
    pub(crate) skipped: Vec<(String, i64)>,
    pub(crate) retries: Vec<(u64, u32, i64)>,
    pub(crate) runs: Vec<(String, Vec<serde_json::Value>)>,
}

/// A run history as both backends must agree on it, with instants as
/// scenario offsets: the claim and end instants are dropped (on Postgres
/// they are the database's clock) and `durationMs` becomes `timed: true`
/// when measured (it must be on both); a pending run keeps only what the
/// engine itself knows (on Postgres the leader learns a job's detail when
/// it ends).
pub(crate) fn comparable(runs: Vec<chime_core::RunRecord>) -> Vec<serde_json::Value> {
    runs.into_iter()
        .map(|r| {
            let mut v = serde_json::to_value(&r).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("startedAt");
            o.remove("finishedAt");
            if let Some(ms) = o.remove("durationMs") {
                assert!(ms.as_i64().unwrap() >= 0, "{r:?}");
                o.insert("timed".into(), true.into());
            }
            if r.outcome == chime_core::RunOutcome::Pending {
                o.remove("job");
                o.remove("attempts");
            }
            for k in ["nominal", "lastNominal", "at"] {
                if let Some(t) = o.get(k).and_then(|t| t.as_i64()) {
                    o.insert(k.into(), (t - T0).into());
                }
            }
            if let Some(f) = r.fire {
                o.insert(
                    "fire".into(),
                    format!("{}@{}", f.schedule, f.nominal.as_millis() - T0).into(),
                );
            }
            v
        })
        .collect()
}

fn name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

pub(crate) fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(T0 + ms).unwrap()
}

/// The scenario's virtual clock.
#[derive(Debug, Default)]
struct Virtual(AtomicI64);

impl Clock for Virtual {
    fn now(&self) -> Timestamp {
        at(self.0.load(Ordering::SeqCst))
    }
}

/// How the engine's fires reach the queue backend, and their ends come
/// back.
#[allow(clippy::large_enum_variant)]
enum Route {
    /// The engine holds the queue itself: it is the backend (driven in
    /// place at the virtual clock), and its fires are its own jobs.
    Local {
        engine: Arc<EngineQueues>,
        clock: Arc<Virtual>,
    },
    /// A replica's leader engine with the queue external: every input
    /// journaled and its fires delivered through `PgStore`, ended fire
    /// jobs read back by `fires::ended`.
    Pg {
        engine: Engine,
        store: PgStore,
        pg: PgConfig,
    },
}

/// A backend under test (one of each per scenario).
pub(crate) struct Sched {
    /// Where the fire jobs are claimed and finished: the port.
    queues: Arc<dyn QueueBackend>,
    route: Route,
    seen: Observed,
}

impl Sched {
    /// One input at `ms`: handled, and on Postgres journaled and its
    /// fires delivered as a replica's driver does.
    pub(crate) async fn input(&mut self, ms: i64, input: Input) -> Result<Reply, &'static str> {
        match &mut self.route {
            Route::Local { engine, clock } => {
                clock.0.fetch_max(ms, Ordering::SeqCst);
                let (_, reply) = engine.handle(input);
                self.record_local();
                reply.map_err(|e| e.code())
            }
            Route::Pg { engine, store, .. } => {
                let now = at(ms).max(engine.clock());
                let entry = JournalEntry {
                    now,
                    input: input.clone(),
                };
                let reply = engine.handle(now, input).map_err(|e| e.code());
                let mut out = Vec::new();
                engine.drain_commands(&mut out);
                store.append(&[entry]).unwrap();
                let out: Vec<Command> = out.into_iter().filter(deliverable).collect();
                store.deliver(&out).unwrap();
                reply
            }
        }
    }

    /// The fires and skips among the local engine's commands so far.
    fn record_local(&mut self) {
        let Route::Local { engine, .. } = &self.route else {
            return;
        };
        for c in engine.take_commands() {
            match c {
                Command::Fire(f) => self
                    .seen
                    .fired
                    .push((f.fire_id.nominal.as_millis() - T0, name(&f.reason))),
                Command::Event(Event::FireSkipped { reason, count, .. }) => {
                    self.seen.skipped.push((name(&reason), count as i64))
                }
                _ => {}
            }
        }
    }

    /// The engine's clock, as a scenario offset.
    fn now_ms(&self) -> i64 {
        let clock = match &self.route {
            Route::Local { engine, .. } => engine.with_engine(Engine::clock),
            Route::Pg { engine, .. } => engine.clock(),
        };
        clock.as_millis() - T0
    }

    /// Declares a queue on the backend (through the port); a replica's
    /// engine also gets it, external.
    pub(crate) async fn declare(&mut self, q: QueueConfig) {
        self.queues.declare(&q).await.unwrap();
        self.external(q).await;
    }

    /// A queue only named by a schedule's target: the embedded engine
    /// creates it on the first fire; a replica's engine has it external
    /// (as `pg::replica` declares the config's targets) and the tables get
    /// it from the fire's delivery.
    async fn target_only(&mut self, name: &str) {
        self.external(QueueConfig::new(name)).await;
    }

    /// On Postgres, declares `q` to the leader's engine as external (its
    /// jobs live in the tables), with the settle timeout as its lease.
    async fn external(&mut self, q: QueueConfig) {
        if let Route::Pg { .. } = self.route {
            let q = QueueConfig {
                mode: QueueMode::External,
                lease_ms: 3_600_000,
                ..q
            };
            self.input(0, Input::DeclareQueue(q)).await.unwrap();
        }
    }

    pub(crate) async fn upsert(&mut self, json: serde_json::Value) {
        let def: ScheduleDef = serde_json::from_value(json).unwrap();
        self.input(0, Input::UpsertSchedule(def)).await.unwrap();
    }

    pub(crate) async fn advance(&mut self, ms: i64) {
        self.input(ms, Input::Advance).await.unwrap();
    }

    pub(crate) async fn claim(&mut self, queue: &str) -> Vec<Claimed> {
        let jobs = self.queues.claim(queue, "w", 100, None).await.unwrap();
        self.record_local();
        jobs
    }

    /// Ends an attempt through the port (a retry's delay is recorded); on
    /// Postgres the leader then learns which fires' jobs ended, as the
    /// replica's settling loop does.
    pub(crate) async fn finish(&mut self, job: &Claimed, ok: bool) {
        if ok {
            self.queues.complete(job.job, job.token).await.unwrap();
        } else {
            let failed = self.queues.fail(job.job, job.token, "boom", None).await;
            if let Failed::Retry { delay_ms, .. } = failed.unwrap() {
                self.seen.retries.push((job.job.0, job.attempt, delay_ms));
            }
        }
        self.record_local();
        self.settle().await;
    }

    /// Fails an attempt with `error`, to be retried at once (a `retryAt`
    /// in the past), then settles like [`Sched::finish`].
    pub(crate) async fn fail_retry_now(&mut self, job: &Claimed, error: &str) {
        let failed = self
            .queues
            .fail(job.job, job.token, error, Some(at(0)))
            .await;
        assert!(matches!(failed.unwrap(), Failed::Retry { .. }));
        self.record_local();
        self.settle().await;
    }

    /// Cancels a job through the port, then settles.
    pub(crate) async fn cancel(&mut self, job: JobId) {
        self.queues.cancel(job).await.unwrap();
        self.record_local();
        self.settle().await;
    }

    /// Feeds a replica's engine the ends of its fires' jobs.
    pub(crate) async fn settle(&mut self) {
        let Route::Pg { pg, .. } = &self.route else {
            return;
        };
        let (url, schema) = (pg.url.clone(), pg.schema.clone());
        let client = chime_native::pg::connect(&url).await.unwrap();
        let ended = fires::ended(&client, &schema, "engine", 100).await.unwrap();
        let now = self.now_ms();
        let mut settled = Vec::new();
        for (fire, outcome, job) in ended {
            let input = Input::FireSettled {
                fire: fire.clone(),
                outcome,
                job,
            };
            self.input(now, input).await.unwrap();
            settled.push(fire);
        }
        fires::mark_settled(&client, &schema, "engine", &settled)
            .await
            .unwrap();
    }

    /// What happened, read back from the tables on Postgres.
    async fn observed(mut self) -> Observed {
        self.record_local();
        let histories = |e: &Engine| -> Vec<(String, Vec<serde_json::Value>)> {
            e.schedule_names()
                .filter_map(|n| e.schedule(n))
                .map(|s| (s.def.name.clone(), comparable(s.runs)))
                .collect()
        };
        self.seen.runs = match &self.route {
            Route::Local { engine, .. } => engine.with_engine(histories),
            Route::Pg { engine, .. } => histories(engine),
        };
        if let Route::Pg { pg, .. } = &self.route {
            let c = chime_native::pg::connect(&pg.url).await.unwrap();
            let s = &pg.schema;
            self.seen.fired = c
                .query(
                    &format!("SELECT nominal_ms, reason FROM \"{s}\".chime_fires"),
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get::<_, i64>(0) - T0, r.get(1)))
                .collect();
            self.seen.skipped = c
                .query(
                    &format!("SELECT reason, count FROM \"{s}\".chime_skips"),
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
        }
        let mut seen = self.seen;
        seen.fired.sort();
        seen.skipped.sort();
        seen.retries.sort();
        seen
    }
}

/// The engine of a scenario: not standalone, leading without end (as a
/// replica's does while its lease is renewed).
fn engine(config: &EngineConfig) -> Engine {
    let mut engine = Engine::new(config.clone());
    let forever = chime_core::LeadershipGrant {
        epoch: chime_core::Epoch(1),
        valid_until: Timestamp::MAX,
    };
    engine
        .handle(at(0), Input::Leadership(Some(forever)))
        .unwrap();
    engine
}

/// The embedded engine, its queues local.
fn local(config: &EngineConfig) -> Sched {
    let clock = Arc::new(Virtual::default());
    let engine = Arc::new(EngineQueues::new(engine(config), clock.clone()));
    Sched {
        queues: engine.clone(),
        route: Route::Local { engine, clock },
        seen: Observed::default(),
    }
}

/// A replica's leader on the test server, in a schema of the test's own.
async fn postgres(test: &str, config: &EngineConfig) -> Option<(Sched, PgConfig)> {
    let pg = pg_support::config(test)?;
    let mut lease = pg_support::lease(&pg, "leader", 60_000, 1_000).await;
    let grant = lease.acquire().await.unwrap().unwrap();
    let store = PgStore::open(&pg, "engine", grant.epoch, config).unwrap();
    let queues = PgQueues::connect(&pg, config.clone()).await.unwrap();
    let mut sched = Sched {
        queues: Arc::new(queues),
        route: Route::Pg {
            engine: Engine::new(config.clone()),
            store,
            pg: pg.clone(),
        },
        seen: Observed::default(),
    };
    sched
        .input(0, Input::Leadership(Some(grant.leadership())))
        .await
        .unwrap();
    Some((sched, pg))
}

/// Runs `scenario` on the engine and (with a server) on Postgres, and
/// checks both observed the same; returns the engine's observation.
pub(crate) async fn on_both<F, Fut>(test: &str, scenario: F) -> Observed
where
    F: Fn(Sched) -> Fut,
    Fut: std::future::Future<Output = Sched>,
{
    let config = EngineConfig {
        standalone: false,
        seed: SEED,
        ..EngineConfig::default()
    };
    let engine_seen = scenario(local(&config)).await.observed().await;
    if let Some((sched, pg)) = postgres(test, &config).await {
        let pg_seen = scenario(sched).await.observed().await;
        assert_eq!(engine_seen, pg_seen, "the engine and Postgres disagree");
        pg_support::drop_schema(&pg).await;
    }
    engine_seen
}

fn fired(list: &[(i64, &str)]) -> Vec<(i64, String)> {
    list.iter().map(|(t, r)| (*t, (*r).to_owned())).collect()
}

#[tokio::test]
async fn overlap_skip_waits_for_the_fire_job() {
    let seen = on_both("sc_overlap_skip", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(serde_json::json!({
            "name": "tick", "spec": "@every 1s", "overlap": "skip",
            "target": {"queue": "ticks", "payload": {"n": 7}}
        }))
        .await;
        b.advance(1_000).await;
        let job = b.claim("ticks").await.pop().expect("the fire's job");
        assert_eq!(job.payload.as_json(), r#"{"n":7}"#);
        assert_eq!(job.attempt, 1);
        assert_eq!(job.fire.as_ref().unwrap().nominal, at(1_000));
        b.advance(2_000).await;
        b.advance(3_000).await;
        b.finish(&job, true).await;
        b.advance(4_000).await;
        b
    })
    .await;
    assert_eq!(
        seen.fired,
        fired(&[(1_000, "scheduled"), (4_000, "scheduled")])
    );
    assert_eq!(
        seen.skipped,
        vec![("overlap".into(), 1), ("overlap".into(), 1)]
    );
    assert!(seen.retries.is_empty());
}

#[tokio::test]
async fn overlap_allow_fires_every_boundary_with_its_own_job() {
    let seen = on_both("sc_overlap_allow", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(serde_json::json!({
            "name": "tick", "spec": "@every 1s", "overlap": "allow",
            "target": {"queue": "ticks"}
        }))
        .await;
        for s in 1..=3 {
            b.advance(s * 1_000).await;
        }
        let jobs = b.claim("ticks").await;
        let nominals: Vec<Timestamp> = jobs
            .iter()
            .map(|j| j.fire.clone().unwrap().nominal)
            .collect();
        assert_eq!(nominals, vec![at(1_000), at(2_000), at(3_000)]);
        b
    })
    .await;
    assert_eq!(
        seen.fired,
        fired(&[
            (1_000, "scheduled"),
            (2_000, "scheduled"),
            (3_000, "scheduled")
        ])
    );
    assert!(seen.skipped.is_empty());
}

#[tokio::test]
async fn catch_up_after_downtime_is_capped() {
    let seen = on_both("sc_catchup", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(serde_json::json!({
            "name": "tick", "spec": "@every 1s", "overlap": "allow",
            "catchup": {"max": 2}, "target": {"queue": "ticks"}
        }))
        .await;
        // Ten boundaries pass at once (a leaderless gap, a restart).
        b.advance(10_500).await;
        assert_eq!(b.claim("ticks").await.len(), 2);
        b
    })
    .await;
    assert_eq!(seen.fired.len(), 2, "{seen:?}");
    assert_eq!(seen.fired[1].0, 10_000);
    assert_eq!(seen.skipped, vec![("catchup_cap".into(), 8)]);
}

#[tokio::test]
async fn catch_up_under_skip_fires_the_most_recent_boundary() {
    let seen = on_both("sc_catchup_skip", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(serde_json::json!({
            "name": "nightly", "spec": "@every 1s", "catchup": {"max": 4},
            "target": {"queue": "ticks"}
        }))
        .await;
        // Ten boundaries pass at once: the default `skip` collapses them.
        b.advance(10_500).await;
        let jobs = b.claim("ticks").await;
        let nominals: Vec<Timestamp> = jobs
            .iter()
            .map(|j| j.fire.clone().unwrap().nominal)
            .collect();
        assert_eq!(
            nominals,
            vec![at(10_000)],
            "last night's run, not the oldest"
        );
        b
    })
    .await;
    assert_eq!(seen.fired.len(), 1, "{seen:?}");
    assert_eq!(seen.fired[0].0, 10_000);
    let mut skipped = seen.skipped.clone();
    skipped.sort();
    assert_eq!(
        skipped,
        vec![("catchup_cap".into(), 6), ("superseded".into(), 3)]
    );
}

#[tokio::test]
async fn a_dead_fire_job_releases_the_schedule() {
    let seen = on_both("sc_dead_fire", |mut b| async move {
        let mut q = QueueConfig::new("ticks");
        q.max_attempts = 1;
        b.declare(q).await;
        b.upsert(serde_json::json!({
            "name": "tick", "spec": "@every 1s", "overlap": "skip",
            "target": {"queue": "ticks"}
        }))
        .await;
        b.advance(1_000).await;
        let job = b.claim("ticks").await.pop().unwrap();
        b.finish(&job, false).await;
        b.advance(2_000).await;
        b
    })
    .await;
    assert_eq!(
        seen.fired,
        fired(&[(1_000, "scheduled"), (2_000, "scheduled")])
    );
    assert!(seen.skipped.is_empty());
}

#[tokio::test]
async fn paused_boundaries_are_skipped_and_manual_fires_are_their_own() {
    let seen = on_both("sc_paused", |mut b| async move {
        b.declare(QueueConfig::new("ticks")).await;
        b.upsert(serde_json::json!({
            "name": "tick", "spec": "@every 1s", "overlap": "allow", "paused": true,
            "target": {"queue": "ticks"}
        }))
        .await;
        b.advance(3_000).await;
        let trigger = Input::TriggerSchedule {
            name: "tick".into(),
            overlap: None,
        };
        assert!(matches!(
            b.input(3_100, trigger).await,
            Ok(Reply::Triggered { .. })
        ));
        b.input(
            3_200,
            Input::ResumeSchedule {
                name: "tick".into(),
            },
        )
        .await
        .unwrap();
        b.advance(4_000).await;
        assert_eq!(b.claim("ticks").await.len(), 2);
        b
    })
    .await;
    assert_eq!(seen.fired.len(), 2, "{seen:?}");
    assert_eq!(seen.fired[0].1, "manual");
    assert_eq!(seen.fired[1], (4_000, "scheduled".to_owned()));
    let paused: i64 = seen
        .skipped
        .iter()
        .filter(|s| s.0 == "paused")
        .map(|s| s.1)
        .sum();
    assert_eq!(paused, 3, "{seen:?}");
}

#[tokio::test]
async fn a_fire_job_in_a_queue_the_fire_created_retries_at_the_engine_delays() {
    let seen = on_both("sc_fire_seed", |mut b| async move {
        b.target_only("made").await;
        b.upsert(serde_json::json!({
            "name": "tick", "spec": "@every 1s", "overlap": "allow",
            "target": {"queue": "made"}
        }))
        .await;
        b.advance(1_000).await;
        let job = b.claim("made").await.pop().expect("the fire's job");
        b.finish(&job, false).await;
        b
    })
    .await;
    // Both backends chose core's delay for the queue's defaults and the
    // engine's seed (and agreed with each other, checked by `on_both`).
    let (job, attempt, delay_ms) = seen.retries[0];
    let expected =
        chime_core::after_failure(&QueueConfig::new("made"), None, SEED, JobId(job), attempt);
    assert_eq!(
        chime_core::AfterFailure::Retry { delay_ms },
        expected,
        "{seen:?}"
    );
}
