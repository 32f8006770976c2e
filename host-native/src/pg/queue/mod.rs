//! Job queues in PostgreSQL: any replica's workers enqueue, claim,
//! heartbeat, complete and fail jobs in shared tables.
//!
//! The rules are chime-core's, not re-derived here: inputs are checked by
//! [`chime_core::validate_input`] (same error codes and fields as the
//! engine), and what a failed attempt leads to — the retry delay with its
//! deterministic jitter, dead letter or drop — comes from
//! [`chime_core::after_failure`]. SQL only stores the result. Defaults,
//! bounds, orders, key expiry and state names reach the SQL as values
//! computed by core (see `sql.rs`): no rule is written twice.
//!
//! The parts, by concern: [`declare`](PgQueues::declare) and implicit
//! queues (`declare.rs`), enqueues (`enqueue.rs`), claims and heartbeats
//! (`claim.rs`), the end of an attempt (`settle.rs`), dead letters
//! (`dead.rs`), housekeeping (`maintain.rs`), the statements (`sql.rs`)
//! and [`crate::backend::QueueBackend`] for these queues (`port.rs`).
//!
//! - **Claim** takes the first pending jobs in claim order (priority, then
//!   `run_at`, then id) with `FOR UPDATE SKIP LOCKED`, so concurrent
//!   claimers on any replica never take the same job and never wait on
//!   each other; each claim gets a fresh token from one sequence and a
//!   lease on the **database clock**.
//! - **Fencing**: heartbeat, complete and fail change a job only `WHERE
//!   token = $token AND state = 'claimed' AND lease_until > now()`. A worker
//!   whose lease ran out — or whose job was rescued and claimed again — is
//!   refused with `lease_lost`, exactly as by the engine.
//! - **Rescue**: a lease that expired counts as a failed attempt with error
//!   `lease_expired` ([`PgQueues::rescue_expired`], called periodically by
//!   every replica; concurrent rescuers are harmless, each job's update is
//!   conditional on the token it read).
//! - **Idempotency keys** (`chime_job_keys`): an enqueue with a key that
//!   is live, or finished less than the queue's `dedupWindowMs` ago,
//!   returns the existing job. One `INSERT … ON CONFLICT` decides, so two
//!   replicas enqueueing the same key at once make one job.
//! - **Wake-ups and events** (`pg::notify`): the statements that make a
//!   job claimable (enqueue, a retry, a redrive, a rescue) `NOTIFY`
//!   [`PgQueues::channel`] inside their own transaction — the queue's
//!   name, or when the job is due later `{"w": queue, "in": ms}` — so
//!   idle workers of every replica wake at the commit (and at the due
//!   time) instead of polling; the enqueues of a burst share one
//!   (`wake.rs`). The statements that settle a job notify its outcome on
//!   the same channel (`{"e": "completed", …}`: ids, attempt, duration,
//!   never a payload), which every replica's listener turns into its
//!   `/v1/events`.
//!
//! - **Transactional enqueue** ([`PgQueues::enqueue_in`]): the same
//!   statements run in the caller's own transaction, so a job exists if
//!   and only if the application's writes commit; its wake-up is a
//!   `NOTIFY` in that transaction, delivered at commit.
//!
//! All statements are single statements (no explicit transactions), so
//! one connection serves many concurrent callers by pipelining.
//!
//! A producer and a worker loop (the worker claims a batch, runs it, and
//! completes it in one statement; `maintain` runs on every replica):
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use chime_core::{EngineConfig, EnqueueRequest, Payload, QueueConfig};
//! use chime_native::pg::{PgConfig, PgQueues};
//!
//! let config = PgConfig::new("postgresql://chime@127.0.0.1/app");
//! let queues = PgQueues::connect(&config, EngineConfig::default()).await?;
//! queues.declare(&QueueConfig::new("mail")).await?;
//! let job = EnqueueRequest::new("mail", Payload::from_json(r#"{"to":"a@b.c"}"#)?);
//! queues.enqueue(&job).await?;
//!
//! loop {
//!     let batch = queues.claim("mail", "worker-1", 32, None).await?;
//!     if batch.is_empty() {
//!         queues.maintain(1_000).await?;
//!         // LISTEN on queues.channel() to wake up sooner than a poll.
//!         tokio::time::sleep(std::time::Duration::from_millis(500)).await;
//!         continue;
//!     }
//!     let mut done = Vec::new();
//!     for job in &batch {
//!         // ... send the mail for job.payload ...
//!         done.push((job.job, job.token));
//!     }
//!     for outcome in queues.complete_many(&done).await? {
//!         outcome?; // lease_lost: the lease ran out and the job was rescued
//!     }
//! }
//! # }
//! ```

mod claim;
mod cycle;
mod dead;
mod declare;
mod enqueue;
mod maintain;
mod port;
mod search;
mod settle;
pub(crate) mod sql;
mod wake;

pub use cycle::Cycle;
pub(crate) use declare::QueueRows;
pub(crate) use enqueue::JobRows;

use super::connection::{PgConfig, PgError, check_schema, connect};
use super::migrate::migrate;
use super::notify::PgListener;
use chime_core::{
    EngineConfig, Error as CoreError, FireId, Headers, Input, JobId, JobInfo, JobState, Payload,
    QueueConfig, Timestamp, validate_input,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row, Statement};

/// Why a queue operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// Refused, with the same error (and stable code) the engine gives:
    /// invalid input, unknown queue or job, `lease_lost`.
    #[error(transparent)]
    Refused(#[from] CoreError),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] PgError),
}

/// The job queues of one schema.
pub struct PgQueues {
    client: Arc<Client>,
    schema: String,
    channel: String,
    /// Limits (for input checks and bounds) and the seed given to new
    /// queues.
    engine: EngineConfig,
    /// Names of queues known to exist (see [`PgQueues::ensure_queue`]).
    queues: Mutex<BTreeSet<String>>,
    /// Per queue: the wake-ups in flight and owed (`wake.rs`).
    wakes: wake::Wakes,
    /// Prepared statements by call site: each is parsed and planned once
    /// per connection instead of on every call (which also saves a round
    /// trip per call).
    statements: Mutex<BTreeMap<&'static str, Statement>>,
    /// See [`PgQueues::with_wake_every`].
    wake_every: Duration,
    /// The replica's notification listener, for
    /// [`availability`](PgQueues::availability).
    listener: Option<Arc<PgListener>>,
}

impl std::fmt::Debug for PgQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgQueues")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Where a statement runs.
#[derive(Clone, Copy)]
enum On<'a> {
    /// The handle's own connection, prepared once ([`PgQueues::stmt`]).
    Own,
    /// A caller's connection, in its transaction: unprepared, with typed
    /// parameters (parsed and run in one round trip).
    Caller(&'a Client),
}

/// Statement parameters with their types (the types matter only where
/// a statement is sent unprepared).
type Params<'a> = [(&'a (dyn ToSql + Sync), Type)];

fn ts(ms: i64) -> Result<Timestamp, QueueError> {
    Timestamp::from_millis(ms).map_err(|e| {
        QueueError::Refused(CoreError::InvalidInput {
            field: "runAt",
            message: e.to_string(),
        })
    })
}

fn db(context: &'static str) -> impl FnOnce(tokio_postgres::Error) -> QueueError {
    move |e| QueueError::Db(PgError::db(context)(e))
}

/// A stored job state: core's name for it.
fn stored_state(name: &str) -> Result<JobState, QueueError> {
    JobState::from_name(name).ok_or_else(|| PgError::Stored(format!("job state {name:?}")).into())
}

/// A stored queue config, read back with core's serde defaults.
fn stored_config(queue: &str, json: &str) -> Result<QueueConfig, QueueError> {
    serde_json::from_str(json)
        .map_err(|e| PgError::Stored(format!("queue {queue:?}: stored config: {e}")).into())
}

impl PgQueues {
    /// Connects (one connection, pipelined), migrates the schema, and uses
    /// `engine`'s limits for input checks and bounds and its seed for new
    /// queues.
    pub async fn connect(config: &PgConfig, engine: EngineConfig) -> Result<PgQueues, PgError> {
        check_schema(&config.schema)?;
        let mut client = connect(&config.url).await?;
        migrate(&mut client, &config.schema).await?;
        Ok(PgQueues {
            client: Arc::new(client),
            schema: format!("\"{}\"", config.schema),
            channel: super::connection::wake_channel(&config.schema),
            engine,
            queues: Mutex::new(BTreeSet::new()),
            wakes: wake::Wakes::default(),
            statements: Mutex::new(BTreeMap::new()),
            wake_every: Duration::ZERO,
            listener: None,
        })
    }

    /// Sends at most one wake-up per queue per `every` from this handle
    /// (default: no interval, only one in flight at a time; see
    /// `wake.rs`): longer saves notifications when producers are many,
    /// and makes later jobs of a burst wait up to `every` for theirs (a
    /// delayed job, and the first of a burst, are always announced by
    /// their own commit).
    #[must_use]
    pub fn with_wake_every(mut self, every: Duration) -> PgQueues {
        self.wake_every = every;
        self
    }

    /// Uses the replica's notification `listener` for
    /// [`availability`](Self::availability) (the HTTP long-poll's wait).
    #[must_use]
    pub fn with_listener(mut self, listener: Arc<PgListener>) -> PgQueues {
        self.listener = Some(listener);
        self
    }

    /// A receiver that changes whenever `queue` gets claimable work after
    /// this call — an enqueue, a retry or a delay come due, a redrive, a
    /// rescued lease, committed by any replica — or `None` without a
    /// listener ([`with_listener`](Self::with_listener)).
    pub fn availability(&self, queue: &str) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.listener.as_ref().map(|l| l.availability(queue))
    }

    /// The `LISTEN` channel of this schema's wake-ups; each notification's
    /// payload is a queue name.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// Whether the connection has closed (the server restarted or went
    /// away): every call fails from then on, and a new `PgQueues` is needed.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The prepared statement of call site `key` (`sql` builds its text the
    /// first time).
    async fn stmt(
        &self,
        key: &'static str,
        sql: impl FnOnce() -> String,
    ) -> Result<Statement, QueueError> {
        if let Some(st) = self.statements.lock().expect("statement cache").get(key) {
            return Ok(st.clone());
        }
        let st = self
            .client
            .prepare(&sql())
            .await
            .map_err(db("preparing a statement"))?;
        self.statements
            .lock()
            .expect("statement cache")
            .insert(key, st.clone());
        Ok(st)
    }

    /// Checks an input as the engine would (the clock is only used by
    /// inputs these queues do not take).
    fn validate(&self, input: &Input) -> Result<(), QueueError> {
        validate_input(input, &self.engine, Timestamp::MIN)?;
        Ok(())
    }

    /// Runs the statement of call site `key` (its text from `sql`) on `on`;
    /// its rows.
    async fn rows(
        &self,
        on: On<'_>,
        key: &'static str,
        sql: impl FnOnce() -> String,
        params: &Params<'_>,
        context: &'static str,
    ) -> Result<Vec<Row>, QueueError> {
        match on {
            On::Own => {
                let st = self.stmt(key, sql).await?;
                let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|&(v, _)| v).collect();
                self.client.query(&st, &values).await
            }
            On::Caller(client) => client.query_typed(&sql(), params).await,
        }
        .map_err(db(context))
    }

    /// Runs the statement of call site `key` on the handle's connection;
    /// how many rows it changed.
    async fn exec(
        &self,
        key: &'static str,
        sql: impl FnOnce() -> String,
        params: &[&(dyn ToSql + Sync)],
        context: &'static str,
    ) -> Result<u64, QueueError> {
        let st = self.stmt(key, sql).await?;
        self.client.execute(&st, params).await.map_err(db(context))
    }

    /// Runs the statement of call site `key` on the handle's connection;
    /// its row, if any.
    async fn opt(
        &self,
        key: &'static str,
        sql: impl FnOnce() -> String,
        params: &[&(dyn ToSql + Sync)],
        context: &'static str,
    ) -> Result<Option<Row>, QueueError> {
        let st = self.stmt(key, sql).await?;
        self.client
            .query_opt(&st, params)
            .await
            .map_err(db(context))
    }

    /// One job, as the engine's getter shows it (`None`: no such job, or
    /// pruned by retention). A job waiting for its `run_at` is
    /// `scheduled`, as in the engine (the table stores it available: see
    /// `docs/postgres.md`).
    pub async fn job(&self, job: JobId) -> Result<Option<JobInfo>, QueueError> {
        let s = &self.schema;
        let row = self
            .opt(
                "job",
                || {
                    format!(
                        "SELECT {columns}
                         FROM {s}.chime_jobs j JOIN {s}.chime_queues q ON q.name = j.queue
                         WHERE j.id = $1",
                        columns = job_columns(),
                    )
                },
                &[&(job.0 as i64)],
                "reading a job",
            )
            .await?;
        row.map(|row| job_info(&row)).transpose()
    }

    /// The database clock, in ms (what leases and `run_at` count on).
    pub async fn db_now(&self) -> Result<Timestamp, QueueError> {
        let row = self
            .opt(
                "db_now",
                || format!("SELECT {}", sql::ms("now()")),
                &[],
                "reading the clock",
            )
            .await?
            .expect("SELECT returns a row");
        ts(row.get(0))
    }
}

/// What [`job_info`] reads, of `chime_jobs j` joined with its queue `q`.
fn job_columns() -> String {
    format!(
        "j.id, j.queue, j.state, j.payload, j.headers, j.priority, j.key,
         j.fire, j.attempt, j.max_attempts, {run_at}, {lease}, j.worker,
         j.last_error, {finished}, j.run_at > now(), q.config",
        run_at = sql::ms("j.run_at"),
        lease = sql::ms("j.lease_until"),
        finished = sql::ms("j.finished_at"),
    )
}

/// A row of [`job_columns`] as core's [`JobInfo`].
fn job_info(row: &Row) -> Result<JobInfo, QueueError> {
    let stored = |what: &str, e: &dyn std::fmt::Display| PgError::Stored(format!("{what}: {e}"));
    let queue: String = row.get(1);
    let config = stored_config(&queue, row.get(16))?;
    let state = match stored_state(row.get(2))? {
        JobState::Available if row.get::<_, bool>(15) => JobState::Scheduled,
        state => state,
    };
    let opt_ts = |i: usize| row.get::<_, Option<i64>>(i).map(ts).transpose();
    Ok(JobInfo {
        id: JobId(row.get::<_, i64>(0) as u64),
        state,
        payload: Payload::from_json(row.get(3)).map_err(|e| stored("stored payload", &e))?,
        headers: serde_json::from_str::<Headers>(row.get(4))
            .map_err(|e| stored("stored headers", &e))?,
        priority: row.get(5),
        key: row.get(6),
        fire: row
            .get::<_, Option<&str>>(7)
            .and_then(|f| f.parse::<FireId>().ok()),
        attempt: row.get::<_, i32>(8) as u32,
        max_attempts: row
            .get::<_, Option<i32>>(9)
            .map_or(config.max_attempts, |n| n as u32),
        run_at: ts(row.get(10))?,
        lease_deadline: opt_ts(11)?,
        worker: row.get(12),
        last_error: row.get(13),
        finished_at: opt_ts(14)?,
        queue,
    })
}
