//! `chime run --crontab FILE`: a plain Vixie crontab, run like cron does
//! but with chime's guarantees (no double fires across DST, catch-up after
//! downtime, durable state, dead letters for failed runs).
//!
//! Every schedule line becomes one [`ScheduleDef`] on the local queue
//! [`QUEUE`]; its payload carries the command, the crontab's variables and
//! the `%` stdin text, so one command worker ([`handler`]) runs every line
//! and a reload that edits lines never needs new workers. Spec syntax is
//! not checked here: the core does it (see [`crate::check`]), so a crontab
//! accepts exactly the cron grammar of `docs/spec.md`.
//!
//! Names are `<program>-<hash of the command>`: stable across edits of
//! other lines (and across a change of the time fields, which is then an
//! update of the same schedule), readable in logs. See `docs/crontab.md`.

use crate::worker::{Handler, Job, PoolConfig};
use chime_core::{Payload, QueueConfig, ScheduleDef, Spec, SpecOptions, Target};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The local queue every crontab line fires into.
pub const QUEUE: &str = "crontab";

/// Jobs of one crontab that may run at once (cron runs every line's
/// command in its own process; each schedule still skips a fire while its
/// previous run is alive, chime's default overlap policy).
pub const CONCURRENCY: usize = 256;

/// A crontab line that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {field}: {message}")]
pub struct CrontabError {
    /// 1-based line number.
    pub line: usize,
    /// The part of the line at fault: `schedule`, `command`, `CRON_TZ`,
    /// `variable`, …
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// A parsed crontab.
#[derive(Clone, Debug, Default)]
pub struct Crontab {
    /// One per schedule line, in file order, each with its line number.
    pub schedules: Vec<(usize, ScheduleDef)>,
    /// `@reboot` lines: run once each time the daemon starts.
    pub reboot: Vec<(usize, RebootJob)>,
}

/// An `@reboot` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RebootJob {
    /// The name the line would have as a schedule (for logs).
    pub name: String,
    /// The job payload (a [`CronJob`]).
    pub payload: Payload,
}

/// What a crontab job runs: the payload of every fire of a line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CronJob {
    /// The command, run with `$SHELL -c` (`SHELL` from the crontab, else `/bin/sh`).
    pub command: String,
    /// Variables set by `NAME=value` lines above the line.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Standard input: the text after the first unescaped `%`, each further
    /// `%` a newline, ending with a newline (Vixie). `None`: stdin is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
}

/// The queue of a crontab: one attempt per run (cron does not retry), and
/// a failed run stays in the dead letters for `chime inspect`.
pub fn queue() -> QueueConfig {
    let mut q = QueueConfig::new(QUEUE);
    q.max_attempts = 1;
    q
}

/// The pool of a crontab's command worker.
pub fn pool() -> PoolConfig {
    let mut p = PoolConfig::new(QUEUE);
    p.concurrency = CONCURRENCY;
    p.lease_ms = queue().lease_ms;
    p
}

/// Parses crontab text, reporting every bad line (not only the first).
pub fn parse(text: &str) -> Result<Crontab, Vec<CrontabError>> {
    let (tab, errors) = parse_lenient(text);
    if errors.is_empty() {
        Ok(tab)
    } else {
        Err(errors)
    }
}

/// The good lines and every bad one: `chime validate` also checks the
/// good lines' specs with the core, so one run lists every problem.
pub fn parse_lenient(text: &str) -> (Crontab, Vec<CrontabError>) {
    let mut out = Crontab::default();
    let mut errors = Vec::new();
    let mut env = BTreeMap::new();
    let mut tz: Option<String> = None;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |field: &str, message: String| CrontabError {
            line,
            field: field.to_owned(),
            message,
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if trimmed.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            match assignment(trimmed) {
                Ok((name, value)) if name == "CRON_TZ" => match check_zone(&value) {
                    Ok(()) => tz = (!value.is_empty()).then_some(value),
                    Err(m) => errors.push(err("CRON_TZ", m)),
                },
                Ok((name, value)) => {
                    env.insert(name, value);
                }
                Err(m) => errors.push(err("variable", m)),
            }
            continue;
        }
        let (spec, rest) = match split_schedule(trimmed) {
            Ok(x) => x,
            Err(m) => {
                errors.push(err("schedule", m));
                continue;
            }
        };
        let (command, stdin) = split_percent(rest);
        if command.trim().is_empty() {
            errors.push(err("command", "missing command after the schedule".into()));
            continue;
        }
        let job = CronJob {
            command: command.trim().to_owned(),
            env: env.clone(),
            stdin,
        };
        let payload = Payload::from_json(&serde_json::to_string(&job).expect("serializes"))
            .expect("serde_json output is JSON");
        let base = base_name(&job.command);
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        let name = if *n == 1 { base } else { format!("{base}-{n}") };
        if spec == "@reboot" {
            out.reboot.push((line, RebootJob { name, payload }));
            continue;
        }
        let def = ScheduleDef {
            name,
            spec,
            tz: tz.clone(),
            dst: Default::default(),
            target: Target {
                queue: QUEUE.to_owned(),
                payload,
                priority: 0,
                max_attempts: None,
                headers: Default::default(),
            },
            jitter_ms: 0,
            start_at: None,
            end_at: None,
            max_fires: None,
            paused: false,
            overlap: Default::default(),
            catchup: Default::default(),
        };
        out.schedules.push((line, def));
    }
    (out, errors)
}

/// `NAME = value`, the value optionally in matching single or double
/// quotes (kept verbatim inside; no escapes, as in Vixie cron).
fn assignment(line: &str) -> Result<(String, String), String> {
    let (name, value) = line
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=value or a schedule, found {line:?}"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("invalid variable name {name:?}"));
    }
    let value = value.trim();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| {
            value
                .strip_prefix(*q)
                .and_then(|v| v.strip_suffix(*q))
                .filter(|_| value.len() >= 2)
        })
        .unwrap_or(value);
    Ok((name.to_owned(), unquoted.to_owned()))
}

/// A zone the core knows, checked where it is set rather than on every
/// line that uses it.
fn check_zone(zone: &str) -> Result<(), String> {
    if zone.is_empty() {
        return Ok(());
    }
    let opts = SpecOptions {
        tz: Some(zone.to_owned()),
        ..SpecOptions::default()
    };
    Spec::parse("0 0 * * *", &opts)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The schedule part of a line (normalized to single spaces) and the rest.
/// A macro takes one word (`@every` two, or three with a `+offset`); else
/// five fields, or six (seconds first) when the sixth word looks like a
/// cron field rather than a command.
fn split_schedule(line: &str) -> Result<(String, &str), String> {
    let words = words(line);
    let take = |n: usize| -> Result<(String, &str), String> {
        if words.len() < n {
            return Err(format!(
                "expected {n} schedule fields and a command, found {} word(s)",
                words.len()
            ));
        }
        let spec: Vec<&str> = words[..n].iter().map(|(_, w)| *w).collect();
        let rest = words.get(n).map_or("", |(at, _)| &line[*at..]);
        Ok((spec.join(" "), rest))
    };
    let first = words[0].1;
    if let Some(kw) = first.strip_prefix('@') {
        return match kw.to_ascii_lowercase().as_str() {
            "reboot" => take(1).map(|(_, rest)| ("@reboot".to_owned(), rest)),
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                take(1)
            }
            "every" => {
                let offset = words.get(2).is_some_and(|(_, w)| w.starts_with('+'));
                take(if offset { 3 } else { 2 })
            }
            _ => Err(format!(
                "unknown macro {first:?} (expected @reboot, @yearly, @annually, @monthly, \
                 @weekly, @daily, @midnight, @hourly or @every <duration>)"
            )),
        };
    }
    let six = words.len() >= 7 && looks_like_field(words[5].1);
    take(if six { 6 } else { 5 })
}

/// Words with their byte offsets.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// Whether a word reads as a day-of-week field (`1-5`, `*`, `MON-FRI`,
/// `5#2`, `L`) rather than the start of a command.
fn looks_like_field(word: &str) -> bool {
    const NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
    word.split([',', '-', '/', '#']).all(|part| {
        let p = part.to_ascii_uppercase();
        !p.is_empty()
            && (p.chars().all(|c| c.is_ascii_digit() || "*?LW".contains(c))
                || NAMES.contains(&p.as_str()))
    })
}

/// Vixie `%`: the first unescaped `%` ends the command; the text after it
/// is stdin, with every further unescaped `%` a newline, and a newline at
/// the end. `\%` is a literal `%` (the backslash is removed).
fn split_percent(text: &str) -> (String, Option<String>) {
    let mut command = String::new();
    let mut stdin: Option<String> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let out = stdin.as_mut().unwrap_or(&mut command);
        match c {
            '\\' if chars.peek() == Some(&'%') => {
                out.push('%');
                chars.next();
            }
            '%' => match stdin.as_mut() {
                Some(s) => s.push('\n'),
                None => stdin = Some(String::new()),
            },
            c => out.push(c),
        }
    }
    // Vixie ends the input with a newline if it lacks one.
    if let Some(s) = stdin.as_mut().filter(|s| !s.ends_with('\n')) {
        s.push('\n');
    }
    (command, stdin)
}

/// `<program>-<8 hex digits of FNV-1a over the command>`: the program is
/// the basename of the command's first word, cut to the naming rule.
fn base_name(command: &str) -> String {
    let program = command
        .split_whitespace()
        .next()
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("");
    let mut slug: String = program
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
        .take(40)
        .collect();
    if slug.is_empty() || slug.starts_with("__") {
        slug = "cron".to_owned();
    }
    format!("{slug}-{:08x}", fnv1a(command) as u32)
}

/// FNV-1a (64-bit): tiny and stable across Rust versions and machines,
/// unlike `DefaultHasher`, so names survive upgrades.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The command worker of a crontab: runs each job's [`CronJob`] with
/// `$SHELL -c`, the crontab's variables on top of the daemon's
/// environment (plus `CHIME_JOB_ID`, `CHIME_FIRE_ID`, `CHIME_SCHEDULE`),
/// and its `%` text on stdin. Output lines are logged with the schedule.
pub fn handler() -> Handler {
    Arc::new(|job: Job| Box::pin(async move { run(job).await }))
}

async fn run(job: Job) -> Result<(), String> {
    let cron: CronJob = serde_json::from_str(job.payload.as_json())
        .map_err(|e| format!("not a crontab job payload: {e}"))?;
    let shell = cron.env.get("SHELL").map_or("/bin/sh", String::as_str);
    let mut cmd = crate::worker::process::command(shell);
    cmd.arg("-c")
        .arg(&cron.command)
        .envs(&cron.env)
        .env("CHIME_JOB_ID", job.id.0.to_string())
        .stdin(if cron.stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let schedule = job
        .fire
        .as_ref()
        .map_or_else(|| "@reboot".to_owned(), |f| f.schedule.to_string());
    if let Some(f) = &job.fire {
        cmd.env("CHIME_FIRE_ID", f.to_string())
            .env("CHIME_SCHEDULE", &schedule);
    }
    let (mut child, mut group) = crate::worker::process::spawn(&mut cmd, job.id.0)
        .map_err(|e| format!("spawn {shell}: {e}"))?;
    if let (Some(text), Some(mut stdin)) = (cron.stdin, child.stdin.take()) {
        // A command that exits without reading its stdin is not a failure.
        let _ = stdin.write_all(text.as_bytes()).await;
    }
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
    let status = child.wait().await.map_err(|e| format!("wait: {e}"))?;
    group.exited();
    for l in logs {
        let _ = l.await;
    }
    crate::worker::exit_result(shell, status)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn job(def: &ScheduleDef) -> CronJob {
        serde_json::from_str(def.target.payload.as_json()).unwrap()
    }

    #[test]
    fn lines_variables_macros_and_percent() {
        let text = "\
# a comment

SHELL=/bin/bash
GREETING = \"hello world\"
CRON_TZ=Europe/Paris
*/5 * * * * /usr/local/bin/backup.sh --full
30 0 9 * * MON-FRI echo weekday
@daily  cat > /tmp/x%line one%line two\\%
@reboot echo up
@every 90s +15s echo often
";
        let tab = parse(text).unwrap();
        let specs: Vec<(&usize, &str)> = tab
            .schedules
            .iter()
            .map(|(l, d)| (l, d.spec.as_str()))
            .collect();
        assert_eq!(
            specs,
            vec![
                (&6, "*/5 * * * *"),
                (&7, "30 0 9 * * MON-FRI"),
                (&8, "@daily"),
                (&10, "@every 90s +15s"),
            ]
        );
        let backup = &tab.schedules[0].1;
        assert!(backup.name.starts_with("backup.sh-"), "{}", backup.name);
        assert_eq!(backup.tz.as_deref(), Some("Europe/Paris"));
        let j = job(backup);
        assert_eq!(j.command, "/usr/local/bin/backup.sh --full");
        assert_eq!(j.env["GREETING"], "hello world");
        assert_eq!(j.env["SHELL"], "/bin/bash");
        assert!(!j.env.contains_key("CRON_TZ"));
        let cat = job(&tab.schedules[2].1);
        assert_eq!(cat.command, "cat > /tmp/x");
        assert_eq!(cat.stdin.as_deref(), Some("line one\nline two%\n"));
        assert_eq!(job(&tab.schedules[1].1).command, "echo weekday");
        assert_eq!(tab.reboot.len(), 1);
        assert_eq!(tab.reboot[0].0, 9);
    }

    #[test]
    fn names_survive_edits_of_other_lines_and_of_the_time_fields() {
        let a = parse("0 3 * * * backup.sh\n* * * * * tick.sh\n").unwrap();
        let b = parse("# new\nFOO=1\n0 4 * * * backup.sh\n@hourly other.sh\n").unwrap();
        assert_eq!(a.schedules[0].1.name, b.schedules[0].1.name);
        assert_ne!(a.schedules[1].1.name, b.schedules[1].1.name);
        // The same command twice: the second gets a suffix.
        let c = parse("0 3 * * * backup.sh\n0 4 * * * backup.sh\n").unwrap();
        assert_eq!(
            c.schedules[1].1.name,
            format!("{}-2", c.schedules[0].1.name)
        );
    }

    #[test]
    fn every_bad_line_is_reported_with_its_field() {
        let errs = parse("* * * *\nCRON_TZ=Mars/Olympus\n@fortnightly x\n1 2 3 4 5\nbad line\n")
            .unwrap_err();
        let got: Vec<(usize, &str)> = errs.iter().map(|e| (e.line, e.field.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (1, "schedule"),
                (2, "CRON_TZ"),
                (3, "schedule"),
                (4, "command"),
                (5, "variable"),
            ]
        );
        assert!(errs[1].message.contains("invalid_time_zone"), "{}", errs[1]);
        assert_eq!(
            errs[0].to_string(),
            "line 1: schedule: expected 5 schedule fields and a command, found 4 word(s)"
        );
    }

    #[test]
    fn six_fields_only_when_the_sixth_word_is_a_field() {
        assert_eq!(
            split_schedule("0 0 * * * echo hi").unwrap(),
            ("0 0 * * *".to_owned(), "echo hi")
        );
        assert_eq!(
            split_schedule("0 0 0 * * sun,sat echo hi").unwrap(),
            ("0 0 0 * * sun,sat".to_owned(), "echo hi")
        );
        assert_eq!(
            split_schedule("0 0 * * * ./5 x").unwrap().0,
            "0 0 * * *".to_owned()
        );
    }
}
