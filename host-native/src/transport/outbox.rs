//! Publishing the engine's fires to transports: a durable outbox written
//! in the store's `deliver` (after the turn's commit, before the fire
//! counts as delivered) and a publisher task that empties it into the
//! brokers, in order, retrying with capped backoff while a broker is away.
//!
//! The outbox is a redb file of its own (`transport-outbox.redb` in the
//! data directory), two tables:
//! - `pending`: sequence → message body, the messages not yet acknowledged
//!   by their broker, oldest first;
//! - `ids`: message id → `0` while pending, else the wall-clock ms it was
//!   published (or refused) at. An id already there is not queued again,
//!   so the journal's re-delivery after a crash (the driver delivers every
//!   output of the replayed journal again) adds nothing: chime's store is
//!   the authority for de-duplication, the broker's idempotency key the
//!   second line (for a crash between the broker's ack and the outbox's
//!   commit). Published ids are forgotten after
//!   [`OutboxConfig::remember_ms`].

use super::{Message, Published, Transport, backoff};
use crate::backend::PortError;
use crate::driver::{TransportCounters, TransportEvent};
use crate::store::{Recovered, Store, StoreError};
use chime_core::{Command, JournalEntry, Snapshot};
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const PENDING: TableDefinition<u64, &str> = TableDefinition::new("pending");
const IDS: TableDefinition<&str, i64> = TableDefinition::new("ids");

/// Most messages the publisher reads from the outbox at once.
pub const CHUNK: usize = 256;

/// How the outbox and its publisher behave.
#[derive(Clone, Debug)]
pub struct OutboxConfig {
    /// How long a published id is remembered (default 7 days): the
    /// de-duplication window of chime's own store.
    pub remember_ms: i64,
    /// First retry delay while a broker is away (default 50 ms).
    pub retry_base: Duration,
    /// Longest retry delay (default 5 s).
    pub retry_cap: Duration,
}

impl Default for OutboxConfig {
    fn default() -> Self {
        OutboxConfig {
            remember_ms: 7 * 24 * 3_600_000,
            retry_base: Duration::from_millis(50),
            retry_cap: Duration::from_secs(5),
        }
    }
}

fn redb_err(e: impl Into<redb::Error>) -> StoreError {
    StoreError::Backend {
        backend: "redb",
        source: format!("transport outbox: {}", e.into()).into(),
    }
}

/// The durable outbox (see the module docs). Cheap to share.
#[derive(Clone)]
pub struct Outbox {
    db: Arc<Database>,
    wake: Arc<Notify>,
    config: OutboxConfig,
    /// When published ids were last forgotten (ms): at most once a minute,
    /// not on every commit (the scan is over every remembered id).
    pruned: Arc<std::sync::atomic::AtomicI64>,
    /// Where the publisher counts publishes (the daemon's `/metrics`).
    counters: TransportCounters,
}

/// How often published ids past the window are forgotten.
const PRUNE_EVERY_MS: i64 = 60_000;

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Outbox {
    /// Opens (or creates) the outbox file at `path`.
    pub fn open(path: &Path, config: OutboxConfig) -> Result<Outbox, StoreError> {
        let db = Database::create(path).map_err(redb_err)?;
        let tx = db.begin_write().map_err(redb_err)?;
        tx.open_table(PENDING).map_err(redb_err)?;
        tx.open_table(IDS).map_err(redb_err)?;
        tx.commit().map_err(redb_err)?;
        Ok(Outbox {
            db: Arc::new(db),
            wake: Arc::new(Notify::new()),
            config,
            pruned: Arc::new(std::sync::atomic::AtomicI64::new(i64::MIN)),
            counters: TransportCounters::default(),
        })
    }

    /// The outbox, its publisher counting into `counters`
    /// (`chime_transport_published_total` and the others of
    /// [`TransportEvent`]'s publish side).
    pub fn with_counters(mut self, counters: TransportCounters) -> Outbox {
        self.counters = counters;
        self
    }

    /// Queues the messages whose ids it does not hold yet, in one commit;
    /// how many were new.
    pub fn put(&self, messages: &[Message]) -> Result<usize, StoreError> {
        if messages.is_empty() {
            return Ok(0);
        }
        let tx = self.db.begin_write().map_err(redb_err)?;
        let mut added = 0;
        {
            let mut pending = tx.open_table(PENDING).map_err(redb_err)?;
            let mut ids = tx.open_table(IDS).map_err(redb_err)?;
            let mut next = match pending.last().map_err(redb_err)? {
                Some((k, _)) => k.value() + 1,
                None => 1,
            };
            for m in messages {
                if ids.get(m.id.as_str()).map_err(redb_err)?.is_some() {
                    continue;
                }
                ids.insert(m.id.as_str(), 0).map_err(redb_err)?;
                pending.insert(next, m.body().as_str()).map_err(redb_err)?;
                next += 1;
                added += 1;
            }
        }
        tx.commit().map_err(redb_err)?;
        if added > 0 {
            self.wake.notify_one();
        }
        Ok(added)
    }

    /// Up to `max` pending messages, oldest first.
    pub fn pending(&self, max: usize) -> Result<Vec<(u64, Message)>, StoreError> {
        let tx = self.db.begin_read().map_err(redb_err)?;
        let t = tx.open_table(PENDING).map_err(redb_err)?;
        let mut out = Vec::new();
        for row in t.range(0..).map_err(redb_err)?.take(max) {
            let (k, v) = row.map_err(redb_err)?;
            match Message::parse(v.value()) {
                Ok(m) => out.push((k.value(), m)),
                Err(e) => return Err(StoreError::Corrupt(format!("transport outbox: {e}"))),
            }
        }
        Ok(out)
    }

    /// How many messages wait.
    pub fn pending_len(&self) -> Result<u64, StoreError> {
        let tx = self.db.begin_read().map_err(redb_err)?;
        let t = tx.open_table(PENDING).map_err(redb_err)?;
        t.len().map_err(redb_err)
    }

    /// Marks `done` (sequence, id) as published, and (at most once a
    /// minute) forgets ids published longer ago than the config says.
    pub fn done(&self, done: &[(u64, String)]) -> Result<(), StoreError> {
        let now = now_ms();
        let tx = self.db.begin_write().map_err(redb_err)?;
        {
            let mut pending = tx.open_table(PENDING).map_err(redb_err)?;
            let mut ids = tx.open_table(IDS).map_err(redb_err)?;
            for (seq, id) in done {
                pending.remove(*seq).map_err(redb_err)?;
                ids.insert(id.as_str(), now.max(1)).map_err(redb_err)?;
            }
            let last = self.pruned.load(std::sync::atomic::Ordering::Relaxed);
            if now.saturating_sub(last) >= PRUNE_EVERY_MS {
                self.pruned.store(now, std::sync::atomic::Ordering::Relaxed);
                let horizon = now - self.config.remember_ms;
                ids.retain(|_, at| at == 0 || at > horizon)
                    .map_err(redb_err)?;
            }
        }
        tx.commit().map_err(redb_err)
    }

    /// Up to `max` ids the outbox holds (pending or remembered), in id
    /// order: what chime delivered.
    pub fn ids(&self, max: usize) -> Result<Vec<String>, StoreError> {
        let tx = self.db.begin_read().map_err(redb_err)?;
        let t = tx.open_table(IDS).map_err(redb_err)?;
        let mut out = Vec::new();
        for row in t.range::<&str>(..).map_err(redb_err)?.take(max) {
            out.push(row.map_err(redb_err)?.0.value().to_owned());
        }
        Ok(out)
    }

    /// Whether the outbox holds `id` (pending or remembered as published).
    pub fn knows(&self, id: &str) -> Result<bool, StoreError> {
        let tx = self.db.begin_read().map_err(redb_err)?;
        let t = tx.open_table(IDS).map_err(redb_err)?;
        Ok(t.get(id).map_err(redb_err)?.is_some())
    }

    /// Publishes the outbox into `transports` (by queue) until `stop`
    /// is notified: each pending message through its queue's transport,
    /// in order; a broker that is away is retried with capped backoff
    /// (the messages behind it wait, so order holds); a message the
    /// transport refuses (its rules, e.g. a priority it cannot order) is
    /// logged and taken out, as one with no transport.
    /// `wakes`: notified after a queue's message was published (the
    /// queue's local worker pool, which would otherwise wait for its
    /// poll).
    pub async fn publish_loop(
        self,
        transports: HashMap<String, Arc<dyn Transport>>,
        wakes: HashMap<String, Arc<Notify>>,
        stop: Arc<Notify>,
    ) {
        let mut failures = 0u32;
        loop {
            let batch = match self.pending(CHUNK) {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!(error = %e, "transport outbox unreadable");
                    Vec::new()
                }
            };
            if batch.is_empty() {
                tokio::select! {
                    _ = self.wake.notified() => continue,
                    _ = stop.notified() => return,
                }
            }
            let mut done = Vec::new();
            let mut away = None;
            for (seq, m) in &batch {
                let Some(t) = transports.get(&m.queue) else {
                    tracing::warn!(id = %m.id, queue = %m.queue,
                        "fire for an external queue: no transport configured for it");
                    done.push((*seq, m.id.clone()));
                    continue;
                };
                let started = std::time::Instant::now();
                let count = |e| self.counters.count(e, t.backend(), &m.queue);
                match t.publish(m).await {
                    Ok(p) => {
                        self.counters
                            .observe_publish(t.backend(), started.elapsed());
                        if p == Published::Duplicate {
                            count(TransportEvent::Duplicate);
                            tracing::debug!(id = %m.id, "published before (broker de-duplicated)");
                        } else {
                            count(TransportEvent::Published);
                            if let Some(w) = wakes.get(&m.queue) {
                                w.notify_one();
                            }
                        }
                        done.push((*seq, m.id.clone()));
                    }
                    Err(PortError::Refused(e)) => {
                        count(TransportEvent::Refused);
                        tracing::error!(id = %m.id, queue = %m.queue, code = e.code(), error = %e,
                            "transport refused the message; it is not published");
                        done.push((*seq, m.id.clone()));
                    }
                    Err(e) => {
                        count(TransportEvent::PublishError);
                        away = Some((t.backend(), e));
                        break;
                    }
                }
            }
            if let Err(e) = self.done(&done) {
                tracing::error!(error = %e, "transport outbox: could not record publishes");
            }
            match away {
                None => failures = 0,
                Some((transport, e)) => {
                    let wait = backoff(failures, self.config.retry_base, self.config.retry_cap);
                    failures = failures.saturating_add(1);
                    tracing::warn!(transport, error = %e, retry_in_ms = wait.as_millis() as u64,
                        "broker away: publishing waits");
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = stop.notified() => return,
                    }
                }
            }
        }
    }
}

/// A store that also delivers: the `Enqueue` commands of the queues in
/// `queues` go to the [`Outbox`] in [`Store::deliver`]; everything else
/// is the inner store's.
pub struct Outboxed<S> {
    inner: S,
    outbox: Outbox,
    queues: std::collections::BTreeSet<String>,
}

impl<S: Store> Outboxed<S> {
    /// `inner`, delivering the fires of `queues` into `outbox`.
    pub fn new(inner: S, outbox: Outbox, queues: impl IntoIterator<Item = String>) -> Self {
        Outboxed {
            inner,
            outbox,
            queues: queues.into_iter().collect(),
        }
    }
}

impl<S: Store> Store for Outboxed<S> {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        self.inner.load()
    }
    fn load_snapshot(&mut self) -> Result<Option<Snapshot>, StoreError> {
        self.inner.load_snapshot()
    }
    fn for_each_entry(&mut self, each: &mut dyn FnMut(JournalEntry)) -> Result<u64, StoreError> {
        self.inner.for_each_entry(each)
    }
    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        self.inner.append(entries)
    }
    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError> {
        self.inner.write_snapshot(snapshot)
    }
    fn journal_len(&self) -> u64 {
        self.inner.journal_len()
    }
    fn single_owner(&self) -> bool {
        self.inner.single_owner()
    }
    fn delivers(&self) -> bool {
        true
    }
    fn deliver(&mut self, outputs: &[Command]) -> Result<(), StoreError> {
        let mut messages = Vec::new();
        for cmd in outputs {
            if let Some(m) = Message::of_command(cmd) {
                if self.queues.contains(&m.queue) {
                    messages.push(m);
                } else {
                    tracing::warn!(id = %m.id, queue = %m.queue,
                        "fire for an external queue: no transport configured for it");
                }
            }
        }
        self.outbox.put(&messages).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chime_core::{FireId, Headers, Payload};

    fn msg(fire: &str) -> Message {
        let f: FireId = fire.parse().unwrap();
        Message::of_fire(&f, "q", &Payload::null(), &Headers::new(), 0, None)
    }

    #[test]
    fn ids_are_queued_once_and_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.redb");
        let o = Outbox::open(&path, OutboxConfig::default()).unwrap();
        assert_eq!(o.put(&[msg("a@1"), msg("a@2"), msg("a@1")]).unwrap(), 2);
        let p = o.pending(10).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].1.id, "a@1");
        o.done(&[(p[0].0, p[0].1.id.clone())]).unwrap();
        // Re-delivered after a crash: known, not queued again.
        assert_eq!(o.put(&[msg("a@1")]).unwrap(), 0);
        drop(o);
        let o = Outbox::open(&path, OutboxConfig::default()).unwrap();
        assert_eq!(o.pending_len().unwrap(), 1);
        assert!(o.knows("a@1").unwrap());
        assert_eq!(o.pending(10).unwrap()[0].1.id, "a@2");
    }

    #[test]
    fn published_ids_are_forgotten_after_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let config = OutboxConfig {
            remember_ms: -1,
            ..OutboxConfig::default()
        };
        let o = Outbox::open(&dir.path().join("o.redb"), config).unwrap();
        o.put(&[msg("a@1"), msg("a@2")]).unwrap();
        let p = o.pending(10).unwrap();
        o.done(&[(p[0].0, p[0].1.id.clone())]).unwrap();
        assert!(!o.knows("a@1").unwrap(), "published and past the window");
        assert!(o.knows("a@2").unwrap(), "pending ids are never forgotten");
    }
}
