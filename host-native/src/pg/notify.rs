//! One replica's notification listener: one connection that `LISTEN`s on
//! the schema's job channel ([`PgQueues::channel`](super::PgQueues::channel))
//! and turns what every replica's transactions notify into
//!
//! - **availability**: a [`watch`] per queue, bumped when the queue gets
//!   claimable work — what the HTTP long-poll claim waits on
//!   ([`PgListener::availability`]) and what wakes the local worker pools
//!   (`pg::workers`);
//! - **timers** for jobs due later: a notification `{"w": queue, "in":
//!   ms}` (an enqueue with `runAt`/`delayMs`, a retry after its backoff)
//!   arms a timer for the queue; when it rings, the queue is woken and
//!   the next due time of the queue is read from the table (so the
//!   listener keeps one timer per queue, and none is lost when a queue
//!   has many delayed jobs). Delays count on this replica's clock from
//!   the delivery, never by comparing its wall clock with the database's;
//! - **job events**: `{"e": "completed", "q", "j", "a", "d", "at", "f",
//!   "r", "ra"}` from the statements that settle jobs, decoded into the
//!   [`StreamEvent`]s the embedded driver publishes (same kind, fields and
//!   `detail`), and sent to the broadcast given at
//!   [`start`](PgListener::start), so every replica's `/v1/events` sees
//!   the outcomes of every replica's workers.
//!
//! A bare queue name is a wake-up due now (the oldest format, still sent
//! by fire delivery and the trailing wake-ups of a burst). Queue names
//! cannot start with `{` (core's naming rule), so the formats never meet.
//!
//! **Bounds and losses.** Notifications wait for this task in a channel of
//! [`BACKLOG`]; beyond it they are dropped, counted, and every queue is
//! woken (a dropped wake-up must not strand a job; dropped events are
//! lost, as a slow `/v1/events` client's are). At most
//! [`MAX_WAKE_QUEUES`] queues have a watch (the ones nobody waits on are
//! dropped first) and [`MAX_TIMERS`] a timer. A lost connection is
//! reconnected with a backoff (100 ms doubling to 5 s); on every
//! (re)connection all queues are woken and every queue's earliest due
//! time is read again, since what was notified while nobody listened is
//! gone.

use super::connection::{PgConfig, PgError, check_schema, wake_channel};
use super::migrate::migrate;
use super::queue::sql;
use crate::driver::StreamEvent;
use chime_core::{CancelReason, Command, Event, FireId, JobId, JobState, Timestamp};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;
use tokio_postgres::{AsyncMessage, Client};

/// Notifications received and not yet handled, at most.
pub const BACKLOG: usize = 8_192;

/// Queues with an availability watch, at most.
pub const MAX_WAKE_QUEUES: usize = 4_096;

/// Queues with a timer for a delayed job, at most.
pub const MAX_TIMERS: usize = 4_096;

const RECONNECT_FIRST: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// The listener of one replica (see the module docs). Dropping the last
/// handle stops it and closes its connection.
#[derive(Debug)]
pub struct PgListener {
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PgListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Debug)]
struct Shared {
    wakes: Mutex<BTreeMap<String, watch::Sender<u64>>>,
    events: broadcast::Sender<Arc<StreamEvent>>,
    /// `true` while listening (after the `LISTEN` and the due times were
    /// read).
    listening: watch::Sender<bool>,
    /// Notifications dropped because the backlog was full.
    dropped: AtomicU64,
}

impl Shared {
    fn wake(&self, queue: &str) {
        let wakes = self.wakes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = wakes.get(queue) {
            tx.send_modify(|v| *v = v.wrapping_add(1));
        }
    }

    fn wake_all(&self) {
        let wakes = self.wakes.lock().unwrap_or_else(|p| p.into_inner());
        for tx in wakes.values() {
            tx.send_modify(|v| *v = v.wrapping_add(1));
        }
    }
}

impl PgListener {
    /// Starts listening on `config`'s schema (connecting in the
    /// background, and again whenever the connection is lost); job events
    /// go to `events`.
    pub fn start(
        config: &PgConfig,
        events: broadcast::Sender<Arc<StreamEvent>>,
    ) -> Result<Arc<PgListener>, PgError> {
        check_schema(&config.schema)?;
        let shared = Arc::new(Shared {
            wakes: Mutex::new(BTreeMap::new()),
            events,
            listening: watch::channel(false).0,
            dropped: AtomicU64::new(0),
        });
        let target = Target {
            url: config.url.clone(),
            schema_name: config.schema.clone(),
            application_name: application_name(&config.schema),
            channel: wake_channel(&config.schema),
            schema: format!("\"{}\"", config.schema),
        };
        let task = tokio::spawn(run(target, shared.clone()));
        Ok(Arc::new(PgListener { shared, task }))
    }

    /// A receiver that changes whenever `queue` gets claimable work after
    /// this call (the current value counts as seen).
    pub fn availability(&self, queue: &str) -> watch::Receiver<u64> {
        let mut wakes = self.shared.wakes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = wakes.get(queue) {
            return tx.subscribe();
        }
        if wakes.len() >= MAX_WAKE_QUEUES {
            wakes.retain(|_, tx| tx.receiver_count() > 0);
        }
        let (tx, rx) = watch::channel(0);
        if wakes.len() < MAX_WAKE_QUEUES {
            wakes.insert(queue.to_owned(), tx);
        }
        rx
    }

    /// Whether the listener is connected and listening now.
    pub fn is_listening(&self) -> bool {
        *self.shared.listening.borrow()
    }

    /// Waits until the listener is listening (what was committed before
    /// then may have been missed, except delayed jobs: their due times are
    /// read at every connection).
    pub async fn listening(&self) {
        let mut rx = self.shared.listening.subscribe();
        let _ = rx.wait_for(|l| *l).await;
    }

    /// Notifications dropped so far because the backlog was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

struct Target {
    url: String,
    schema_name: String,
    application_name: String,
    channel: String,
    schema: String,
}

/// The listener connection's `application_name`: `chime-listen:<schema>`
/// (PostgreSQL keeps its first 63 bytes).
pub fn application_name(schema: &str) -> String {
    format!("chime-listen:{schema}")
}

/// Listens until aborted, reconnecting with a backoff.
async fn run(target: Target, shared: Arc<Shared>) {
    let mut backoff = RECONNECT_FIRST;
    loop {
        let started = Instant::now();
        if let Err(e) = session(&target, &shared).await {
            tracing::warn!(error = %e, "notification listener lost its connection");
        }
        shared.listening.send_replace(false);
        if started.elapsed() > RECONNECT_MAX * 2 {
            backoff = RECONNECT_FIRST;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(RECONNECT_MAX);
    }
}

/// Aborts the connection task when a session ends, however it ends.
struct AbortOnDrop(tokio::task::JoinHandle<Result<(), tokio_postgres::Error>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One connection's life: `LISTEN`, read the due times, then handle
/// notifications and timers until the connection ends.
async fn session(target: &Target, shared: &Shared) -> Result<(), PgError> {
    let mut config: tokio_postgres::Config = target
        .url
        .parse()
        .map_err(PgError::db("reading the database URL"))?;
    // Named, so an operator (or a test) can tell it in pg_stat_activity.
    config.application_name(&target.application_name);
    let (mut client, mut connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .map_err(PgError::db("connecting the notification listener"))?;
    let (tx, mut rx) = mpsc::channel::<String>(BACKLOG);
    let dropped = Arc::new(AtomicU64::new(0));
    let overflow = dropped.clone();
    // Polling the connection also carries the client's own statements.
    let mut conn = AbortOnDrop(tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.try_send(n.payload().to_owned()).is_err() {
                        overflow.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    }));
    client
        .batch_execute(&format!("LISTEN \"{}\"", target.channel))
        .await
        .map_err(PgError::db("listening for notifications"))?;
    // The due-time reads need the tables: a listener may start before
    // any other part of the replica has migrated the schema.
    migrate(&mut client, &target.schema_name).await?;
    let due = DueTimes::prepare(&client, &target.schema).await?;
    let mut timers = Timers::default();
    for (queue, in_ms) in due.all(&client).await? {
        timers.set(queue, Instant::now() + millis(in_ms));
    }
    shared.listening.send_replace(true);
    shared.wake_all();
    loop {
        let next = timers.next();
        tokio::select! {
            m = rx.recv() => match m {
                Some(payload) => handle(&payload, shared, &mut timers),
                None => break,
            },
            () = sleep_until(next), if next.is_some() => {
                for queue in timers.take_due(Instant::now()) {
                    shared.wake(&queue);
                    if let Some(in_ms) = due.of(&client, &queue).await? {
                        timers.set(queue, Instant::now() + millis(in_ms));
                    }
                }
            }
        }
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            shared.dropped.fetch_add(lost, Ordering::Relaxed);
            tracing::warn!(lost, "notification backlog full: notifications dropped");
            shared.wake_all();
        }
    }
    match (&mut conn.0).await {
        Ok(Err(e)) => Err(PgError::db("notification listener")(e)),
        _ => Ok(()),
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn millis(ms: i64) -> Duration {
    Duration::from_millis(ms.max(0) as u64)
}

/// The statements that read when delayed jobs come due, in ms from now.
struct DueTimes {
    all: tokio_postgres::Statement,
    of: tokio_postgres::Statement,
}

impl DueTimes {
    async fn prepare(client: &Client, s: &str) -> Result<DueTimes, PgError> {
        let waiting = format!(
            "state = {} AND run_at > now()",
            sql::state(JobState::Available)
        );
        let in_ms = format!("{} - {}", sql::ms("min(run_at)"), sql::ms("now()"));
        let all = format!(
            "SELECT queue, {in_ms} FROM {s}.chime_jobs WHERE {waiting}
             GROUP BY queue ORDER BY 2 LIMIT {MAX_TIMERS}"
        );
        let of = format!("SELECT {in_ms} FROM {s}.chime_jobs WHERE queue = $1 AND {waiting}");
        let prepare = |sql: String| async move {
            client
                .prepare(&sql)
                .await
                .map_err(PgError::db("preparing the due-time reads"))
        };
        Ok(DueTimes {
            all: prepare(all).await?,
            of: prepare(of).await?,
        })
    }

    /// Every queue's earliest due time (the first [`MAX_TIMERS`]).
    async fn all(&self, client: &Client) -> Result<Vec<(String, i64)>, PgError> {
        let rows = client
            .query(&self.all, &[])
            .await
            .map_err(PgError::db("reading due times"))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// `queue`'s earliest due time, if it has a delayed job.
    async fn of(&self, client: &Client, queue: &str) -> Result<Option<i64>, PgError> {
        let row = client
            .query_one(&self.of, &[&queue])
            .await
            .map_err(PgError::db("reading a due time"))?;
        Ok(row.get(0))
    }
}

/// One timer per queue: when its earliest known delayed job is due.
#[derive(Default)]
struct Timers {
    by_queue: BTreeMap<String, Instant>,
    by_time: BTreeSet<(Instant, String)>,
}

impl Timers {
    /// Arms `queue`'s timer for `at`, unless it rings earlier already.
    fn set(&mut self, queue: String, at: Instant) {
        if let Some(&old) = self.by_queue.get(&queue) {
            if old <= at {
                return;
            }
            self.by_time.remove(&(old, queue.clone()));
        } else if self.by_queue.len() >= MAX_TIMERS {
            // Full: keep the earliest; the latest loses its timer (its
            // workers' poll finds it).
            match self.by_time.last() {
                Some((last, _)) if *last > at => {
                    let (_, q) = self.by_time.pop_last().expect("not empty");
                    self.by_queue.remove(&q);
                }
                _ => return,
            }
        }
        self.by_queue.insert(queue.clone(), at);
        self.by_time.insert((at, queue));
    }

    fn next(&self) -> Option<Instant> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// The queues whose timers rang by `now` (their timers removed).
    fn take_due(&mut self, now: Instant) -> Vec<String> {
        let mut due = Vec::new();
        while let Some((at, _)) = self.by_time.first() {
            if *at > now {
                break;
            }
            let (_, queue) = self.by_time.pop_first().expect("not empty");
            self.by_queue.remove(&queue);
            due.push(queue);
        }
        due
    }
}

/// A structured notification (see the module docs).
#[derive(Deserialize)]
#[serde(untagged)]
enum Message {
    /// A job of queue `w` is due in `in` ms.
    Due {
        w: String,
        #[serde(rename = "in")]
        in_ms: i64,
    },
    /// A job's outcome.
    Event(Wire),
}

/// A job event as the settling statements notify it (`sql::event`).
#[derive(Deserialize)]
struct Wire {
    e: String,
    q: String,
    j: u64,
    a: Option<u32>,
    d: Option<i64>,
    at: i64,
    f: Option<String>,
    r: Option<String>,
    ra: Option<i64>,
}

/// Handles one notification's payload.
fn handle(payload: &str, shared: &Shared, timers: &mut Timers) {
    if !payload.starts_with('{') {
        shared.wake(payload);
        return;
    }
    match serde_json::from_str::<Message>(payload) {
        Ok(Message::Due { w, in_ms }) if in_ms <= 0 => shared.wake(&w),
        Ok(Message::Due { w, in_ms }) => timers.set(w, Instant::now() + millis(in_ms)),
        // Nobody streams events from this replica: not worth decoding.
        Ok(Message::Event(_)) if shared.events.receiver_count() == 0 => {}
        Ok(Message::Event(wire)) => match stream_event(wire) {
            Some(e) => {
                let _ = shared.events.send(Arc::new(e));
            }
            None => tracing::debug!(payload, "a job event this replica cannot read"),
        },
        Err(e) => tracing::debug!(error = %e, payload, "an unknown notification"),
    }
}

/// The wire name of a reason, as the driver's events say it.
fn name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// A job event as the embedded driver publishes it: the same kind,
/// fields and `detail` (core's event, serialized as the driver does).
fn stream_event(w: Wire) -> Option<StreamEvent> {
    let job = JobId(w.j);
    let queue = w.q.clone();
    let (kind, event, reason) = match w.e.as_str() {
        "completed" => ("completed", Event::JobCompleted { job, queue }, None),
        "retried" => {
            let error = w.r.clone()?;
            let run_at = Timestamp::from_millis(w.ra?).ok()?;
            let attempt = w.a?;
            let e = Event::JobRetried {
                job,
                queue,
                attempt,
                run_at,
                error: error.clone(),
            };
            ("retried", e, Some(error))
        }
        "lease_expired" => {
            let attempt = w.a?;
            let e = Event::LeaseExpired {
                job,
                queue,
                attempt,
            };
            ("lease_expired", e, None)
        }
        "dead" => {
            let reason = w.r.clone()?;
            let e = Event::JobDead {
                job,
                queue,
                attempts: w.a?,
                reason: reason.clone(),
            };
            ("dead", e, Some(reason))
        }
        "dropped" => {
            let reason = w.r.clone()?;
            let e = Event::JobDropped {
                job,
                queue,
                reason: reason.clone(),
            };
            ("dropped", e, Some(reason))
        }
        "cancelled" => {
            let reason: CancelReason =
                serde_json::from_value(serde_json::Value::String(w.r.clone()?)).ok()?;
            let e = Event::JobCancelled { job, queue, reason };
            ("cancelled", e, Some(name(&reason)))
        }
        _ => return None,
    };
    Some(StreamEvent {
        kind,
        at: Timestamp::from_millis(w.at).ok()?,
        schedule: w
            .f
            .and_then(|f| f.parse::<FireId>().ok())
            .map(|f| f.schedule.to_string()),
        queue: Some(w.q),
        job: Some(job),
        attempt: w.a,
        duration_ms: w.d,
        reason,
        detail: serde_json::to_value(Command::Event(event)).unwrap_or(serde_json::Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_keep_the_earliest_per_queue() {
        let t0 = Instant::now();
        let mut t = Timers::default();
        t.set("a".into(), t0 + Duration::from_millis(50));
        t.set("a".into(), t0 + Duration::from_millis(80));
        t.set("b".into(), t0 + Duration::from_millis(10));
        t.set("a".into(), t0 + Duration::from_millis(30));
        assert_eq!(t.next(), Some(t0 + Duration::from_millis(10)));
        assert_eq!(t.take_due(t0 + Duration::from_millis(30)), ["b", "a"]);
        assert_eq!(t.next(), None);
    }

    #[test]
    fn events_read_as_the_drivers() {
        let wire = r#"{"e" : "retried", "q" : "mail", "j" : 7, "a" : 2, "d" : 15,
                       "at" : 1000, "f" : null, "r" : "boom", "ra" : 2000}"#;
        let Ok(Message::Event(w)) = serde_json::from_str::<Message>(wire) else {
            panic!("an event");
        };
        let e = stream_event(w).unwrap();
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "kind": "retried", "at": 1000, "queue": "mail", "job": 7, "attempt": 2,
                "durationMs": 15, "reason": "boom",
                "detail": serde_json::to_value(Command::Event(Event::JobRetried {
                    job: JobId(7), queue: "mail".into(), attempt: 2,
                    run_at: Timestamp::from_millis(2000).unwrap(), error: "boom".into(),
                })).unwrap(),
            })
        );
        let due = serde_json::from_str::<Message>(r#"{"w" : "mail", "in" : 40}"#).unwrap();
        assert!(matches!(due, Message::Due { w, in_ms: 40 } if w == "mail"));
    }
}
