//! The `chime` daemon and tools.

use anyhow::{Context, bail};
use chime_core::{DstNote, Spec, SpecOptions};
use chime_native::config::FileConfig;
use chime_native::driver::SystemClock;
use chime_native::store::RedbStore;
use chime_native::worker::command_handler;
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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CHIME_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match Cli::parse().command {
        Cmd::Run {
            config,
            data,
            snapshot_every,
        } => run(config, data, snapshot_every),
        Cmd::Preview { spec, tz, n } => preview(&spec, tz, n),
    }
}

fn run(config: PathBuf, data: PathBuf, snapshot_every: u64) -> anyhow::Result<()> {
    let file = FileConfig::load(&config).with_context(|| format!("config {}", config.display()))?;
    let store = RedbStore::open(&data)?;
    let pools = file
        .workers
        .iter()
        .map(|w| (file.pool_config(w), command_handler(w.command.clone())))
        .collect();
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
        tracing::info!(data = %data.display(), "chime running; Ctrl-C or SIGTERM stops");
        tokio::select! {
            r = shutdown_signal() => {
                r?;
                tracing::info!("stopping");
            }
            // A store failure stops the driver: surface its error below.
            () = running.handle().closed() => tracing::error!("driver stopped unexpectedly"),
        }
        let engine = running.shutdown().await?;
        tracing::info!(clock = %engine.clock(), "stopped");
        Ok(())
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
