//! Worker pools: per local queue, claim jobs through the driver, run a
//! handler per job under a concurrency limit, heartbeat at a third of the
//! lease, and report `Complete` or `Fail`. Retries, backoff and dead
//! letters are the core's decisions; a pool only reports outcomes.

use crate::driver::Handle;
use chime_core::{Claimed, FireId, Headers, Input, JobId, Payload, Reply};
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
pub async fn run_pool(
    handle: Handle,
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
        let claim = Input::Claim {
            queue: cfg.queue.clone(),
            worker: cfg.worker.clone(),
            max: permits.len() as u32,
            lease_ms: Some(cfg.lease_ms),
        };
        let jobs = match handle.call(claim).await {
            Ok(Ok(Reply::Claimed { jobs })) => jobs,
            Ok(Ok(other)) => {
                tracing::error!(?other, "unexpected reply to claim");
                Vec::new()
            }
            Ok(Err(e)) => {
                tracing::warn!(queue = %cfg.queue, error = %e, "claim refused");
                Vec::new()
            }
            Err(_) => break,
        };
        while tasks.try_join_next().is_some() {}
        if jobs.is_empty() {
            drop(permits);
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(cfg.poll) => {}
                _ = stop.changed() => break,
            }
            continue;
        }
        for (claimed, permit) in jobs.into_iter().zip(permits) {
            let (handle, cfg, handler) = (handle.clone(), cfg.clone(), handler.clone());
            tasks.spawn(async move {
                run_job(&handle, &cfg, claimed, &handler).await;
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
async fn run_job(handle: &Handle, cfg: &PoolConfig, claimed: Claimed, handler: &Handler) {
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
    let period = Duration::from_millis((cfg.lease_ms / 3).max(1) as u64);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut beating = true;
    let result = loop {
        tokio::select! {
            r = &mut work => break r,
            _ = tick.tick(), if beating => {
                let hb = Input::Heartbeat { job: id, token, lease_ms: Some(cfg.lease_ms) };
                match handle.call(hb).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => {
                        tracing::warn!(job = id.0, error = %e, "heartbeat refused; lease lost");
                        beating = false;
                    }
                    Err(_) => return,
                }
            }
        }
    };
    let input = match result {
        Ok(()) => Input::Complete { job: id, token },
        Err(error) => Input::Fail {
            job: id,
            token,
            error,
            retry_at: None,
        },
    };
    if let Ok(Err(e)) = handle.call(input).await {
        tracing::warn!(job = id.0, error = %e, "outcome refused (lease lost?)");
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
