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

/// Most completions in one statement.
const COMPLETE_BATCH: usize = 256;

type Completion = (JobId, LeaseToken, oneshot::Sender<Result<(), QueueError>>);

/// [`PgQueues`] as a pool's [`JobSource`]. Completions are batched
/// (River's batch completer): while one `complete_many` statement is in
/// flight, the completions that arrive meanwhile wait and go together in
/// the next — one commit for many jobs under load, no added wait when idle.
#[derive(Clone, Debug)]
pub struct PgSource {
    queues: Arc<PgQueues>,
    completions: mpsc::UnboundedSender<Completion>,
}

impl PgSource {
    /// A source on `queues` (starts the completer task, which ends when
    /// the last clone is dropped).
    pub fn new(queues: Arc<PgQueues>) -> PgSource {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(complete_batches(queues.clone(), rx));
        PgSource {
            queues,
            completions: tx,
        }
    }
}

async fn complete_batches(queues: Arc<PgQueues>, mut rx: mpsc::UnboundedReceiver<Completion>) {
    let mut batch = Vec::with_capacity(COMPLETE_BATCH);
    while rx.recv_many(&mut batch, COMPLETE_BATCH).await > 0 {
        let jobs: Vec<(JobId, LeaseToken)> = batch.iter().map(|(j, t, _)| (*j, *t)).collect();
        match queues.complete_many(&jobs).await {
            Ok(results) => {
                for ((_, _, reply), r) in batch.drain(..).zip(results) {
                    let _ = reply.send(r);
                }
            }
            Err(e) => {
                let e = e.to_string();
                for (_, _, reply) in batch.drain(..) {
                    let _ = reply.send(Err(QueueError::Db(PgError::Thread(e.clone()))));
                }
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
        self.queues
            .claim(queue, worker, max, Some(lease_ms))
            .await
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
                let (tx, rx) = oneshot::channel();
                self.completions
                    .send((job, token, tx))
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
