//! Worker pools on Postgres: [`PgSource`], the shared queues as a
//! [`JobSource`] (the same pools as the embedded engine's, see
//! [`crate::worker`]), and
//! [`forward_wakes`], which `LISTEN`s for the queues' wake-ups and wakes
//! the local pools of the queue each one names.

use super::connection::{PgConfig, PgError, wake_channel};
use super::queue::{PgQueues, QueueError};
use crate::worker::{JobSource, SourceError};
use chime_core::{Claimed, JobId, LeaseToken};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio_postgres::AsyncMessage;

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

/// Until `stop`, listens on the schema's wake-up channel and wakes the
/// pools of each notified queue. On every (re)connection all pools are
/// woken once: a notification sent while nobody listened is lost, and the
/// pools' polling is the only other way they would learn of its job.
pub async fn forward_wakes(config: PgConfig, wakes: PoolWakes, mut stop: watch::Receiver<bool>) {
    let channel = wake_channel(&config.schema);
    loop {
        tokio::select! {
            r = listen(&config.url, &channel, &wakes) => {
                if let Err(e) = r {
                    tracing::warn!(error = %e, "wake-up listener lost its connection");
                }
            }
            _ = stop.changed() => return,
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.changed() => return,
        }
    }
}

/// One connection's life: `LISTEN`, then forward until it ends.
async fn listen(url: &str, channel: &str, wakes: &PoolWakes) -> Result<(), PgError> {
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(PgError::db("connecting the wake-up listener"))?;
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    // Polling the connection also carries the client's own statements.
    let conn = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_owned()).is_err() {
                        return Ok(());
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    });
    let listening = client
        .batch_execute(&format!("LISTEN \"{channel}\""))
        .await
        .map_err(PgError::db("listening for wake-ups"));
    if let Err(e) = listening {
        conn.abort();
        return Err(e);
    }
    for n in wakes.values().flatten() {
        n.notify_one();
    }
    while let Some(queue) = rx.recv().await {
        for n in wakes.get(&queue).into_iter().flatten() {
            n.notify_one();
        }
    }
    drop(client);
    match conn.await {
        Ok(Err(e)) => Err(PgError::db("wake-up listener")(e)),
        _ => Ok(()),
    }
}
