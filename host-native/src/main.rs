//! The `chime` daemon and tools.

use anyhow::{Context, bail};
use chime_core::EngineConfig;
use chime_native::daemon::client::{self, ApiCmd, ClientError};
use chime_native::daemon::crontab::CrontabOptions;
use chime_native::daemon::plan::{Diagnostic, Format, Plan};
use chime_native::daemon::replay::Trace;
use chime_native::daemon::{logs, preview, run, tzdb};
use chime_native::driver::{Clock, SystemClock};
use chime_native::http::{DEAD_LIMIT, Inspection};
use chime_native::pg::PgConfig;
use chime_native::store::datadir;
use chime_native::worker::process;
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// chime: schedules and job queues that never double-fire.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
    /// Log lines for people (`human`) or one JSON object per line (`json`).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Human)]
    log_format: LogFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Human,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the daemon: queues, schedules and command workers from a TOML
    /// file, or the lines of a crontab. SIGHUP reloads the file.
    Run(RunArgs),
    /// Print the next fires of a spec with civil time, offset and DST notes.
    Preview {
        /// `@every 15m`, a cron expression, or `@at …`.
        spec: String,
        /// IANA zone for cron and civil `@at` (default UTC).
        #[arg(long)]
        tz: Option<String>,
        /// How many fires.
        #[arg(short, default_value_t = 10)]
        n: usize,
        /// DST policy: `auto`, or `gap=shift|skip` and/or `fold=first|last|both`
        /// (comma-separated, e.g. `gap=skip,fold=both`).
        #[arg(long, default_value = "auto")]
        dst: String,
        /// Start after this instant (RFC 3339, or a civil date-time read in
        /// `--tz`) instead of now.
        #[arg(long)]
        from: Option<String>,
    },
    /// Check a config file (`*.toml`) or a crontab (anything else): every
    /// error with its line and field; exits non-zero if there is any.
    Validate {
        /// The file.
        file: PathBuf,
        /// Read it as a crontab whatever its name.
        #[arg(long)]
        crontab: bool,
        #[command(flatten)]
        cron: CronFlags,
    },
    /// Check that a journal reproduces its recorded outputs: a trace file
    /// (JSON Lines, as in tests/golden) or a data directory (replayed twice:
    /// commands and final state must be identical).
    Replay {
        /// Trace file or data directory.
        path: PathBuf,
        /// Also write the replay as a trace with every output recorded.
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// HTTP API tokens.
    #[command(subcommand)]
    Token(TokenCmd),
    /// The bundled tz database (docs/dst.md).
    #[command(subcommand)]
    Tzdb(TzdbCmd),
    /// Show schedules, queue depths and dead letters of a data directory
    /// that no daemon holds.
    Inspect {
        /// Data directory.
        #[arg(long, default_value = ".chime-data", conflicts_with = "url")]
        data: PathBuf,
        /// A running daemon's HTTP address instead (`http://127.0.0.1:9464`).
        #[arg(long)]
        url: Option<String>,
        /// JSON instead of text (the same struct the HTTP API serves).
        #[arg(long)]
        json: bool,
        /// Dead letters listed per queue.
        #[arg(long, default_value_t = DEAD_LIMIT)]
        dead: usize,
        /// The daemon's config file: the text lists the worker command of
        /// each schedule's queue (a crontab's commands are in the data).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// The HTTP API's client commands (docs/clients.md).
    #[command(flatten)]
    Api(ApiCmd),
}

#[derive(Subcommand)]
enum TzdbCmd {
    /// Which schedules' next fires move under this binary's tz database
    /// compared with the release a snapshot was computed with: read it
    /// before upgrading a deployment.
    #[command(group(clap::ArgGroup::new("source").required(true).args(["data_dir", "snapshot"])))]
    Diff {
        /// A data directory that no daemon holds (stop it first).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// A snapshot file (JSON).
        #[arg(long)]
        snapshot: Option<PathBuf>,
        /// A zoneinfo directory with the snapshot's release (TZif files,
        /// `+VERSION`): compares the next N fires, not only the pending one.
        #[arg(long)]
        zoneinfo: Option<PathBuf>,
        /// Fires per schedule to compare (with --zoneinfo).
        #[arg(long, default_value_t = 10)]
        next: usize,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum TokenCmd {
    /// Print a new random token once, and the `[[token]]` lines (with its
    /// SHA-256, never the token) to add to the config.
    New {
        /// The token's name (in logs and errors in its place).
        name: String,
        /// `read`, `enqueue`, `work`, `manage` or `admin`, optionally
        /// `:pattern` (`enqueue:emails*`); repeat for several.
        #[arg(long = "scope", required = true)]
        scopes: Vec<String>,
    },
}

/// `chime token new`: the token on the first line (shown once), then the
/// config lines.
fn token_new(name: &str, scopes: &[String]) -> anyhow::Result<()> {
    use chime_native::http::{Grant, hash_hex, new_token};
    for s in scopes {
        Grant::parse(s)?;
    }
    let token = new_token().map_err(|e| anyhow::anyhow!("reading the OS random source: {e}"))?;
    let config = format!(
        "[[token]]\nname = {}\nsha256 = \"{}\"\nscopes = [{}]\n",
        toml_string(name),
        hash_hex(&token),
        scopes
            .iter()
            .map(|s| toml_string(s))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Not `println!`: `chime token new … | head -n1` closes the pipe
    // after the first line, and the rest is then for nobody.
    out(&token);
    let _ = writeln!(
        std::io::stderr(),
        "\n# the token above is shown once; add this to the config:"
    );
    out(&format!("\n{}", config.trim_end()));
    Ok(())
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// How a crontab's ambiguous lines are read (docs/cli.md, docs/crontab.md).
#[derive(clap::Args, Clone, Copy)]
struct CronFlags {
    /// The crontab is a system one (`/etc/crontab`, `/etc/cron.d/*`): a
    /// user name follows the time fields. It is taken off the command
    /// (chime does not switch users). Without it, a command that starts
    /// with a user name is an error.
    #[arg(long)]
    crontab_user_column: bool,
    /// A command may start with a word that reads as a time field (`*`,
    /// `5`, `1-5`). Without it, that is an error: most often a line with
    /// more fields than chime reads (supercronic's 7, with a year).
    #[arg(long)]
    crontab_allow_field_command: bool,
}

impl CronFlags {
    fn options(self) -> CrontabOptions {
        CrontabOptions {
            user_column: self.crontab_user_column,
            allow_field_command: self.crontab_allow_field_command,
        }
    }
}

/// `chime run`'s arguments.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["config", "crontab"])))]
struct RunArgs {
    /// Config file (`[[queue]]`, `[[schedule]]`, `[[worker]]`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// A Vixie crontab: each line's command runs with `sh -c` (see docs/crontab.md).
    #[arg(long)]
    crontab: Option<PathBuf>,
    #[command(flatten)]
    cron: CronFlags,
    /// Data directory (created if missing; one daemon at a time).
    #[arg(long, default_value = ".chime-data")]
    data: PathBuf,
    /// Snapshot (and truncate the journal) after this many entries, in
    /// the next quiet moment (nothing due soon); at 4× it, at once.
    #[arg(long, default_value_t = chime_core::host::SNAPSHOT_EVERY)]
    snapshot_every: u64,
    /// HTTP listener (/healthz, /metrics, /v1): host:port or `off`
    /// [default: `[http] address` of the config, else 127.0.0.1:9464].
    #[arg(long)]
    http: Option<String>,
    /// Serve a non-loopback --http address although the config has no
    /// `[[token]]`: anyone who reaches it may enqueue, cancel and
    /// reschedule. Without it such a start is refused.
    #[arg(long)]
    insecure_no_auth: bool,
    /// Run as one replica of a deployment on PostgreSQL
    /// (`postgresql://user:pass@host/db`) instead of the data
    /// directory: any replica's workers take jobs, one replica fires
    /// the schedules (see docs/postgres.md) [default: `[database] url`
    /// of the config].
    #[arg(long, env = "CHIME_DATABASE_URL")]
    database: Option<String>,
    /// The Postgres schema of chime's tables, created if missing
    /// [default: `[database] schema` of the config, else `chime`].
    #[arg(long)]
    schema: Option<String>,
    /// Leader lease time-to-live in milliseconds, renewed every third
    /// [default: `[database] leaseTtlMs` of the config, else 15000].
    #[arg(long)]
    lease_ttl_ms: Option<u64>,
}

fn main() -> std::process::ExitCode {
    // A command job's exec wrapper (worker/process.rs): before anything
    // else, it becomes the job's command.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == process::EXEC_WRAPPER_ARG) {
        return std::process::ExitCode::from(process::exec_wrapper(&args[2..]));
    }
    let result = real_main();
    // The log lines still queued for stderr are written before the exit.
    logs::flush();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One line with the whole cause chain; no backtrace for users.
            // A closed stderr is no reason to panic (exit 101).
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            // An API command says why it failed in its exit code
            // (2 usage, 3 refused, 4 unavailable: daemon/client.rs).
            match e.downcast_ref::<ClientError>() {
                Some(c) => std::process::ExitCode::from(c.exit_code()),
                None => std::process::ExitCode::FAILURE,
            }
        }
    }
}

fn real_main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CHIME_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(logs::line);
    match cli.log_format {
        LogFormat::Human => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => logs.json().with_ansi(false).init(),
    }
    match cli.command {
        Cmd::Run(args) => run_daemon(args),
        Cmd::Preview {
            spec,
            tz,
            n,
            dst,
            from,
        } => preview::preview(&spec, tz, n, &dst, from.as_deref()),
        Cmd::Validate {
            file,
            crontab,
            cron,
        } => validate(&file, Format::of(&file, crontab), cron.options()),
        Cmd::Replay { path, record } => replay(&path, record.as_deref()),
        Cmd::Token(TokenCmd::New { name, scopes }) => token_new(&name, &scopes),
        Cmd::Tzdb(TzdbCmd::Diff {
            data_dir,
            snapshot,
            zoneinfo,
            next,
            json,
        }) => {
            let source = match (&data_dir, &snapshot) {
                (Some(d), _) => tzdb::Source::DataDir(d),
                (None, Some(f)) => tzdb::Source::Snapshot(f),
                (None, None) => unreachable!("clap requires one"),
            };
            let text = tzdb::diff(source, zoneinfo.as_deref(), next, json)?;
            out(text.trim_end());
            Ok(())
        }
        Cmd::Inspect {
            data,
            url,
            json,
            dead,
            config,
        } => inspect(&data, url.as_deref(), json, dead, config.as_deref()),
        Cmd::Api(cmd) => Ok(client::run(cmd)?),
    }
}

/// `chime run`: on a data directory, or as a replica with a database.
fn run_daemon(args: RunArgs) -> anyhow::Result<()> {
    let RunArgs {
        config,
        crontab,
        cron,
        data,
        snapshot_every,
        http,
        database,
        schema,
        lease_ttl_ms,
        insecure_no_auth,
    } = args;
    let (path, format) = match (config, crontab) {
        (Some(c), _) => (c, Format::Toml),
        (None, Some(c)) => (c, Format::Crontab),
        (None, None) => bail!("--config or --crontab is required"),
    };
    let plan = Plan::load_checked_with(
        &path,
        format,
        cron.options(),
        &EngineConfig::default(),
        SystemClock.now(),
    )
    .map_err(|d| config_error(&path, &d))?;
    for w in &plan.warnings {
        tracing::warn!(code = %w.code, "{}", w.render(&path.display().to_string()));
    }
    let db = plan.database.clone().unwrap_or_default();
    match database.or(db.url) {
        Some(_) if !plan.transports.queues.is_empty() => {
            // A replica's fires go through the Postgres outbox, which no
            // publisher empties into a broker: they would be stuck there.
            let queues: Vec<&str> = plan.transports.queues.keys().map(String::as_str).collect();
            bail!(
                "queues with a transport ({}) run with the embedded engine, not with a database (yet): docs/transports.md",
                queues.join(", ")
            )
        }
        Some(url) => {
            let schema = schema.or(db.schema).unwrap_or_else(|| "chime".into());
            let pg = PgConfig::new(url).with_schema(schema);
            let ttl_ms = lease_ttl_ms.or(db.lease_ttl_ms).unwrap_or(15_000);
            run::run_replica(
                plan,
                (&path, format),
                pg,
                std::time::Duration::from_millis(ttl_ms),
                snapshot_every,
                (http, insecure_no_auth),
            )
        }
        None if schema.is_some() || lease_ttl_ms.is_some() => {
            bail!("--schema and --lease-ttl-ms need a database (--database or [database] url)")
        }
        None => run::run(
            plan,
            &path,
            format,
            data,
            snapshot_every,
            http,
            insecure_no_auth,
        ),
    }
}

/// One line for `anyhow`: `config PATH: line 3: …; line 9: …`.
fn config_error(path: &Path, diags: &[Diagnostic]) -> anyhow::Error {
    let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
    anyhow::anyhow!("config {}: {}", path.display(), all.join("; "))
}

fn validate(path: &Path, format: Format, opts: CrontabOptions) -> anyhow::Result<()> {
    let now = SystemClock.now();
    match Plan::load_checked_with(path, format, opts, &EngineConfig::default(), now) {
        Ok(plan) => {
            for w in &plan.warnings {
                out(&warning(w, path));
            }
            out(&format!(
                "{}: ok ({} queues, {} schedules, {} worker pools{}{})",
                path.display(),
                plan.queues.len(),
                plan.schedules.len(),
                plan.workers.len(),
                if plan.reboot.is_empty() {
                    String::new()
                } else {
                    format!(", {} @reboot jobs", plan.reboot.len())
                },
                if plan.warnings.is_empty() {
                    String::new()
                } else {
                    format!(", {} warning(s)", plan.warnings.len())
                }
            ));
            Ok(())
        }
        Err(diags) => {
            for d in &diags {
                out(&d.render(&path.display().to_string()));
            }
            bail!("{}: {} problem(s)", path.display(), diags.len())
        }
    }
}

fn replay(path: &Path, record: Option<&Path>) -> anyhow::Result<()> {
    let trace = if path.is_dir() {
        let (base, rec) = datadir::read(path)?;
        Trace::new(base, rec.entries)
    } else {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        Trace::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
    };
    let summary = trace
        .verify()
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if let Some(out) = record {
        std::fs::write(out, trace.record()?)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
    }
    out(&summary.to_string());
    Ok(())
}

fn inspect(
    data: &Path,
    url: Option<&str>,
    json: bool,
    dead: usize,
    config: Option<&Path>,
) -> anyhow::Result<()> {
    let view = match url {
        Some(url) => fetch_inspection(url, dead)?,
        None => Inspection::of(&datadir::recover(data)?, dead),
    };
    if json {
        out(&serde_json::to_string_pretty(&view)?);
        return Ok(());
    }
    out(view.to_text().trim_end_matches('\n'));
    let workers = match config {
        Some(c) => {
            Plan::load(c, Format::of(c, false))
                .map_err(|d| config_error(c, &d))?
                .workers
        }
        None => Vec::new(),
    };
    let mut runs = Vec::new();
    for i in &view.schedules {
        let target = &i.def.target;
        if let Some(c) = crontab_command(&target.queue, target.payload.as_json()) {
            runs.push(format!("  {}  {c}", i.def.name));
            continue;
        }
        if let Some(w) = workers.iter().find(|w| w.pool.queue == target.queue) {
            runs.push(format!("  {}  {}", i.def.name, w.kind.describe()));
        }
    }
    if !runs.is_empty() {
        out(&format!(
            "\ncommands ({}):\n{}",
            runs.len(),
            runs.join("\n")
        ));
    }
    Ok(())
}

/// A crontab line's command, from its job payload.
fn crontab_command(queue: &str, payload: &str) -> Option<String> {
    if queue != chime_native::daemon::crontab::QUEUE {
        return None;
    }
    let job: chime_native::daemon::crontab::CronJob = serde_json::from_str(payload).ok()?;
    Some(job.command)
}

/// `GET {url}/v1/inspect` from a running daemon.
fn fetch_inspection(url: &str, dead: usize) -> anyhow::Result<Inspection> {
    let url = format!("{}/v1/inspect?dead={dead}", url.trim_end_matches('/'));
    let client = chime_native::worker::http::client(std::time::Duration::from_secs(10))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let reply = client
            .get(&url)
            .send()
            .await
            .with_context(|| format!("GET {url}"))?;
        let status = reply.status();
        if !status.is_success() {
            let body = reply.text().await.unwrap_or_default();
            bail!("GET {url}: HTTP {status}: {body}");
        }
        let body = reply.text().await.with_context(|| format!("GET {url}"))?;
        serde_json::from_str(&body).with_context(|| format!("GET {url}: not an inspection"))
    })
}

/// `FILE:LINE: warning: field F: message (code)`.
fn warning(w: &Diagnostic, path: &Path) -> String {
    let line = w.render(&path.display().to_string());
    let (at, what) = line
        .split_once(": ")
        .map_or((line.as_str(), ""), |(a, b)| (a, b));
    format!("{at}: warning: {what} ({})", w.code)
}

/// One line on stdout. `println!` panics when stdout is a closed pipe
/// (`chime inspect | head`); a closed pipe just ends the output.
fn out(text: &str) {
    let _ = writeln!(std::io::stdout(), "{text}");
}
