//! The command worker: one child process per attempt, in its own process
//! group (see [`super::process`]).

use super::process;
use super::{Handler, Job};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Payloads up to this many bytes travel in `CHIME_PAYLOAD`; larger ones
/// in a file named by `CHIME_PAYLOAD_FILE`. Linux refuses an environment
/// string over 128 KiB (`MAX_ARG_STRLEN`: "Argument list too long"), and
/// the whole of argv and environ shares one limit; 32 KiB leaves room.
pub const PAYLOAD_ENV_MAX: usize = 32 * 1024;

/// A handler that runs `argv` once per attempt. The environment is the
/// daemon's plus `CHIME_JOB_ID`, `CHIME_QUEUE`, `CHIME_ATTEMPT`, the
/// payload (JSON) in `CHIME_PAYLOAD` — or, over [`PAYLOAD_ENV_MAX`]
/// bytes, in a file named by `CHIME_PAYLOAD_FILE` (mode 0600, removed when
/// the attempt ends) — and, for jobs made by a fire, `CHIME_FIRE_ID` and
/// `CHIME_SCHEDULE`. Exit code 0 completes; anything else fails. Output
/// lines are logged with the job id. A timed-out or abandoned attempt's
/// process group is killed (the future owns it).
pub fn command_handler(argv: Vec<String>) -> Handler {
    let argv = Arc::new(argv);
    Arc::new(move |job: Job| {
        let argv = argv.clone();
        Box::pin(async move { run_command(&argv, &job).await })
    })
}

async fn run_command(argv: &[String], job: &Job) -> Result<(), String> {
    let (program, args) = argv.split_first().ok_or("empty command")?;
    let mut cmd = process::command(program);
    cmd.args(args)
        .env("CHIME_JOB_ID", job.id.0.to_string())
        .env("CHIME_QUEUE", &job.queue)
        .env("CHIME_ATTEMPT", job.attempt.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let json = job.payload.as_json();
    // Dropped (the file removed) when the attempt ends, however it ends.
    let _file = if json.len() > PAYLOAD_ENV_MAX {
        let file = PayloadFile::write(job, json).map_err(|e| format!("payload file: {e}"))?;
        cmd.env("CHIME_PAYLOAD_FILE", &file.0);
        Some(file)
    } else {
        cmd.env("CHIME_PAYLOAD", json);
        None
    };
    if let Some(f) = &job.fire {
        cmd.env("CHIME_FIRE_ID", f.to_string())
            .env("CHIME_SCHEDULE", &*f.schedule);
    }
    let (mut child, mut group) =
        process::spawn(&mut cmd, job.id.0).map_err(|e| format!("spawn {program}: {e}"))?;
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
    group.exited();
    for t in [out, err].into_iter().flatten() {
        let _ = t.await;
    }
    exit_result(program, status)
}

/// `Ok` for exit 0, else the error text of the attempt: the program and
/// how it ended (`sh exited with status 3`, `sh killed by signal 9`),
/// which the failure and dead-letter records and log lines carry.
pub(crate) fn exit_result(program: &str, status: std::process::ExitStatus) -> Result<(), String> {
    use std::os::unix::process::ExitStatusExt;
    if status.success() {
        return Ok(());
    }
    Err(match (status.code(), status.signal()) {
        (Some(code), _) => format!("{program} exited with status {code}"),
        (None, Some(sig)) => format!("{program} killed by signal {sig}"),
        _ => format!("{program} ended with {status}"),
    })
}

/// A large payload's file, removed on drop.
struct PayloadFile(PathBuf);

impl PayloadFile {
    fn write(job: &Job, json: &str) -> std::io::Result<PayloadFile> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "chime-payload-{}-{}-{}-{}.json",
            std::process::id(),
            job.id.0,
            job.attempt,
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        let file = PayloadFile(path);
        f.write_all(json.as_bytes())?;
        Ok(file)
    }
}

impl Drop for PayloadFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chime_core::{JobId, Payload};

    fn job(payload: &str) -> Job {
        Job {
            id: JobId(7),
            queue: "q".into(),
            attempt: 1,
            payload: Payload::from_json(payload).unwrap(),
            headers: Default::default(),
            fire: None,
        }
    }

    /// A 200 KiB payload (over Linux's 128 KiB per environment string)
    /// reaches the command in a file, which is gone after the attempt.
    #[tokio::test]
    async fn a_large_payload_travels_in_a_file_removed_afterwards() {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen");
        let big = format!("\"{}\"", "x".repeat(200 * 1024));
        let script = format!(
            "test -z \"$CHIME_PAYLOAD\" && echo \"$CHIME_PAYLOAD_FILE\" > {s} && \
             wc -c < \"$CHIME_PAYLOAD_FILE\" >> {s}",
            s = seen.display()
        );
        let handler = command_handler(vec!["sh".into(), "-c".into(), script]);
        handler(job(&big)).await.unwrap();
        let text = std::fs::read_to_string(&seen).unwrap();
        let mut lines = text.lines();
        let file = lines.next().unwrap();
        assert_eq!(lines.next().unwrap().trim(), big.len().to_string());
        assert!(!std::path::Path::new(file).exists(), "{file} left behind");
    }

    /// Small payloads keep the environment variable.
    #[tokio::test]
    async fn a_small_payload_stays_in_the_environment() {
        let handler = command_handler(vec![
            "sh".into(),
            "-c".into(),
            "test \"$CHIME_PAYLOAD\" = '{\"a\":1}' && test -z \"$CHIME_PAYLOAD_FILE\"".into(),
        ]);
        handler(job("{\"a\":1}")).await.unwrap();
    }

    #[tokio::test]
    async fn a_failure_says_how_the_command_ended() {
        let handler = command_handler(vec!["sh".into(), "-c".into(), "exit 3".into()]);
        assert_eq!(
            handler(job("null")).await.unwrap_err(),
            "sh exited with status 3"
        );
        let handler = command_handler(vec!["sh".into(), "-c".into(), "kill -9 $$".into()]);
        assert_eq!(
            handler(job("null")).await.unwrap_err(),
            "sh killed by signal 9"
        );
    }
}
