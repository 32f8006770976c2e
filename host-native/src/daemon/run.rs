//! `chime run`: a daemon on a data directory or one replica on
//! PostgreSQL, until a signal stops it. Everything it runs is built by the
//! plan; this module only owns the process: runtime, listener, signals.

use super::crontab;
use super::plan::{Format, Plan};
use crate::driver::{Clock, SystemClock};
use crate::http::{HttpOptions, HttpServer};
use crate::pg::replica::{self, ReplicaConfig};
use crate::pg::{LeaseOptions, PgConfig};
use crate::store::RedbStore;
use crate::{Running, start};
use anyhow::bail;
use chime_core::{EngineConfig, EnqueueRequest, Input};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `chime run` on a data directory: the embedded store, the HTTP listener
/// and the signal loop (SIGINT/SIGTERM stop gracefully, SIGHUP reloads).
pub fn run(
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
    let http = chosen.unwrap_or_else(|| crate::http::DEFAULT_ADDRESS.to_owned());
    let http = crate::http::parse_address(&http)?;
    let store = RedbStore::open(&data)?;
    // Holding the directory's lock, before any worker claims: no process
    // of a killed predecessor may still run a job this daemon retries.
    let reaped = crate::worker::process::enable(&data, PathBuf::from("/proc/self/exe"))?;
    if !reaped.is_empty() {
        tracing::warn!(
            killed = reaped.len(),
            "killed the processes a previous daemon left running"
        );
    }
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
pub fn run_replica(
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
    handle: &crate::driver::Handle,
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
