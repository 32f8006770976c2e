//! The schedule-write inbox (`chime_inbox`, migration 5): how a schedule
//! or queue input submitted on any replica reaches the leader's engine,
//! durably and in order, and how its reply comes back.
//!
//! - A submitter ([`super::PgControl`]) checks the input with core's
//!   `validate_input`, then inserts it under a transaction-scoped advisory
//!   lock (so ids commit in the order they are handed out, and the
//!   pending-row bound is exact) and `NOTIFY`s `+<id>`.
//! - The leader ([`Consumer`], in its term's loop) takes pending rows in id
//!   order and sends each to its engine like any input. The store marks
//!   the row applied (`applied_at`, `epoch`) **in the transaction that
//!   journals the input** under the leader's epoch ([`InboxSlot`]): an
//!   input is applied exactly once, even across a takeover (the new leader
//!   replays the journal and skips the applied row). The reply (or core's
//!   error) is written right after, with a `NOTIFY` of `=<id>`.
//! - A leader that dies between the journal commit and the reply leaves
//!   an applied row without one: the next leader gives it the error
//!   `reply_lost` at the start of its term (the input *was* applied).
//! - Applied rows are deleted after [`InboxOptions::retention`].

use super::connection::PgError;
use super::queue::{PgQueues, QueueError};
use crate::backend::PortError;
use crate::driver::Handle;
use chime_core::{Error, Input, QueueConfig, QueueMode, Reply};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `LISTEN` channel of the inbox in `schema`: payload `+<id>` for a
/// submitted row, `=<id>` for an answered one.
pub(crate) fn channel(schema: &str) -> String {
    format!("chime_inbox_{schema}")
}

/// Bounds of the inbox.
#[derive(Clone, Copy, Debug)]
pub struct InboxOptions {
    /// Most rows waiting for a leader; a submit beyond is refused with
    /// `limit_exceeded` (what: `inbox`) and inserts nothing.
    pub max_pending: u64,
    /// How long a submitter waits for its reply. On timeout a row no
    /// leader has applied yet is withdrawn (deleted) in the same statement
    /// that checks it, so a timed-out submit never applies later.
    pub reply_timeout: Duration,
    /// How long applied rows (with their replies) are kept.
    pub retention: Duration,
}

impl Default for InboxOptions {
    fn default() -> Self {
        InboxOptions {
            max_pending: 1_000,
            reply_timeout: Duration::from_secs(10),
            retention: Duration::from_secs(3_600),
        }
    }
}

/// Whether `input` is one the inbox carries: the schedule and queue
/// management inputs. Job inputs go to the job tables directly
/// ([`super::PgQueues`]), and the engine's own inputs (`Advance`,
/// `Leadership`, `FireSettled`, …) are the leader's alone.
pub fn is_control(input: &Input) -> bool {
    matches!(
        input,
        Input::UpsertSchedule(_)
            | Input::RemoveSchedule { .. }
            | Input::PauseSchedule { .. }
            | Input::ResumeSchedule { .. }
            | Input::TriggerSchedule { .. }
            | Input::Backfill { .. }
            | Input::DeclareQueue(_)
    )
}

/// Core's error as stored in a row: its code, field and message, plus
/// what is needed to rebuild the variants a schedule input can meet on
/// the leader (the engine's state-dependent refusals).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct StoredError {
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
    /// The name of an unknown schedule or queue, a limit's `what`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// A limit's value, the pending count of `backpressure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
}

impl StoredError {
    pub(crate) fn of(e: &Error) -> StoredError {
        let (subject, number) = match e {
            Error::UnknownSchedule(n) | Error::UnknownQueue(n) | Error::ScheduleDeclared(n) => {
                (Some(n.clone()), None)
            }
            Error::LimitExceeded { what, limit } => (Some((*what).to_owned()), Some(*limit)),
            Error::Backpressure { pending } => (None, Some(*pending as u64)),
            _ => (None, None),
        };
        StoredError {
            code: e.code().to_owned(),
            field: e.field().map(str::to_owned),
            message: e.to_string(),
            subject,
            number,
        }
    }

    fn other(code: &str, message: String) -> StoredError {
        StoredError {
            code: code.to_owned(),
            message,
            ..StoredError::default()
        }
    }

    /// Core's error again, for the variants that can be rebuilt exactly;
    /// `None` for the others.
    pub(crate) fn to_core(&self) -> Option<Error> {
        let subject = self.subject.clone();
        Some(match self.code.as_str() {
            "unknown_schedule" => Error::UnknownSchedule(subject?),
            "unknown_queue" => Error::UnknownQueue(subject?),
            "schedule_declared" => Error::ScheduleDeclared(subject?),
            "not_leader" => Error::NotLeader,
            "stopping" => Error::Stopping,
            "backpressure" => Error::Backpressure {
                pending: self.number? as usize,
            },
            "limit_exceeded" => Error::LimitExceeded {
                what: static_limit(subject.as_deref()?)?,
                limit: self.number?,
            },
            _ => return None,
        })
    }
}

/// The `what` of the limits an inbox input can hit (core's names are
/// `&'static str`; the set is closed).
fn static_limit(what: &str) -> Option<&'static str> {
    [
        "schedules",
        "queues",
        "pause_changes",
        "backfill_fires",
        "live_jobs",
        "inbox",
    ]
    .into_iter()
    .find(|w| *w == what)
}

/// An error of the leader that is not one of core's rebuildable variants
/// (or not core's at all, e.g. `reply_lost`): its code and message.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct RemoteError {
    /// The stable code.
    pub code: String,
    /// What the leader said.
    pub message: String,
}

impl From<StoredError> for PortError {
    fn from(e: StoredError) -> PortError {
        match e.to_core() {
            Some(core) => PortError::Refused(core),
            None => PortError::Unavailable(Box::new(RemoteError {
                code: e.code,
                message: e.message,
            })),
        }
    }
}

/// The inbox row the leader is applying now, shared with its store: the
/// store's append that journals this input marks the row applied in the
/// same transaction.
#[derive(Clone, Debug, Default)]
pub(crate) struct InboxSlot(Arc<Mutex<Option<Claim>>>);

#[derive(Debug)]
struct Claim {
    id: i64,
    input: Input,
    marked: bool,
}

impl InboxSlot {
    fn put(&self, id: i64, input: Input) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Claim {
            id,
            input,
            marked: false,
        });
    }

    /// Takes the claim; `true` if the store marked it.
    fn take(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .is_some_and(|c| c.marked)
    }

    /// The row to mark if one of `inputs` is the claimed input.
    pub(crate) fn matching<'a>(&self, mut inputs: impl Iterator<Item = &'a Input>) -> Option<i64> {
        let slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let c = slot.as_ref().filter(|c| !c.marked)?;
        inputs.any(|i| *i == c.input).then_some(c.id)
    }

    /// After the append that marked `id` committed.
    pub(crate) fn marked(&self, id: i64) {
        if let Some(c) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_mut()
            && c.id == id
        {
            c.marked = true;
        }
    }
}

/// The SQL that marks a claimed row applied, run by the store inside its
/// fenced append (`$1` id, `$2` epoch).
pub(crate) fn mark_sql(schema_quoted: &str) -> String {
    format!(
        "UPDATE {schema_quoted}.chime_inbox SET applied_at = now(), epoch = $2
         WHERE id = $1 AND applied_at IS NULL"
    )
}

/// The leader's side: applies pending rows through its engine.
pub(crate) struct Consumer {
    pub client: tokio_postgres::Client,
    pub schema: String,
    pub engine: String,
    pub epoch: u64,
    pub slot: InboxSlot,
    pub retention: Duration,
    /// The job tables, where a `DeclareQueue` takes effect.
    pub queues: Arc<PgQueues>,
    /// The lease of the engine's external queues (the settle timeout).
    pub settle_timeout_ms: i64,
}

/// Most rows one [`Consumer::drain`] applies before the term's loop gets
/// to renew the lease again.
pub(crate) const BATCH: i64 = 32;

impl Consumer {
    fn table(&self) -> String {
        format!("\"{}\".chime_inbox", self.schema)
    }

    /// At the start of a term: rows a previous leader applied without
    /// writing the reply get `reply_lost`.
    pub(crate) async fn settle_lost_replies(&self) -> Result<u64, PgError> {
        let e = StoredError::other(
            "reply_lost",
            "reply_lost: the input was applied by a leader that stopped before writing \
             its reply"
                .into(),
        );
        let body = serde_json::to_string(&e).unwrap_or_default();
        let n = self
            .client
            .execute(
                &format!(
                    "UPDATE {} SET error = $2 WHERE engine = $1 AND applied_at IS NOT NULL
                     AND reply IS NULL AND error IS NULL",
                    self.table()
                ),
                &[&self.engine, &body],
            )
            .await
            .map_err(PgError::db("settling lost inbox replies"))?;
        if n > 0 {
            self.notify("=0").await?;
        }
        Ok(n)
    }

    async fn notify(&self, payload: &str) -> Result<(), PgError> {
        self.client
            .execute(
                "SELECT pg_notify($1, $2)",
                &[&channel(&self.schema), &payload],
            )
            .await
            .map_err(PgError::db("notifying the inbox"))?;
        Ok(())
    }

    /// Applies up to [`BATCH`] pending rows in id order; returns how many.
    /// `Err` of the driver: the term is over.
    pub(crate) async fn drain(&self, handle: &Handle) -> Result<usize, DrainError> {
        let rows = self
            .client
            .query(
                &format!(
                    "SELECT id, input FROM {} WHERE engine = $1 AND applied_at IS NULL
                     ORDER BY id LIMIT {BATCH}",
                    self.table()
                ),
                &[&self.engine],
            )
            .await
            .map_err(PgError::db("reading the inbox"))?;
        for row in &rows {
            let (id, text): (i64, String) = (row.get(0), row.get(1));
            let outcome = match serde_json::from_str::<Input>(&text) {
                Ok(Input::DeclareQueue(config)) => self.declare(handle, config).await?,
                Ok(input) if is_control(&input) => {
                    if let Input::UpsertSchedule(def) = &input {
                        self.engine_queue(handle, &def.target.queue).await?;
                    }
                    self.slot.put(id, input.clone());
                    let r = handle.call(input).await;
                    let marked = self.slot.take();
                    let r = r.map_err(|_| DrainError::Stopped)?;
                    if !marked {
                        // Every input is journaled before it is applied,
                        // so the store marked it unless the append failed
                        // — and then the driver has stopped, above.
                        tracing::warn!(id, "inbox input applied without its mark");
                    }
                    r.map_err(|e| StoredError::of(&e))
                }
                Ok(_) => Err(StoredError::other(
                    "invalid_input",
                    "invalid_input: input: not a schedule or queue input".into(),
                )),
                Err(e) => Err(StoredError::other(
                    "invalid_input",
                    format!("invalid_input: input: {e}"),
                )),
            };
            self.answer(id, &outcome).await?;
        }
        Ok(rows.len())
    }

    /// In Postgres mode a queue's config lives in the job tables (where
    /// the replicas' workers claim), and the engine holds every queue as
    /// an external stub: a `DeclareQueue` is applied to the tables (core's
    /// checks), and the engine gets the stub if it lacks it. The reply
    /// compares the tables' row before and after.
    async fn declare(
        &self,
        handle: &Handle,
        config: QueueConfig,
    ) -> Result<Result<Reply, StoredError>, DrainError> {
        let before: Option<String> = self
            .client
            .query_opt(
                &format!(
                    "SELECT config FROM \"{}\".chime_queues WHERE name = $1",
                    self.schema
                ),
                &[&config.name],
            )
            .await
            .map_err(PgError::db("reading a queue"))?
            .map(|r| r.get(0));
        match self.queues.declare(&config).await {
            Ok(()) => {}
            Err(QueueError::Refused(e)) => return Ok(Err(StoredError::of(&e))),
            Err(QueueError::Db(e)) => return Err(e.into()),
        }
        self.engine_queue(handle, &config.name).await?;
        let same_mode = |mut c: QueueConfig| {
            c.mode = config.mode;
            c
        };
        let old = before.and_then(|b| serde_json::from_str::<QueueConfig>(&b).ok());
        Ok(Ok(Reply::QueueDeclared {
            created: old.is_none(),
            changed: old.map(same_mode).as_ref() != Some(&config),
        }))
    }

    /// Declares `queue` in the engine as the term's start does (external,
    /// the settle timeout as its lease) unless it has it: a schedule
    /// upserted through the inbox may name a queue no config lists, and
    /// the engine must not hold its fires' jobs itself.
    async fn engine_queue(&self, handle: &Handle, queue: &str) -> Result<(), DrainError> {
        let name = queue.to_owned();
        let known = handle
            .inspect(move |e| e.queue_stats(&name).is_some())
            .await
            .map_err(|_| DrainError::Stopped)?;
        if known {
            return Ok(());
        }
        let stub = QueueConfig {
            mode: QueueMode::External,
            lease_ms: self.settle_timeout_ms,
            ..QueueConfig::new(queue)
        };
        match handle.call(Input::DeclareQueue(stub)).await {
            Ok(Ok(_)) => Ok(()),
            // The upsert that follows meets the same refusal and says so.
            Ok(Err(e)) => {
                tracing::warn!(queue, error = %e, "declaring an inbox schedule's queue failed");
                Ok(())
            }
            Err(_) => Err(DrainError::Stopped),
        }
    }

    /// Writes a row's reply or error (and marks it applied if the store
    /// did not, e.g. an input that never reached the engine), then
    /// notifies.
    async fn answer(&self, id: i64, outcome: &Result<Reply, StoredError>) -> Result<(), PgError> {
        let (reply, error) = match outcome {
            Ok(r) => (serde_json::to_string(r).ok(), None),
            Err(e) => (None, serde_json::to_string(e).ok()),
        };
        self.client
            .execute(
                &format!(
                    "UPDATE {} SET reply = $2, error = $3,
                        applied_at = coalesce(applied_at, now()), epoch = coalesce(epoch, $4)
                     WHERE id = $1 AND reply IS NULL AND error IS NULL",
                    self.table()
                ),
                &[&id, &reply, &error, &(self.epoch as i64)],
            )
            .await
            .map_err(PgError::db("answering an inbox row"))?;
        self.notify(&format!("={id}")).await
    }

    /// Deletes applied rows older than the retention.
    pub(crate) async fn prune(&self) -> Result<u64, PgError> {
        let ms = self.retention.as_millis() as i64;
        self.client
            .execute(
                &format!(
                    "DELETE FROM {} WHERE applied_at < now() - $1::bigint * interval '1 millisecond'",
                    self.table()
                ),
                &[&ms],
            )
            .await
            .map_err(PgError::db("pruning the inbox"))
    }
}

/// A connection `LISTEN`ing on `channel`: the payloads arrive on the
/// receiver until the returned client is dropped or the connection ends
/// (then the receiver ends).
pub(crate) async fn listen(
    url: &str,
    channel: &str,
) -> Result<
    (
        tokio_postgres::Client,
        tokio::sync::mpsc::UnboundedReceiver<String>,
    ),
    PgError,
> {
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(PgError::db("connecting an inbox listener"))?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    // Polling the connection also carries the client's own statements.
    tokio::spawn(async move {
        while let Some(Ok(m)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            if let tokio_postgres::AsyncMessage::Notification(n) = m
                && tx.send(n.payload().to_owned()).is_err()
            {
                return;
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN \"{channel}\""))
        .await
        .map_err(PgError::db("listening on the inbox"))?;
    Ok((client, rx))
}

/// Why draining stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DrainError {
    #[error(transparent)]
    Db(#[from] PgError),
    #[error("the engine stopped")]
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's refusals an inbox input can meet come back as the
    /// same core error on the submitter (code, field and data).
    #[test]
    fn stored_errors_rebuild_cores() {
        let errors = [
            Error::UnknownSchedule("nightly".into()),
            Error::UnknownQueue("emails".into()),
            Error::NotLeader,
            Error::Stopping,
            Error::Backpressure { pending: 7 },
            Error::LimitExceeded {
                what: "schedules",
                limit: 10_000,
            },
            Error::LimitExceeded {
                what: "backfill_fires",
                limit: 64,
            },
        ];
        for e in errors {
            let text = serde_json::to_string(&StoredError::of(&e)).unwrap();
            let back: StoredError = serde_json::from_str(&text).unwrap();
            assert_eq!(back.to_core(), Some(e.clone()), "{text}");
            assert_eq!(back.code, e.code());
        }
    }

    /// Others keep their code and message, as `Unavailable`.
    #[test]
    fn other_errors_keep_their_code() {
        let e = StoredError::other("reply_lost", "reply_lost: gone".into());
        let p = PortError::from(e);
        assert!(matches!(p, PortError::Unavailable(_)));
        assert!(p.to_string().contains("reply_lost"));
    }

    #[test]
    fn only_schedule_and_queue_inputs_are_carried() {
        assert!(is_control(&Input::ResumeSchedule { name: "a".into() }));
        assert!(!is_control(&Input::Advance));
        assert!(!is_control(&Input::Stop));
    }
}
