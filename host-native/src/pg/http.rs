//! The listener of a replica (`chime run --database`): every replica,
//! leader or follower, serves `/healthz`, `/metrics` and the read
//! endpoints, answered from the database (see `docs/postgres.md`):
//!
//! - `/healthz`: the database is reachable, this replica leads or
//!   follows, the leader's holder, epoch and lease expiry (from the lease
//!   row); 200 when the database answered, else 503.
//! - `/metrics`: Prometheus text — queue depth by state and jobs by
//!   outcome (rows of `chime_jobs`), fires and skips (`chime_fires`,
//!   `chime_skips`), the leader's epoch, this replica's terms, lease
//!   renewal latency, database errors, the inbox.
//! - `/v1/schedules`, `/v1/schedules/{name}`: a warm copy of the leader's
//!   engine, loaded from its committed snapshot and journal (at most
//!   [`PgHttpOptions::warm_for`] old), the same on every replica.
//! - `/v1/queues`, `/v1/queues/{name}/dead`: from the job tables.
//!
//! Writes are not served here (they go through [`super::PgControl`]); the
//! router is meant to be merged with the write routes. Every handler has
//! a bound: one shared connection, each query within
//! [`PgHttpOptions::query_timeout`] (503 beyond it).

use super::connection::{PgConfig, PgError};
use super::replica::ReplicaConfig;
use super::status::ReplicaStatus;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chime_core::{Engine, EngineConfig, JournalEntry, Snapshot, journal};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, oneshot};
use tokio::task::JoinHandle;

/// Limits of the replica's listener.
#[derive(Clone, Copy, Debug)]
pub struct PgHttpOptions {
    /// The longest one handler's queries may take (then 503).
    pub query_timeout: Duration,
    /// How long a loaded copy of the engine serves schedule reads.
    pub warm_for: Duration,
}

impl Default for PgHttpOptions {
    fn default() -> Self {
        PgHttpOptions {
            query_timeout: Duration::from_secs(5),
            warm_for: Duration::from_secs(1),
        }
    }
}

/// What the handlers share.
struct App {
    pg: PgConfig,
    name: String,
    holder: String,
    engine_config: EngineConfig,
    status: Arc<ReplicaStatus>,
    options: PgHttpOptions,
    client: Mutex<Option<tokio_postgres::Client>>,
    warm: Mutex<Option<(Instant, Arc<Engine>)>>,
}

type Shared = Arc<App>;

/// The replica's read routes, for embedding in another axum server.
pub fn router(cfg: &ReplicaConfig, options: PgHttpOptions) -> Router {
    let app = Arc::new(App {
        pg: cfg.pg.clone(),
        name: cfg.name.clone(),
        holder: cfg.holder.clone(),
        engine_config: cfg.driver.engine.clone(),
        status: cfg.status.clone(),
        options,
        client: Mutex::new(None),
        warm: Mutex::new(None),
    });
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/schedules", get(schedules))
        .route("/v1/schedules/{name}", get(schedule))
        .route("/v1/queues", get(queues))
        .route("/v1/queues/{name}/dead", get(dead))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .with_state(app)
}

/// The listener's address could not be bound. (Its own type: `pg/` sits
/// beside `http/`, not above it.)
#[derive(Debug, thiserror::Error)]
#[error("binding the replica HTTP listener to {address}")]
pub struct BindError {
    /// The address.
    pub address: SocketAddr,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

/// A running replica listener.
#[derive(Debug)]
pub struct PgHttpServer {
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl PgHttpServer {
    /// Binds `address` (port 0 picks one) and serves `router`.
    pub async fn bind(address: SocketAddr, router: Router) -> Result<PgHttpServer, BindError> {
        let bind_err = |source| BindError { address, source };
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(bind_err)?;
        let address = listener.local_addr().map_err(bind_err)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        tracing::info!(%address, "replica HTTP listener up (/healthz, /metrics, /v1)");
        Ok(PgHttpServer {
            address,
            stop,
            task,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, lets requests in progress finish.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        if let Ok(Err(e)) = self.task.await {
            tracing::warn!(error = %e, "replica HTTP listener failed");
        }
    }
}

fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({ "error": code, "message": message.into() });
    (status, Json(body)).into_response()
}

fn unavailable(e: impl std::fmt::Display) -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "database_unavailable",
        e.to_string(),
    )
}

impl App {
    fn q(&self) -> String {
        format!("\"{}\"", self.pg.schema)
    }

    /// Runs `f` on the shared connection (opened if needed) within the
    /// query timeout; a failure counts as a database error.
    async fn with_client<T>(
        &self,
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
        let r = match tokio::time::timeout(self.options.query_timeout, run).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "the database did not answer within {:?}",
                self.options.query_timeout
            )),
        };
        if r.is_err() {
            self.status.db_error();
            // A statement cut off (timeout) or failed inside the
            // engine read's transaction would leave the connection in
            // it: the next request opens a fresh one.
            *self.client.lock().await = None;
        }
        r
    }

    /// The leader's engine as last committed, at most `warm_for` old.
    async fn engine(&self) -> Result<Arc<Engine>, String> {
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
            .await?;
        let engine = load(body.as_deref(), &lines, &self.engine_config)?;
        let engine = Arc::new(engine);
        *warm = Some((Instant::now(), engine.clone()));
        Ok(engine)
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

/// The lease row: holder, epoch, expiry (Unix ms), whether it runs.
type LeaderRow = Option<(Option<String>, i64, i64, bool)>;

async fn leader_row(app: &App) -> Result<LeaderRow, String> {
    let (q, name) = (app.q(), app.name.clone());
    app.with_client(async |c| {
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
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3))))
    })
    .await
}

async fn healthz(State(app): State<Shared>) -> Response {
    let me = app.status.view();
    let leader = leader_row(&app).await;
    let role = if me.leading { "leader" } else { "follower" };
    let (status, database, leader) = match &leader {
        Ok(row) => (
            StatusCode::OK,
            json!({ "reachable": true }),
            row.as_ref().map_or(Value::Null, |(holder, epoch, exp, live)| {
                json!({ "holder": holder, "epoch": epoch, "leaseExpiresAtMs": exp, "live": live })
            }),
        ),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "reachable": false, "error": e }),
            Value::Null,
        ),
    };
    let body = json!({
        "status": if status == StatusCode::OK { "ok" } else { "unavailable" },
        "database": database,
        "role": role,
        "holder": app.holder,
        "connected": me.connected,
        "epoch": me.leading.then_some(me.epoch),
        "leaseExpiresAtMs": me.leading.then_some(me.lease_expires_ms),
        "leader": leader,
    });
    (status, Json(body)).into_response()
}

/// Prometheus label value escaping.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

async fn metrics(State(app): State<Shared>) -> Response {
    let q = app.q();
    let name = app.name.clone();
    type Counts = Vec<(String, String, i64)>;
    let read = app
        .with_client(async |c| {
            let triples = |rows: Vec<tokio_postgres::Row>| -> Counts {
                rows.iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect()
            };
            let jobs = triples(
                c.query(
                    &format!(
                        "SELECT queue, CASE WHEN state = 'available' AND run_at > now()
                                THEN 'scheduled' ELSE state END AS s, count(*)
                         FROM {q}.chime_jobs GROUP BY 1, 2 ORDER BY 1, 2"
                    ),
                    &[],
                )
                .await?,
            );
            let fires = triples(
                c.query(
                    &format!(
                        "SELECT schedule, kind, count(*) FROM {q}.chime_fires
                         WHERE engine = $1 GROUP BY 1, 2 ORDER BY 1, 2"
                    ),
                    &[&name],
                )
                .await?,
            );
            let skips = triples(
                c.query(
                    &format!(
                        "SELECT schedule, reason, sum(count)::bigint FROM {q}.chime_skips
                         WHERE engine = $1 GROUP BY 1, 2 ORDER BY 1, 2"
                    ),
                    &[&name],
                )
                .await?,
            );
            let inbox: i64 = c
                .query_one(
                    &format!(
                        "SELECT count(*) FROM {q}.chime_inbox
                         WHERE engine = $1 AND applied_at IS NULL"
                    ),
                    &[&name],
                )
                .await?
                .get(0);
            Ok((jobs, fires, skips, inbox))
        })
        .await;
    let leader = leader_row(&app).await;
    let (jobs, fires, skips, inbox) = match read {
        Ok(r) => r,
        Err(e) => return unavailable(e),
    };
    let me = app.status.view();
    let mut t = String::new();
    // Each line is the name, then its suffix (labels, or `_sum`/`_count`).
    let mut metric = |name: &str, kind: &str, help: &str, lines: &[(String, String)]| {
        let _ = writeln!(t, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in lines {
            let _ = writeln!(t, "{name}{labels} {value}");
        }
    };
    let one = |v: String| vec![(String::new(), v)];
    let by = |rows: &Counts, a: &str, b: &str| -> Vec<(String, String)> {
        rows.iter()
            .map(|(x, y, n)| {
                (
                    format!("{{{a}=\"{}\",{b}=\"{}\"}}", label(x), label(y)),
                    n.to_string(),
                )
            })
            .collect()
    };
    metric(
        "chime_replica_leader",
        "gauge",
        "1 while this replica holds the leader lease and runs the engine.",
        &one(u8::from(me.leading).to_string()),
    );
    metric(
        "chime_database_up",
        "gauge",
        "1 when the database answered this scrape.",
        &one("1".into()),
    );
    if let Ok(Some((_, epoch, exp, live))) = &leader {
        metric(
            "chime_leader_epoch",
            "gauge",
            "The lease's epoch: every takeover adds one (its increase counts leader changes).",
            &one(epoch.to_string()),
        );
        metric(
            "chime_leader_lease_expires_at_seconds",
            "gauge",
            "When the leader's lease runs out unless renewed (database clock, Unix seconds).",
            &one(format!("{:.3}", *exp as f64 / 1000.0)),
        );
        metric(
            "chime_leader_live",
            "gauge",
            "1 while some replica holds an unexpired lease.",
            &one(u8::from(*live).to_string()),
        );
    }
    metric(
        "chime_replica_terms_total",
        "counter",
        "Terms this replica has begun as leader.",
        &one(me.terms.to_string()),
    );
    metric(
        "chime_lease_renew_seconds",
        "summary",
        "Round trips of this replica's successful lease renewals.",
        &[
            (
                "_sum".into(),
                format!("{:.6}", me.renew_micros as f64 / 1e6),
            ),
            ("_count".into(), me.renewals.to_string()),
        ],
    );
    metric(
        "chime_lease_renew_last_seconds",
        "gauge",
        "The last renewal's round trip.",
        &one(format!("{:.6}", me.renew_last_micros as f64 / 1e6)),
    );
    metric(
        "chime_database_errors_total",
        "counter",
        "Failed statements and lost sessions this replica logged.",
        &one(me.db_errors.to_string()),
    );
    metric(
        "chime_inbox_pending",
        "gauge",
        "Schedule and queue inputs waiting for the leader.",
        &one(inbox.to_string()),
    );
    metric(
        "chime_inbox_applied_total",
        "counter",
        "Inbox inputs this replica applied as leader.",
        &one(me.inbox_applied.to_string()),
    );
    metric(
        "chime_jobs",
        "gauge",
        "Job rows by queue and state: depth (available, scheduled, claimed) and outcomes \
         kept by retention (completed, dead, dropped, cancelled).",
        &by(&jobs, "queue", "state"),
    );
    metric(
        "chime_fires_total",
        "counter",
        "Fires delivered by the leaders, by schedule and kind.",
        &by(&fires, "schedule", "kind"),
    );
    metric(
        "chime_skips_total",
        "counter",
        "Boundaries skipped, by schedule and reason.",
        &by(&skips, "schedule", "reason"),
    );
    ([(header::CONTENT_TYPE, crate::driver::CONTENT_TYPE)], t).into_response()
}

async fn schedules(State(app): State<Shared>) -> Response {
    match app.engine().await {
        Ok(e) => {
            let list: Vec<Value> = e
                .schedule_names()
                .filter_map(|n| e.schedule(n))
                .map(|s| {
                    json!({
                        "name": s.def.name,
                        "spec": s.def.spec,
                        "tz": s.def.tz,
                        "queue": s.def.target.queue,
                        "status": s.status,
                        "nextNominal": s.next_nominal,
                        "nextDueAt": s.next_due_at,
                        "fires": s.fires,
                        "skipped": s.skipped,
                        "inFlight": s.in_flight.len(),
                    })
                })
                .collect();
            Json(json!({ "schedules": list })).into_response()
        }
        Err(e) => unavailable(e),
    }
}

async fn schedule(State(app): State<Shared>, Path(name): Path<String>) -> Response {
    match app.engine().await {
        Ok(e) => match e.schedule(&name) {
            Some(info) => Json(info).into_response(),
            None => error(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no such schedule {name:?}"),
            ),
        },
        Err(e) => unavailable(e),
    }
}

async fn queues(State(app): State<Shared>) -> Response {
    let q = app.q();
    let rows = app
        .with_client(async |c| {
            c.query(
                &format!(
                    "SELECT q.name, j.s, count(j.s) FROM {q}.chime_queues q
                     LEFT JOIN LATERAL (
                         SELECT CASE WHEN state = 'available' AND run_at > now()
                                THEN 'scheduled' ELSE state END AS s
                         FROM {q}.chime_jobs WHERE queue = q.name) j ON true
                     GROUP BY 1, 2 ORDER BY 1, 2"
                ),
                &[],
            )
            .await
        })
        .await;
    let rows = match rows {
        Ok(r) => r,
        Err(e) => return unavailable(e),
    };
    let mut list: Vec<Value> = Vec::new();
    for r in &rows {
        let (name, state, n): (String, Option<String>, i64) = (r.get(0), r.get(1), r.get(2));
        if list.last().is_none_or(|l| l["name"] != name.as_str()) {
            list.push(json!({ "name": name, "jobs": {} }));
        }
        if let (Some(state), Some(last)) = (state, list.last_mut()) {
            last["jobs"][state] = json!(n);
        }
    }
    Json(json!({ "queues": list })).into_response()
}

/// `?limit=N` dead letters (default 100, at most 1,000).
#[derive(serde::Deserialize)]
struct DeadQuery {
    limit: Option<i64>,
}

async fn dead(
    State(app): State<Shared>,
    Path(name): Path<String>,
    Query(query): Query<DeadQuery>,
) -> Response {
    let q = app.q();
    let limit = query.limit.unwrap_or(100).clamp(0, 1_000);
    let key = name.clone();
    let read = app
        .with_client(async |c| {
            let exists = c
                .query_opt(
                    &format!("SELECT 1 FROM {q}.chime_queues WHERE name = $1"),
                    &[&key],
                )
                .await?
                .is_some();
            let total: i64 = c
                .query_one(
                    &format!(
                        "SELECT count(*) FROM {q}.chime_jobs WHERE queue = $1 AND state = 'dead'"
                    ),
                    &[&key],
                )
                .await?
                .get(0);
            let jobs: Vec<Value> = c
                .query(
                    &format!(
                        "SELECT id, attempt, last_error,
                                (extract(epoch FROM finished_at) * 1000)::bigint
                         FROM {q}.chime_jobs WHERE queue = $1 AND state = 'dead'
                         ORDER BY finished_at DESC, id DESC LIMIT $2"
                    ),
                    &[&key, &limit],
                )
                .await?
                .iter()
                .map(|r| {
                    json!({
                        "id": r.get::<_, i64>(0),
                        "attempt": r.get::<_, i32>(1),
                        "lastError": r.get::<_, Option<String>>(2),
                        "finishedAt": r.get::<_, Option<i64>>(3),
                    })
                })
                .collect();
            Ok((exists, total, jobs))
        })
        .await;
    match read {
        Ok((false, ..)) => error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such queue {name:?}"),
        ),
        Ok((true, total, jobs)) => {
            Json(json!({ "queue": name, "total": total, "jobs": jobs })).into_response()
        }
        Err(e) => unavailable(e),
    }
}
