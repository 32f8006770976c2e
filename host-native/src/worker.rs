//! Worker pools: per queue, claim jobs from a [`JobSource`] (the embedded
//! engine through the driver, or Postgres), run a handler per job under a
//! concurrency limit, heartbeat at a third of the lease, and report
//! `Complete` or `Fail`. Retries, backoff and dead letters are the core's
//! decisions; a pool only reports outcomes.

use crate::driver::Handle;
use chime_core::{Claimed, FireId, Headers, Input, JobId, LeaseToken, Payload, Reply};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::JoinSet;

/// One attempt of a job, as a handler sees it.
#[derive(Clone, Debug)]
pub struct Job {
    /// Job id.
    pub id: JobId,
    /// Queue.
    pub queue: String,
    /// This attempt's number (1-based): greater than 1 after a failure or a
    /// crash that interrupted an earlier attempt.
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

/// Why a [`JobSource`] call did not go through.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Refused by the queue's rules (the lease was lost, the job is gone).
    #[error("{0}")]
    Refused(String),
    /// Not reachable now (a database error); the pool tries again later.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The source has stopped for good (the driver ended): the pool ends.
    #[error("the job source has stopped")]
    Gone,
}

/// Where a pool's jobs come from and where their outcomes go.
pub trait JobSource: Clone + Send + Sync + 'static {
    /// Claims up to `max` jobs of `queue` with a lease of `lease_ms`.
    fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> impl Future<Output = Result<Vec<Claimed>, SourceError>> + Send;
    /// Extends a held lease.
    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> impl Future<Output = Result<(), SourceError>> + Send;
    /// Reports an attempt's outcome (`Err(text)`: failed).
    fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        outcome: Result<(), String>,
    ) -> impl Future<Output = Result<(), SourceError>> + Send;
}

impl Handle {
    /// One input, its refusal or the driver's end as a [`SourceError`].
    async fn source_call(&self, input: Input) -> Result<Reply, SourceError> {
        match self.call(input).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(SourceError::Refused(e.to_string())),
            Err(_) => Err(SourceError::Gone),
        }
    }
}

/// The embedded engine's local queues, through the driver.
impl JobSource for Handle {
    async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: i64,
    ) -> Result<Vec<Claimed>, SourceError> {
        let claim = Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms: Some(lease_ms),
        };
        match self.source_call(claim).await? {
            Reply::Claimed { jobs } => Ok(jobs),
            other => Err(SourceError::Refused(format!(
                "unexpected reply to claim: {other:?}"
            ))),
        }
    }

    async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: i64,
    ) -> Result<(), SourceError> {
        let hb = Input::Heartbeat {
            job,
            token,
            lease_ms: Some(lease_ms),
        };
        self.source_call(hb).await.map(drop)
    }

    async fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        outcome: Result<(), String>,
    ) -> Result<(), SourceError> {
        let input = match outcome {
            Ok(()) => Input::Complete { job, token },
            Err(error) => Input::Fail {
                job,
                token,
                error,
                retry_at: None,
            },
        };
        self.source_call(input).await.map(drop)
    }
}

/// A pool's settings.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Local queue to work.
    pub queue: String,
    /// Worker name recorded on claimed jobs.
    pub worker: String,
    /// Most jobs running at once.
    pub concurrency: usize,
    /// Lease asked for on claim and heartbeat; heartbeats go every third.
    pub lease_ms: i64,
    /// Per-attempt timeout (the attempt fails when it runs out).
    pub timeout: Option<Duration>,
    /// On stop, how long running jobs may finish; those still running are
    /// dropped and left to lease expiry.
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
    let sem = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
    let mut tasks = JoinSet::new();
    loop {
        if *stop.borrow() {
            break;
        }
        let first = tokio::select! {
            p = sem.clone().acquire_owned() => p.expect("semaphore open"),
            _ = stop.changed() => break,
        };
        let mut permits = vec![first];
        while let Ok(p) = sem.clone().try_acquire_owned() {
            permits.push(p);
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
        for (claimed, permit) in jobs.into_iter().zip(permits) {
            let (source, cfg, handler) = (source.clone(), cfg.clone(), handler.clone());
            tasks.spawn(async move {
                run_job(&source, &cfg, claimed, &handler).await;
                drop(permit);
            });
        }
    }
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
            "grace period over: jobs left to lease expiry"
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
}

/// One attempt: the handler, raced against its timeout, with heartbeats.
async fn run_job<S: JobSource>(source: &S, cfg: &PoolConfig, claimed: Claimed, handler: &Handler) {
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

/// A handler that runs `argv` once per attempt. The environment is the
/// daemon's plus `CHIME_JOB_ID`, `CHIME_QUEUE`, `CHIME_ATTEMPT`,
/// `CHIME_PAYLOAD` (JSON) and, for jobs made by a fire, `CHIME_FIRE_ID` and
/// `CHIME_SCHEDULE`. Exit code 0 completes; anything else fails. Output
/// lines are logged with the job id. A timed-out or abandoned process is
/// killed (the future owns it).
pub fn command_handler(argv: Vec<String>) -> Handler {
    let argv = Arc::new(argv);
    Arc::new(move |job: Job| {
        let argv = argv.clone();
        Box::pin(async move { run_command(&argv, &job).await })
    })
}

async fn run_command(argv: &[String], job: &Job) -> Result<(), String> {
    let (program, args) = argv.split_first().ok_or("empty command")?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env("CHIME_JOB_ID", job.id.0.to_string())
        .env("CHIME_QUEUE", &job.queue)
        .env("CHIME_ATTEMPT", job.attempt.to_string())
        .env("CHIME_PAYLOAD", job.payload.as_json())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(f) = &job.fire {
        cmd.env("CHIME_FIRE_ID", f.to_string())
            .env("CHIME_SCHEDULE", &*f.schedule);
    }
    let mut child = cmd.spawn().map_err(|e| format!("spawn {program}: {e}"))?;
    let job_id = job.id.0;
    let out = child.stdout.take().map(|s| {
        tokio::spawn(async move {
            let mut lines = BufReader::new(s).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(job = job_id, stream = "stdout", "{line}");
            }
        })
    });
    let err = child.stderr.take().map(|s| {
        tokio::spawn(async move {
            let mut lines = BufReader::new(s).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::warn!(job = job_id, stream = "stderr", "{line}");
            }
        })
    });
    let status = child.wait().await.map_err(|e| format!("wait: {e}"))?;
    for t in [out, err].into_iter().flatten() {
        let _ = t.await;
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("command exited with {status}"))
    }
}
