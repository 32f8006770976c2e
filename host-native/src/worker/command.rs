//! The command worker: one child process per attempt.

use super::{Handler, Job};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, BufReader};

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
