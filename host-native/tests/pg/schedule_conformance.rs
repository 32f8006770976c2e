//! Schedule semantics on both backends: the embedded engine with a local
//! queue, and the Postgres path of a replica — the leader's engine with
//! the queue external, its fires delivered through `PgStore` into
//! `chime_fires`/`chime_jobs`, their jobs claimed and finished through
//! `PgQueues`, and `FireSettled` sent back from `pg::fires::ended`, as
//! `pg::replica` does. Each scenario is written once against [`Sched`] in
//! virtual time; what it observes (fires with their reasons, skipped
//! boundaries with theirs, the fire jobs' payload and attempts) must be
//! the same on both, and on Postgres it is read back from the tables.

use crate::pg_support;

use chime_core::{
    Claimed, Command, Engine, EngineConfig, Event, Input, JobId, JournalEntry, LeaseToken,
    QueueConfig, QueueMode, Reply, ScheduleDef, Timestamp,
};
use chime_native::pg::{PgConfig, PgQueues, PgStore, fires};
use chime_native::store::{Store, deliverable};

/// 2026-01-01T00:00:00Z: scenario times are offsets from it.
const T0: i64 = 1_767_225_600_000;

/// What a scenario saw: fires `(offset of the boundary, reason)` and
/// skipped runs `(reason, count)`, each sorted.
#[derive(Debug, Default, PartialEq, Eq)]
struct Observed {
    fired: Vec<(i64, String)>,
    skipped: Vec<(String, i64)>,
}

fn name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(T0 + ms).unwrap()
}

/// A backend under test (one of each per scenario: its size is no
/// concern).
#[allow(clippy::large_enum_variant)]
enum Sched {
    Engine {
        engine: Engine,
        seen: Observed,
    },
    Pg {
        engine: Engine,
        store: PgStore,
        queues: PgQueues,
        pg: PgConfig,
    },
}

impl Sched {
    fn engine(&mut self) -> &mut Engine {
        match self {
            Sched::Engine { engine, .. } | Sched::Pg { engine, .. } => engine,
        }
    }

    /// One input at `ms`: handled, and on Postgres journaled and its
    /// fires delivered as a replica's driver does.
    async fn input(&mut self, ms: i64, input: Input) -> Result<Reply, &'static str> {
        let now = at(ms).max(self.engine().clock());
        let entry = JournalEntry {
            now,
            input: input.clone(),
        };
        let reply = self.engine().handle(now, input).map_err(|e| e.code());
        let mut out = Vec::new();
        self.engine().drain_commands(&mut out);
        match self {
            Sched::Engine { seen, .. } => {
                for c in &out {
                    match c {
                        Command::Fire(f) => seen
                            .fired
                            .push((f.fire_id.nominal.as_millis() - T0, name(&f.reason))),
                        Command::Event(Event::FireSkipped { reason, count, .. }) => {
                            seen.skipped.push((name(reason), *count as i64))
                        }
                        _ => {}
                    }
                }
            }
            Sched::Pg { store, .. } => {
                store.append(&[entry]).unwrap();
                let out: Vec<Command> = out.into_iter().filter(deliverable).collect();
                store.deliver(&out).unwrap();
            }
        }
        reply
    }

    async fn declare(&mut self, q: QueueConfig) {
        let engine_q = match self {
            Sched::Engine { .. } => QueueConfig {
                mode: QueueMode::Local,
                ..q
            },
            Sched::Pg { queues, .. } => {
                queues.declare(&q).await.unwrap();
                QueueConfig {
                    mode: QueueMode::External,
                    lease_ms: 3_600_000,
                    ..q
                }
            }
        };
        self.input(0, Input::DeclareQueue(engine_q)).await.unwrap();
    }

    async fn upsert(&mut self, json: serde_json::Value) {
        let def: ScheduleDef = serde_json::from_value(json).unwrap();
        self.input(0, Input::UpsertSchedule(def)).await.unwrap();
    }

    async fn advance(&mut self, ms: i64) {
        self.input(ms, Input::Advance).await.unwrap();
    }

    async fn claim(&mut self, queue: &str) -> Vec<Claimed> {
        match self {
            Sched::Engine { engine, .. } => {
                let now = engine.clock();
                let claim = Input::Claim {
                    queue: queue.into(),
                    worker: "w".into(),
                    max: 100,
                    lease_ms: None,
                };
                match engine.handle(now, claim).unwrap() {
                    Reply::Claimed { jobs } => jobs,
                    other => panic!("{other:?}"),
                }
            }
            Sched::Pg { queues, .. } => queues.claim(queue, "w", 100, None).await.unwrap(),
        }
    }

    /// Ends an attempt; on Postgres the leader then learns which fires'
    /// jobs ended, as the replica's settling loop does.
    async fn finish(&mut self, job: JobId, token: LeaseToken, ok: bool) {
        let input = if ok {
            Input::Complete { job, token }
        } else {
            Input::Fail {
                job,
                token,
                error: "boom".into(),
                retry_at: None,
            }
        };
        match self {
            Sched::Engine { engine, .. } => {
                let now = engine.clock();
                engine.handle(now, input).unwrap();
            }
            Sched::Pg {
                engine, queues, pg, ..
            } => {
                if ok {
                    queues.complete(job, token).await.unwrap();
                } else {
                    queues.fail(job, token, "boom", None).await.unwrap();
                }
                let client = chime_native::pg::connect(&pg.url).await.unwrap();
                let ended = fires::ended(&client, &pg.schema, "engine", 100)
                    .await
                    .unwrap();
                let now = engine.clock();
                let mut settled = Vec::new();
                for (fire, outcome) in ended {
                    let input = Input::FireSettled {
                        fire: fire.clone(),
                        outcome,
                    };
                    self.input(now.as_millis() - T0, input).await.unwrap();
                    settled.push(fire);
                }
                let Sched::Pg { pg, .. } = self else {
                    unreachable!()
                };
                fires::mark_settled(&client, &pg.schema, "engine", &settled)
                    .await
                    .unwrap();
            }
        }
    }

    /// What happened, read back from the tables on Postgres.
    async fn observed(self) -> Observed {
        let mut seen = match self {
            Sched::Engine { seen, .. } => seen,
            Sched::Pg { pg, .. } => {
                let c = chime_native::pg::connect(&pg.url).await.unwrap();
                let s = &pg.schema;
                let fired = c
                    .query(
                        &format!("SELECT nominal_ms, reason FROM \"{s}\".chime_fires"),
                        &[],
                    )
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| (r.get::<_, i64>(0) - T0, r.get(1)))
                    .collect();
                let skipped = c
                    .query(
                        &format!("SELECT reason, count FROM \"{s}\".chime_skips"),
                        &[],
                    )
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                Observed { fired, skipped }
            }
        };
        seen.fired.sort();
        seen.skipped.sort();
        seen
    }
}

/// Runs `scenario` on the engine and (with a server) on Postgres, and
/// checks both observed the same; returns the engine's observation.
async fn on_both<F, Fut>(test: &str, scenario: F) -> Observed
where
    F: Fn(Sched) -> Fut,
    Fut: std::future::Future<Output = Sched>,
{
    let config = EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    };
    let mut engine = Engine::new(config.clone());
    // The embedded engine leads without end, as the replica's does while
    // its lease is renewed.
    let forever = chime_core::LeadershipGrant {
        epoch: chime_core::Epoch(1),
        valid_until: Timestamp::MAX,
    };
    engine
        .handle(at(0), Input::Leadership(Some(forever)))
        .unwrap();
    let engine_seen = scenario(Sched::Engine {
        engine,
        seen: Observed::default(),
    })
    .await
    .observed()
    .await;
    if let Some(pg) = pg_support::config(test) {
        let mut lease = pg_support::lease(&pg, "leader", 60_000, 1_000).await;
        let grant = lease.acquire().await.unwrap().unwrap();
        let store = PgStore::open(&pg, "engine", grant.epoch).unwrap();
        let queues = PgQueues::connect(&pg, config.clone()).await.unwrap();
        let mut sched = Sched::Pg {
            engine: Engine::new(config),
            store,
            queues,
            pg: pg.clone(),
        };
        sched
            .input(0, Input::Leadership(Some(grant.leadership())))
            .await
            .unwrap();
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
        b.finish(job.job, job.token, true).await;
        b.advance(4_000).await;
        b
    })
    .await;
    assert_eq!(
        seen,
        Observed {
            fired: fired(&[(1_000, "scheduled"), (4_000, "scheduled")]),
            skipped: vec![("overlap".into(), 1), ("overlap".into(), 1)],
        }
    );
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
        b.finish(job.job, job.token, false).await;
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
