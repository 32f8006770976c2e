//! Worker pools on Postgres: [`PgSource`], the shared queues as a
//! [`JobSource`] (the same pools as the embedded engine's, see
//! [`crate::worker`]), and
//! [`forward_from`], which wakes the local pools of each queue the
//! replica's [`PgListener`] says got claimable work.

use super::connection::{PgConfig, PgError};
use super::notify::PgListener;
use super::queue::{PgQueues, QueueError};
use crate::worker::{JobSource, SourceError};
use chime_core::{Claimed, JobId, LeaseToken};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{Notify, mpsc, oneshot, watch};

fn source_error(e: QueueError) -> SourceError {
    match e {
        QueueError::Refused(e) => SourceError::Refused(e.to_string()),
        QueueError::Db(e) => SourceError::Unavailable(e.to_string()),
    }
}

/// Most calls (claims and completions) taken by one turn of the exchange.
const EXCHANGE_BATCH: usize = 256;

type Reply<T> = oneshot::Sender<Result<T, QueueError>>;

/// A call of the pools that goes through the exchange.
enum Call {
    Claim {
        queue: String,
        worker: String,
        max: u32,
        lease_ms: i64,
        reply: Reply<Vec<Claimed>>,
    },
    Complete {
        job: JobId,
        token: LeaseToken,
        reply: Reply<()>,
    },
}

/// [`PgQueues`] as a pool's [`JobSource`]. Claims and completions go
/// through one exchange task, which sends one statement at a time: the
/// calls that arrive while it is in flight wait and go together in the
/// next — a claim with every completion waiting beside it in one
/// statement and one commit ([`PgQueues::complete_and_claim`]),
/// completions alone in one `complete_many` (River's batch completer).
/// Under load a pool's cycle is one commit for many jobs; when idle no
/// call waits for anything but its own statement.
#[derive(Clone, Debug)]
pub struct PgSource {
    queues: Arc<PgQueues>,
    calls: mpsc::UnboundedSender<Call>,
}

impl PgSource {
    /// A source on `queues` (starts the exchange task, which ends when the
    /// last clone is dropped).
    pub fn new(queues: Arc<PgQueues>) -> PgSource {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(exchange(queues.clone(), rx));
        PgSource { queues, calls: tx }
    }
}

/// Every waiting completion's reply: `results` in order, or `e` for all.
fn reply_all(replies: Vec<Reply<()>>, results: Result<Vec<Result<(), QueueError>>, String>) {
    match results {
        Ok(results) => {
            for (reply, r) in replies.into_iter().zip(results) {
                let _ = reply.send(r);
            }
        }
        Err(e) => {
            for reply in replies {
                let _ = reply.send(Err(QueueError::Db(PgError::Thread(e.clone()))));
            }
        }
    }
}

/// The exchange (see [`PgSource`]). Its queue is bounded by the pools'
/// permits: each call is a permit's, waiting for its reply.
async fn exchange(queues: Arc<PgQueues>, mut rx: mpsc::UnboundedReceiver<Call>) {
    let mut calls = Vec::with_capacity(EXCHANGE_BATCH);
    while rx.recv_many(&mut calls, EXCHANGE_BATCH).await > 0 {
        let mut done = Vec::new();
        let mut replies = Vec::new();
        let mut claim = None;
        for call in calls.drain(..) {
            match call {
                Call::Complete { job, token, reply } => {
                    done.push((job, token));
                    replies.push(reply);
                }
                Call::Claim { .. } if claim.is_none() => claim = Some(call),
                // Another pool's claim (another queue of this replica):
                // on its own, pipelined beside this turn's statement.
                Call::Claim {
                    queue,
                    worker,
                    max,
                    lease_ms,
                    reply,
                } => {
                    let queues = queues.clone();
                    tokio::spawn(async move {
                        let r = queues.claim(&queue, &worker, max, Some(lease_ms)).await;
                        let _ = reply.send(r);
                    });
                }
            }
        }
        match claim {
            Some(Call::Claim {
                queue,
                worker,
                max,
                lease_ms,
                reply,
            }) => {
                let cycle = queues
                    .complete_and_claim(&done, &queue, &worker, max, Some(lease_ms))
                    .await;
                match cycle {
                    Ok((results, jobs)) => {
                        let _ = reply.send(Ok(jobs));
                        reply_all(replies, Ok(results));
                    }
                    // Refused before anything was sent: the completions
                    // go alone.
                    Err(QueueError::Refused(e)) => {
                        let _ = reply.send(Err(QueueError::Refused(e)));
                        if !done.is_empty() {
                            let r = queues.complete_many(&done).await;
                            reply_all(replies, r.map_err(|e| e.to_string()));
                        }
                    }
                    Err(e) => {
                        let text = e.to_string();
                        let _ = reply.send(Err(e));
                        reply_all(replies, Err(text));
                    }
                }
            }
            _ if done.is_empty() => {}
            _ => {
                let r = queues.complete_many(&done).await;
                reply_all(replies, r.map_err(|e| e.to_string()));
            }
        }
    }
}

/// Any replica's workers claim from the shared tables.
impl JobSource for PgSource {
    async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> Result<Vec<Claimed>, SourceError> {
        let (reply, rx) = oneshot::channel();
        let call = Call::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms,
            reply,
        };
        self.calls.send(call).map_err(|_| SourceError::Gone)?;
        rx.await
            .map_err(|_| SourceError::Gone)?
            .map_err(source_error)
    }

    async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> Result<(), SourceError> {
        self.queues
            .heartbeat(job, token, Some(lease_ms))
            .await
            .map(drop)
            .map_err(source_error)
    }

    async fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        outcome: Result<(), String>,
    ) -> Result<(), SourceError> {
        match outcome {
            Ok(()) => {
                let (reply, rx) = oneshot::channel();
                self.calls
                    .send(Call::Complete { job, token, reply })
                    .map_err(|_| SourceError::Gone)?;
                rx.await.map_err(|_| SourceError::Gone)?
            }
            Err(error) => self.queues.fail(job, token, &error, None).await.map(drop),
        }
        .map_err(source_error)
    }
}

/// Local pools to wake, by queue name.
pub type PoolWakes = BTreeMap<String, Vec<Arc<Notify>>>;

/// Until `stop`, wakes the pools of each queue that `listener` says got
/// claimable work (by any replica's commit, or a delayed job coming due).
/// The listener wakes every queue on each (re)connection: a notification
/// sent while nobody listened is lost, and the pools' polling is the only
/// other way they would learn of its job.
pub async fn forward_from(
    listener: Arc<PgListener>,
    wakes: PoolWakes,
    mut stop: watch::Receiver<bool>,
) {
    let mut tasks = tokio::task::JoinSet::new();
    for (queue, pools) in wakes {
        let mut rx = listener.availability(&queue);
        tasks.spawn(async move {
            while rx.changed().await.is_ok() {
                for n in &pools {
                    n.notify_one();
                }
            }
        });
    }
    let _ = stop.wait_for(|s| *s).await;
    tasks.abort_all();
}

/// [`forward_from`] a listener of its own on `config`'s schema (whose job
/// events nobody reads). A replica that also serves `/v1/events` or
/// long-poll claims starts one [`PgListener`] and passes it to
/// [`forward_from`] and [`PgQueues::with_listener`] instead: one
/// listening connection per replica.
pub async fn forward_wakes(config: PgConfig, wakes: PoolWakes, stop: watch::Receiver<bool>) {
    match PgListener::start(&config, tokio::sync::broadcast::channel(1).0) {
        Ok(listener) => forward_from(listener, wakes, stop).await,
        Err(e) => tracing::error!(error = %e, "no wake-up listener"),
    }
}
