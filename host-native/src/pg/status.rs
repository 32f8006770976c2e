//! [`ReplicaStatus`]: what a replica knows about itself, for its
//! listener's `/healthz` and `/metrics` (`pg/http.rs`). Written by the
//! replica's loops, read by the handlers; plain atomics (and the
//! leader's driver handle, for its vital signs).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// One replica's live state and counters.
#[derive(Debug, Default)]
pub struct ReplicaStatus {
    connected: AtomicBool,
    leading: AtomicBool,
    epoch: AtomicU64,
    lease_expires_ms: AtomicI64,
    terms: AtomicU64,
    renewals: AtomicU64,
    renew_micros: AtomicU64,
    renew_last_micros: AtomicU64,
    db_errors: AtomicU64,
    inbox_applied: AtomicU64,
    /// The engine's driver while this replica leads, for the vital signs
    /// of `/healthz` (its turns and commits).
    driver: std::sync::Mutex<Option<crate::driver::Handle>>,
}

/// A copy of the status at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusView {
    /// The session is connected (queues and lease open).
    pub connected: bool,
    /// This replica holds the lease and runs the engine.
    pub leading: bool,
    /// Its epoch while leading (else the last it held, or 0).
    pub epoch: u64,
    /// Its lease row's expiry on the database clock (Unix ms) while leading.
    pub lease_expires_ms: i64,
    /// Terms this replica has begun.
    pub terms: u64,
    /// Lease renewals that succeeded, their total and last round trip.
    pub renewals: u64,
    /// Sum of renewal round trips, microseconds.
    pub renew_micros: u64,
    /// The last renewal's round trip, microseconds.
    pub renew_last_micros: u64,
    /// Database errors this replica logged (failed statements, lost
    /// sessions).
    pub db_errors: u64,
    /// Inbox rows this replica applied as leader.
    pub inbox_applied: u64,
}

impl ReplicaStatus {
    /// A copy of every field.
    pub fn view(&self) -> StatusView {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        StatusView {
            connected: self.connected.load(Ordering::Relaxed),
            leading: self.leading.load(Ordering::Relaxed),
            epoch: l(&self.epoch),
            lease_expires_ms: self.lease_expires_ms.load(Ordering::Relaxed),
            terms: l(&self.terms),
            renewals: l(&self.renewals),
            renew_micros: l(&self.renew_micros),
            renew_last_micros: l(&self.renew_last_micros),
            db_errors: l(&self.db_errors),
            inbox_applied: l(&self.inbox_applied),
        }
    }

    pub(crate) fn set_connected(&self, on: bool) {
        self.connected.store(on, Ordering::Relaxed);
    }

    /// The vital signs of the engine's driver while this replica leads
    /// (counted from the start of its term); `None` on a follower.
    pub fn driver_vitals(&self) -> Option<crate::driver::VitalSigns> {
        let driver = self.driver.lock().unwrap_or_else(|p| p.into_inner());
        driver.as_ref().map(|h| h.vitals().read())
    }

    pub(crate) fn set_driver(&self, handle: Option<crate::driver::Handle>) {
        *self.driver.lock().unwrap_or_else(|p| p.into_inner()) = handle;
    }

    pub(crate) fn begin_term(&self, epoch: u64, expires_ms: i64) {
        self.epoch.store(epoch, Ordering::Relaxed);
        self.lease_expires_ms.store(expires_ms, Ordering::Relaxed);
        self.terms.fetch_add(1, Ordering::Relaxed);
        self.leading.store(true, Ordering::Relaxed);
    }

    pub(crate) fn end_term(&self) {
        self.leading.store(false, Ordering::Relaxed);
    }

    pub(crate) fn renewed(&self, expires_ms: i64, round_trip: std::time::Duration) {
        let us = round_trip.as_micros() as u64;
        self.lease_expires_ms.store(expires_ms, Ordering::Relaxed);
        self.renewals.fetch_add(1, Ordering::Relaxed);
        self.renew_micros.fetch_add(us, Ordering::Relaxed);
        self.renew_last_micros.store(us, Ordering::Relaxed);
    }

    /// Counts one database error.
    pub fn db_error(&self) {
        self.db_errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn applied(&self, n: u64) {
        self.inbox_applied.fetch_add(n, Ordering::Relaxed);
    }
}
