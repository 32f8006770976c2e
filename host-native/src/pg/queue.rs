//! Job queues in PostgreSQL: any replica's workers enqueue, claim,
//! heartbeat, complete and fail jobs in shared tables.
//!
//! The rules are chime-core's, not re-derived here: inputs are checked by
//! [`chime_core::validate_input`] (same error codes and fields as the
//! engine), and what a failed attempt leads to — the retry delay with its
//! deterministic jitter, dead letter or drop — comes from
//! [`chime_core::after_failure`]. SQL only stores the result.
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
//! - **Wake-ups**: after an enqueue (or a retry due at once) commits, a
//!   `NOTIFY` on [`PgQueues::channel`] with the queue name as payload,
//!   debounced per queue ([`PgQueues::with_wake_every`]), so idle workers can `LISTEN`
//!   instead of polling (a poll stays the fallback).
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

use super::{PgConfig, PgError, check_schema, connect, migrate::migrate};
use chime_core::{
    AfterFailure, Claimed, EngineConfig, EnqueueRequest, Error as CoreError, FireId, Headers,
    Input, JobId, JobState, LeaseToken, Payload, QueueConfig, Timestamp, after_failure,
    validate_input,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, GenericClient, Row, Statement};

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

/// What [`PgQueues::enqueue`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// The job (the existing one when the key matched).
    pub job: JobId,
    /// `true`: the key matched a job enqueued before; nothing was added.
    pub deduplicated: bool,
}

/// What a failed attempt led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// Pending again, runnable from `run_at` (database clock), which is
    /// `delay_ms` after the failure was recorded.
    Retry {
        /// When it runs again.
        run_at: Timestamp,
        /// `run_at` minus the database clock at the failure.
        delay_ms: i64,
    },
    /// Out of attempts, kept as a dead letter.
    Dead,
    /// Out of attempts on a queue without dead letters.
    Dropped,
}

/// One job's row, as the tests and inspection tools see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgJob {
    /// Its id.
    pub id: JobId,
    /// Its queue.
    pub queue: String,
    /// `pending`, `claimed`, `completed`, `dead`, `dropped` or `cancelled`.
    pub state: String,
    /// Attempts started.
    pub attempt: u32,
    /// When it may run (pending) or last became runnable.
    pub run_at: Timestamp,
    /// The last failure's error text.
    pub last_error: Option<String>,
    /// Its idempotency key.
    pub key: Option<String>,
}

/// The job queues of one schema.
pub struct PgQueues {
    client: Arc<Client>,
    schema: String,
    channel: String,
    /// Limits (for input checks) and the seed given to new queues.
    engine: EngineConfig,
    /// Names of queues known to exist (see [`PgQueues::ensure_queue`]).
    queues: Mutex<BTreeSet<String>>,
    /// Per queue: whether a wake-up is on its way, and when the last one
    /// was sent (see [`PgQueues::wake`]).
    wakes: Arc<Mutex<BTreeMap<String, Wake>>>,
    /// Prepared statements by call site: each is parsed and planned once
    /// per connection instead of on every call (which also saves a round
    /// trip per call).
    statements: Mutex<BTreeMap<&'static str, Statement>>,
    /// See [`PgQueues::with_wake_every`].
    wake_every: Duration,
}

#[derive(Default)]
struct Wake {
    scheduled: bool,
    last: Option<Instant>,
}

/// By default, at most one `NOTIFY` per queue per this interval from one
/// handle ([`PgQueues::with_wake_every`]).
///
/// Why not a `NOTIFY` in every enqueue's transaction: PostgreSQL serializes
/// the commits of notifying transactions (a database-wide lock held
/// through the commit's WAL flush), which turned every enqueue into a
/// serialized fsync — about 1,000 jobs/s on this machine whatever the
/// number of producers. Debounced and sent after the insert has
/// committed, a wake-up still follows every enqueue (the first at once,
/// later ones at the end of the interval), and workers that wake claim
/// until the queue is empty.
const WAKE_EVERY: Duration = Duration::from_millis(10);

impl std::fmt::Debug for PgQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgQueues")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Which claimed jobs a fenced statement may change: those still within
/// their lease (a worker's heartbeat, complete, fail) or those past it (the
/// rescue).
#[derive(Clone, Copy)]
enum Lease {
    Live,
    Expired,
}

impl Lease {
    /// The statement cache key of statement `what` with this condition.
    fn key(self, what: &'static str) -> &'static str {
        match (what, self) {
            ("finish", Lease::Live) => "finish_live",
            ("finish", Lease::Expired) => "finish_expired",
            (_, Lease::Live) => "retry_live",
            (_, Lease::Expired) => "retry_expired",
        }
    }

    fn sql(self) -> &'static str {
        match self {
            Lease::Live => "lease_until > now()",
            Lease::Expired => "lease_until <= now()",
        }
    }
}

/// A claimed job's failed attempt, read with its queue's config and seed
/// as they are now (not as cached: another replica may have redeclared the
/// queue), so core decides with what the table says.
struct Attempt {
    job: JobId,
    token: LeaseToken,
    queue: String,
    attempt: u32,
    max_attempts: Option<u32>,
    config: QueueConfig,
    seed: u64,
}

impl Attempt {
    /// From a row of `id, token, queue, attempt, max_attempts, config, seed`.
    fn read(row: &tokio_postgres::Row) -> Result<Attempt, QueueError> {
        let queue: String = row.get(2);
        let config = serde_json::from_str(row.get(5))
            .map_err(|e| PgError::Stored(format!("queue {queue:?}: stored config: {e}")))?;
        Ok(Attempt {
            job: JobId(row.get::<_, i64>(0) as u64),
            token: LeaseToken(row.get::<_, i64>(1) as u64),
            queue,
            attempt: row.get::<_, i32>(3) as u32,
            max_attempts: row.get::<_, Option<i32>>(4).map(|n| n as u32),
            config,
            seed: row.get::<_, i64>(6) as u64,
        })
    }
}

/// The wire name of an ended job's stored state.
fn terminal_name(state: &str) -> &'static str {
    match state {
        "completed" => JobState::Completed.as_str(),
        "dead" => JobState::Dead.as_str(),
        "dropped" => JobState::Dropped.as_str(),
        "cancelled" => JobState::Cancelled.as_str(),
        _ => "unknown",
    }
}

// Instants the queues store (`run_at`, `lease_until`) are whole
// milliseconds, like the engine's timestamps: written as
// `date_trunc('milliseconds', now())` plus whole milliseconds, and read
// back exactly. With Postgres' microseconds, two jobs enqueued within one
// millisecond would be claimed by time where the engine claims them by id.

/// The CTE `k` that starts the dedup window of the keys of the jobs a CTE
/// `j` (columns `id`, `queue`, `key`) has just finished: a key is
/// remembered for the queue's `dedupWindowMs` after its job ends.
fn expire_keys(s: &str) -> String {
    format!(
        "k AS (
             UPDATE {s}.chime_job_keys k
             SET expires_at = now() + q.dedup_window_ms * interval '1 millisecond'
             FROM j, {s}.chime_queues q
             WHERE k.queue = j.queue AND k.key = j.key AND k.job = j.id
               AND q.name = j.queue
             RETURNING 1)"
    )
}

/// Milliseconds since the epoch of a timestamptz expression (floor).
fn ms(expr: &str) -> String {
    format!("floor(extract(epoch from {expr}) * 1000)::bigint")
}

/// A new job's `run_at`: at `$3` (`runAt`, epoch ms) if given, else `$4`
/// (`delayMs`) from now; one in the past means now.
const RUN_AT_SQL: &str = "GREATEST(COALESCE(
                              timestamptz 'epoch' + $3::bigint * interval '1 millisecond',
                              date_trunc('milliseconds', now()) + $4::bigint * interval '1 millisecond'),
                              date_trunc('milliseconds', now()))";

/// A wake-up: `$1` the channel, `$2` the queue.
const NOTIFY_SQL: &str = "SELECT pg_notify($1, $2)";

/// Creates queue `$1` (config `$2`, seed `$3`, dedup window `$4`) unless
/// it exists.
fn create_queue_sql(s: &str) -> String {
    format!(
        "INSERT INTO {s}.chime_queues (name, config, seed, dedup_window_ms)
         VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING"
    )
}

/// Inserts a job without a key (parameters: [`JobParams`]); its id.
fn enqueue_sql(s: &str) -> String {
    format!(
        "WITH j AS (
             INSERT INTO {s}.chime_jobs
                 (queue, state, priority, run_at, max_attempts, payload, headers)
             VALUES ($1, 'pending', $2, {RUN_AT_SQL}, $5, $6, $7)
             RETURNING id)
         SELECT j.id FROM j"
    )
}

/// Inserts a job with key `$8` unless the key is live (parameters:
/// [`JobParams`]); the new job's id (NULL if none) and the key's job.
fn enqueue_key_sql(s: &str) -> String {
    format!(
        "WITH id AS (
             SELECT nextval(pg_get_serial_sequence('{s}.chime_jobs', 'id')) AS id),
         k AS (
             INSERT INTO {s}.chime_job_keys AS k (queue, key, job, expires_at)
             SELECT $1, $8, id, NULL FROM id
             ON CONFLICT (queue, key) DO UPDATE
                 SET job = EXCLUDED.job, expires_at = NULL
                 WHERE k.expires_at IS NOT NULL AND k.expires_at <= now()
             RETURNING job),
         j AS (
             INSERT INTO {s}.chime_jobs
                 (id, queue, state, priority, run_at, max_attempts, payload, headers, key)
             SELECT k.job, $1, 'pending', $2, {RUN_AT_SQL}, $5, $6, $7, $8 FROM k
             RETURNING id)
         SELECT (SELECT id FROM j),
                (SELECT job FROM {s}.chime_job_keys WHERE queue = $1 AND key = $8)"
    )
}

/// The parameters of [`enqueue_sql`] and [`enqueue_key_sql`] for one
/// request.
struct JobParams<'a> {
    queue: &'a str,
    priority: i32,
    run_at: Option<i64>,
    delay: i64,
    max_attempts: Option<i32>,
    payload: &'a str,
    headers: String,
    key: Option<&'a str>,
}

impl<'a> JobParams<'a> {
    fn new(req: &'a EnqueueRequest) -> JobParams<'a> {
        JobParams {
            queue: &req.queue,
            priority: req.priority,
            run_at: req.run_at.map(Timestamp::as_millis),
            delay: req.delay_ms.unwrap_or(0),
            max_attempts: req.max_attempts.map(|n| n as i32),
            payload: req.payload.as_json(),
            headers: serde_json::to_string(&req.headers).expect("headers serialize"),
            key: req.key.as_deref(),
        }
    }

    /// `$1` to `$7`, and `$8` when there is a key, with their types.
    fn typed(&self) -> Vec<(&(dyn ToSql + Sync), Type)> {
        let mut params: Vec<(&(dyn ToSql + Sync), Type)> = vec![
            (&self.queue, Type::TEXT),
            (&self.priority, Type::INT4),
            (&self.run_at, Type::INT8),
            (&self.delay, Type::INT8),
            (&self.max_attempts, Type::INT4),
            (&self.payload, Type::TEXT),
            (&self.headers, Type::TEXT),
        ];
        if let Some(key) = &self.key {
            params.push((key, Type::TEXT));
        }
        params
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

/// An error text cut to `max` bytes on a character boundary (the engine
/// cuts `Fail` errors the same way).
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl PgQueues {
    /// Connects (one connection, pipelined), migrates the schema, and uses
    /// `engine`'s limits for input checks and its seed for new queues.
    pub async fn connect(config: &PgConfig, engine: EngineConfig) -> Result<PgQueues, PgError> {
        check_schema(&config.schema)?;
        let mut client = connect(&config.url).await?;
        migrate(&mut client, &config.schema).await?;
        Ok(PgQueues {
            client: Arc::new(client),
            schema: format!("\"{}\"", config.schema),
            channel: super::wake_channel(&config.schema),
            engine,
            queues: Mutex::new(BTreeSet::new()),
            wakes: Arc::default(),
            statements: Mutex::new(BTreeMap::new()),
            wake_every: WAKE_EVERY,
        })
    }

    /// Sends at most one wake-up per queue per `every` (default 10 ms):
    /// longer saves notifications when producers are many, shorter wakes
    /// idle workers sooner after the first job of a burst (that one is
    /// always announced at once).
    #[must_use]
    pub fn with_wake_every(mut self, every: Duration) -> PgQueues {
        self.wake_every = every;
        self
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

    /// Sends a wake-up for `queue` after a job became runnable (its insert
    /// or update has committed): at once if none was sent in the last
    /// wake-up interval, else one at the end of that interval for all the
    /// jobs in between. Best effort: a lost notification costs a worker's
    /// poll interval, never a job.
    fn wake(&self, queue: &str) {
        let delay = {
            let mut wakes = self.wakes.lock().expect("wake lock");
            let w = wakes.entry(queue.to_owned()).or_default();
            if w.scheduled {
                return;
            }
            w.scheduled = true;
            w.last.map_or(Duration::ZERO, |l| {
                self.wake_every.saturating_sub(l.elapsed())
            })
        };
        let (client, wakes) = (self.client.clone(), self.wakes.clone());
        let (channel, queue) = (self.channel.clone(), queue.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            // Cleared before sending: a job committed after this point
            // schedules a wake-up of its own.
            if let Some(w) = wakes.lock().expect("wake lock").get_mut(&queue) {
                w.scheduled = false;
                w.last = Some(Instant::now());
            }
            if let Err(e) = client.execute(NOTIFY_SQL, &[&channel, &queue]).await {
                tracing::debug!(error = %e, queue, "wake-up not sent");
            }
        });
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

    /// Creates or updates a queue (its mode is ignored: a Postgres queue is
    /// always worked by claimers).
    pub async fn declare(&self, config: &QueueConfig) -> Result<(), QueueError> {
        self.validate(&Input::DeclareQueue(config.clone()))?;
        let json = serde_json::to_string(config).expect("QueueConfig serializes");
        let seed = self.engine.seed as i64;
        let s = &self.schema;
        self.client
            .execute(
                &self
                    .stmt("declare", || {
                        format!(
                            "INSERT INTO {s}.chime_queues (name, config, seed, dedup_window_ms)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (name) DO UPDATE
                         SET config = EXCLUDED.config, dedup_window_ms = EXCLUDED.dedup_window_ms"
                        )
                    })
                    .await?,
                &[&config.name, &json, &seed, &config.dedup_window_ms],
            )
            .await
            .map_err(db("declaring a queue"))?;
        self.queues
            .lock()
            .expect("queue names lock")
            .insert(config.name.clone());
        Ok(())
    }

    /// Makes sure `name` exists, creating it with every default if not —
    /// as the engine does on the first `Enqueue` that names a queue.
    /// Queues are never removed, so a name seen once is remembered;
    /// everything else about a queue is read from its row by the
    /// statements that need it (another replica may redeclare it).
    async fn ensure_queue(&self, name: &str) -> Result<(), QueueError> {
        if self.queues.lock().expect("queue names lock").contains(name) {
            return Ok(());
        }
        self.create_queue(On::Own, name).await?;
        self.queues
            .lock()
            .expect("queue names lock")
            .insert(name.to_owned());
        Ok(())
    }

    /// Whether queue `name` exists for every connection: remembered, or
    /// committed — read on the handle's own connection, which never sees
    /// the rows of a transaction that has not committed. Remembered once
    /// found.
    async fn queue_committed(&self, name: &str) -> Result<bool, QueueError> {
        if self.queues.lock().expect("queue names lock").contains(name) {
            return Ok(true);
        }
        let s = &self.schema;
        let found = self
            .client
            .query_opt(
                &self
                    .stmt("queue_exists", || {
                        format!("SELECT 1 FROM {s}.chime_queues WHERE name = $1")
                    })
                    .await?,
                &[&name],
            )
            .await
            .map_err(db("reading a queue"))?
            .is_some();
        if found {
            self.queues
                .lock()
                .expect("queue names lock")
                .insert(name.to_owned());
        }
        Ok(found)
    }

    /// Creates queue `name` with every default on `on`, unless it exists.
    async fn create_queue(&self, on: On<'_>, name: &str) -> Result<(), QueueError> {
        let config = QueueConfig::new(name);
        let json = serde_json::to_string(&config).expect("QueueConfig serializes");
        let seed = self.engine.seed as i64;
        let s = &self.schema;
        self.exec(
            on,
            "create_queue",
            || create_queue_sql(s),
            &[
                (&name, Type::TEXT),
                (&json, Type::TEXT),
                (&seed, Type::INT8),
                (&config.dedup_window_ms, Type::INT8),
            ],
            "creating a queue",
        )
        .await
    }

    /// Runs the statement of call site `key` (its text from `sql`) on `on`.
    async fn exec(
        &self,
        on: On<'_>,
        key: &'static str,
        sql: impl FnOnce() -> String,
        params: &[(&(dyn ToSql + Sync), Type)],
        context: &'static str,
    ) -> Result<(), QueueError> {
        match on {
            On::Own => {
                let st = self.stmt(key, sql).await?;
                let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|&(v, _)| v).collect();
                self.client.execute(&st, &values).await
            }
            On::Caller(client) => client.execute_typed(&sql(), params).await,
        }
        .map_err(db(context))?;
        Ok(())
    }

    /// Runs the statement of call site `key` (its text from `sql`) on `on`;
    /// its one row.
    async fn one(
        &self,
        on: On<'_>,
        key: &'static str,
        sql: impl FnOnce() -> String,
        params: &[(&(dyn ToSql + Sync), Type)],
        context: &'static str,
    ) -> Result<Row, QueueError> {
        match on {
            On::Own => {
                let st = self.stmt(key, sql).await?;
                let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|&(v, _)| v).collect();
                self.client.query_one(&st, &values).await
            }
            On::Caller(client) => client.query_typed_one(&sql(), params).await,
        }
        .map_err(db(context))
    }

    /// Adds a job (or finds the one its key names), creating the queue
    /// with every default if it does not exist. `runAt` and `delayMs`
    /// count on the database clock; one in the past means now.
    pub async fn enqueue(&self, req: &EnqueueRequest) -> Result<Enqueued, QueueError> {
        self.validate(&Input::Enqueue(req.clone()))?;
        self.ensure_queue(&req.queue).await?;
        let done = self.insert_job(On::Own, req).await?;
        if !done.deduplicated {
            self.wake(&req.queue);
        }
        Ok(done)
    }

    /// Enqueues inside the caller's transaction `tx` (the outbox pattern):
    /// the job exists if and only if `tx` commits, together with whatever
    /// else it wrote. Same checks, errors, idempotency keys and stored job
    /// as [`enqueue`](Self::enqueue); `tx` must be a connection to this
    /// handle's database (the schema is migrated by
    /// [`connect`](Self::connect)).
    ///
    /// - **Rollback leaves nothing**: not the job, not its key (free for
    ///   the next enqueue), not the queue when this call created it — an
    ///   undeclared queue is created inside `tx` too, and the handle
    ///   remembers a queue only once it sees it committed.
    /// - **Wake-up at commit**: a `NOTIFY` on [`channel`](Self::channel)
    ///   is sent inside `tx`, so PostgreSQL delivers it when `tx` commits
    ///   and drops it when it rolls back; many jobs of one queue in one
    ///   transaction make one notification. It costs what notifying
    ///   transactions cost: PostgreSQL serializes their commits (see
    ///   `docs/postgres.md`).
    /// - **Time**: `now()` in a transaction is its start, so `runAt`,
    ///   `delayMs` and the claim order count from `tx`'s start; a job due
    ///   at once is claimable as soon as `tx` commits.
    /// - **Waits**: a key (or a new queue) taken in `tx` is held until
    ///   `tx` ends; another enqueue of that key waits, then finds the job
    ///   (commit) or takes the key (rollback). Keep such transactions
    ///   short, and do not call [`enqueue`](Self::enqueue) for that key
    ///   from inside `tx`: it would wait for `tx`, which waits for it.
    /// - **Errors**: a refusal ([`QueueError::Refused`], bad input) comes
    ///   before any statement and leaves `tx` usable; a database error
    ///   aborts `tx` (roll it back), as any failed statement does.
    ///
    /// The statements are this handle's own, sent unprepared with typed
    /// parameters (one round trip each: a statement prepared on the
    /// handle's connection does not exist on `tx`'s). Pass a
    /// `tokio_postgres::Transaction` (a savepoint works too); a plain
    /// `Client` commits at once, like [`enqueue`](Self::enqueue).
    ///
    /// A producer writing an order and the job that mails its receipt,
    /// both or neither:
    ///
    /// ```no_run
    /// # async fn demo(
    /// #     queues: &chime_native::pg::PgQueues,
    /// # ) -> Result<(), Box<dyn std::error::Error>> {
    /// use chime_core::{EnqueueRequest, Payload};
    ///
    /// let mut db = chime_native::pg::connect("postgresql://app@127.0.0.1/app").await?;
    /// let tx = db.transaction().await?;
    /// let order: i64 = tx
    ///     .query_one(
    ///         "INSERT INTO orders (customer, total_cents) VALUES ($1, $2) RETURNING id",
    ///         &[&"ada", &4_200_i64],
    ///     )
    ///     .await?
    ///     .get(0);
    /// let mut job = EnqueueRequest::new(
    ///     "receipts",
    ///     Payload::from_json(&format!(r#"{{"order":{order}}}"#))?,
    /// );
    /// job.key = Some(format!("receipt-{order}"));
    /// let enqueued = queues.enqueue_in(&tx, &job).await?;
    /// tx.commit().await?; // the order and its job, or neither
    /// println!("order {order}: job {}", enqueued.job.0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn enqueue_in(
        &self,
        tx: &impl GenericClient,
        req: &EnqueueRequest,
    ) -> Result<Enqueued, QueueError> {
        self.validate(&Input::Enqueue(req.clone()))?;
        let on = On::Caller(tx.client());
        if !self.queue_committed(&req.queue).await? {
            // In `tx`: a rollback takes the queue away with the job. Not
            // remembered; a later call finds it committed (or creates it
            // again).
            self.create_queue(on, &req.queue).await?;
        }
        let done = self.insert_job(on, req).await?;
        if !done.deduplicated {
            self.exec(
                on,
                "notify",
                || NOTIFY_SQL.to_owned(),
                &[(&self.channel, Type::TEXT), (&req.queue, Type::TEXT)],
                "notifying in a transaction",
            )
            .await?;
        }
        Ok(done)
    }

    /// Inserts the job of `req` (checked; its queue exists on `on`), or
    /// finds the one its key names. Sends no wake-up.
    async fn insert_job(&self, on: On<'_>, req: &EnqueueRequest) -> Result<Enqueued, QueueError> {
        let s = &self.schema;
        let job = JobParams::new(req);
        let params = job.typed();
        let Some(key) = &req.key else {
            let row = self
                .one(on, "enqueue", || enqueue_sql(s), &params, "enqueueing")
                .await?;
            return Ok(Enqueued {
                job: JobId(row.get::<_, i64>(0) as u64),
                deduplicated: false,
            });
        };
        // The key row decides: inserted (or taken over from an expired
        // key) means a new job with the id it names; a conflict with a live
        // key leaves both untouched and the existing job is returned. A
        // concurrent enqueue of the same key that committed after this
        // statement's snapshot shows as neither: ask again.
        for _ in 0..3 {
            let row = self
                .one(
                    on,
                    "enqueue_key",
                    || enqueue_key_sql(s),
                    &params,
                    "enqueueing with a key",
                )
                .await?;
            let new: Option<i64> = row.get(0);
            let existing: Option<i64> = row.get(1);
            match (new, existing) {
                (Some(id), _) => {
                    return Ok(Enqueued {
                        job: JobId(id as u64),
                        deduplicated: false,
                    });
                }
                (None, Some(id)) => {
                    return Ok(Enqueued {
                        job: JobId(id as u64),
                        deduplicated: true,
                    });
                }
                (None, None) => continue,
            }
        }
        Err(PgError::Contended(format!("enqueue with key {key:?}")).into())
    }

    /// Adds many jobs in one statement (one commit) — a bulk producer's
    /// path. Every request is checked first; one bad request refuses the
    /// whole batch and adds nothing. Requests with a key go through
    /// [`enqueue`](Self::enqueue) one by one (each key is its own
    /// decision). Results are in request order.
    pub async fn enqueue_many(&self, reqs: &[EnqueueRequest]) -> Result<Vec<Enqueued>, QueueError> {
        for req in reqs {
            self.validate(&Input::Enqueue(req.clone()))?;
        }
        let mut out: Vec<Option<Enqueued>> = vec![None; reqs.len()];
        let plain: Vec<usize> = (0..reqs.len()).filter(|&i| reqs[i].key.is_none()).collect();
        if !plain.is_empty() {
            let queues: BTreeSet<&str> = plain.iter().map(|&i| reqs[i].queue.as_str()).collect();
            for q in &queues {
                self.ensure_queue(q).await?;
            }
            let col = |f: &dyn Fn(&EnqueueRequest) -> String| -> Vec<String> {
                plain.iter().map(|&i| f(&reqs[i])).collect()
            };
            let queue = col(&|r| r.queue.clone());
            let payload = col(&|r| r.payload.as_json().to_owned());
            let headers = col(&|r| serde_json::to_string(&r.headers).expect("headers serialize"));
            let priority: Vec<i32> = plain.iter().map(|&i| reqs[i].priority).collect();
            let run_at: Vec<Option<i64>> = plain
                .iter()
                .map(|&i| reqs[i].run_at.map(Timestamp::as_millis))
                .collect();
            let delay: Vec<i64> = plain
                .iter()
                .map(|&i| reqs[i].delay_ms.unwrap_or(0))
                .collect();
            let max_attempts: Vec<Option<i32>> = plain
                .iter()
                .map(|&i| reqs[i].max_attempts.map(|n| n as i32))
                .collect();
            let s = &self.schema;
            let rows = self
                .client
                .query(
                    &self
                        .stmt("enqueue_many", || {
                            format!(
                                "INSERT INTO {s}.chime_jobs
                                     (queue, state, priority, run_at, max_attempts, payload, headers)
                                 SELECT t.queue, 'pending', t.priority,
                                        GREATEST(COALESCE(
                                            timestamptz 'epoch' + t.run_at * interval '1 millisecond',
                                            date_trunc('milliseconds', now()) + t.delay * interval '1 millisecond'),
                                            date_trunc('milliseconds', now())),
                                        t.max_attempts, t.payload, t.headers
                                 FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[],
                                             $5::int[], $6::text[], $7::text[])
                                      WITH ORDINALITY
                                      AS t(queue, priority, run_at, delay, max_attempts, payload,
                                           headers, ord)
                                 ORDER BY t.ord
                                 RETURNING id"
                            )
                        })
                        .await?,
                    &[&queue, &priority, &run_at, &delay, &max_attempts, &payload, &headers],
                )
                .await
                .map_err(db("enqueueing a batch"))?;
            // Ids come from one sequence in insertion order (the rows are
            // inserted in request order), so ascending ids are in request
            // order whatever order RETURNING lists them in.
            let mut ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
            ids.sort_unstable();
            for (&i, id) in plain.iter().zip(ids) {
                out[i] = Some(Enqueued {
                    job: JobId(id as u64),
                    deduplicated: false,
                });
            }
            for q in queues {
                self.wake(q);
            }
        }
        for (i, req) in reqs.iter().enumerate() {
            if req.key.is_some() {
                out[i] = Some(self.enqueue(req).await?);
            }
        }
        Ok(out
            .into_iter()
            .map(|e| e.expect("every request handled"))
            .collect())
    }

    /// Claims up to `max` runnable jobs of `queue` for `worker`, in claim
    /// order, each with a fresh token and a lease of `lease_ms` (default:
    /// the queue's) on the database clock.
    pub async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, QueueError> {
        self.validate(&Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms,
        })?;
        // A queue that does not exist has no jobs (and is not created:
        // workers often start before producers). The lease default is read
        // in the statement (the table's config, whoever declared it last).
        let s = &self.schema;
        let rows = self
            .client
            .query(
                &self
                    .stmt("claim", || {
                        format!(
                            "WITH c AS (
                         SELECT id FROM {s}.chime_jobs
                         WHERE queue = $1 AND state = 'pending' AND run_at <= now()
                         ORDER BY priority DESC, run_at, id
                         LIMIT $3
                         FOR UPDATE SKIP LOCKED)
                     UPDATE {s}.chime_jobs j
                     SET state = 'claimed', attempt = j.attempt + 1, worker = $2,
                         token = nextval('{s}.chime_claim_token'),
                         lease_until = date_trunc('milliseconds', now()) + COALESCE($4::bigint,
                             (SELECT (q.config::json ->> 'leaseMs')::bigint
                              FROM {s}.chime_queues q WHERE q.name = $1))
                             * interval '1 millisecond'
                     FROM c WHERE j.id = c.id
                     RETURNING j.id, j.token, {lease_until}, j.attempt, j.payload, j.headers,
                               j.fire, j.priority, {run_at}",
                            lease_until = ms("j.lease_until"),
                            run_at = ms("j.run_at"),
                        )
                    })
                    .await?,
                &[&queue, &worker, &i64::from(max), &lease_ms],
            )
            .await
            .map_err(db("claiming"))?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let payload: &str = row.get(4);
            let headers: &str = row.get(5);
            let fire: Option<&str> = row.get(6);
            let order = (
                std::cmp::Reverse(row.get::<_, i32>(7)),
                row.get::<_, i64>(8),
                row.get::<_, i64>(0),
            );
            claimed.push((
                order,
                Claimed {
                    job: JobId(row.get::<_, i64>(0) as u64),
                    token: LeaseToken(row.get::<_, i64>(1) as u64),
                    deadline: ts(row.get(2))?,
                    attempt: row.get::<_, i32>(3) as u32,
                    payload: Payload::from_json(payload)
                        .map_err(|e| PgError::Stored(format!("stored payload: {e}")))?,
                    headers: serde_json::from_str::<Headers>(headers)
                        .map_err(|e| PgError::Stored(format!("stored headers: {e}")))?,
                    fire: fire.and_then(|f| f.parse::<FireId>().ok()),
                },
            ));
        }
        // RETURNING has no order: put them back in claim order.
        claimed.sort_by_key(|c| c.0);
        Ok(claimed.into_iter().map(|(_, c)| c).collect())
    }

    /// Why a fenced statement changed no row: the job does not exist
    /// (`unknown_job`) or is not held with that token (`lease_lost`).
    async fn refusal(&self, job: JobId) -> QueueError {
        match self.job_exists(job).await {
            Ok(true) => CoreError::LeaseLost { job }.into(),
            Ok(false) => CoreError::UnknownJob(job).into(),
            Err(e) => e,
        }
    }

    async fn job_exists(&self, job: JobId) -> Result<bool, QueueError> {
        let s = &self.schema;
        let row = self
            .client
            .query_opt(
                &self
                    .stmt("job_exists", || {
                        format!("SELECT 1 FROM {s}.chime_jobs WHERE id = $1")
                    })
                    .await?,
                &[&(job.0 as i64)],
            )
            .await
            .map_err(db("checking a job"))?;
        Ok(row.is_some())
    }

    /// Extends a held lease to `lease_ms` (default: the queue's) from now;
    /// returns the new deadline.
    pub async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> Result<Timestamp, QueueError> {
        self.validate(&Input::Heartbeat {
            job,
            token,
            lease_ms,
        })?;
        let s = &self.schema;
        let row = self
            .client
            .query_opt(
                &self
                    .stmt("heartbeat", || {
                        format!(
                            "UPDATE {s}.chime_jobs j
                     SET lease_until = date_trunc('milliseconds', now()) + COALESCE($3::bigint,
                         (SELECT (q.config::json ->> 'leaseMs')::bigint
                          FROM {s}.chime_queues q WHERE q.name = j.queue))
                         * interval '1 millisecond'
                     WHERE id = $1 AND token = $2 AND state = 'claimed' AND lease_until > now()
                     RETURNING {}",
                            ms("lease_until")
                        )
                    })
                    .await?,
                &[&(job.0 as i64), &(token.0 as i64), &lease_ms],
            )
            .await
            .map_err(db("heartbeat"))?;
        match row {
            Some(row) => ts(row.get(0)),
            None => Err(self.refusal(job).await),
        }
    }

    /// Marks a held job completed; its key stays remembered for the
    /// queue's dedup window.
    pub async fn complete(&self, job: JobId, token: LeaseToken) -> Result<(), QueueError> {
        let done = self
            .finish(job, token, "completed", None, Lease::Live)
            .await?;
        if done {
            Ok(())
        } else {
            Err(self.refusal(job).await)
        }
    }

    /// Completes many held jobs in one statement (one commit), as a worker
    /// pool does with the jobs it finished since its last call; each result
    /// is [`complete`](Self::complete)'s for that job, in input order.
    pub async fn complete_many(
        &self,
        jobs: &[(JobId, LeaseToken)],
    ) -> Result<Vec<Result<(), QueueError>>, QueueError> {
        let ids: Vec<i64> = jobs.iter().map(|(j, _)| j.0 as i64).collect();
        let tokens: Vec<i64> = jobs.iter().map(|(_, t)| t.0 as i64).collect();
        let s = &self.schema;
        let rows = self
            .client
            .query(
                &self.stmt("complete_many", || format!(
                    "WITH done AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS d(id, token)),
                     j AS (
                         UPDATE {s}.chime_jobs c
                         SET state = 'completed', finished_at = now(), token = NULL,
                             worker = NULL, lease_until = NULL
                         FROM done
                         WHERE c.id = done.id AND c.token = done.token AND c.state = 'claimed'
                           AND c.lease_until > now()
                         RETURNING c.id, done.token, c.queue, c.key),
                     {k}
                     SELECT j.id, j.token, (SELECT count(*) FROM k) FROM j", k = expire_keys(s)
                )).await?,
                &[&ids, &tokens],
            )
            .await
            .map_err(db("completing jobs"))?;
        // By job and token: the same job may come twice, once with a stale
        // token.
        let completed: std::collections::BTreeSet<(i64, i64)> =
            rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        let mut out = Vec::with_capacity(jobs.len());
        for &(job, token) in jobs {
            if completed.contains(&(job.0 as i64, token.0 as i64)) {
                out.push(Ok(()));
            } else {
                out.push(Err(self.refusal(job).await));
            }
        }
        Ok(out)
    }

    /// Cancels a job that has not ended: a pending one never runs, a
    /// claimed one's token is void from now on (its worker's heartbeat or
    /// completion is `lease_lost`). An ended job is `invalid_state`, as in
    /// the engine.
    pub async fn cancel(&self, job: JobId) -> Result<(), QueueError> {
        let s = &self.schema;
        let row = self
            .client
            .query_one(
                &self
                    .stmt("cancel", || {
                        format!(
                            "WITH prev AS (
                                 SELECT id, state FROM {s}.chime_jobs WHERE id = $1 FOR UPDATE),
                             j AS (
                                 UPDATE {s}.chime_jobs c
                                 SET state = 'cancelled', finished_at = now(), token = NULL,
                                     worker = NULL, lease_until = NULL
                                 FROM prev
                                 WHERE c.id = prev.id AND prev.state IN ('pending', 'claimed')
                                 RETURNING c.id, c.queue, c.key),
                             {k}
                             SELECT (SELECT state FROM prev), (SELECT count(*) FROM j),
                                    (SELECT count(*) FROM k)",
                            k = expire_keys(s)
                        )
                    })
                    .await?,
                &[&(job.0 as i64)],
            )
            .await
            .map_err(db("cancelling a job"))?;
        let state: Option<String> = row.get(0);
        match (state.as_deref(), row.get::<_, i64>(1)) {
            (None, _) => Err(CoreError::UnknownJob(job).into()),
            (Some(_), 1) => Ok(()),
            (Some(state), _) => Err(CoreError::InvalidState {
                job,
                state: terminal_name(state),
                op: "cancel",
            }
            .into()),
        }
    }

    /// Refuses a queue that does not exist (`unknown_queue`).
    async fn existing_queue(&self, name: &str) -> Result<(), QueueError> {
        if self.queue_committed(name).await? {
            Ok(())
        } else {
            Err(CoreError::UnknownQueue(name.to_owned()).into())
        }
    }

    /// Makes dead letters of `queue` pending again, now, with their attempt
    /// count reset: one (`job`) or all. Returns how many, and how many of
    /// them lost their idempotency key because another live job holds it
    /// now (it was reused after the dedup window): two live jobs never
    /// share a key. As in the engine, a single job must be a dead letter of
    /// that queue (`unknown_job`, `invalid_state`).
    pub async fn redrive(&self, queue: &str, job: Option<JobId>) -> Result<(u64, u64), QueueError> {
        self.existing_queue(queue).await?;
        if let Some(id) = job {
            let s = &self.schema;
            let row = self
                .client
                .query_opt(
                    &self
                        .stmt("job_state", || {
                            format!("SELECT state FROM {s}.chime_jobs WHERE id = $1 AND queue = $2")
                        })
                        .await?,
                    &[&(id.0 as i64), &queue],
                )
                .await
                .map_err(db("reading a job"))?;
            match row.map(|r| r.get::<_, String>(0)).as_deref() {
                None => return Err(CoreError::UnknownJob(id).into()),
                Some("dead") => {}
                Some(state) => {
                    return Err(CoreError::InvalidState {
                        job: id,
                        state: match state {
                            "pending" => JobState::Available.as_str(),
                            "claimed" => JobState::Claimed.as_str(),
                            other => terminal_name(other),
                        },
                        op: "redrive",
                    }
                    .into());
                }
            }
        }
        let s = &self.schema;
        let row = self
            .client
            .query_one(
                &self
                    .stmt("redrive", || {
                        format!(
                            "WITH d AS (
                                 SELECT id, queue, key FROM {s}.chime_jobs
                                 WHERE queue = $1 AND state = 'dead'
                                   AND ($2::bigint IS NULL OR id = $2)
                                 FOR UPDATE),
                             taken AS (
                                 SELECT d.id FROM d JOIN {s}.chime_job_keys k
                                     ON k.queue = d.queue AND k.key = d.key
                                 WHERE k.job <> d.id AND k.expires_at IS NULL),
                             u AS (
                                 UPDATE {s}.chime_jobs j
                                 SET state = 'pending', attempt = 0,
                                     run_at = date_trunc('milliseconds', now()),
                                     finished_at = NULL,
                                     key = CASE WHEN j.id IN (SELECT id FROM taken)
                                                THEN NULL ELSE j.key END
                                 FROM d WHERE j.id = d.id
                                 RETURNING j.id, j.queue, j.key),
                             kt AS (
                                 INSERT INTO {s}.chime_job_keys (queue, key, job, expires_at)
                                 SELECT queue, key, id, NULL FROM u WHERE key IS NOT NULL
                                 ON CONFLICT (queue, key) DO UPDATE
                                     SET job = EXCLUDED.job, expires_at = NULL
                                 RETURNING 1)
                             SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM taken),
                                    (SELECT count(*) FROM kt)"
                        )
                    })
                    .await?,
                &[&queue, &job.map(|j| j.0 as i64)],
            )
            .await
            .map_err(db("redriving"))?;
        let (count, dropped): (i64, i64) = (row.get(0), row.get(1));
        if count > 0 {
            self.wake(queue);
        }
        Ok((count as u64, dropped as u64))
    }

    /// Deletes the dead letters of `queue` that died before `before` (or
    /// all); returns how many. Their keys stay remembered until they expire.
    pub async fn purge_dead(
        &self,
        queue: &str,
        before: Option<Timestamp>,
    ) -> Result<u64, QueueError> {
        self.existing_queue(queue).await?;
        let s = &self.schema;
        let n = self
            .client
            .execute(
                &self
                    .stmt("purge_dead", || {
                        format!(
                            "DELETE FROM {s}.chime_jobs
                             WHERE queue = $1 AND state = 'dead'
                               AND ($2::bigint IS NULL
                                    OR finished_at < timestamptz 'epoch' + $2::bigint * interval '1 millisecond')"
                        )
                    })
                    .await?,
                &[&queue, &before.map(Timestamp::as_millis)],
            )
            .await
            .map_err(db("purging dead letters"))?;
        Ok(n)
    }

    /// Ends a job claimed with `token` in `state`; `false` when the fence
    /// refused.
    async fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        state: &str,
        error: Option<&str>,
        lease: Lease,
    ) -> Result<bool, QueueError> {
        let (key, lease) = (lease.key("finish"), lease.sql());
        let s = &self.schema;
        let row = self
            .client
            .query_one(
                &self
                    .stmt(key, || {
                        format!(
                            "WITH j AS (
                         UPDATE {s}.chime_jobs
                         SET state = $3, finished_at = now(), token = NULL, worker = NULL,
                             lease_until = NULL, last_error = COALESCE($4, last_error)
                         WHERE id = $1 AND token = $2 AND state = 'claimed' AND {lease}
                         RETURNING id, queue, key),
                     {k}
                     SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM k)",
                            k = expire_keys(s)
                        )
                    })
                    .await?,
                &[&(job.0 as i64), &(token.0 as i64), &state, &error],
            )
            .await
            .map_err(db("finishing a job"))?;
        Ok(row.get::<_, i64>(0) == 1)
    }

    /// Records a failed attempt of a held job: retried after core's backoff
    /// (or at `retry_at`; one in the past means now), or dead / dropped
    /// when out of attempts.
    pub async fn fail(
        &self,
        job: JobId,
        token: LeaseToken,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<Failed, QueueError> {
        self.validate(&Input::Fail {
            job,
            token,
            error: error.to_owned(),
            retry_at,
        })?;
        let error = cut(error, self.engine.limits.text_bytes);
        let s = &self.schema;
        let row = self
            .client
            .query_opt(
                &self
                    .stmt("fail_read", || {
                        format!(
                            "SELECT j.id, j.token, j.queue, j.attempt, j.max_attempts, q.config, q.seed
                     FROM {s}.chime_jobs j JOIN {s}.chime_queues q ON q.name = j.queue
                     WHERE j.id = $1 AND j.token = $2 AND j.state = 'claimed'
                       AND j.lease_until > now()"
                        )
                    })
                    .await?,
                &[&(job.0 as i64), &(token.0 as i64)],
            )
            .await
            .map_err(db("reading a failed job"))?;
        let Some(row) = row else {
            return Err(self.refusal(job).await);
        };
        match self
            .settle_failure(&Attempt::read(&row)?, error, retry_at, Lease::Live)
            .await?
        {
            Some(failed) => Ok(failed),
            // The lease ran out between the read and the write.
            None => Err(CoreError::LeaseLost { job }.into()),
        }
    }

    /// Applies core's decision for a failed attempt; `None` when the job's
    /// row no longer matches (claimed with the attempt's token, its lease
    /// as `lease`).
    async fn settle_failure(
        &self,
        a: &Attempt,
        error: &str,
        retry_at: Option<Timestamp>,
        lease: Lease,
    ) -> Result<Option<Failed>, QueueError> {
        let (job, token, queue) = (a.job, a.token, a.queue.as_str());
        let lease_check = lease.sql();
        let decision = after_failure(&a.config, a.max_attempts, a.seed, job, a.attempt);
        match decision {
            AfterFailure::Retry { delay_ms } => {
                let s = &self.schema;
                let row = self
                    .client
                    .query_opt(
                        &self
                            .stmt(lease.key("retry"), || {
                                format!(
                                    "WITH j AS (
                                 UPDATE {s}.chime_jobs
                                 SET state = 'pending', token = NULL, worker = NULL,
                                     lease_until = NULL, last_error = $3,
                                     run_at = GREATEST(COALESCE(
                                         timestamptz 'epoch' + $4::bigint * interval '1 millisecond',
                                         date_trunc('milliseconds', now()) + $5::bigint * interval '1 millisecond'),
                                         date_trunc('milliseconds', now()))
                                 WHERE id = $1 AND token = $2 AND state = 'claimed'
                                   AND {lease_check}
                                 RETURNING queue, run_at)
                             SELECT {run_at}, {run_at} - {now} FROM j",
                                    run_at = ms("j.run_at"),
                                    now = ms("now()"),
                                )
                            })
                            .await?,
                        &[
                            &(job.0 as i64),
                            &(token.0 as i64),
                            &error,
                            &retry_at.map(Timestamp::as_millis),
                            &delay_ms,
                        ],
                    )
                    .await
                    .map_err(db("retrying a job"))?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let delay_ms: i64 = row.get(1);
                if delay_ms == 0 {
                    self.wake(queue);
                }
                Ok(Some(Failed::Retry {
                    run_at: ts(row.get(0))?,
                    delay_ms,
                }))
            }
            AfterFailure::Exhausted { dead_letter } => {
                let (state, failed) = if dead_letter {
                    ("dead", Failed::Dead)
                } else {
                    ("dropped", Failed::Dropped)
                };
                let done = self.finish(job, token, state, Some(error), lease).await?;
                if done && dead_letter {
                    self.trim_dead(queue).await?;
                }
                Ok(done.then_some(failed))
            }
        }
    }

    /// Keeps at most `limits.deadLettersPerQueue` dead letters in `queue`:
    /// the oldest beyond it become `dropped`, as in the engine.
    async fn trim_dead(&self, queue: &str) -> Result<(), QueueError> {
        let s = &self.schema;
        let limit = self.engine.limits.dead_letters_per_queue as i64;
        self.client
            .execute(
                &self
                    .stmt("trim_dead", || {
                        format!(
                            "UPDATE {s}.chime_jobs SET state = 'dropped'
                             WHERE id IN (
                                 SELECT id FROM {s}.chime_jobs
                                 WHERE queue = $1 AND state = 'dead'
                                 ORDER BY finished_at DESC, id DESC
                                 OFFSET $2)"
                        )
                    })
                    .await?,
                &[&queue, &limit],
            )
            .await
            .map_err(db("bounding dead letters"))?;
        Ok(())
    }

    /// Rescues up to `max` jobs whose lease expired (oldest deadline
    /// first): each counts as a failed attempt with error
    /// `lease_expired`. Returns how many this call rescued (another
    /// replica may rescue some of the same ones; each is rescued once).
    pub async fn rescue_expired(&self, max: u32) -> Result<u32, QueueError> {
        let s = &self.schema;
        let rows = self
            .client
            .query(
                &self
                    .stmt("rescue_find", || {
                        format!(
                            "SELECT j.id, j.token, j.queue, j.attempt, j.max_attempts, q.config, q.seed
                     FROM {s}.chime_jobs j JOIN {s}.chime_queues q ON q.name = j.queue
                     WHERE j.state = 'claimed' AND j.lease_until <= now()
                     ORDER BY j.lease_until, j.id LIMIT $1"
                        )
                    })
                    .await?,
                &[&i64::from(max)],
            )
            .await
            .map_err(db("finding expired leases"))?;
        let mut rescued = 0;
        for row in rows {
            let attempt = Attempt::read(&row)?;
            if self
                .settle_failure(&attempt, "lease_expired", None, Lease::Expired)
                .await?
                .is_some()
            {
                rescued += 1;
            }
        }
        Ok(rescued)
    }

    /// Housekeeping that every replica runs periodically: rescues up to
    /// `max` expired leases ([`rescue_expired`](Self::rescue_expired)),
    /// prunes finished jobs (completed, cancelled, dropped) beyond each
    /// queue's `retention.completedMax` or older than its
    /// `retention.completedMs`, and forgets expired idempotency keys.
    /// Returns the number of leases rescued.
    pub async fn maintain(&self, max: u32) -> Result<u32, QueueError> {
        let rescued = self.rescue_expired(max).await?;
        let s = &self.schema;
        self.client
            .execute(
                &self
                    .stmt("prune", || {
                        format!(
                            "WITH f AS (
                                 SELECT j.id,
                                        row_number() OVER (PARTITION BY j.queue
                                            ORDER BY j.finished_at DESC, j.id DESC) AS newer,
                                        j.finished_at, q.config::json -> 'retention' AS r
                                 FROM {s}.chime_jobs j JOIN {s}.chime_queues q ON q.name = j.queue
                                 WHERE j.state IN ('completed', 'cancelled', 'dropped'))
                             DELETE FROM {s}.chime_jobs j USING f
                             WHERE j.id = f.id
                               AND (f.newer > COALESCE((f.r ->> 'completedMax')::bigint, 1000)
                                    OR f.finished_at + COALESCE((f.r ->> 'completedMs')::bigint,
                                           86400000) * interval '1 millisecond' <= now())"
                        )
                    })
                    .await?,
                &[],
            )
            .await
            .map_err(db("pruning finished jobs"))?;
        self.client
            .execute(
                &self
                    .stmt("forget_keys", || {
                        format!(
                            "DELETE FROM {s}.chime_job_keys
                             WHERE expires_at IS NOT NULL AND expires_at <= now()"
                        )
                    })
                    .await?,
                &[],
            )
            .await
            .map_err(db("forgetting keys"))?;
        Ok(rescued)
    }

    /// One job's row, `None` if there is none.
    pub async fn job(&self, job: JobId) -> Result<Option<PgJob>, QueueError> {
        let s = &self.schema;
        let row = self
            .client
            .query_opt(
                &self
                    .stmt("job", || {
                        format!(
                            "SELECT id, queue, state, attempt, {}, last_error, key
                     FROM {s}.chime_jobs WHERE id = $1",
                            ms("run_at")
                        )
                    })
                    .await?,
                &[&(job.0 as i64)],
            )
            .await
            .map_err(db("reading a job"))?;
        row.map(|row| {
            Ok(PgJob {
                id: JobId(row.get::<_, i64>(0) as u64),
                queue: row.get(1),
                state: row.get(2),
                attempt: row.get::<_, i32>(3) as u32,
                run_at: ts(row.get(4))?,
                last_error: row.get(5),
                key: row.get(6),
            })
        })
        .transpose()
    }

    /// The database clock, in ms (what leases and `run_at` count on).
    pub async fn db_now(&self) -> Result<Timestamp, QueueError> {
        let row = self
            .client
            .query_one(
                &self
                    .stmt("db_now", || format!("SELECT {}", ms("now()")))
                    .await?,
                &[],
            )
            .await
            .map_err(db("reading the clock"))?;
        ts(row.get(0))
    }
}
