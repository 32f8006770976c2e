//! What a config file asks for, whatever its format: queues, schedules,
//! worker pools (and `@reboot` jobs of a crontab), each with the line it
//! came from. `chime run`, `chime validate` and reload all go through a
//! [`Plan`], so a TOML config and a crontab are treated alike, and every
//! problem is reported as a [`Diagnostic`] with its line and field.

use super::config::{ConfigError, DatabaseSection, FileConfig};
use super::crontab::{self, CrontabOptions, Environments, RebootJob};
use crate::worker::http::{DEFAULT_TIMEOUT, http_handler};
use crate::worker::{PoolConfig, command_handler};
use crate::{Setup, worker::Handler};
use crate::{Subject, check};
use chime_core::{EngineConfig, QueueConfig, ScheduleDef, Timestamp};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How a file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `[[queue]]`, `[[schedule]]`, `[[worker]]` tables (`config.rs`).
    Toml,
    /// A Vixie crontab (`crontab.rs`).
    Crontab,
}

impl Format {
    /// `*.toml` is TOML unless `crontab` is forced; anything else is a crontab.
    pub fn of(path: &Path, crontab: bool) -> Format {
        let toml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        if toml && !crontab {
            Format::Toml
        } else {
            Format::Crontab
        }
    }
}

/// What a worker pool runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerKind {
    /// `[[worker]] command` (argv).
    Command(Vec<String>),
    /// The crontab runner: the command is in each job's payload.
    Crontab,
    /// `[[worker]] url`: each job POSTed as JSON (see `http_worker.rs`).
    Http {
        /// The endpoint.
        url: String,
        /// Per-request limit.
        timeout: std::time::Duration,
    },
}

/// One worker pool.
#[derive(Clone, Debug)]
pub struct WorkerPlan {
    /// Pool settings.
    pub pool: PoolConfig,
    /// What it runs.
    pub kind: WorkerKind,
}

impl WorkerKind {
    /// What it runs, for `chime inspect`: the argv (each word quoted when
    /// it needs it), `POST url`, or the crontab runner.
    pub fn describe(&self) -> String {
        match self {
            WorkerKind::Command(argv) => argv
                .iter()
                .map(|w| {
                    let plain = !w.is_empty()
                        && w.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
                    if plain { w.clone() } else { format!("{w:?}") }
                })
                .collect::<Vec<_>>()
                .join(" "),
            WorkerKind::Crontab => "the crontab command of each job".to_owned(),
            WorkerKind::Http { url, .. } => format!("POST {url}"),
        }
    }
}

impl WorkerPlan {
    fn handler(&self, envs: &Environments) -> Handler {
        match &self.kind {
            WorkerKind::Command(argv) => command_handler(argv.clone()),
            WorkerKind::Crontab => crontab::handler(envs.clone()),
            // `Plan::check` refused a bad URL before any setup was made.
            WorkerKind::Http { url, timeout } => http_handler(url, *timeout).unwrap_or_else(|e| {
                let e = e.to_string();
                Arc::new(move |_| {
                    let e = e.clone();
                    Box::pin(async move { Err(e) })
                })
            }),
        }
    }
}

/// A parsed config file.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The format it was read as.
    pub format: Format,
    /// Queues to declare.
    pub queues: Vec<QueueConfig>,
    /// Schedules to upsert (stored schedules not listed are removed).
    pub schedules: Vec<ScheduleDef>,
    /// Worker pools.
    pub workers: Vec<WorkerPlan>,
    /// `@reboot` lines: enqueued once when the daemon starts.
    pub reboot: Vec<RebootJob>,
    /// `[http] address` of a TOML config (`chime run --http` overrides it).
    pub http_address: Option<String>,
    /// `[http] tls_cert` and `tls_key` of a TOML config, as written
    /// (relative to the config file's directory).
    pub http_tls: Option<(String, String)>,
    /// `[database]` of a TOML config (`chime run --database` overrides it).
    pub database: Option<DatabaseSection>,
    /// `[[token]]` of a TOML config: the HTTP API's credentials (none:
    /// no authentication, loopback only).
    pub tokens: crate::http::Tokens,
    /// The queues carried by transports and the `[transport]` table.
    pub transports: super::config::Transports,
    /// A crontab's variables, by line (empty for TOML): given to the
    /// command worker, never to the engine (they may be secrets).
    pub crontab_env: Environments,
    /// How the crontab was read (reload reads it the same way).
    pub crontab_options: CrontabOptions,
    /// What runs, but likely not as meant (`chime validate` prints them,
    /// `chime run` logs them): see `cronlint.rs`.
    pub warnings: Vec<Diagnostic>,
    queue_lines: Vec<Option<usize>>,
    schedule_lines: Vec<Option<usize>>,
}

/// One problem in a config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The item at fault, e.g. `[[schedule]] #2 "nightly"`.
    pub item: Option<String>,
    /// The field at fault (the core's `field()` for engine errors).
    pub field: Option<String>,
    /// Stable code: the core's `code()`, or `invalid_config` /
    /// `invalid_crontab` / `unreadable` for the host's own checks.
    pub code: String,
    /// What is wrong.
    pub message: String,
}

impl Diagnostic {
    /// `path:line: item, field F: message`, one line.
    pub fn render(&self, path: &str) -> String {
        match self.line {
            Some(l) => format!("{path}:{l}: {}", self.what()),
            None => format!("{path}: {}", self.what()),
        }
    }

    /// `item, field F: message`.
    fn what(&self) -> String {
        let mut s = String::new();
        if let Some(item) = &self.item {
            s.push_str(item);
            s.push_str(if self.field.is_some() { ", " } else { ": " });
        }
        if let Some(f) = &self.field {
            s.push_str(&format!("field {f}: "));
        }
        s.push_str(&self.message);
        s
    }

    fn host(code: &str, line: Option<usize>, field: Option<&str>, message: String) -> Diagnostic {
        Diagnostic {
            line,
            item: None,
            field: field.map(str::to_owned),
            code: code.to_owned(),
            message,
        }
    }
}

impl std::fmt::Display for Diagnostic {
    /// `line N: item, field F: message`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.what()),
            None => f.write_str(&self.what()),
        }
    }
}

impl Plan {
    /// Reads and parses `path` (syntax only; see [`Plan::check`]).
    pub fn load(path: &Path, format: Format) -> Result<Plan, Vec<Diagnostic>> {
        let text = read(path)?;
        match format {
            Format::Toml => Plan::from_toml(&text),
            Format::Crontab => Plan::from_crontab(&text),
        }
    }

    /// Parses and checks `path`: every problem (syntax and the core's,
    /// ordered by line), or a plan the engine accepts.
    pub fn load_checked(
        path: &Path,
        format: Format,
        config: &EngineConfig,
        now: Timestamp,
    ) -> Result<Plan, Vec<Diagnostic>> {
        Plan::load_checked_with(path, format, CrontabOptions::default(), config, now)
    }

    /// [`Plan::load_checked`], a crontab read with `opts`.
    pub fn load_checked_with(
        path: &Path,
        format: Format,
        opts: CrontabOptions,
        config: &EngineConfig,
        now: Timestamp,
    ) -> Result<Plan, Vec<Diagnostic>> {
        let text = read(path)?;
        let (plan, mut problems) = match format {
            Format::Toml => Plan::toml_lenient(&text),
            Format::Crontab => Plan::crontab_lenient(&text, opts),
        };
        let Some(plan) = plan else {
            return Err(problems);
        };
        problems.extend(plan.check(config, now));
        if problems.is_empty() {
            let mut plan = plan;
            let more = plan.config_warnings(config);
            plan.warnings.extend(more);
            plan.warnings.sort_by_key(|d| d.line);
            Ok(plan)
        } else {
            problems.sort_by_key(|d| d.line);
            Err(problems)
        }
    }

    /// A crontab's plan: one queue, one worker, a schedule per line.
    pub fn from_crontab(text: &str) -> Result<Plan, Vec<Diagnostic>> {
        strict(Plan::crontab_lenient(text, CrontabOptions::default()))
    }

    /// The plan of the good lines, and the bad ones.
    fn crontab_lenient(text: &str, opts: CrontabOptions) -> (Option<Plan>, Vec<Diagnostic>) {
        let (tab, errors) = crontab::parse_with(text, opts);
        let diag = |e: crontab::CrontabError| {
            Diagnostic::host(e.code, Some(e.line), Some(&e.field), e.message)
        };
        let problems = errors.into_iter().map(diag).collect();
        let warnings = tab.warnings.into_iter().map(diag).collect();
        let (schedule_lines, schedules) = tab
            .schedules
            .into_iter()
            .map(|(line, def)| (Some(line), def))
            .unzip();
        let plan = Plan {
            format: Format::Crontab,
            queues: vec![crontab::queue()],
            schedules,
            workers: vec![WorkerPlan {
                pool: crontab::pool(),
                kind: WorkerKind::Crontab,
            }],
            reboot: tab.reboot.into_iter().map(|(_, r)| r).collect(),
            http_address: None,
            http_tls: None,
            database: None,
            tokens: crate::http::Tokens::default(),
            transports: Default::default(),
            crontab_env: Environments::new(tab.env),
            crontab_options: opts,
            warnings,
            queue_lines: vec![None],
            schedule_lines,
        };
        (Some(plan), problems)
    }

    /// A TOML config's plan. Table errors are all reported, each at its
    /// table's header line; other errors (syntax, unknown keys, workers)
    /// stop at the first, as the TOML parser does.
    pub fn from_toml(text: &str) -> Result<Plan, Vec<Diagnostic>> {
        strict(Plan::toml_lenient(text))
    }

    /// The plan of the tables that parse (without workers if any table is
    /// bad), and every table that does not; `None` on a syntax error.
    fn toml_lenient(text: &str) -> (Option<Plan>, Vec<Diagnostic>) {
        let tables: Tables = match toml::from_str(text) {
            Ok(t) => t,
            Err(e) => return (None, vec![toml_diagnostic(text, &e)]),
        };
        let lines = |kind: &str, v: &[toml::Spanned<toml::Value>]| -> Vec<Option<usize>> {
            v.iter()
                .map(|s| Some(header_line(text, s.span().start, kind)))
                .collect()
        };
        let (queue_lines, schedule_lines, worker_lines) = (
            lines("queue", &tables.queue),
            lines("schedule", &tables.schedule),
            lines("worker", &tables.worker),
        );
        let mut problems = Vec::new();
        let mut table_error = |kind: &str, i: usize, line: Option<usize>, message: String| {
            problems.push(Diagnostic {
                item: Some(format!("[[{kind}]] #{}", i + 1)),
                ..Diagnostic::host("invalid_config", line, None, message)
            });
        };
        let mut good = FileConfig {
            queues: Vec::new(),
            schedules: Vec::new(),
            workers: Vec::new(),
            http: Default::default(),
            database: None,
            tokens: Default::default(),
            transports: Default::default(),
        };
        let (mut good_queue_lines, mut good_schedule_lines) = (Vec::new(), Vec::new());
        for (i, (v, line)) in tables.queue.iter().zip(&queue_lines).enumerate() {
            let mut v = v.get_ref().clone();
            let stripped = super::config::take_transport_keys(&mut v);
            match stripped.and_then(|_| convert::<QueueConfig>(&v)) {
                Ok(q) => {
                    good.queues.push(q);
                    good_queue_lines.push(*line);
                }
                Err(m) => table_error("queue", i, *line, m),
            }
        }
        for (i, (v, line)) in tables.schedule.iter().zip(&schedule_lines).enumerate() {
            match convert::<ScheduleDef>(v.get_ref()) {
                Ok(s) => {
                    good.schedules.push(s);
                    good_schedule_lines.push(*line);
                }
                Err(m) => table_error("schedule", i, *line, m),
            }
        }
        if !problems.is_empty() {
            let plan = Plan::from_file(good, good_queue_lines, good_schedule_lines);
            return (Some(plan), problems);
        }
        match FileConfig::parse(text) {
            Ok(file) => (
                Some(Plan::from_file(file, queue_lines, schedule_lines)),
                problems,
            ),
            Err(e) => {
                let d = match e {
                    ConfigError::Toml(e) => toml_diagnostic(text, &e),
                    ConfigError::UnknownQueue { index, .. } => Diagnostic {
                        item: Some(format!("[[worker]] #{index}")),
                        ..Diagnostic::host(
                            "invalid_config",
                            worker_lines.get(index - 1).copied().flatten(),
                            Some("queue"),
                            e.to_string(),
                        )
                    },
                    other => Diagnostic::host("invalid_config", None, None, other.to_string()),
                };
                (None, vec![d])
            }
        }
    }

    /// A plan from an already parsed [`FileConfig`] (lines unknown unless given).
    pub fn from_file(
        file: FileConfig,
        queue_lines: Vec<Option<usize>>,
        schedule_lines: Vec<Option<usize>>,
    ) -> Plan {
        let workers = file
            .workers
            .iter()
            .map(|w| WorkerPlan {
                pool: file.pool_config(w),
                kind: match &w.url {
                    Some(url) => WorkerKind::Http {
                        url: url.clone(),
                        timeout: w.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis),
                    },
                    None => WorkerKind::Command(w.command.clone()),
                },
            })
            .collect();
        Plan {
            format: Format::Toml,
            queues: file.queues,
            schedules: file.schedules,
            workers,
            reboot: Vec::new(),
            http_tls: file.http.tls_cert.zip(file.http.tls_key),
            http_address: file.http.address,
            database: file.database,
            tokens: file.tokens,
            transports: file.transports,
            crontab_env: Environments::default(),
            crontab_options: CrontabOptions::default(),
            warnings: Vec::new(),
            queue_lines,
            schedule_lines,
        }
    }

    /// What the core refuses in this plan, as of `now`.
    pub fn check(&self, config: &EngineConfig, now: Timestamp) -> Vec<Diagnostic> {
        check(&self.queues, &self.schedules, config, now)
            .into_iter()
            .map(|r| {
                let (line, item) = match (self.format, r.subject) {
                    (Format::Toml, Subject::Queue(i)) => (
                        self.queue_line(i),
                        format!("[[queue]] #{} {:?}", i + 1, r.name),
                    ),
                    (Format::Toml, Subject::Schedule(i)) => (
                        self.schedule_line(i),
                        format!("[[schedule]] #{} {:?}", i + 1, r.name),
                    ),
                    (Format::Crontab, Subject::Queue(i)) => {
                        (self.queue_line(i), format!("queue {:?}", r.name))
                    }
                    (Format::Crontab, Subject::Schedule(i)) => {
                        (self.schedule_line(i), format!("schedule {:?}", r.name))
                    }
                };
                Diagnostic {
                    line,
                    item: Some(item),
                    field: r.error.field().map(str::to_owned),
                    code: r.error.code().to_owned(),
                    message: r.error.to_string(),
                }
            })
            .chain(self.workers.iter().enumerate().filter_map(|(i, w)| {
                let WorkerKind::Http { url, timeout } = &w.kind else {
                    return None;
                };
                let e = http_handler(url, *timeout).err()?;
                Some(Diagnostic {
                    item: Some(format!("[[worker]] #{}", i + 1)),
                    ..Diagnostic::host("invalid_config", None, Some("url"), e.to_string())
                })
            }))
            .collect()
    }

    /// What is accepted but probably not meant (`chime validate` prints
    /// these and still succeeds, `chime run` logs them; added to the
    /// crontab reader's own [`Plan::warnings`] by the checked load): a `tz` on an `@every` schedule, which
    /// has no effect (its grid is absolute time), and a schedule whose
    /// queue no `[[worker]]` of the file works (its jobs wait until
    /// something else claims them: another process, a replica's pool).
    fn config_warnings(&self, config: &EngineConfig) -> Vec<Diagnostic> {
        let worked: std::collections::BTreeSet<&str> =
            self.workers.iter().map(|w| w.pool.queue.as_str()).collect();
        let mut out = Vec::new();
        for (i, s) in self.schedules.iter().enumerate() {
            let item = match self.format {
                Format::Toml => format!("[[schedule]] #{} {:?}", i + 1, s.name),
                Format::Crontab => format!("schedule {:?}", s.name),
            };
            let warn = |code: &str, field: &str, message: String| Diagnostic {
                item: Some(item.clone()),
                ..Diagnostic::host(code, self.schedule_line(i), Some(field), message)
            };
            let opts = chime_core::SpecOptions {
                tz: s.tz.clone(),
                dst: s.dst,
                min_interval_ms: config.min_interval_ms,
                horizon_years: config.horizon_years,
            };
            if let (Some(tz), Ok(spec)) = (&s.tz, chime_core::Spec::parse(&s.spec, &opts))
                && !spec.uses_zone()
            {
                out.push(warn(
                    "tz_ignored",
                    "tz",
                    format!(
                        "tz {tz:?} has no effect on an @every spec (its grid is absolute \
                         time); use a cron spec to fire on local time"
                    ),
                ));
            }
            if !worked.contains(s.target.queue.as_str()) {
                out.push(warn(
                    "queue_not_worked",
                    "target.queue",
                    format!(
                        "no [[worker]] works queue {:?}: its jobs wait until something \
                         else claims them",
                        s.target.queue
                    ),
                ));
            }
        }
        out
    }

    fn queue_line(&self, i: usize) -> Option<usize> {
        self.queue_lines.get(i).copied().flatten()
    }

    /// The line schedule `i` came from, when known.
    pub fn schedule_line(&self, i: usize) -> Option<usize> {
        self.schedule_lines.get(i).copied().flatten()
    }

    /// The [`Setup`] to start (or reload) with; handlers are made afresh.
    pub fn setup(&self) -> Setup {
        Setup {
            queues: self.queues.clone(),
            schedules: self.schedules.clone(),
            pools: self
                .workers
                .iter()
                .map(|w| (w.pool.clone(), w.handler(&self.crontab_env)))
                .collect(),
            ..Setup::default()
        }
    }
}

fn read(path: &Path) -> Result<String, Vec<Diagnostic>> {
    std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic::host(
            "unreadable",
            None,
            None,
            format!("reading: {e}"),
        )]
    })
}

/// A lenient parse's plan only if it found no problem.
fn strict((plan, problems): (Option<Plan>, Vec<Diagnostic>)) -> Result<Plan, Vec<Diagnostic>> {
    match plan {
        Some(p) if problems.is_empty() => Ok(p),
        _ => Err(problems),
    }
}

/// The tables of a TOML config with their spans (other keys ignored here;
/// `FileConfig::parse` rejects unknown ones).
#[derive(Deserialize)]
struct Tables {
    #[serde(default)]
    queue: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    schedule: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    worker: Vec<toml::Spanned<toml::Value>>,
}

/// TOML → the core's serde types, through JSON (as `config.rs` does).
fn convert<T: serde::de::DeserializeOwned>(v: &toml::Value) -> Result<T, String> {
    let json = serde_json::to_string(v).map_err(|e| e.to_string())?;
    serde_json::from_str(&json).map_err(|e| e.to_string())
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line of the `[[kind]]` header that opens the table spanning from
/// `offset` (the span may start at the header or at the table's first key).
fn header_line(text: &str, offset: usize, kind: &str) -> usize {
    let line = line_of(text, offset);
    let header = format!("[[{kind}]]");
    let is_header = |l: &str| l.split('#').next().unwrap_or("").replace(' ', "") == header;
    let lines: Vec<&str> = text.lines().collect();
    (1..=line.min(lines.len()))
        .rev()
        .find(|&n| is_header(lines[n - 1]))
        .unwrap_or(line)
}

fn toml_diagnostic(text: &str, e: &toml::de::Error) -> Diagnostic {
    let line = e.span().map(|s| line_of(text, s.start));
    Diagnostic::host("invalid_config", line, None, e.message().trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_767_225_600_000;

    fn now() -> Timestamp {
        Timestamp::from_millis(T0).unwrap()
    }

    #[test]
    fn toml_errors_point_at_their_table_header() {
        let text = "\
[[queue]]
name = \"q\"

[[schedule]]
name = \"ok\"
spec = \"@every 1m\"
target = { queue = \"q\" }

[[schedule]]
name = \"bad\"
spec = \"61 * * * *\"
target = { queue = \"q\" }

[[schedule]]
name = \"bad zone\"
spec = \"0 * * * *\"
tz = \"Mars/Base\"
target = { queue = \"q\" }
";
        let plan = Plan::from_toml(text).unwrap();
        let d = plan.check(&EngineConfig::default(), now());
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].line, Some(9));
        assert_eq!(d[0].code, "invalid_spec");
        assert_eq!(d[0].field.as_deref(), Some("spec"));
        assert_eq!(
            d[0].render("c.toml"),
            "c.toml:9: [[schedule]] #2 \"bad\", field spec: \
             invalid_spec: minute 61 out of range 0-59 at field 1"
        );
        // Both problems of the third table: the name and the zone; the
        // core reports the first it meets.
        assert_eq!(d[1].line, Some(14));
        assert_eq!(d[1].code, "invalid_name");
    }

    #[test]
    fn every_malformed_table_is_listed() {
        let text = "\
[[schedule]]
name = \"a\"

[[schedule]]
name = \"b\"
spec = \"@hourly\"
target = { queue = \"q\" }
colour = \"red\"
";
        let d = Plan::from_toml(text).unwrap_err();
        let lines: Vec<Option<usize>> = d.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![Some(1), Some(4)]);
        assert!(d[0].message.contains("missing field"), "{d:?}");
        assert!(d[1].message.contains("unknown field `colour`"), "{d:?}");
    }

    #[test]
    fn a_worker_for_an_undeclared_queue_points_at_its_table() {
        let text = "[[queue]]\nname = \"q\"\n\n[[worker]]\nqueue = \"q\"\ncommand = [\"true\"]\n\n\
                    [[worker]]\nqueue = \"nope\"\ncommand = [\"true\"]\n";
        let d = Plan::from_toml(text).unwrap_err();
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].render("c.toml"),
            "c.toml:8: [[worker]] #2, field queue: worker #2: queue \"nope\" has no [[queue]] table"
        );
    }

    #[test]
    fn toml_syntax_errors_have_a_line() {
        let d = Plan::from_toml("[[queue]]\nname = \"q\"\n\nname = = 3\n").unwrap_err();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line, Some(4));
    }

    #[test]
    fn crontab_core_errors_point_at_their_line() {
        let plan = Plan::from_crontab("# x\n*/5 * * * * ok\n0 25 * * * bad\n").unwrap();
        let d = plan.check(&EngineConfig::default(), now());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line, Some(3));
        assert_eq!(d[0].code, "invalid_spec");
    }
}
