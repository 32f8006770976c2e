//! [`PgControl`]: schedule and queue writes from any replica, through the
//! inbox (`pg/inbox.rs`) to the leader's engine.

use super::connection::{PgConfig, PgError, check_schema};
use super::inbox::{InboxOptions, StoredError, channel, is_control};
use super::migrate::migrate;
use crate::backend::PortError;
use crate::driver::{Clock, SystemClock};
use chime_core::{EngineConfig, Error, Input, Reply, validate_input};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Submits schedule and queue inputs (`UpsertSchedule`, `RemoveSchedule`,
/// `PauseSchedule`, `ResumeSchedule`, `TriggerSchedule`, `Backfill`,
/// `DeclareQueue`) to the leader of a Postgres deployment and waits for
/// the engine's reply. Any replica (or any process with the database's
/// URL) may hold one; connections open on the first submit and again
/// after one closes.
pub struct PgControl {
    pg: PgConfig,
    engine: String,
    engine_config: EngineConfig,
    options: InboxOptions,
    client: tokio::sync::Mutex<Option<tokio_postgres::Client>>,
    waiters: Waiters,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Submitters waiting for their row's answer, by row id.
type Waiters = Arc<Mutex<BTreeMap<i64, Arc<Notify>>>>;

impl std::fmt::Debug for PgControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgControl")
            .field("schema", &self.pg.schema)
            .field("engine", &self.engine)
            .finish()
    }
}

impl Drop for PgControl {
    fn drop(&mut self) {
        if let Some(t) = self
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            t.abort();
        }
    }
}

impl PgControl {
    /// A submitter for the engine named `engine` (the leader lease's name,
    /// [`super::replica::ReplicaConfig::name`]) in `pg`'s schema. Inputs
    /// are checked with `engine_config` (the replicas' engine config)
    /// before anything is inserted. Opens nothing yet.
    pub fn new(
        pg: PgConfig,
        engine: impl Into<String>,
        engine_config: EngineConfig,
        options: InboxOptions,
    ) -> PgControl {
        PgControl {
            pg,
            engine: engine.into(),
            engine_config,
            options,
            client: tokio::sync::Mutex::new(None),
            waiters: Arc::default(),
            listener: Mutex::new(None),
        }
    }

    /// The submitter of a replica: its database, lease name and engine
    /// config, default bounds.
    pub fn for_replica(cfg: &super::replica::ReplicaConfig) -> PgControl {
        PgControl::new(
            cfg.pg.clone(),
            cfg.name.clone(),
            cfg.driver.engine.clone(),
            InboxOptions::default(),
        )
    }

    /// Sends `input` to the leader's engine and returns its reply.
    ///
    /// - Not a schedule/queue input, or refused by core's checks: the
    ///   error at once ([`PortError::Refused`]), nothing inserted.
    /// - [`InboxOptions::max_pending`] rows already waiting:
    ///   `limit_exceeded` (what `inbox`), nothing inserted.
    /// - The engine refused it: core's error (`Refused`; an error that
    ///   cannot be rebuilt exactly is `Unavailable` with its code).
    /// - No leader answered within [`InboxOptions::reply_timeout`]:
    ///   `Unavailable` ("no leader answered within 10 s"), and the row is
    ///   withdrawn: a timed-out input is never applied later. If a leader
    ///   applied it in the meantime, its reply is returned instead.
    /// - The database is unreachable: `Unavailable`, nothing inserted (or
    ///   the row withdrawn as above).
    pub async fn submit(&self, input: Input) -> Result<Reply, PortError> {
        if !is_control(&input) {
            return Err(PortError::Refused(Error::InvalidInput {
                field: "input",
                message: "only schedule and queue inputs go through the inbox".into(),
            }));
        }
        validate_input(&input, &self.engine_config, SystemClock.now())?;
        let text = serde_json::to_string(&input).map_err(|e| unavailable(e.to_string()))?;
        let started = Instant::now();
        self.ensure_listener();
        let id = self.insert(&text).await?;
        let wake = Arc::new(Notify::new());
        self.lock_waiters().insert(id, wake.clone());
        let answer = self.wait(id, &wake, started).await;
        self.lock_waiters().remove(&id);
        answer
    }

    fn lock_waiters(&self) -> std::sync::MutexGuard<'_, BTreeMap<i64, Arc<Notify>>> {
        self.waiters.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn table(&self) -> String {
        format!("\"{}\".chime_inbox", self.pg.schema)
    }

    /// The statement connection, opened (and the schema migrated) if
    /// needed.
    async fn client(
        &self,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<tokio_postgres::Client>>, PortError> {
        let mut guard = self.client.lock().await;
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            check_schema(&self.pg.schema).map_err(db)?;
            let mut c = super::connect(&self.pg.url).await.map_err(db)?;
            migrate(&mut c, &self.pg.schema).await.map_err(db)?;
            *guard = Some(c);
        }
        Ok(guard)
    }

    /// Inserts the row (bounded), notifying the leader at commit.
    async fn insert(&self, text: &str) -> Result<i64, PortError> {
        let mut guard = self.client().await?;
        let client = guard.as_mut().ok_or_else(|| unavailable("no connection"))?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| db(PgError::db("starting an inbox insert")(e)))?;
        // Held to commit: ids commit in the order they are handed out, and
        // the count below cannot be raced past the bound.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('chime_inbox:' || $1::text))",
            &[&self.pg.schema],
        )
        .await
        .map_err(|e| db(PgError::db("locking the inbox")(e)))?;
        let pending: i64 = tx
            .query_one(
                &format!(
                    "SELECT count(*) FROM {} WHERE engine = $1 AND applied_at IS NULL",
                    self.table()
                ),
                &[&self.engine],
            )
            .await
            .map_err(|e| db(PgError::db("counting the inbox")(e)))?
            .get(0);
        if pending as u64 >= self.options.max_pending {
            return Err(PortError::Refused(Error::LimitExceeded {
                what: "inbox",
                limit: self.options.max_pending,
            }));
        }
        let id: i64 = tx
            .query_one(
                &format!(
                    "INSERT INTO {} (engine, input) VALUES ($1, $2) RETURNING id",
                    self.table()
                ),
                &[&self.engine, &text],
            )
            .await
            .map_err(|e| db(PgError::db("inserting into the inbox")(e)))?
            .get(0);
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&channel(&self.pg.schema), &format!("+{id}")],
        )
        .await
        .map_err(|e| db(PgError::db("notifying the inbox")(e)))?;
        tx.commit()
            .await
            .map_err(|e| db(PgError::db("committing an inbox insert")(e)))?;
        Ok(id)
    }

    /// Waits for row `id`'s answer until the timeout, then withdraws it.
    async fn wait(&self, id: i64, wake: &Notify, started: Instant) -> Result<Reply, PortError> {
        let deadline = started + self.options.reply_timeout;
        loop {
            if let Some(answer) = self.answer(id).await? {
                return answer;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            // Notified on the answer; polled too, since a notification
            // sent while the listener reconnected is lost.
            let poll = (deadline - now).min(Duration::from_millis(500));
            let _ = tokio::time::timeout(poll, wake.notified()).await;
        }
        self.withdraw(id).await
    }

    /// The row's answer, if it has one.
    async fn answer(&self, id: i64) -> Result<Option<Result<Reply, PortError>>, PortError> {
        let guard = self.client().await?;
        let client = guard.as_ref().ok_or_else(|| unavailable("no connection"))?;
        let row = client
            .query_opt(
                &format!("SELECT reply, error FROM {} WHERE id = $1", self.table()),
                &[&id],
            )
            .await
            .map_err(|e| db(PgError::db("reading an inbox reply")(e)))?;
        let Some(row) = row else {
            return Err(unavailable(format!(
                "inbox row {id} is gone (withdrawn or pruned)"
            )));
        };
        let (reply, error): (Option<String>, Option<String>) = (row.get(0), row.get(1));
        Ok(match (reply, error) {
            (Some(r), _) => Some(
                serde_json::from_str::<Reply>(&r)
                    .map_err(|e| unavailable(format!("the leader's reply does not parse: {e}"))),
            ),
            (None, Some(e)) => Some(Err(match serde_json::from_str::<StoredError>(&e) {
                Ok(e) => e.into(),
                Err(e) => unavailable(format!("the leader's error does not parse: {e}")),
            })),
            (None, None) => None,
        })
    }

    /// On timeout: deletes the row if no leader applied it yet (one
    /// statement, so it is either withdrawn or applied, never both).
    async fn withdraw(&self, id: i64) -> Result<Reply, PortError> {
        let secs = self.options.reply_timeout.as_secs_f64();
        let withdrawn = {
            let guard = self.client().await?;
            let client = guard.as_ref().ok_or_else(|| unavailable("no connection"))?;
            client
                .execute(
                    &format!(
                        "DELETE FROM {} WHERE id = $1 AND applied_at IS NULL",
                        self.table()
                    ),
                    &[&id],
                )
                .await
                .map_err(|e| db(PgError::db("withdrawing an inbox row")(e)))?
        };
        if withdrawn == 1 {
            return Err(unavailable(format!(
                "no leader answered within {secs} s; the input was withdrawn and not applied"
            )));
        }
        // Applied just now: its reply follows at once.
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Some(answer) = self.answer(id).await? {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(unavailable(format!(
            "the leader applied the input but its reply did not arrive within {secs} s"
        )))
    }

    /// Starts the task that wakes waiters on `=<id>` notifications.
    fn ensure_listener(&self) {
        let mut slot = self.listener.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let (url, channel, waiters) = (
            self.pg.url.clone(),
            channel(&self.pg.schema),
            self.waiters.clone(),
        );
        *slot = Some(tokio::spawn(async move {
            loop {
                if let Err(e) = listen(&url, &channel, &waiters).await {
                    tracing::debug!(error = %e, "inbox reply listener lost its connection");
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }));
    }
}

/// One connection's life: `LISTEN`, then wake the waiter of each answered
/// row (`=0`: every waiter) until it ends.
async fn listen(url: &str, channel: &str, waiters: &Waiters) -> Result<(), PgError> {
    let (_client, mut rx) = super::inbox::listen(url, channel).await?;
    while let Some(p) = rx.recv().await {
        let Some(id) = p.strip_prefix('=').and_then(|i| i.parse::<i64>().ok()) else {
            continue;
        };
        let w = waiters.lock().unwrap_or_else(|e| e.into_inner());
        if id == 0 {
            w.values().for_each(|n| n.notify_one());
        } else if let Some(n) = w.get(&id) {
            n.notify_one();
        }
    }
    Ok(())
}

/// The control port of every replica: schedule and queue writes through
/// the inbox to the leader's engine (`Unavailable`, "no leader answered
/// within …", while none is elected).
impl crate::backend::ControlBackend for PgControl {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn submit(&self, input: Input) -> crate::backend::PortFuture<'_, Reply> {
        Box::pin(PgControl::submit(self, input))
    }
}

fn unavailable(message: impl Into<String>) -> PortError {
    PortError::Unavailable(message.into().into())
}

fn db(e: PgError) -> PortError {
    PortError::Unavailable(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send<T: Send>(_: &T) {}
    fn sync<T: Send + Sync>(_: &T) {}

    /// `submit`'s future is `Send` and `PgControl` is `Send + Sync`, so
    /// `impl ControlBackend for PgControl` is one boxed call.
    #[test]
    fn fits_the_control_port() {
        let c = PgControl::new(
            PgConfig::new("postgresql://nowhere"),
            "chime",
            EngineConfig::default(),
            InboxOptions::default(),
        );
        sync(&c);
        let f = c.submit(Input::Advance);
        send(&f);
        let boxed: crate::backend::PortFuture<'_, Reply> = Box::pin(f);
        drop(boxed);
        let port: &dyn crate::backend::ControlBackend = &c;
        assert_eq!(port.backend(), "postgres");
    }
}
