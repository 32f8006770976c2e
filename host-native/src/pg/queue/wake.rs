//! Wake-ups after an enqueue on the handle's own connection: the first
//! enqueue of a quiet queue carries its `NOTIFY` inside its own
//! transaction (delivered with the commit: no round trip after it), and
//! while that one is in flight, the enqueues behind it are plain inserts
//! covered by one trailing `NOTIFY` sent once it has returned.
//!
//! Why not a `NOTIFY` in every enqueue: PostgreSQL serializes the commits
//! of notifying transactions (a database-wide lock held through the
//! commit's WAL flush), which made every enqueue a serialized fsync —
//! about 1,000 jobs/s whatever the number of producers (`BENCHMARKS.md`).
//! With at most one notifying statement per queue in flight per handle,
//! an isolated job is announced by its own commit and a burst costs one
//! notification per round trip, not one per job.
//!
//! Why every job is covered: a worker woken by a notification claims until
//! the queue is empty, so a job needs *a* notification committed after
//! it. A plain insert that returns while a notifying statement of its
//! queue is in flight marks the queue pending, and that statement's
//! return sends a trailing one; one that returns when none is in flight
//! sends it itself. Either is sent after the insert committed.

use super::{PgQueues, sql};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Queues with wake-up state at most; idle ones are forgotten first.
const MAX_WAKE_QUEUES: usize = 4_096;

/// The wake-up state of the handle's queues.
#[derive(Debug, Default)]
pub(super) struct Wakes(Arc<Mutex<BTreeMap<String, Wake>>>);

#[derive(Debug, Default)]
struct Wake {
    /// Notifying enqueues sent and not yet returned.
    in_flight: u32,
    /// A plain insert returned while one was in flight.
    pending: bool,
    /// A trailing notification is on its way.
    scheduled: bool,
    /// When the last notification was sent.
    last: Option<Instant>,
}

impl Wake {
    fn idle(&self, every: Duration) -> bool {
        self.in_flight == 0
            && !self.pending
            && !self.scheduled
            && self.last.is_none_or(|l| l.elapsed() >= every)
    }
}

impl Wakes {
    fn with<T>(&self, queue: &str, f: impl FnOnce(&mut Wake) -> T, every: Duration) -> T {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_WAKE_QUEUES && !map.contains_key(queue) {
            map.retain(|_, w| !w.idle(every));
        }
        let w = map.entry(queue.to_owned()).or_default();
        let out = f(w);
        if w.idle(every) {
            map.remove(queue);
        }
        out
    }
}

impl PgQueues {
    /// Whether the enqueue of a job of `queue` about to be sent carries its
    /// wake-up in its transaction (then [`wake_done`](Self::wake_done) must
    /// follow with `carried`). A delayed job always does: its notification
    /// says when it is due, which a trailing one would not.
    pub(super) fn wake_carry(&self, queue: &str, delayed: bool) -> bool {
        let every = self.wake_every;
        self.wakes.with(
            queue,
            |w| {
                let quiet =
                    w.in_flight == 0 && !w.scheduled && w.last.is_none_or(|l| l.elapsed() >= every);
                if delayed || quiet {
                    w.in_flight += 1;
                    w.last = Some(Instant::now());
                    true
                } else {
                    false
                }
            },
            every,
        )
    }

    /// An enqueue of `queue` returned (`added`: it made a job, committed):
    /// sends the trailing wake-up it owes, if any (see the module docs).
    pub(super) fn wake_done(&self, queue: &str, carried: bool, added: bool) {
        let every = self.wake_every;
        let trail = self.wakes.with(
            queue,
            |w| {
                if carried {
                    w.in_flight = w.in_flight.saturating_sub(1);
                    w.in_flight == 0 && std::mem::take(&mut w.pending)
                } else if added && w.in_flight > 0 {
                    w.pending = true;
                    false
                } else {
                    added
                }
            },
            every,
        );
        if trail {
            self.wake(queue);
        }
    }

    /// Sends a trailing wake-up for `queue` (its jobs have committed): at
    /// once if none was sent in the last wake-up interval, else one at the
    /// end of that interval for all the jobs in between. Best effort: a
    /// lost notification costs a worker's poll interval, never a job.
    pub(super) fn wake(&self, queue: &str) {
        let every = self.wake_every;
        let delay = self.wakes.with(
            queue,
            |w| {
                if w.scheduled {
                    return None;
                }
                w.scheduled = true;
                Some(
                    w.last
                        .map_or(Duration::ZERO, |l| every.saturating_sub(l.elapsed())),
                )
            },
            every,
        );
        let Some(delay) = delay else {
            return;
        };
        let (client, wakes) = (self.client.clone(), Wakes(self.wakes.0.clone()));
        let (channel, queue) = (self.channel.clone(), queue.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            // Cleared before sending: a job committed after this point
            // schedules a wake-up of its own.
            wakes.with(
                &queue,
                |w| {
                    w.scheduled = false;
                    w.last = Some(Instant::now());
                },
                every,
            );
            if let Err(e) = client.execute(sql::NOTIFY, &[&channel, &queue]).await {
                tracing::debug!(error = %e, queue, "wake-up not sent");
            }
        });
    }
}
