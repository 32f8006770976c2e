//! Completions of the listener's queue port coalesced into
//! [`PgQueues::complete_many`]: one statement and one commit for the
//! completes that arrive together, as the worker pools' completer does.
//!
//! Why: `POST /v1/jobs/complete` sends every item of a batch at once (the
//! embedded driver takes them in one turn, one commit). On Postgres each
//! `complete` was its own autocommit statement on the port's one
//! connection, and one backend commits one transaction at a time, so a
//! batch of 100 cost 100 WAL flushes: 465 ms on the 2-core VM, an HTTP
//! worker pool of 153 jobs/s (BENCHMARKS.md, "Postgres mode: the server
//! API and graphile-worker").
//!
//! A call queues its job and, if no flush is running, spawns one; the
//! flush yields once (so the rest of a batch sent in the same poll joins),
//! then completes what is queued, [`MAX_FLUSH`] at a time, until nothing
//! is. It runs in its own task: an HTTP request dropped mid-call (its
//! client went away) cannot strand the others' replies. Each job's
//! result is `complete`'s for that job (`complete_many` keeps the same
//! fence and refusals); a database error fails every job of that
//! statement with `unavailable`. The queue is bounded by the calls in
//! flight, which the listener bounds (and a batch by `MAX_BATCH`).

use super::queue::PgQueues;
use crate::backend::PortError;
use chime_core::{JobId, LeaseToken};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Most jobs completed by one statement.
pub const MAX_FLUSH: usize = 1_000;

type Waiting = (JobId, LeaseToken, oneshot::Sender<Result<(), PortError>>);

#[derive(Default)]
struct Pending {
    jobs: Vec<Waiting>,
    flushing: bool,
}

/// See the module docs.
#[derive(Default)]
pub struct Completer {
    pending: Mutex<Pending>,
}

impl Completer {
    /// Completes `job` with the next flush on `queues`.
    pub async fn complete(
        self: &Arc<Self>,
        queues: Arc<PgQueues>,
        job: JobId,
        token: LeaseToken,
    ) -> Result<(), PortError> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            p.jobs.push((job, token, tx));
            !std::mem::replace(&mut p.flushing, true)
        };
        if start {
            tokio::spawn(self.clone().flush(queues));
        }
        rx.await
            .unwrap_or_else(|_| Err(PortError::Unavailable("the completion was dropped".into())))
    }

    async fn flush(self: Arc<Self>, queues: Arc<PgQueues>) {
        tokio::task::yield_now().await;
        loop {
            let batch: Vec<Waiting> = {
                let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                if p.jobs.is_empty() {
                    p.flushing = false;
                    return;
                }
                let n = p.jobs.len().min(MAX_FLUSH);
                p.jobs.drain(..n).collect()
            };
            let pairs: Vec<(JobId, LeaseToken)> = batch.iter().map(|(j, t, _)| (*j, *t)).collect();
            match queues.complete_many(&pairs).await {
                Ok(results) => {
                    for ((_, _, reply), r) in batch.into_iter().zip(results) {
                        let _ = reply.send(r.map_err(PortError::from));
                    }
                }
                Err(e) => {
                    let text = e.to_string();
                    for (_, _, reply) in batch {
                        let _ = reply.send(Err(PortError::Unavailable(text.clone().into())));
                    }
                }
            }
        }
    }
}
