//! `chime run --crontab FILE`: a plain Vixie crontab, run like cron does
//! but with chime's guarantees (no double fires across DST, catch-up after
//! downtime, durable state, dead letters for failed runs).
//!
//! Every schedule line becomes one [`ScheduleDef`] on the local queue
//! [`QUEUE`]; its payload carries the command and the `%` stdin text, so
//! one command worker ([`handler`]) runs every line and a reload that
//! edits lines never needs new workers. The crontab's variables are not
//! in the payload (they may be secrets): see [`super::cronjob`]. Spec syntax is
//! not checked here: the core does it (see [`crate::check`]), so a crontab
//! accepts exactly the cron grammar of `docs/spec.md`.
//!
//! Names are the command's words (`echo hello > /tmp/x` →
//! `echo-hello-tmp-x`): stable across edits of other lines (and across a
//! change of the time fields, which is then an update of the same
//! schedule), readable in logs. See `docs/crontab.md`.

pub use super::cronjob::{Env, Environments, handler};
use super::cronlint;
use crate::worker::PoolConfig;
use chime_core::{Payload, QueueConfig, ScheduleDef, Spec, SpecOptions, Target};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The local queue every crontab line fires into.
pub const QUEUE: &str = "crontab";

/// Jobs of one crontab that may run at once (cron runs every line's
/// command in its own process; each schedule still skips a fire while its
/// previous run is alive, chime's default overlap policy).
pub const CONCURRENCY: usize = 256;

/// A crontab line that cannot be used (or, among [`Crontab::warnings`],
/// one that runs but likely not as its author meant).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {field}: {message}")]
pub struct CrontabError {
    /// 1-based line number.
    pub line: usize,
    /// Stable code: `invalid_crontab` for errors; for warnings
    /// `six_fields_seconds_first`, `percent_is_stdin`, `user_not_switched`.
    pub code: &'static str,
    /// The part of the line at fault: `schedule`, `command`, `CRON_TZ`,
    /// `variable`, …
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// How to read what Vixie cron, system crontabs and supercronic read
/// differently (`chime validate`/`run` flags, `docs/cli.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrontabOptions {
    /// `--crontab-user-column`: the system crontab format (`/etc/crontab`,
    /// `/etc/cron.d/*`): a user name after the time fields, taken off the
    /// command. Without it, a command that starts with a user name is an
    /// error.
    pub user_column: bool,
    /// `--crontab-allow-field-command`: a command whose first word reads
    /// as a cron field (`*`, `5`, `1-5`) is a command. Without it, it is an
    /// error: it is most often a line with more time fields than chime
    /// reads (7, supercronic's seconds-and-year form).
    pub allow_field_command: bool,
}

/// A parsed crontab.
#[derive(Clone, Debug, Default)]
pub struct Crontab {
    /// One per schedule line, in file order, each with its line number.
    pub schedules: Vec<(usize, ScheduleDef)>,
    /// `@reboot` lines: run once each time the daemon starts.
    pub reboot: Vec<(usize, RebootJob)>,
    /// Each line's variables, by its name (kept out of the payloads).
    pub env: BTreeMap<String, Env>,
    /// Lines that run, but differently from Vixie cron or supercronic.
    pub warnings: Vec<CrontabError>,
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
    /// Never written: the variables live in the daemon
    /// ([`Environments`]). Read from payloads an older chime journaled.
    #[serde(default, skip_serializing)]
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
    parse_with(text, CrontabOptions::default())
}

/// [`parse_lenient`] with options.
pub fn parse_with(text: &str, opts: CrontabOptions) -> (Crontab, Vec<CrontabError>) {
    let lint = cronlint::Lint::new(opts);
    let mut out = Crontab::default();
    let mut errors = Vec::new();
    let mut env = BTreeMap::new();
    let mut tz: Option<String> = None;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |field: &str, message: String| CrontabError {
            line,
            code: "invalid_crontab",
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
        let command = match lint.line(
            line,
            &spec,
            command.trim(),
            stdin.is_some(),
            &mut out.warnings,
        ) {
            Ok(c) => c,
            Err(m) => {
                errors.push(err("command", m));
                continue;
            }
        };
        let job = CronJob {
            command,
            env: BTreeMap::new(),
            stdin,
        };
        let payload = Payload::from_json(&serde_json::to_string(&job).expect("serializes"))
            .expect("serde_json output is JSON");
        let base = base_name(&job.command);
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        let mut name = if *n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        // `echo a 2` is `echo-a-2`, as the second `echo a` would be.
        while out.env.contains_key(&name) {
            *n += 1;
            name = format!("{base}-{n}");
        }
        out.env.insert(name.clone(), env.clone());
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
            origin: Default::default(),
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
pub(super) fn looks_like_field(word: &str) -> bool {
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

/// Most characters of a name made from a command.
pub const NAME_CHARS: usize = 48;

/// The command's words made a name: the first word's basename, then the
/// other words, each reduced to `A-Z a-z 0-9 . _`, joined by `-`, cut at a
/// word to [`NAME_CHARS`] (`/usr/bin/backup.sh --full /srv` →
/// `backup.sh-full-srv`). Readable in logs and `chime inspect`, and
/// stable: it depends on the command alone. Empty, or reserved (`__`):
/// `cron`.
pub fn base_name(command: &str) -> String {
    let mut words = command.split_whitespace();
    let first = words.next().unwrap_or("").rsplit('/').next().unwrap_or("");
    let mut name = String::new();
    for w in std::iter::once(first).chain(words) {
        for part in w.split(|c: char| !(c.is_ascii_alphanumeric() || "._".contains(c))) {
            let part = part.trim_matches('.');
            if part.is_empty() {
                continue;
            }
            let extra = usize::from(!name.is_empty()) + part.len();
            if name.len() + extra > NAME_CHARS {
                if name.is_empty() {
                    name.push_str(&part[..NAME_CHARS]);
                }
                return finish(name);
            }
            if !name.is_empty() {
                name.push('-');
            }
            name.push_str(part);
        }
    }
    finish(name)
}

fn finish(name: String) -> String {
    if name.is_empty() || name.starts_with("__") {
        "cron".to_owned()
    } else {
        name
    }
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
        assert_eq!(backup.name, "backup.sh-full");
        let j = job(backup);
        assert_eq!(j.command, "/usr/local/bin/backup.sh --full");
        // The variables stay out of the payload (they may be secrets).
        assert!(j.env.is_empty());
        assert!(!backup.target.payload.as_json().contains("hello world"));
        let env = &tab.env[&backup.name];
        assert_eq!(env["GREETING"], "hello world");
        assert_eq!(env["SHELL"], "/bin/bash");
        assert!(!env.contains_key("CRON_TZ"));
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

    /// Names are the command's words, not a hash (`echo-9e435d56`).
    #[test]
    fn names_read_as_the_command() {
        let tab = parse(
            "* * * * * echo hello > /tmp/x
             0 3 * * * /usr/local/bin/backup.sh --full /srv
             @hourly echo hello
             @daily echo hello
             @daily echo hello 2
             @daily $HOME/__x
",
        )
        .unwrap();
        let names: Vec<&str> = tab.schedules.iter().map(|(_, d)| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "echo-hello-tmp-x",
                "backup.sh-full-srv",
                "echo-hello",
                "echo-hello-2",
                "echo-hello-2-2",
                "cron",
            ]
        );
        assert_eq!(base_name(&format!("run {}", "a".repeat(80))), "run");
        assert_eq!(base_name(&"b".repeat(80)).len(), NAME_CHARS);
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
