//! The `chime` daemon and tools.

use anyhow::{Context, bail};
use chime_core::{
    DstNote, DstPolicy, EngineConfig, EnqueueRequest, FoldPolicy, GapPolicy, Input, Spec,
    SpecOptions, Timestamp,
};
use chime_native::driver::{Clock, SystemClock};
use chime_native::http::{HttpOptions, HttpServer};
use chime_native::inspect::{DEAD_LIMIT, Inspection};
use chime_native::pg::replica::{self, ReplicaConfig};
use chime_native::pg::{LeaseOptions, PgConfig};
use chime_native::plan::{Diagnostic, Format, Plan};
use chime_native::replay::Trace;
use chime_native::store::RedbStore;
use chime_native::{Running, crontab, datadir, start};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    #[command(group(clap::ArgGroup::new("source").required(true).args(["config", "crontab"])))]
    Run {
        /// Config file (`[[queue]]`, `[[schedule]]`, `[[worker]]`).
        #[arg(long)]
        config: Option<PathBuf>,
        /// A Vixie crontab: each line's command runs with `sh -c` (see docs/crontab.md).
        #[arg(long)]
        crontab: Option<PathBuf>,
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
    },
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
    },
}

fn main() -> std::process::ExitCode {
    match real_main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One line with the whole cause chain; no backtrace for users.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
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
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Human => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => logs.json().with_ansi(false).init(),
    }
    match cli.command {
        Cmd::Run {
            config,
            crontab,
            data,
            snapshot_every,
            http,
            database,
            schema,
            lease_ttl_ms,
        } => {
            let (path, format) = match (config, crontab) {
                (Some(c), _) => (c, Format::Toml),
                (None, Some(c)) => (c, Format::Crontab),
                (None, None) => bail!("--config or --crontab is required"),
            };
            let plan =
                Plan::load_checked(&path, format, &EngineConfig::default(), SystemClock.now())
                    .map_err(|d| config_error(&path, &d))?;
            let db = plan.database.clone().unwrap_or_default();
            match database.or(db.url) {
                Some(url) => {
                    if http.is_some() || plan.http_address.is_some() {
                        tracing::warn!(
                            "the HTTP listener is not served with a database yet; --http and \
                             [http] are ignored"
                        );
                    }
                    let schema = schema.or(db.schema).unwrap_or_else(|| "chime".into());
                    let pg = PgConfig::new(url).with_schema(schema);
                    let ttl_ms = lease_ttl_ms.or(db.lease_ttl_ms).unwrap_or(15_000);
                    run_replica(
                        plan,
                        pg,
                        std::time::Duration::from_millis(ttl_ms),
                        snapshot_every,
                    )
                }
                None if schema.is_some() || lease_ttl_ms.is_some() => {
                    bail!(
                        "--schema and --lease-ttl-ms need a database (--database or [database] url)"
                    )
                }
                None => run(plan, &path, format, data, snapshot_every, http),
            }
        }
        Cmd::Preview {
            spec,
            tz,
            n,
            dst,
            from,
        } => preview(&spec, tz, n, &dst, from.as_deref()),
        Cmd::Validate { file, crontab } => validate(&file, Format::of(&file, crontab)),
        Cmd::Replay { path, record } => replay(&path, record.as_deref()),
        Cmd::Inspect {
            data,
            url,
            json,
            dead,
        } => inspect(&data, url.as_deref(), json, dead),
    }
}

/// One line for `anyhow`: `config PATH: line 3: …; line 9: …`.
fn config_error(path: &Path, diags: &[Diagnostic]) -> anyhow::Error {
    let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
    anyhow::anyhow!("config {}: {}", path.display(), all.join("; "))
}

fn validate(path: &Path, format: Format) -> anyhow::Result<()> {
    let now = SystemClock.now();
    match Plan::load_checked(path, format, &EngineConfig::default(), now) {
        Ok(plan) => {
            println!(
                "{}: ok ({} queues, {} schedules, {} worker pools{})",
                path.display(),
                plan.queues.len(),
                plan.schedules.len(),
                plan.workers.len(),
                if plan.reboot.is_empty() {
                    String::new()
                } else {
                    format!(", {} @reboot jobs", plan.reboot.len())
                }
            );
            Ok(())
        }
        Err(diags) => {
            for d in &diags {
                println!("{}", d.render(&path.display().to_string()));
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
    println!("{summary}");
    Ok(())
}

fn inspect(data: &Path, url: Option<&str>, json: bool, dead: usize) -> anyhow::Result<()> {
    let view = match url {
        Some(url) => fetch_inspection(url, dead)?,
        None => Inspection::of(&datadir::recover(data)?, dead),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&view)?);
    } else {
        print!("{}", view.to_text());
    }
    Ok(())
}

/// `GET {url}/v1/inspect` from a running daemon.
fn fetch_inspection(url: &str, dead: usize) -> anyhow::Result<Inspection> {
    let url = format!("{}/v1/inspect?dead={dead}", url.trim_end_matches('/'));
    let client = chime_native::http_worker::client(std::time::Duration::from_secs(10))?;
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

fn run(
    plan: Plan,
    path: &Path,
    format: Format,
    data: PathBuf,
    snapshot_every: u64,
    http: Option<String>,
) -> anyhow::Result<()> {
    let engine = EngineConfig::default();
    // A chosen address must bind; the default one may be taken (another
    // daemon on this host), which must not keep this one from running.
    let chosen = http.or_else(|| plan.http_address.clone());
    let explicit = chosen.is_some();
    let http = chosen.unwrap_or_else(|| chime_native::http::DEFAULT_ADDRESS.to_owned());
    let http = chime_native::http::parse_address(&http)?;
    let store = RedbStore::open(&data)?;
    let mut setup = plan.setup();
    setup.driver.engine = engine;
    setup.driver.snapshot_every = snapshot_every;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut hup = signal(SignalKind::hangup())?;
        let mut running = start(setup, Box::new(store), Arc::new(SystemClock)).await?;
        let server = match http {
            None => None,
            Some(address) => listen(address, explicit, running.handle()).await?,
        };
        enqueue_reboot(&running, &plan).await?;
        tracing::info!(
            data = %data.display(),
            schedules = plan.schedules.len(),
            "chime running; Ctrl-C or SIGTERM stops, SIGHUP reloads"
        );
        let handle = running.handle().clone();
        let mut current = plan;
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = hup.recv() => current = reload(&mut running, current, path, format).await,
                // A store failure stops the driver: surface its error below.
                () = handle.closed() => {
                    tracing::error!("driver stopped unexpectedly");
                    break;
                }
            }
        }
        tracing::info!("stopping");
        let engine = running.shutdown().await;
        if let Some(server) = server {
            server.shutdown().await;
        }
        let engine = engine?;
        tracing::info!(clock = %engine.clock(), "stopped");
        Ok(())
    })
}

/// `chime run --database`: one replica on Postgres until SIGTERM/Ctrl-C.
fn run_replica(
    plan: Plan,
    pg: PgConfig,
    ttl: std::time::Duration,
    snapshot_every: u64,
) -> anyhow::Result<()> {
    let engine = EngineConfig::default();
    if !plan.reboot.is_empty() {
        tracing::warn!("@reboot lines are not run with --database (no replica owns a start)");
    }
    let mut cfg = ReplicaConfig::new(pg);
    cfg.lease = LeaseOptions {
        ttl,
        // A tenth of the TTL, at most the default second.
        skew_allowance: (ttl / 10).min(LeaseOptions::default().skew_allowance),
    };
    cfg.driver.engine = engine;
    cfg.driver.snapshot_every = snapshot_every;
    let setup = plan.setup();
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut hup = signal(SignalKind::hangup())?;
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        tracing::info!(
            holder = %cfg.holder,
            schema = %cfg.pg.schema,
            schedules = plan.schedules.len(),
            "chime replica running on PostgreSQL; Ctrl-C or SIGTERM stops"
        );
        let mut replica = tokio::spawn(replica::run(cfg, setup, Arc::new(SystemClock), stop_rx));
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = hup.recv() => tracing::warn!(
                    "SIGHUP: reloading is not supported with --database; restart the replicas \
                     one by one to apply a new config"
                ),
                r = &mut replica => {
                    r??;
                    bail!("the replica stopped on its own");
                }
            }
        }
        tracing::info!("stopping");
        let _ = stop.send(true);
        replica.await??;
        tracing::info!("stopped");
        Ok(())
    })
}

/// Binds the HTTP listener; a failure to bind the default address is a
/// warning, not an error.
async fn listen(
    address: std::net::SocketAddr,
    explicit: bool,
    handle: &chime_native::driver::Handle,
) -> anyhow::Result<Option<HttpServer>> {
    match HttpServer::bind(address, handle.clone(), HttpOptions::default()).await {
        Ok(server) => Ok(Some(server)),
        Err(e) if !explicit => {
            let e = anyhow::Error::from(e);
            tracing::warn!("{e:#}; no HTTP listener (choose one with --http)");
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Enqueues a crontab's `@reboot` lines: once per daemon start.
async fn enqueue_reboot(running: &Running, plan: &Plan) -> anyhow::Result<()> {
    for r in &plan.reboot {
        let mut req = EnqueueRequest::new(crontab::QUEUE, r.payload.clone());
        req.headers.insert("cronLine".into(), r.name.clone());
        match running.handle().call(Input::Enqueue(req)).await? {
            Ok(_) => tracing::info!(line = %r.name, "@reboot job enqueued"),
            Err(e) => bail!("@reboot {}: {e}", r.name),
        }
    }
    Ok(())
}

/// SIGHUP: re-reads the file; an invalid one is logged and ignored (the
/// running config stays), a valid one is applied as a diff. Returns the
/// plan now in force.
async fn reload(running: &mut Running, current: Plan, path: &Path, format: Format) -> Plan {
    tracing::info!(file = %path.display(), "SIGHUP: reloading");
    let plan = match Plan::load_checked(path, format, &EngineConfig::default(), SystemClock.now()) {
        Ok(p) => p,
        Err(diags) => {
            for d in &diags {
                tracing::error!("{}", d.render(&path.display().to_string()));
            }
            tracing::error!(
                problems = diags.len(),
                "reload refused: the file is invalid; keeping the running config"
            );
            return current;
        }
    };
    let kinds = |p: &Plan| {
        p.workers
            .iter()
            .map(|w| (w.pool.queue.clone(), w.kind.clone()))
            .collect::<Vec<_>>()
    };
    if kinds(&plan) != kinds(&current) {
        tracing::warn!("worker commands changed; restart chime to apply them");
    }
    if plan.reboot != current.reboot {
        tracing::info!("@reboot lines changed; they run at the next start");
    }
    match running.reload(plan.setup()).await {
        Ok(report) if report.is_empty() => tracing::info!("reload: nothing changed"),
        Ok(_) => {}
        Err(e) => {
            tracing::error!(error = %e, "reload failed");
            return current;
        }
    }
    plan
}

fn preview(
    spec: &str,
    tz: Option<String>,
    n: usize,
    dst: &str,
    from: Option<&str>,
) -> anyhow::Result<()> {
    let opts = SpecOptions {
        tz,
        dst: parse_dst(dst)?,
        ..SpecOptions::default()
    };
    let spec = Spec::parse(spec, &opts).map_err(|e| anyhow::anyhow!("{e}"))?;
    let start = match from {
        Some(t) => parse_instant(t, &opts)?,
        None => SystemClock.now(),
    };
    let fires = spec.preview(start, n);
    if fires.is_empty() {
        bail!("no fire after {start}");
    }
    for o in fires {
        let off = o.offset_seconds;
        let sign = if off < 0 { '-' } else { '+' };
        let (h, m) = (off.abs() / 3600, off.abs() / 60 % 60);
        let note = match o.note {
            None => "",
            Some(DstNote::ShiftedFromGap) => "  (shifted from DST gap)",
            Some(DstNote::FirstPass) => "  (repeated hour, first pass)",
            Some(DstNote::SecondPass) => "  (repeated hour, second pass)",
        };
        println!(
            "{}  {} {sign}{h:02}:{m:02} {}{note}",
            o.at,
            o.civil,
            spec.zone_name()
        );
    }
    Ok(())
}

/// `auto`, or `gap=…`/`fold=…` pairs separated by commas.
fn parse_dst(text: &str) -> anyhow::Result<DstPolicy> {
    let mut p = DstPolicy::default();
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(p);
    }
    for part in text.split(',') {
        match part.trim().to_ascii_lowercase().as_str() {
            "gap=shift" => p.gap = Some(GapPolicy::Shift),
            "gap=skip" => p.gap = Some(GapPolicy::Skip),
            "fold=first" => p.fold = Some(FoldPolicy::First),
            "fold=last" => p.fold = Some(FoldPolicy::Last),
            "fold=both" => p.fold = Some(FoldPolicy::Both),
            "gap=auto" | "fold=auto" => {}
            other => bail!(
                "--dst: unknown {other:?} (expected auto, gap=shift|skip, fold=first|last|both)"
            ),
        }
    }
    Ok(p)
}

/// An RFC 3339 instant, or a civil date-time in `opts.tz`, read by the
/// core's own `@at` grammar (so `--from` accepts what a one-shot spec does).
fn parse_instant(text: &str, opts: &SpecOptions) -> anyhow::Result<Timestamp> {
    let at = Spec::parse(&format!("@at {text}"), opts)
        .map_err(|e| anyhow::anyhow!("--from {text:?}: {e}"))?;
    at.first_at_or_after(Timestamp::MIN)
        .ok_or_else(|| anyhow::anyhow!("--from {text:?}: not an instant"))
}
