//! [`PgStore`]: the engine's snapshot and journal in Postgres, fenced by the
//! leader lease's epoch.
//!
//! Every write (append, snapshot) runs in one transaction that first locks
//! the lease row (`SELECT … FOR UPDATE`) and checks that it still carries
//! the epoch this store was opened with. A takeover updates that same row,
//! so the two serialize: either the write commits before the takeover (and
//! the new leader, which loads after acquiring, sees it), or the takeover
//! commits first and the write finds a newer epoch, rolls back and fails
//! with [`StoreError::Fenced`] — a deposed leader writes nothing.

use super::bridge::Bridge;
use super::connection::{PgConfig, PgError, check_schema};
use super::fires::{Deliveries, Destination};
use super::inbox::{InboxSlot, mark_sql};
use super::migrate::migrate;
use crate::store::{Recovered, Store, StoreError};
use chime_core::{Command, EngineConfig, Epoch, JournalEntry, Snapshot, journal};
use tokio_postgres::Transaction;

/// Table names in the configured schema.
#[derive(Clone, Debug)]
struct Tables {
    /// The quoted schema.
    schema: String,
    leader: String,
    snapshot: String,
    journal: String,
    /// The job queues' wake-up channel.
    channel: String,
}

/// The Postgres store of one engine (keyed by its lease name), writing
/// under one leader epoch. A replica that wins a later term opens a new
/// store (after loading, since another leader may have written between its
/// terms).
pub struct PgStore {
    bridge: Bridge,
    tables: Tables,
    engine: String,
    /// The seed and limits of the queues the engine's fires create.
    engine_config: EngineConfig,
    epoch: u64,
    first_seq: i64,
    next_seq: i64,
    /// The inbox row the leader is applying, marked applied by the append
    /// that journals its input (see `pg/inbox.rs`).
    inbox: Option<InboxSlot>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("engine", &self.engine)
            .field("epoch", &self.epoch)
            .field("first_seq", &self.first_seq)
            .field("next_seq", &self.next_seq)
            .finish()
    }
}

impl PgStore {
    /// Connects (on the store's own thread), migrates the schema, and opens
    /// the state of `engine` — the name of the leader lease that guards it
    /// — for writing under `epoch` (the grant from
    /// [`super::LeaderLease::acquire`]). A queue that one of the engine's
    /// fires names and the tables do not hold yet is created as an
    /// enqueue creates it: [`chime_core::QueueConfig::implicit`] under
    /// `engine_config`'s limits, with its seed (the one the queues'
    /// [`super::PgQueues`] are given), so the fire's retries are the
    /// engine's. Blocking: call it before the driver starts, like
    /// [`crate::store::RedbStore::open`].
    pub fn open(
        config: &PgConfig,
        engine: &str,
        epoch: Epoch,
        engine_config: &EngineConfig,
    ) -> Result<PgStore, StoreError> {
        check_schema(&config.schema)?;
        let bridge = Bridge::connect(&config.url)?;
        let schema = config.schema.clone();
        bridge.call(move |c| Box::pin(async move { migrate(c, &schema).await }))??;
        let q = format!("\"{}\"", config.schema);
        let tables = Tables {
            leader: format!("{q}.chime_leader"),
            snapshot: format!("{q}.chime_snapshot"),
            journal: format!("{q}.chime_journal"),
            schema: q,
            channel: super::connection::wake_channel(&config.schema),
        };
        let mut store = PgStore {
            bridge,
            tables,
            engine: engine.to_owned(),
            engine_config: engine_config.clone(),
            epoch: epoch.0,
            first_seq: 0,
            next_seq: 0,
            inbox: None,
        };
        store.read_bounds()?;
        Ok(store)
    }

    /// Marks the inbox row in `slot` applied in the append that journals
    /// its input: the input and its row commit together, so a takeover
    /// neither loses nor repeats it.
    pub(crate) fn with_inbox(mut self, slot: InboxSlot) -> PgStore {
        self.inbox = Some(slot);
        self
    }

    /// The epoch every write is checked against.
    pub fn epoch(&self) -> Epoch {
        Epoch(self.epoch)
    }

    /// Has the server end this store's session when it sits inside a
    /// transaction for longer than `limit` (`idle_in_transaction_session_timeout`).
    ///
    /// Why: every write locks the lease row until it commits. A leader
    /// process paused in the middle of one (SIGSTOP, a VM freeze, a
    /// partition that keeps the TCP connection open) holds that lock, and
    /// the next leader's takeover — an update of the same row — would wait
    /// for it indefinitely. With the limit below the lease's TTL the
    /// server rolls the paused transaction back and the takeover goes
    /// ahead once the lease has expired; the paused leader finds its
    /// session gone (and is fenced anyway).
    pub fn limit_idle_in_transaction(
        &mut self,
        limit: std::time::Duration,
    ) -> Result<(), StoreError> {
        let ms = limit.as_millis().max(1);
        let sql = format!("SET idle_in_transaction_session_timeout = {ms}");
        self.bridge.call(move |c| {
            Box::pin(async move {
                c.batch_execute(&sql)
                    .await
                    .map_err(PgError::db("limiting idle transactions"))
            })
        })??;
        Ok(())
    }

    /// Sets `first_seq`/`next_seq` from the journal rows.
    fn read_bounds(&mut self) -> Result<(), StoreError> {
        let sql = format!(
            "SELECT min(seq), max(seq) FROM {} WHERE engine = $1",
            self.tables.journal
        );
        let engine = self.engine.clone();
        let (first, last) = self.bridge.call(move |c| {
            Box::pin(async move {
                let row = c
                    .query_one(&sql, &[&engine])
                    .await
                    .map_err(PgError::db("reading the journal bounds"))?;
                Ok::<_, PgError>((row.get::<_, Option<i64>>(0), row.get::<_, Option<i64>>(1)))
            })
        })??;
        (self.first_seq, self.next_seq) = match (first, last) {
            (Some(f), Some(l)) => (f, l + 1),
            _ => (0, 0),
        };
        Ok(())
    }
}

/// Locks the lease row and checks it is still at `epoch` with a holder;
/// the lock is held until the caller's transaction ends, so no takeover
/// can commit in between.
async fn fence(
    tx: &Transaction<'_>,
    leader: &str,
    engine: &str,
    epoch: u64,
) -> Result<(), StoreError> {
    let row = tx
        .query_opt(
            &format!("SELECT holder, epoch FROM {leader} WHERE name = $1 FOR UPDATE"),
            &[&engine],
        )
        .await
        .map_err(PgError::db("locking the leader lease"))?;
    let (holder, current) = match &row {
        Some(r) => (
            r.get::<_, Option<String>>(0),
            Some(r.get::<_, i64>(1) as u64),
        ),
        None => (None, None),
    };
    if current == Some(epoch) && holder.is_some() {
        return Ok(());
    }
    Err(StoreError::Fenced {
        engine: engine.to_owned(),
        epoch,
        current_epoch: current,
        holder,
    })
}

impl Store for PgStore {
    fn load(&mut self) -> Result<Recovered, StoreError> {
        let snap_sql = format!(
            "SELECT body FROM {} WHERE engine = $1",
            self.tables.snapshot
        );
        let journal_sql = format!(
            "SELECT seq, entry FROM {} WHERE engine = $1 ORDER BY seq",
            self.tables.journal
        );
        let engine = self.engine.clone();
        let (body, rows) = self.bridge.call(move |c| {
            Box::pin(async move {
                // One repeatable-read transaction: the snapshot and the
                // journal come from the same instant even while a leader
                // writes.
                let tx = c
                    .build_transaction()
                    .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start()
                    .await
                    .map_err(PgError::db("starting the load"))?;
                let body: Option<String> = tx
                    .query_opt(&snap_sql, &[&engine])
                    .await
                    .map_err(PgError::db("reading the snapshot"))?
                    .map(|r| r.get(0));
                let rows: Vec<(i64, String)> = tx
                    .query(&journal_sql, &[&engine])
                    .await
                    .map_err(PgError::db("reading the journal"))?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                tx.commit().await.map_err(PgError::db("ending the load"))?;
                Ok::<_, PgError>((body, rows))
            })
        })??;
        let snapshot = body
            .as_deref()
            .map(Snapshot::from_json)
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("snapshot of {:?}: {e}", self.engine)))?;
        let mut text = String::new();
        for (_, line) in &rows {
            text.push_str(line);
            text.push('\n');
        }
        let entries = journal::read(&text)
            .map_err(|e| StoreError::Corrupt(format!("journal of {:?}: {e}", self.engine)))?;
        (self.first_seq, self.next_seq) = match (rows.first(), rows.last()) {
            (Some((f, _)), Some((l, _))) => (*f, l + 1),
            _ => (self.next_seq, self.next_seq),
        };
        Ok(Recovered { snapshot, entries })
    }

    fn append(&mut self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        let seqs: Vec<i64> = (self.next_seq..).take(entries.len()).collect();
        let lines: Vec<String> = entries.iter().map(journal::encode).collect();
        let insert = format!(
            "INSERT INTO {} (engine, seq, epoch, entry)
             SELECT $1, s, $2, e FROM unnest($3::bigint[], $4::text[]) AS t(s, e)",
            self.tables.journal
        );
        let (leader, engine, epoch) = (self.tables.leader.clone(), self.engine.clone(), self.epoch);
        let claimed = self
            .inbox
            .as_ref()
            .and_then(|s| s.matching(entries.iter().map(|e| &e.input)));
        let mark = mark_sql(&self.tables.schema);
        self.bridge.call(move |c| {
            Box::pin(async move {
                let tx = c
                    .transaction()
                    .await
                    .map_err(PgError::db("starting an append"))?;
                fence(&tx, &leader, &engine, epoch).await?;
                tx.execute(&insert, &[&engine, &(epoch as i64), &seqs, &lines])
                    .await
                    .map_err(PgError::db("appending to the journal"))?;
                if let Some(id) = claimed {
                    tx.execute(&mark, &[&id, &(epoch as i64)])
                        .await
                        .map_err(PgError::db("marking an inbox row applied"))?;
                }
                tx.commit()
                    .await
                    .map_err(PgError::db("committing an append"))?;
                Ok::<_, StoreError>(())
            })
        })??;
        if let (Some(slot), Some(id)) = (&self.inbox, claimed) {
            slot.marked(id);
        }
        self.next_seq += entries.len() as i64;
        Ok(())
    }

    fn write_snapshot(&mut self, snapshot: &Snapshot) -> Result<(), StoreError> {
        let body = snapshot.to_json();
        let upsert = format!(
            "INSERT INTO {} (engine, epoch, body) VALUES ($1, $2, $3)
             ON CONFLICT (engine) DO UPDATE
                SET epoch = excluded.epoch, body = excluded.body, written_at = now()",
            self.tables.snapshot
        );
        let truncate = format!("DELETE FROM {} WHERE engine = $1", self.tables.journal);
        let (leader, engine, epoch) = (self.tables.leader.clone(), self.engine.clone(), self.epoch);
        self.bridge.call(move |c| {
            Box::pin(async move {
                let tx = c
                    .transaction()
                    .await
                    .map_err(PgError::db("starting a snapshot"))?;
                fence(&tx, &leader, &engine, epoch).await?;
                tx.execute(&upsert, &[&engine, &(epoch as i64), &body])
                    .await
                    .map_err(PgError::db("writing the snapshot"))?;
                tx.execute(&truncate, &[&engine])
                    .await
                    .map_err(PgError::db("truncating the journal"))?;
                tx.commit()
                    .await
                    .map_err(PgError::db("committing a snapshot"))?;
                Ok::<_, StoreError>(())
            })
        })??;
        self.first_seq = self.next_seq;
        Ok(())
    }

    fn journal_len(&self) -> u64 {
        (self.next_seq - self.first_seq) as u64
    }

    fn delivers(&self) -> bool {
        true
    }

    /// Inserts each fire with its job, and each skipped run, in one
    /// transaction fenced like an append: a deposed leader delivers
    /// nothing. A fire already in `chime_fires` (delivered before a crash
    /// or by the previous leader's last turn) is left alone and gets no
    /// second job.
    fn deliver(&mut self, outputs: &[Command]) -> Result<(), StoreError> {
        let d = Deliveries::of(outputs);
        if d.is_empty() {
            return Ok(());
        }
        let (leader, engine, epoch) = (self.tables.leader.clone(), self.engine.clone(), self.epoch);
        let (schema, channel) = (self.tables.schema.clone(), self.tables.channel.clone());
        let engine_config = self.engine_config.clone();
        self.bridge.call(move |c| {
            Box::pin(async move {
                let tx = c
                    .transaction()
                    .await
                    .map_err(PgError::db("starting a delivery"))?;
                fence(&tx, &leader, &engine, epoch).await?;
                let to = Destination {
                    schema: &schema,
                    channel: &channel,
                    engine: &engine,
                    engine_config: &engine_config,
                };
                d.write(&tx, &to, epoch).await?;
                tx.commit()
                    .await
                    .map_err(PgError::db("committing a delivery"))?;
                Ok::<_, StoreError>(())
            })
        })??;
        Ok(())
    }
}
