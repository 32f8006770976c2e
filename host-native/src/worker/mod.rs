//! Worker pools: per queue, claim jobs from a [`JobSource`] (the embedded
//! engine through the driver, or Postgres), run a handler per job under a
//! concurrency limit, heartbeat at a third of the lease, and report
//! `Complete` or `Fail`. Retries, backoff and dead letters are the core's
//! decisions; a pool only reports outcomes.

mod command;
#[cfg(feature = "http")]
pub mod http;
pub mod process;
mod source;

#[cfg(feature = "cli")]
pub(crate) use command::exit_result;
pub use command::{PAYLOAD_ENV_MAX, command_handler};
pub use source::{JobSource, SourceError};

use crate::driver::Handle;
use chime_core::{Claimed, FireId, Headers, JobId, Payload};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::JoinSet;

/// One attempt of a job, as a handler sees it.
#[derive(Clone, Debug)]
pub struct Job {
    /// Job id.
    pub id: JobId,
    /// Queue.
    pub queue: String,
    /// This attempt's number (1-based): greater than 1 after a failure or
    /// an expired lease. An attempt interrupted by the host (a crash, a
    /// stop past its grace period) does not count: the job runs again
    /// under the same number.
    pub attempt: u32,
    /// Payload.
    pub payload: Payload,
    /// Headers.
    pub headers: Headers,
    /// The fire that created the job, if any.
    pub fire: Option<FireId>,
}

/// What a handler returns: `Err(text)` fails the attempt.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;
/// An async job handler.
pub type Handler = Arc<dyn Fn(Job) -> HandlerFuture + Send + Sync>;

/// A pool's settings.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Local queue to work.
    pub queue: String,
    /// Worker name recorded on claimed jobs.
    pub worker: String,
    /// Most jobs running at once (handlers). As many more may be held
    /// while their outcome is being recorded: the next claim does not
    /// wait for that commit.
    pub concurrency: usize,
    /// Lease asked for on claim and heartbeat; heartbeats go every third.
    pub lease_ms: i64,
    /// Per-attempt timeout (the attempt fails when it runs out).
    pub timeout: Option<Duration>,
    /// On stop, how long running jobs may finish; those still running are
    /// dropped, and the next start releases them as interrupted (on the
    /// embedded store; with Postgres, lease expiry does).
    pub grace: Duration,
    /// Claim this often even without a wake (a safety net; wakes come from
    /// the engine's `Wake` commands).
    pub poll: Duration,
}

impl PoolConfig {
    /// Defaults for `queue`: concurrency 1, 60 s lease, no timeout.
    pub fn new(queue: impl Into<String>) -> PoolConfig {
        let queue = queue.into();
        PoolConfig {
            worker: format!("{queue}-worker"),
            queue,
            concurrency: 1,
            lease_ms: 60_000,
            timeout: None,
            grace: Duration::from_secs(10),
            poll: Duration::from_secs(30),
        }
    }
}

/// Runs a pool until `stop` turns true, then waits for running jobs up to
/// the grace period.
pub async fn run_pool<S: JobSource>(
    source: S,
    wake: Arc<Notify>,
    cfg: PoolConfig,
    handler: Handler,
    mut stop: watch::Receiver<bool>,
) {
    let cfg = Arc::new(cfg);
    let concurrency = cfg.concurrency.max(1);
    // A job holds a `running` permit until its handler returns and a
    // `held` one until its outcome is recorded: the next claim overlaps
    // the commit of the last outcomes (on Postgres it carries them, see
    // `pg::workers`), and jobs whose outcome is on its way are bounded
    // too, by another `concurrency`.
    let running = Arc::new(Semaphore::new(concurrency));
    let held = Arc::new(Semaphore::new(2 * concurrency));
    let mut tasks = JoinSet::new();
    loop {
        if *stop.borrow() {
            break;
        }
        let first = tokio::select! {
            p = running.clone().acquire_owned() => p.expect("semaphore open"),
            _ = stop.changed() => break,
        };
        let first_held = tokio::select! {
            p = held.clone().acquire_owned() => p.expect("semaphore open"),
            _ = stop.changed() => break,
        };
        // Once round the runtime first: the handlers that are about to
        // end (those just spawned, when they are quick) release their
        // permits, and the claim takes their share too — a claim per
        // freed permit would cost a commit each on Postgres.
        tokio::task::yield_now().await;
        let mut permits = vec![(first, first_held)];
        while let (Ok(r), Ok(h)) = (
            running.clone().try_acquire_owned(),
            held.clone().try_acquire_owned(),
        ) {
            permits.push((r, h));
        }
        let max = permits.len() as u32;
        let (jobs, pause) = match source
            .claim(&cfg.queue, &cfg.worker, max, cfg.lease_ms)
            .await
        {
            Ok(jobs) => (jobs, cfg.poll),
            Err(SourceError::Gone) => break,
            Err(e) => {
                tracing::warn!(queue = %cfg.queue, error = %e, "claim failed");
                // Not the full poll interval: a database back from a
                // blip should see its workers again soon.
                (Vec::new(), cfg.poll.min(Duration::from_secs(1)))
            }
        };
        while tasks.try_join_next().is_some() {}
        if jobs.is_empty() {
            drop(permits);
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(pause) => {}
                _ = stop.changed() => break,
            }
            continue;
        }
        for (claimed, (run, hold)) in jobs.into_iter().zip(permits) {
            let (source, cfg, handler) = (source.clone(), cfg.clone(), handler.clone());
            tasks.spawn(async move {
                run_job(&source, &cfg, claimed, &handler, run).await;
                drop(hold);
            });
        }
    }
    // Finished tasks stay in the set until joined: count only live ones.
    while tasks.try_join_next().is_some() {}
    let running = tasks.len();
    if running > 0 {
        tracing::info!(queue = %cfg.queue, running, grace = ?cfg.grace, "waiting for running jobs");
    }
    let drained = tokio::time::timeout(cfg.grace, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            queue = %cfg.queue,
            left = tasks.len(),
            "grace period over: jobs left claimed, released at the next start"
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
}

/// One attempt: the handler, raced against its timeout, with heartbeats.
/// `running` is released when the handler is done, before the outcome is
/// reported.
async fn run_job<S: JobSource>(
    source: &S,
    cfg: &PoolConfig,
    claimed: Claimed,
    handler: &Handler,
    running: tokio::sync::OwnedSemaphorePermit,
) {
    let job = Job {
        id: claimed.job,
        queue: cfg.queue.clone(),
        attempt: claimed.attempt,
        payload: claimed.payload,
        headers: claimed.headers,
        fire: claimed.fire,
    };
    let id = job.id;
    let token = claimed.token;
    let work = handler(job);
    let timeout = cfg.timeout;
    let work = async move {
        match timeout {
            Some(t) => tokio::time::timeout(t, work)
                .await
                .unwrap_or_else(|_| Err(format!("timed out after {t:?}"))),
            None => work.await,
        }
    };
    tokio::pin!(work);
    let period = Duration::from_millis(chime_core::host::heartbeat_period_ms(cfg.lease_ms));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut beating = true;
    let result = loop {
        tokio::select! {
            r = &mut work => break r,
            _ = tick.tick(), if beating => {
                match source.heartbeat(id, token, cfg.lease_ms).await {
                    Ok(()) => {}
                    Err(SourceError::Gone) => return,
                    Err(e @ SourceError::Refused(_)) => {
                        tracing::warn!(job = id.0, error = %e, "heartbeat refused; lease lost");
                        beating = false;
                    }
                    // The next beat may get through before the lease ends.
                    Err(e) => tracing::warn!(job = id.0, error = %e, "heartbeat failed"),
                }
            }
        }
    };
    drop(running);
    if let Err(e) = source.finish(id, token, result).await {
        tracing::warn!(job = id.0, error = %e, "outcome not recorded (lease lost?)");
    }
}

/// Wraps `handler` so the wall time of each run lands in
/// `chime_job_duration_seconds{queue}`. Measured on drop, so a run cut
/// short by the pool's timeout or by stop counts too (with the time it got).
pub fn timed(handle: Handle, handler: Handler) -> Handler {
    struct Timer {
        handle: Handle,
        queue: String,
        started: std::time::Instant,
    }
    impl Drop for Timer {
        fn drop(&mut self) {
            let took = self.started.elapsed();
            self.handle.metrics().observe_job(&self.queue, took);
        }
    }
    Arc::new(move |job: Job| {
        let timer = Timer {
            handle: handle.clone(),
            queue: job.queue.clone(),
            started: std::time::Instant::now(),
        };
        let work = handler(job);
        Box::pin(async move {
            let r = work.await;
            drop(timer);
            r
        })
    })
}
