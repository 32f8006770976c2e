//! The `chime` daemon and tools.

use anyhow::{Context, bail};
use chime_core::{DstNote, Spec, SpecOptions};
use chime_native::config::{FileConfig, WorkerConfig};
use chime_native::driver::SystemClock;
use chime_native::http::{HttpOptions, HttpServer};
use chime_native::http_worker::{DEFAULT_TIMEOUT, http_handler};
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, command_handler};
use chime_native::{Setup, start};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
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
    /// Run the daemon: queues, schedules and command workers from a TOML file.
    Run {
        /// Config file (`[[queue]]`, `[[schedule]]`, `[[worker]]`).
        #[arg(long)]
        config: PathBuf,
        /// Data directory (created if missing; one daemon at a time).
        #[arg(long, default_value = ".chime-data")]
        data: PathBuf,
        /// Snapshot (and truncate the journal) every this many entries.
        #[arg(long, default_value_t = 10_000)]
        snapshot_every: u64,
        /// HTTP listener (/healthz, /metrics, /v1): host:port or `off`
        /// [default: `[http] address` of the config, else 127.0.0.1:9464].
        #[arg(long)]
        http: Option<String>,
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
            data,
            snapshot_every,
            http,
        } => run(config, data, snapshot_every, http),
        Cmd::Preview { spec, tz, n } => preview(&spec, tz, n),
    }
}

fn run(
    config: PathBuf,
    data: PathBuf,
    snapshot_every: u64,
    http: Option<String>,
) -> anyhow::Result<()> {
    let file = FileConfig::load(&config).with_context(|| format!("config {}", config.display()))?;
    // A chosen address must bind; the default one may be taken (another
    // daemon on this host), which must not keep this one from running.
    let chosen = http.or_else(|| file.http.address.clone());
    let explicit = chosen.is_some();
    let http = chosen.unwrap_or_else(|| chime_native::http::DEFAULT_ADDRESS.to_owned());
    let http = chime_native::http::parse_address(&http)?;
    let store = RedbStore::open(&data)?;
    let pools = file
        .workers
        .iter()
        .map(|w| Ok((file.pool_config(w), worker_handler(w)?)))
        .collect::<anyhow::Result<_>>()?;
    let mut setup = Setup {
        queues: file.queues.clone(),
        schedules: file.schedules.clone(),
        pools,
        ..Setup::default()
    };
    setup.driver.snapshot_every = snapshot_every;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let running = start(setup, Box::new(store), Arc::new(SystemClock)).await?;
        let server = match http {
            None => None,
            Some(address) => listen(address, explicit, running.handle()).await?,
        };
        tracing::info!(data = %data.display(), "chime running; Ctrl-C or SIGTERM stops");
        tokio::select! {
            r = shutdown_signal() => {
                r?;
                tracing::info!("stopping");
            }
            // A store failure stops the driver: surface its error below.
            () = running.handle().closed() => tracing::error!("driver stopped unexpectedly"),
        }
        let engine = running.shutdown().await;
        if let Some(server) = server {
            server.shutdown().await;
        }
        let engine = engine?;
        tracing::info!(clock = %engine.clock(), "stopped");
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

/// The handler of a `[[worker]]`: its command, or a POST to its url.
fn worker_handler(w: &WorkerConfig) -> anyhow::Result<Handler> {
    Ok(match &w.url {
        Some(url) => http_handler(
            url,
            w.timeout_ms
                .map_or(DEFAULT_TIMEOUT, std::time::Duration::from_millis),
        )?,
        None => command_handler(w.command.clone()),
    })
}

async fn shutdown_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

fn preview(spec: &str, tz: Option<String>, n: usize) -> anyhow::Result<()> {
    let opts = SpecOptions {
        tz,
        ..SpecOptions::default()
    };
    let spec = Spec::parse(spec, &opts).map_err(|e| anyhow::anyhow!("{e}"))?;
    let now = chime_native::driver::Clock::now(&SystemClock);
    let fires = spec.preview(now, n);
    if fires.is_empty() {
        bail!("no fire after now");
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
