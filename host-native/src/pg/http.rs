//! The read port of a replica (`chime run --database`): every replica,
//! leader or follower, serves the whole `/v1` API on the same router as
//! the embedded daemon (`http/`, wired up by `chime run`), with this as
//! its [`ReadBackend`], [`super::PgControl`] as its control port and the
//! job tables ([`super::PgQueues`]) as its queue port. The reads are
//! answered from the database (see `docs/postgres.md`), in the same view
//! types as the driver's:
//!
//! - `/healthz`: the database is reachable, this replica leads or
//!   follows, the lease row's holder, epoch and expiry; `ok` when the
//!   database answered.
//! - `/metrics`: `http_metrics.rs`.
//! - schedules and the schedule half of `/v1/inspect`: a warm copy of
//!   the leader's engine, loaded from its committed snapshot and journal
//!   (at most [`PgReadOptions::warm_for`] old), the same on every replica.
//! - queues, dead letters and the queue half of `/v1/inspect`: the job
//!   tables, as of the database clock.
//! - `/v1/events`: a broadcast given at construction; the leader's
//!   driver events go into it (`replica.rs`).
//!
//! Every read has a bound: one shared connection, each read's queries
//! within [`PgReadOptions::query_timeout`] (`Unavailable` beyond it).

use super::connection::{PgConfig, PgError};
use super::replica::ReplicaConfig;
use super::status::ReplicaStatus;
use crate::backend::inspection::{Inspection, QueueView};
use crate::backend::views::{
    DatabaseHealth, DeadLetters, Health, LeaseRow, QueueList, ReplicaHealth, ScheduleDetail,
    ScheduleFilter, ScheduleList,
};
use crate::backend::{PortError, PortFuture, QueueBackend, ReadBackend};
use crate::driver::StreamEvent;
use chime_core::{
    Engine, EngineConfig, JobId, JobInfo, JournalEntry, QueueStats, QueueTotals, Snapshot,
    Timestamp, journal,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, broadcast};

/// Bounds of a replica's reads.
#[derive(Clone, Copy, Debug)]
pub struct PgReadOptions {
    /// The longest one read's queries may take (then `Unavailable`).
    pub query_timeout: Duration,
    /// How long a loaded copy of the engine serves schedule reads.
    pub warm_for: Duration,
}

impl Default for PgReadOptions {
    fn default() -> Self {
        PgReadOptions {
            query_timeout: Duration::from_secs(5),
            warm_for: Duration::from_secs(1),
        }
    }
}

/// A replica's [`ReadBackend`].
pub struct PgReads {
    pg: PgConfig,
    pub(super) name: String,
    holder: String,
    engine_config: EngineConfig,
    pub(super) status: Arc<ReplicaStatus>,
    options: PgReadOptions,
    client: Mutex<Option<tokio_postgres::Client>>,
    warm: Mutex<Option<(Instant, Arc<Engine>)>>,
    jobs: Arc<dyn QueueBackend>,
    events: broadcast::Sender<Arc<StreamEvent>>,
}

impl std::fmt::Debug for PgReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgReads")
            .field("schema", &self.pg.schema)
            .field("engine", &self.name)
            .finish_non_exhaustive()
    }
}

impl PgReads {
    /// The reads of replica `cfg`: its database, lease name, holder id,
    /// engine config and status. `jobs` is the queue port the API serves
    /// (dead letters are shown as its `job` getter shows them). `events`
    /// is what `/v1/events` subscribes to: the replica's leader term sends
    /// its driver's events into it (pass `cfg.events`), and a feed of the
    /// job events of every replica may send into it too.
    pub fn new(
        cfg: &ReplicaConfig,
        options: PgReadOptions,
        jobs: Arc<dyn QueueBackend>,
        events: broadcast::Sender<Arc<StreamEvent>>,
    ) -> PgReads {
        PgReads {
            pg: cfg.pg.clone(),
            name: cfg.name.clone(),
            holder: cfg.holder.clone(),
            engine_config: cfg.driver.engine.clone(),
            status: cfg.status.clone(),
            options,
            client: Mutex::new(None),
            warm: Mutex::new(None),
            jobs,
            events,
        }
    }

    pub(super) fn q(&self) -> String {
        format!("\"{}\"", self.pg.schema)
    }

    /// Runs `f` on the shared connection (opened if needed) within
    /// `wait`; a failure counts as a database error.
    async fn with_client_within<T>(
        &self,
        wait: Duration,
        f: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, String> {
        let run = async {
            let mut guard = self.client.lock().await;
            if guard.as_ref().is_none_or(|c| c.is_closed()) {
                *guard = Some(
                    super::connect(&self.pg.url)
                        .await
                        .map_err(|e| e.to_string())?,
                );
            }
            let c = guard.as_ref().ok_or("no connection")?;
            f(c).await
                .map_err(|e| PgError::db("reading for the listener")(e).to_string())
        };
        let r = match tokio::time::timeout(wait, run).await {
            Ok(r) => r,
            Err(_) => Err(format!("the database did not answer within {wait:?}")),
        };
        if r.is_err() {
            self.status.db_error();
            // A statement cut off (timeout) or failed inside the engine
            // read's transaction would leave the connection in it: the
            // next read opens a fresh one.
            *self.client.lock().await = None;
        }
        r
    }

    pub(super) async fn with_client<T>(
        &self,
        f: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, String> {
        self.with_client_within(self.options.query_timeout, f).await
    }

    /// The leader's engine as last committed, at most `warm_for` old.
    async fn engine(&self) -> Result<Arc<Engine>, PortError> {
        let mut warm = self.warm.lock().await;
        if let Some((at, e)) = warm.as_ref()
            && at.elapsed() < self.options.warm_for
        {
            return Ok(e.clone());
        }
        let (q, name) = (self.q(), self.name.clone());
        let (body, lines) = self
            .with_client(async |c| {
                // One repeatable-read transaction: snapshot and journal of
                // the same instant, as the leader's own load reads them.
                c.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await?;
                let body: Option<String> = c
                    .query_opt(
                        &format!("SELECT body FROM {q}.chime_snapshot WHERE engine = $1"),
                        &[&name],
                    )
                    .await?
                    .map(|r| r.get(0));
                let lines: Vec<String> = c
                    .query(
                        &format!(
                            "SELECT entry FROM {q}.chime_journal WHERE engine = $1 ORDER BY seq"
                        ),
                        &[&name],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                c.batch_execute("COMMIT").await?;
                Ok((body, lines))
            })
            .await
            .map_err(unavailable)?;
        let engine = load(body.as_deref(), &lines, &self.engine_config).map_err(unavailable)?;
        let engine = Arc::new(engine);
        *warm = Some((Instant::now(), engine.clone()));
        Ok(engine)
    }

    /// The lease row: holder, epoch, expiry (Unix ms), whether it runs.
    pub(super) async fn leader_row(&self) -> Result<Option<LeaseRow>, String> {
        self.leader_row_within(self.options.query_timeout).await
    }

    async fn leader_row_within(&self, wait: Duration) -> Result<Option<LeaseRow>, String> {
        let (q, name) = (self.q(), self.name.clone());
        self.with_client_within(wait, async |c| {
            Ok(c.query_opt(
                &format!(
                    "SELECT holder, epoch,
                            (extract(epoch FROM expires_at) * 1000)::bigint,
                            holder IS NOT NULL AND expires_at > now()
                     FROM {q}.chime_leader WHERE name = $1"
                ),
                &[&name],
            )
            .await?
            .map(|r| LeaseRow {
                holder: r.get(0),
                epoch: r.get(1),
                lease_expires_at_ms: r.get(2),
                live: r.get(3),
            }))
        })
        .await
    }

    /// Stats of one queue, or of all (`None`), from the job tables as of
    /// the database clock. The tables keep no counters: `totals` counts
    /// the rows retention still keeps, by outcome (`retried`, `expired`
    /// and `interrupted` are not recorded and stay 0).
    async fn stats(&self, only: Option<&str>) -> Result<Vec<QueueStats>, PortError> {
        let q = self.q();
        let only = only.map(str::to_owned);
        let rows = self
            .with_client(async |c| {
                c.query(
                    &format!(
                        "SELECT q.name,
                            count(*) FILTER (WHERE j.state = 'available' AND j.run_at > now()),
                            count(*) FILTER (WHERE j.state = 'available' AND j.run_at <= now()),
                            count(*) FILTER (WHERE j.state = 'claimed'),
                            count(*) FILTER (WHERE j.state = 'completed'),
                            count(*) FILTER (WHERE j.state = 'dead'),
                            count(*) FILTER (WHERE j.state = 'cancelled'),
                            count(*) FILTER (WHERE j.state = 'dropped'),
                            count(j.id),
                            (extract(epoch FROM now() - min(j.run_at) FILTER
                                (WHERE j.state = 'available' AND j.run_at <= now()))
                                * 1000)::bigint,
                            (extract(epoch FROM now()) * 1000)::bigint
                         FROM {q}.chime_queues q
                         LEFT JOIN {q}.chime_jobs j ON j.queue = q.name
                         WHERE $1::text IS NULL OR q.name = $1
                         GROUP BY q.name ORDER BY q.name"
                    ),
                    &[&only],
                )
                .await
            })
            .await
            .map_err(unavailable)?;
        let n = |r: &tokio_postgres::Row, i: usize| r.get::<_, i64>(i).max(0) as u64;
        Ok(rows
            .iter()
            .map(|r| QueueStats {
                queue: r.get(0),
                scheduled: n(r, 1),
                available: n(r, 2),
                claimed: n(r, 3),
                completed: n(r, 4),
                dead: n(r, 5),
                cancelled: n(r, 6),
                oldest_available_age_ms: r.get(9),
                totals: QueueTotals {
                    enqueued: n(r, 8),
                    completed: n(r, 4),
                    dead: n(r, 5),
                    dropped: n(r, 7),
                    cancelled: n(r, 6),
                    ..QueueTotals::default()
                },
                as_of: Timestamp::from_millis(r.get(10)).ok(),
            })
            .collect())
    }

    /// Up to `limit` dead letters of `queue`, oldest death first, each as
    /// the queue port's getter shows it.
    async fn dead(&self, queue: &str, limit: usize) -> Result<Vec<JobInfo>, PortError> {
        let q = self.q();
        let key = queue.to_owned();
        let limit = limit as i64;
        let ids: Vec<i64> = self
            .with_client(async |c| {
                Ok(c.query(
                    &format!(
                        "SELECT id FROM {q}.chime_jobs WHERE queue = $1 AND state = 'dead'
                         ORDER BY finished_at, id LIMIT $2"
                    ),
                    &[&key, &limit],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect())
            })
            .await
            .map_err(unavailable)?;
        let mut jobs = Vec::with_capacity(ids.len());
        for id in ids {
            // A row redriven or purged in between is left out.
            if let Some(j) = self.jobs.job(JobId(id as u64)).await? {
                jobs.push(j);
            }
        }
        Ok(jobs)
    }
}

/// Replays a snapshot and journal as the driver's recovery does.
fn load(body: Option<&str>, lines: &[String], config: &EngineConfig) -> Result<Engine, String> {
    let base = match body {
        Some(b) => Snapshot::from_json(b).map_err(|e| format!("snapshot: {e}"))?,
        None => Engine::new(config.clone()).snapshot(),
    };
    let mut text = String::new();
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    let entries: Vec<JournalEntry> = journal::read(&text).map_err(|e| format!("journal: {e}"))?;
    let mut engine = Engine::restore(base).map_err(|e| format!("restore: {e}"))?;
    let mut commands = Vec::new();
    for e in entries {
        let _ = engine.handle(e.now, e.input);
        engine.drain_commands(&mut commands);
        commands.clear();
    }
    Ok(engine)
}

fn unavailable(e: impl std::fmt::Display) -> PortError {
    PortError::Unavailable(e.to_string().into())
}

impl ReadBackend for PgReads {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn health(&self, wait: Duration) -> PortFuture<'_, Health> {
        Box::pin(async move {
            let me = self.status.view();
            let row = self.leader_row_within(wait).await;
            let reachable = row.is_ok();
            let error = row.as_ref().err().cloned();
            let lease = row.ok().flatten();
            // The engine runs on the leader only: a follower has no turns
            // or commits of its own.
            let signs = self.status.driver_vitals().unwrap_or_default();
            Ok(Health {
                status: if reachable { "ok" } else { "unavailable" }.to_owned(),
                driver: if me.leading { "running" } else { "standby" }.to_owned(),
                store: if reachable { "ok" } else { "failed" }.to_owned(),
                error: error.clone(),
                turns: signs.turns,
                commits: signs.commits,
                last_commit_at: signs.last_commit_unix_ms,
                last_commit_micros: signs.last_commit_us,
                engine_clock: None,
                schedules: None,
                live_jobs: None,
                leader: Some(me.leading),
                transports: Vec::new(),
                replica: Some(ReplicaHealth {
                    role: if me.leading { "leader" } else { "follower" }.to_owned(),
                    holder: self.holder.clone(),
                    connected: me.connected,
                    epoch: me.leading.then_some(me.epoch as i64),
                    lease_expires_at_ms: me.leading.then_some(me.lease_expires_ms),
                    database: DatabaseHealth { reachable, error },
                    lease,
                }),
            })
        })
    }

    fn metrics(&self) -> PortFuture<'_, String> {
        Box::pin(async move { super::http_metrics::render(self).await.map_err(unavailable) })
    }

    fn inspect(&self, dead: usize) -> PortFuture<'_, Inspection> {
        Box::pin(async move {
            let engine = self.engine().await?;
            let mut queues = Vec::new();
            for stats in self.stats(None).await? {
                let dead_letters = self.dead(&stats.queue, dead).await?;
                queues.push(QueueView {
                    stats,
                    dead_letters,
                });
            }
            Ok(Inspection {
                clock: engine.clock(),
                schedules: crate::backend::inspection::schedules(&engine),
                queues,
            })
        })
    }

    fn schedules(&self, filter: ScheduleFilter) -> PortFuture<'_, ScheduleList> {
        Box::pin(async move { Ok(ScheduleList::read(&*self.engine().await?, &filter)) })
    }

    fn schedule<'a>(&'a self, name: &'a str) -> PortFuture<'a, Option<ScheduleDetail>> {
        Box::pin(async move {
            let e = self.engine().await?;
            Ok(e.schedule(name)
                .map(|info| ScheduleDetail::new(info, e.config())))
        })
    }

    fn schedule_fires<'a>(
        &'a self,
        name: &'a str,
        from: Option<chime_core::Timestamp>,
        n: usize,
    ) -> PortFuture<'a, Option<crate::backend::fires::FireWindow>> {
        Box::pin(async move {
            let e = self.engine().await?;
            Ok(e.schedule(name)
                .map(|info| crate::backend::fires::FireWindow::new(&info, e.config(), from, n)))
        })
    }

    fn queues(&self) -> PortFuture<'_, QueueList> {
        Box::pin(async move {
            Ok(QueueList {
                queues: self.stats(None).await?,
            })
        })
    }

    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<DeadLetters>> {
        Box::pin(async move {
            let Some(stats) = self.stats(Some(queue)).await?.pop() else {
                return Ok(None);
            };
            Ok(Some(DeadLetters {
                queue: queue.to_owned(),
                total: stats.dead,
                jobs: self.dead(queue, limit).await?,
            }))
        })
    }

    fn events(&self) -> broadcast::Receiver<Arc<StreamEvent>> {
        self.events.subscribe()
    }
}
