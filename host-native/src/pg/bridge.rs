//! A Postgres connection on its own thread, callable from synchronous code.
//!
//! [`crate::store::Store`] is synchronous: the driver blocks on each commit,
//! exactly as it blocks on redb's fsync. `Runtime::block_on` cannot be used
//! on the driver's thread (tokio refuses to nest runtimes) and
//! `block_in_place` only works on a multi-thread runtime, so the store keeps
//! its connection on a dedicated thread running a current-thread runtime and
//! waits for each answer on a std channel. That works whatever runtime (or
//! none) the caller is on, including tests on a paused clock, and leaves the
//! `Store` trait and the redb path untouched.

use super::connection::{PgError, connect};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::mpsc;
use tokio_postgres::Client;

/// A future borrowing the connection.
pub(crate) type BoxFuture<'a, R> = Pin<Box<dyn Future<Output = R> + Send + 'a>>;
type Job = Box<dyn for<'a> FnOnce(&'a mut Client) -> BoxFuture<'a, ()> + Send>;

/// The handle; dropping it ends the thread (and closes the connection).
pub(crate) struct Bridge {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Bridge {
    /// Starts the thread and connects to `url` on it.
    pub(crate) fn connect(url: &str) -> Result<Bridge, PgError> {
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job>();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let url = url.to_owned();
        std::thread::Builder::new()
            .name("chime-pg-store".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(PgError::Thread(e.to_string())));
                        return;
                    }
                };
                rt.block_on(async move {
                    let mut client = match connect(&url).await {
                        Ok(c) => c,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    while let Some(job) = rx.recv().await {
                        job(&mut client).await;
                    }
                });
            })
            .map_err(|e| PgError::Thread(e.to_string()))?;
        ready_rx
            .recv()
            .map_err(|_| PgError::Thread("ended before connecting".into()))??;
        Ok(Bridge { jobs })
    }

    /// Runs `f` on the connection's thread and blocks until it is done.
    pub(crate) fn call<R: Send + 'static>(
        &self,
        f: impl for<'a> FnOnce(&'a mut Client) -> BoxFuture<'a, R> + Send + 'static,
    ) -> Result<R, PgError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            Box::pin(async move {
                let _ = tx.send(f(client).await);
            })
        });
        self.jobs
            .send(job)
            .map_err(|_| PgError::Thread("has stopped".into()))?;
        rx.recv()
            .map_err(|_| PgError::Thread("stopped during a call".into()))
    }
}
