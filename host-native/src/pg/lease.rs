//! The leader lease: one row per lease name in `chime_leader`, with the
//! holder, an epoch that grows by one on every takeover, and an expiry set
//! from the **database** clock (`now() + ttl`). Only the row decides who
//! leads; a replica's own clock is used for durations only.
//!
//! # Why `valid_until` is counted from before the request
//!
//! The engine needs to know, on *its* clock, when to stop firing. The
//! database sets `expires_at = db_now + ttl`, where `db_now` is some instant
//! between the moment we sent the request and the moment its reply arrived.
//! We cannot read `db_now` on our clock (the two clocks may be offset by
//! any amount), but we do know it was not earlier than our send instant
//! `t0`. So the lease lasts at least until `t0 + ttl` in real time, and
//! [`LeaseGrant::valid_until`] is `t0 + ttl - skew_allowance`: the
//! allowance covers the two clocks *running* at different rates over one
//! TTL and small steps of our wall clock, not their offset, which never
//! enters the computation. A slow round trip therefore only shortens the
//! grant (the measured [`LeaseGrant::round_trip`] is reported so a host can
//! log or alarm on it); it can never extend it past the real expiry.
//!
//! # Renewal and fencing
//!
//! The holder renews every [`LeaseOptions::renew_every`] (TTL/3), so two
//! renewals can fail before the grant runs out. A renewal succeeds only if
//! the row still names us *with the same epoch*; otherwise it fails with
//! [`PgError::LeaseLost`]. Writes to the engine's state are fenced by the
//! same epoch in the store's transactions ([`super::PgStore`]), so even a
//! leader that missed losing its lease (paused, partitioned) cannot write.

use super::connection::{PgConfig, PgError, check_schema, connect};
use super::migrate::migrate;
use crate::driver::Clock;
use chime_core::{Epoch, LeadershipGrant, Timestamp};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::Client;

/// Timing of a lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseOptions {
    /// How long a grant or renewal lasts on the database clock.
    pub ttl: Duration,
    /// Taken off every grant's `valid_until`: the most the replica's clock
    /// may run fast relative to the database's over one TTL (plus small
    /// wall-clock steps). Must be shorter than `ttl`.
    pub skew_allowance: Duration,
}

impl Default for LeaseOptions {
    /// 15 s TTL (renewed every 5 s), 1 s skew allowance: a dead leader is
    /// replaced within about 15-20 s, and two renewals may fail in a row.
    fn default() -> Self {
        LeaseOptions {
            ttl: Duration::from_secs(15),
            skew_allowance: Duration::from_secs(1),
        }
    }
}

impl LeaseOptions {
    /// How often the holder should renew: TTL/3.
    pub fn renew_every(&self) -> Duration {
        self.ttl / 3
    }

    fn check(&self) -> Result<(), PgError> {
        if self.ttl.as_millis() == 0 || self.skew_allowance >= self.ttl {
            return Err(PgError::BadLease(format!(
                "ttl {:?} must be at least 1 ms and longer than the skew allowance {:?}",
                self.ttl, self.skew_allowance
            )));
        }
        Ok(())
    }
}

/// A successful acquire or renew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseGrant {
    /// The term: strictly greater than every earlier holder's.
    pub epoch: Epoch,
    /// On the replica's clock: fire nothing from this instant on unless
    /// renewed (see the module docs for how it is computed).
    pub valid_until: Timestamp,
    /// The row's expiry on the database clock, in Unix milliseconds
    /// (diagnostics only: it is on another clock than `valid_until`).
    pub db_expires_at_ms: i64,
    /// Measured time from sending the request to its reply.
    pub round_trip: Duration,
}

impl LeaseGrant {
    /// The input to feed the engine
    /// (`Input::Leadership(Some(grant.leadership()))`).
    pub fn leadership(&self) -> LeadershipGrant {
        LeadershipGrant {
            epoch: self.epoch,
            valid_until: self.valid_until,
        }
    }
}

/// The lease row as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRow {
    /// Who holds it (`None`: released).
    pub holder: Option<String>,
    /// The current term.
    pub epoch: Epoch,
    /// Expiry on the database clock, Unix milliseconds.
    pub expires_at_ms: i64,
    /// Whether it had expired at the database's `now()` when read.
    pub expired: bool,
}

/// One replica's handle on a named lease, with its own connection.
pub struct LeaderLease {
    client: Client,
    table: String,
    name: String,
    holder: String,
    options: LeaseOptions,
    clock: Arc<dyn Clock>,
    /// The epoch we hold, if any.
    held: Option<u64>,
}

impl std::fmt::Debug for LeaderLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderLease")
            .field("table", &self.table)
            .field("name", &self.name)
            .field("holder", &self.holder)
            .field("options", &self.options)
            .field("held", &self.held)
            .finish()
    }
}

/// Milliseconds of a duration as the `bigint` the SQL multiplies.
fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Unix milliseconds of a `timestamptz` column, on the database clock.
const EXPIRES_MS: &str = "floor(extract(epoch FROM expires_at) * 1000)::bigint";

impl LeaderLease {
    /// Connects (on the current tokio runtime), migrates the schema, and
    /// returns a handle that does not hold the lease yet. `holder` must be
    /// unique among live replicas (see [`default_holder`]); `clock` must be
    /// the engine's clock, since `valid_until` is compared with its `now`.
    pub async fn connect(
        config: &PgConfig,
        name: &str,
        holder: &str,
        options: LeaseOptions,
        clock: Arc<dyn Clock>,
    ) -> Result<LeaderLease, PgError> {
        check_schema(&config.schema)?;
        options.check()?;
        let mut client = connect(&config.url).await?;
        migrate(&mut client, &config.schema).await?;
        Ok(LeaderLease {
            client,
            table: format!("\"{}\".chime_leader", config.schema),
            name: name.to_owned(),
            holder: holder.to_owned(),
            options,
            clock,
            held: None,
        })
    }

    /// The lease's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This replica's holder id.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The timing in force.
    pub fn options(&self) -> LeaseOptions {
        self.options
    }

    /// Whether the connection has closed: every call fails from then on.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The epoch this handle holds, if it acquired and has not lost or
    /// released the lease (as far as it knows).
    pub fn held_epoch(&self) -> Option<Epoch> {
        self.held.map(Epoch)
    }

    /// Takes the lease if it is free (released or never taken), expired
    /// on the database clock, or already ours; every successful acquire
    /// starts a new term (epoch + 1), so writes fenced by any older epoch —
    /// including our own earlier term — fail from now on. `Ok(None)`: a
    /// live lease is held by another replica.
    pub async fn acquire(&mut self) -> Result<Option<LeaseGrant>, PgError> {
        let sql = format!(
            "INSERT INTO {t} AS l (name, holder, epoch, expires_at)
             VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond')
             ON CONFLICT (name) DO UPDATE
                SET holder = excluded.holder,
                    epoch = l.epoch + 1,
                    expires_at = excluded.expires_at
                WHERE l.holder IS NULL OR l.expires_at <= now() OR l.holder = excluded.holder
             RETURNING epoch, {EXPIRES_MS}",
            t = self.table
        );
        let (sent_at, started) = (self.clock.now(), Instant::now());
        let row = self
            .client
            .query_opt(&sql, &[&self.name, &self.holder, &ms(self.options.ttl)])
            .await
            .map_err(PgError::db("acquiring the leader lease"))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let epoch = row.get::<_, i64>(0) as u64;
        self.held = Some(epoch);
        let grant = self.grant(epoch, row.get(1), sent_at, started.elapsed());
        tracing::info!(lease = %self.name, holder = %self.holder, epoch, "leader lease acquired");
        Ok(Some(grant))
    }

    /// Extends the lease we hold to `now() + ttl` (database clock), only if
    /// the row still names us with our epoch. Fails with
    /// [`PgError::LeaseLost`] otherwise (also when we never held it); the
    /// caller must then stop leading (`Input::Leadership(None)`).
    pub async fn renew(&mut self) -> Result<LeaseGrant, PgError> {
        let Some(epoch) = self.held else {
            return Err(self.lost(0).await);
        };
        let sql = format!(
            "UPDATE {t} SET expires_at = now() + $4::bigint * interval '1 millisecond'
             WHERE name = $1 AND holder = $2 AND epoch = $3
             RETURNING {EXPIRES_MS}",
            t = self.table
        );
        let (sent_at, started) = (self.clock.now(), Instant::now());
        let row = self
            .client
            .query_opt(
                &sql,
                &[
                    &self.name,
                    &self.holder,
                    &(epoch as i64),
                    &ms(self.options.ttl),
                ],
            )
            .await
            .map_err(PgError::db("renewing the leader lease"))?;
        match row {
            Some(row) => Ok(self.grant(epoch, row.get(0), sent_at, started.elapsed())),
            None => {
                self.held = None;
                Err(self.lost(epoch).await)
            }
        }
    }

    /// Gives the lease up at once (holder cleared, expiry now) so another
    /// replica need not wait out the TTL. Returns whether we still held it.
    /// Stop the driver (its final snapshot is a fenced write) *before*
    /// releasing.
    pub async fn release(&mut self) -> Result<bool, PgError> {
        let Some(epoch) = self.held.take() else {
            return Ok(false);
        };
        let sql = format!(
            "UPDATE {t} SET holder = NULL, expires_at = now()
             WHERE name = $1 AND holder = $2 AND epoch = $3",
            t = self.table
        );
        let n = self
            .client
            .execute(&sql, &[&self.name, &self.holder, &(epoch as i64)])
            .await
            .map_err(PgError::db("releasing the leader lease"))?;
        Ok(n == 1)
    }

    /// The row as it is now (`None`: never acquired).
    pub async fn current(&self) -> Result<Option<LeaseRow>, PgError> {
        let sql = format!(
            "SELECT holder, epoch, {EXPIRES_MS}, expires_at <= now() FROM {t} WHERE name = $1",
            t = self.table
        );
        let row = self
            .client
            .query_opt(&sql, &[&self.name])
            .await
            .map_err(PgError::db("reading the leader lease"))?;
        Ok(row.map(|r| LeaseRow {
            holder: r.get(0),
            epoch: Epoch(r.get::<_, i64>(1) as u64),
            expires_at_ms: r.get(2),
            expired: r.get(3),
        }))
    }

    fn grant(
        &self,
        epoch: u64,
        db_expires_at_ms: i64,
        sent_at: Timestamp,
        rtt: Duration,
    ) -> LeaseGrant {
        let lasts = ms(self.options.ttl) - ms(self.options.skew_allowance);
        let valid_until = sent_at.saturating_add_ms(lasts);
        if rtt >= self.options.ttl - self.options.skew_allowance {
            tracing::warn!(lease = %self.name, ?rtt, "lease round trip used up the whole grant");
        }
        LeaseGrant {
            epoch: Epoch(epoch),
            valid_until,
            db_expires_at_ms,
            round_trip: rtt,
        }
    }

    /// The error for a lease that is not ours at `epoch`, with what the row
    /// says now (best effort: a failed read still reports the loss).
    async fn lost(&self, epoch: u64) -> PgError {
        let row = self.current().await.ok().flatten();
        PgError::LeaseLost {
            name: self.name.clone(),
            epoch,
            current_epoch: row.as_ref().map(|r| r.epoch.0),
            holder: row.and_then(|r| r.holder),
        }
    }
}

/// A holder id unique among live replicas: host name, process id and the
/// start time in nanoseconds (a restarted process never reuses an id, so it
/// never mistakes an older term for its own).
pub fn default_holder() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{host}/{}/{nanos:x}", std::process::id())
}
