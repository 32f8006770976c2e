//! The command worker of a crontab: runs each job's [`CronJob`] with
//! `$SHELL -c`.
//!
//! The crontab's variables (`NAME=value` lines) are **not** in the job
//! payloads: payloads are journaled, snapshotted and served by the
//! unauthenticated `/v1` API, and a crontab's variables are where people
//! put passwords and tokens. They stay in the daemon's memory, in an
//! [`Environments`] the plan fills (per schedule name) and a reload
//! replaces, and reach the command only as its process environment.

use super::crontab::CronJob;
use crate::worker::{Handler, Job};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// One line's variables.
pub type Env = BTreeMap<String, String>;

/// The variables of every crontab line, by schedule name (the `@reboot`
/// lines' by the name in their `cronLine` header). Shared between the
/// plan in force and the running worker: a reload swaps the contents, so
/// the next run of a line sees its new variables.
#[derive(Clone, Default)]
pub struct Environments(Arc<RwLock<BTreeMap<String, Env>>>);

impl std::fmt::Debug for Environments {
    /// Names only: the values may be secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let map = self.0.read().unwrap_or_else(|p| p.into_inner());
        f.debug_set()
            .entries(
                map.values()
                    .flat_map(|e| e.keys())
                    .collect::<std::collections::BTreeSet<_>>(),
            )
            .finish()
    }
}

impl Environments {
    /// From each line's variables.
    pub fn new(map: BTreeMap<String, Env>) -> Environments {
        Environments(Arc::new(RwLock::new(map)))
    }

    /// The variables of schedule (or `@reboot` line) `name`.
    pub fn get(&self, name: &str) -> Env {
        let map = self.0.read().unwrap_or_else(|p| p.into_inner());
        map.get(name).cloned().unwrap_or_default()
    }

    /// Replaces the contents with `other`'s; whether anything changed.
    pub fn replace_with(&self, other: &Environments) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return false;
        }
        let new = other.0.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut map = self.0.write().unwrap_or_else(|p| p.into_inner());
        let changed = *map != new;
        *map = new;
        changed
    }
}

/// The command worker of a crontab: runs each job's [`CronJob`] with
/// `$SHELL -c`, its line's variables (from `envs`) on top of the daemon's
/// environment (plus `CHIME_JOB_ID`, `CHIME_FIRE_ID`, `CHIME_SCHEDULE`),
/// and its `%` text on stdin, in its own process group
/// (`worker/process.rs`). Output lines are logged with the schedule.
pub fn handler(envs: Environments) -> Handler {
    Arc::new(move |job: Job| {
        let envs = envs.clone();
        Box::pin(async move { run(job, &envs).await })
    })
}

async fn run(job: Job, envs: &Environments) -> Result<(), String> {
    let cron: CronJob = serde_json::from_str(job.payload.as_json())
        .map_err(|e| format!("not a crontab job payload: {e}"))?;
    let schedule = match &job.fire {
        Some(f) => f.schedule.to_string(),
        None => job
            .headers
            .get("cronLine")
            .cloned()
            .unwrap_or_else(|| "@reboot".to_owned()),
    };
    // A payload journaled by an older chime may still carry variables.
    let mut env = cron.env.clone();
    env.extend(envs.get(&schedule));
    let shell = env
        .get("SHELL")
        .cloned()
        .unwrap_or_else(|| "/bin/sh".to_owned());
    let mut cmd = crate::worker::process::command(&shell);
    cmd.arg("-c")
        .arg(&cron.command)
        .envs(&env)
        .env("CHIME_JOB_ID", job.id.0.to_string())
        .stdin(if cron.stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(f) = &job.fire {
        cmd.env("CHIME_FIRE_ID", f.to_string())
            .env("CHIME_SCHEDULE", &schedule);
    }
    let (mut child, mut group) = crate::worker::process::spawn(&mut cmd, job.id.0)
        .map_err(|e| format!("spawn {shell}: {e}"))?;
    let logs: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| log_lines(s, schedule.clone(), false)),
        child
            .stderr
            .take()
            .map(|s| log_lines(s, schedule.clone(), true)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let (Some(text), Some(mut stdin)) = (cron.stdin, child.stdin.take()) {
        // A command that exits without reading its stdin is not a failure.
        let _ = stdin.write_all(text.as_bytes()).await;
    }
    let status = child.wait().await.map_err(|e| format!("wait: {e}"))?;
    group.exited();
    for l in logs {
        let _ = l.await;
    }
    let result = crate::worker::exit_result(&shell, status);
    if let Err(e) = &result {
        tracing::warn!(%schedule, job = job.id.0, command = %cron.command, error = %e, "crontab command failed");
    }
    result
}

fn log_lines<R>(stream: R, schedule: String, stderr: bool) -> tokio::task::JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if stderr {
                tracing::warn!(%schedule, stream = "stderr", "{line}");
            } else {
                tracing::info!(%schedule, stream = "stdout", "{line}");
            }
        }
    })
}
