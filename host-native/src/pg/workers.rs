//! Worker pools on Postgres: [`PgQueues`] as a [`JobSource`] (the same
//! pools as the embedded engine's, see [`crate::worker`]), and
//! [`forward_wakes`], which `LISTEN`s for the queues' wake-ups and wakes
//! the local pools of the queue each one names.

use super::{PgConfig, PgError, PgQueues, QueueError, wake_channel};
use crate::worker::{JobSource, SourceError};
use chime_core::{Claimed, JobId, LeaseToken};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, mpsc, watch};
use tokio_postgres::AsyncMessage;

fn source_error(e: QueueError) -> SourceError {
    match e {
        QueueError::Refused(e) => SourceError::Refused(e.to_string()),
        QueueError::Db(e) => SourceError::Unavailable(e.to_string()),
    }
}

/// Any replica's workers claim from the shared tables.
impl JobSource for Arc<PgQueues> {
    async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> Result<Vec<Claimed>, SourceError> {
        PgQueues::claim(self, queue, worker, max, Some(lease_ms))
            .await
            .map_err(source_error)
    }

    async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> Result<(), SourceError> {
        PgQueues::heartbeat(self, job, token, Some(lease_ms))
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
            Ok(()) => self.complete(job, token).await,
            Err(error) => self.fail(job, token, &error, None).await.map(drop),
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
