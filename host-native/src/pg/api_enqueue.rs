//! Single enqueues of the listener's queue port coalesced into
//! [`PgQueues::enqueue_batch`]: one statement and one commit for the
//! enqueues that arrive together, as completes are (`api_complete.rs`).
//!
//! Why: every `POST /v1/jobs` was its own autocommit statement on the
//! port's one connection, and one backend commits one transaction at a
//! time, so concurrent single enqueues were serialized on the WAL flush:
//! 2.4k requests/s with 64 connections (BENCHMARKS.md, "Postgres mode:
//! the server API and graphile-worker").
//!
//! A request is checked by core first, on its own: a refused one is
//! answered at once and never joins (or refuses) a batch. A call queues
//! its request and, if no flush is running, spawns one; the flush yields
//! once (so the requests of the same poll join), then enqueues what is
//! queued, [`MAX_FLUSH`] at a time, until nothing is — a lone request as
//! [`PgQueues::enqueue`], more as one batch. Keys are decided as between
//! requests that arrive one after the other: the first of a batch takes a
//! free key, the later ones of the same key get its job, `deduplicated`.
//! A database error fails every request of that statement with
//! `unavailable` (none of them was stored). It runs in its own task: an
//! HTTP request dropped mid-call cannot strand the others' replies. The
//! queue is bounded by the calls in flight, which the listener bounds.

use super::queue::PgQueues;
use crate::backend::{Enqueued, PortError};
use chime_core::{EngineConfig, EnqueueRequest, Input, Timestamp, validate_input};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Most jobs enqueued by one statement.
pub const MAX_FLUSH: usize = 500;

type Waiting = (EnqueueRequest, oneshot::Sender<Result<Enqueued, PortError>>);

#[derive(Default)]
struct Pending {
    requests: Vec<Waiting>,
    flushing: bool,
}

/// See the module docs.
#[derive(Default)]
pub struct Enqueuer {
    pending: Mutex<Pending>,
}

impl Enqueuer {
    /// Enqueues `request` (checked with `engine`'s limits) with the next
    /// flush on `queues`.
    pub async fn enqueue(
        self: &Arc<Self>,
        queues: Arc<PgQueues>,
        engine: &EngineConfig,
        request: &EnqueueRequest,
    ) -> Result<Enqueued, PortError> {
        let input = Input::Enqueue(request.clone());
        validate_input(&input, engine, Timestamp::MIN).map_err(PortError::Refused)?;
        let Input::Enqueue(request) = input else {
            unreachable!("built above")
        };
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            p.requests.push((request, tx));
            !std::mem::replace(&mut p.flushing, true)
        };
        if start {
            tokio::spawn(self.clone().flush(queues));
        }
        rx.await
            .unwrap_or_else(|_| Err(PortError::Unavailable("the enqueue was dropped".into())))
    }

    async fn flush(self: Arc<Self>, queues: Arc<PgQueues>) {
        tokio::task::yield_now().await;
        loop {
            let batch: Vec<Waiting> = {
                let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                if p.requests.is_empty() {
                    p.flushing = false;
                    return;
                }
                let n = p.requests.len().min(MAX_FLUSH);
                p.requests.drain(..n).collect()
            };
            let (requests, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
            if let [one] = requests.as_slice() {
                let r = queues.enqueue(one).await.map_err(PortError::from);
                let _ = replies.into_iter().next().map(|reply| reply.send(r));
                continue;
            }
            match queues.enqueue_batch(&requests).await {
                Ok(Ok(done)) => {
                    for (reply, e) in replies.into_iter().zip(done) {
                        let _ = reply.send(Ok(e));
                    }
                }
                // Every request was checked alone; should one still be
                // refused, each goes on its own and gets its own answer.
                Ok(Err(_)) => {
                    for (req, reply) in requests.iter().zip(replies) {
                        let _ = reply.send(queues.enqueue(req).await.map_err(PortError::from));
                    }
                }
                Err(e) => {
                    let text = e.to_string();
                    for reply in replies {
                        let _ = reply.send(Err(PortError::Unavailable(text.clone().into())));
                    }
                }
            }
        }
    }
}
