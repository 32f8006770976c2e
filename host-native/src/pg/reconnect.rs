//! How a replica outlives its database: which failures are worth waiting
//! out ([`retryable`]) and how long to wait between attempts
//! ([`Backoff`]).
//!
//! A replica whose connections close (the server restarted, a proxy cut
//! them, the server is not up yet at start-up) tears its session down —
//! worker pools, listener, housekeeping, and the engine if it led — and
//! opens a fresh one once the database answers again, rather than
//! exiting: all three replicas of a deployment lose the same database at
//! the same moment, so "exit and let the supervisor restart it" turned a
//! 0.6 s restart into a full outage (and a crash loop while it lasted).
//! Rebuilding the whole session keeps the property that made exiting
//! attractive — no handle carries state from a dead connection — without
//! leaving the process.

use super::connection::PgError;
use std::time::Duration;

/// Exponential backoff between session attempts: `first`, doubling, at
/// most `max`. Deterministic (no jitter): replicas that lost the same
/// server retry on the same schedule, which a few replicas can afford.
#[derive(Clone, Debug)]
pub(crate) struct Backoff {
    first: Duration,
    max: Duration,
    next: Duration,
    /// Attempts since the last success (for the logs).
    pub(crate) attempt: u32,
}

impl Backoff {
    pub(crate) fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max,
            next: first,
            attempt: 0,
        }
    }

    /// The wait before the next attempt; doubles the one after.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        self.attempt += 1;
        d
    }

    /// Back to the first delay (a session connected: the outage is over).
    pub(crate) fn reset(&mut self) {
        self.next = self.first;
        self.attempt = 0;
    }
}

/// Whether waiting can fix `e`: a database that is down, restarting or
/// unreachable, yes; a bad schema name or lease timing, a schema newer
/// than this binary, unreadable rows, a wrong password or a database that
/// does not exist, no (the replica exits with the error, which names the
/// server's reason).
pub(crate) fn retryable(e: &PgError) -> bool {
    match e {
        PgError::Db { source, .. } => match source.code() {
            // 28: invalid authorization (wrong user or password);
            // 3D000: the database does not exist.
            Some(code) => !(code.code().starts_with("28") || code.code() == "3D000"),
            None => true,
        },
        PgError::Thread(_) | PgError::Contended(_) => true,
        PgError::BadSchema(_)
        | PgError::BadLease(_)
        | PgError::LeaseLost { .. }
        | PgError::SchemaTooNew { .. }
        | PgError::Stored(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::Backoff;
    use std::time::Duration;

    #[test]
    fn backoff_doubles_up_to_its_cap_and_resets() {
        let ms = Duration::from_millis;
        let mut b = Backoff::new(ms(200), ms(1_000));
        let seen: Vec<_> = (0..5).map(|_| b.next_delay()).collect();
        assert_eq!(seen, [ms(200), ms(400), ms(800), ms(1_000), ms(1_000)]);
        assert_eq!(b.attempt, 5);
        b.reset();
        assert_eq!((b.next_delay(), b.attempt), (ms(200), 1));
    }
}
