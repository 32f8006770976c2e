//! `chime run`: a daemon on a data directory or one replica on
//! PostgreSQL, until a signal stops it. Everything it runs is built by the
//! plan; this module only owns the process: runtime, listener, signals.

use super::crontab;
use super::plan::{Format, Plan};
use crate::driver::{Clock, SystemClock};
use crate::http::{HttpOptions, HttpServer, Ports};
use crate::pg::http::{PgReadOptions, PgReads};
use crate::pg::replica::{self, ReplicaConfig};
use crate::pg::{LeaseOptions, PgApiQueues, PgConfig, PgControl};
use crate::store::RedbStore;
use crate::{Running, start};
use anyhow::bail;
use chime_core::{EngineConfig, EnqueueRequest, Input};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `chime run` on a data directory: the embedded store, the HTTP listener
/// and the signal loop (SIGINT/SIGTERM/SIGQUIT stop gracefully, SIGHUP and
/// SIGUSR2 reload: supercronic's meanings, so a container's stop and
/// reload signals work whichever it was set up for).
pub fn run(
    plan: Plan,
    path: &Path,
    format: Format,
    data: PathBuf,
    snapshot_every: u64,
    http: Option<String>,
    insecure_no_auth: bool,
) -> anyhow::Result<()> {
    let engine = EngineConfig::default();
    // A chosen address must bind; the default one may be taken (another
    // daemon on this host), which must not keep this one from running.
    let chosen = http.or_else(|| plan.http_address.clone());
    let explicit = chosen.is_some();
    let http = chosen.unwrap_or_else(|| crate::http::DEFAULT_ADDRESS.to_owned());
    let http = crate::http::parse_address(&http)?;
    // Before anything opens: a missing or bad certificate is a start error.
    let tls = tls_config(&plan, path)?;
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
    setup.driver.engine = engine.clone();
    setup.driver.snapshot_every = snapshot_every;
    // Queues in brokers: their fires go through the outbox, their pools
    // claim from the broker (daemon/transports.rs).
    let (store, outbox) = super::transports::wrap_store(store, &data, &plan)?;
    let transport_pools = super::transports::take_pools(&mut setup.pools, &plan);
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut sig = Signals::new()?;
        let mut running = start(setup, store, Arc::new(SystemClock)).await?;
        let transports = match outbox {
            Some(outbox) => Some(super::transports::start(
                &plan,
                &engine,
                running.handle(),
                outbox,
                transport_pools,
            )?),
            None => None,
        };
        let server = match http {
            None => None,
            Some(address) => {
                let options = HttpOptions {
                    tokens: plan.tokens.clone(),
                    insecure_no_auth,
                    tls,
                    ..HttpOptions::default()
                };
                let mut ports = Ports::embedded(running.handle());
                if let Some(t) = &transports {
                    // Job verbs on a transport queue go to its broker.
                    ports.queues = Arc::new(
                        crate::transport::routed::RoutedQueues::new(
                            Arc::new(running.handle().clone()),
                            t.by_queue.clone(),
                        )
                        .with_declared(t.declared.clone())
                        .with_wakes(t.wakes.clone()),
                    );
                    ports.control = Arc::new(crate::transport::routed::RoutedControl::new(
                        Arc::new(running.handle().clone()),
                        &t.by_queue,
                    ));
                    // `/healthz` pings each broker; `/metrics` has their depth.
                    ports.reads = Arc::new(
                        crate::transport::reads::WithTransports::new(
                            running.handle().clone(),
                            t.all.clone(),
                        )
                        .with_outbox(t.outbox.clone()),
                    );
                }
                listen(address, explicit, ports, options).await?
            }
        };
        enqueue_reboot(&running, &plan).await?;
        tracing::info!(
            data = %data.display(),
            schedules = plan.schedules.len(),
            "chime running; Ctrl-C, SIGTERM or SIGQUIT stops, SIGHUP or SIGUSR2 reloads"
        );
        let handle = running.handle().clone();
        // The listener's token set: a reload swaps what it holds.
        let tokens = plan.tokens.clone();
        let mut current = plan;
        loop {
            tokio::select! {
                s = sig.next() => match s {
                    Signal::Stop(name) => {
                        tracing::info!(signal = name, "stop requested");
                        break;
                    }
                    Signal::Reload(name) => {
                        current = reload(&mut running, current, path, format, name).await;
                        reload_tokens(&tokens, &current);
                    }
                },
                // A store failure stops the driver: surface its error below.
                () = handle.closed() => {
                    tracing::error!("driver stopped unexpectedly");
                    break;
                }
            }
        }
        tracing::info!("stopping");
        if let Some(t) = transports {
            t.shutdown().await;
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

/// `chime run --database`: one replica on Postgres until SIGTERM/Ctrl-C,
/// serving the whole API on the same router, tokens, limits and address
/// rules as the embedded daemon — jobs and workers on the job tables,
/// schedule and queue writes through the inbox to the leader, reads from
/// the database (`pg/http.rs`) — and SIGHUP/SIGUSR2 reloading the
/// schedules through the inbox (so any replica can reload).
pub fn run_replica(
    plan: Plan,
    (path, format): (&Path, Format),
    pg: PgConfig,
    ttl: std::time::Duration,
    snapshot_every: u64,
    (http, insecure_no_auth): (Option<String>, bool),
) -> anyhow::Result<()> {
    let engine = EngineConfig::default();
    if !plan.reboot.is_empty() {
        tracing::warn!("@reboot lines are not run with --database (no replica owns a start)");
    }
    let chosen = http.or_else(|| plan.http_address.clone());
    let explicit = chosen.is_some();
    let http = chosen.unwrap_or_else(|| crate::http::DEFAULT_ADDRESS.to_owned());
    let http = crate::http::parse_address(&http)?;
    // Before anything connects: a missing or bad certificate is a start error.
    let tls = tls_config(&plan, path)?;
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
        let mut sig = Signals::new()?;
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        // One LISTEN connection: the pools' wake-ups, long-poll claims and
        // every replica's job events for `/v1/events`.
        cfg.listener = Some(crate::pg::PgListener::start(&cfg.pg, cfg.events.clone())?);
        let control = Arc::new(PgControl::for_replica(&cfg));
        let server = match http {
            None => None,
            Some(address) => {
                let options = HttpOptions {
                    tokens: plan.tokens.clone(),
                    insecure_no_auth,
                    tls,
                    ..HttpOptions::default()
                };
                listen(
                    address,
                    explicit,
                    replica_ports(&cfg, control.clone()),
                    options,
                )
                .await?
            }
        };
        tracing::info!(
            holder = %cfg.holder,
            schema = %cfg.pg.schema,
            schedules = plan.schedules.len(),
            "chime replica running on PostgreSQL; Ctrl-C, SIGTERM or SIGQUIT stops, \
             SIGHUP or SIGUSR2 reloads"
        );
        let mut replica = tokio::spawn(replica::run(cfg, setup, Arc::new(SystemClock), stop_rx));
        let mut current = plan;
        let ended = loop {
            tokio::select! {
                s = sig.next() => match s {
                    Signal::Stop(name) => {
                        tracing::info!(signal = name, "stop requested");
                        break None;
                    }
                    Signal::Reload(name) => {
                        current = reload_replica(&control, current, path, format, name).await;
                    }
                },
                r = &mut replica => break Some(r),
            }
        };
        if let Some(r) = ended {
            if let Some(server) = server {
                server.shutdown().await;
            }
            r??;
            bail!("the replica stopped on its own");
        }
        tracing::info!("stopping");
        let _ = stop.send(true);
        replica.await??;
        if let Some(server) = server {
            server.shutdown().await;
        }
        tracing::info!("stopped");
        Ok(())
    })
}

/// The ports a replica serves: the job tables on the listener's own
/// connection, the inbox, and the reads from the database, whose event
/// stream is the one the replica's leader terms send into.
fn replica_ports(cfg: &ReplicaConfig, control: Arc<PgControl>) -> Ports {
    let mut queues = PgApiQueues::new(cfg.pg.clone(), cfg.driver.engine.clone());
    if let Some(l) = &cfg.listener {
        queues = queues.with_listener(l.clone());
    }
    let queues = Arc::new(queues);
    let reads = PgReads::new(
        cfg,
        PgReadOptions::default(),
        queues.clone(),
        cfg.events.clone(),
    );
    Ports {
        queues,
        control,
        reads: Arc::new(reads),
    }
}

/// SIGHUP/SIGUSR2 on a replica: re-reads the file and sends the schedule
/// diff (removed, new or changed schedules; new or changed queues)
/// through the inbox to the leader's engine. An invalid file is refused
/// whole; an input the leader refuses, or no leader answering, is logged
/// and the previous plan stays the base of the next diff. The replicas'
/// files should stay the same: a replica that becomes leader applies its
/// own file at the start of its term.
async fn reload_replica(
    control: &PgControl,
    current: Plan,
    path: &Path,
    format: Format,
    signal: &'static str,
) -> Plan {
    tracing::info!(file = %path.display(), signal, "reloading through the inbox");
    let loaded = Plan::load_checked_with(
        path,
        format,
        current.crontab_options,
        &EngineConfig::default(),
        SystemClock.now(),
    );
    let plan = match loaded {
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
    let (old, new) = (current.setup(), plan.setup());
    let mut inputs = Vec::new();
    for q in &new.queues {
        if !old.queues.contains(q) {
            inputs.push(Input::DeclareQueue(q.clone()));
        }
    }
    for s in &old.schedules {
        if !new.schedules.iter().any(|n| n.name == s.name) {
            inputs.push(Input::remove_schedule(s.name.clone()));
        }
    }
    for s in &new.schedules {
        if !old.schedules.contains(s) {
            inputs.push(Input::UpsertSchedule(s.clone()));
        }
    }
    if inputs.is_empty() {
        tracing::info!("reload: nothing changed");
        return plan;
    }
    let count = inputs.len();
    for input in inputs {
        if let Err(e) = control.submit(input).await {
            tracing::error!(error = %e, code = e.code(), "reload failed part way; send the signal again");
            return current;
        }
    }
    tracing::info!(inputs = count, "reload applied by the leader");
    plan
}

/// `[http] tls_cert` and `tls_key`, read relative to the config file.
fn tls_config(plan: &Plan, path: &Path) -> anyhow::Result<Option<crate::http::tls::TlsConfig>> {
    let Some((cert, key)) = &plan.http_tls else {
        return Ok(None);
    };
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    Ok(Some(crate::http::tls::load(
        &dir.join(cert),
        &dir.join(key),
    )?))
}

/// After a reload: the plan's `[[token]]` tables become the listener's.
/// The plan in force is the old one when the file was refused (a bad
/// token table refuses the whole file), so the old tokens stay; a file
/// without any token is refused here when the listener has some.
fn reload_tokens(live: &crate::http::Tokens, plan: &Plan) {
    match live.replace(&plan.tokens) {
        Ok((added, removed)) if added.is_empty() && removed.is_empty() => {}
        Ok((added, removed)) => {
            tracing::info!(?added, ?removed, "reload: tokens changed");
        }
        Err(e) => tracing::error!(error = %e, "reload: tokens refused; keeping the running tokens"),
    }
}

/// Binds the HTTP listener; a failure to bind the default address is a
/// warning, not an error.
async fn listen(
    address: std::net::SocketAddr,
    explicit: bool,
    ports: Ports,
    options: HttpOptions,
) -> anyhow::Result<Option<HttpServer>> {
    match HttpServer::bind_with(address, ports, options).await {
        Ok(server) => Ok(Some(server)),
        // Never downgraded to a warning: serving without auth was refused.
        Err(e @ crate::http::HttpError::Unprotected(_)) => Err(e.into()),
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

/// What a signal asks for, with the signal's name for the log.
enum Signal {
    Stop(&'static str),
    Reload(&'static str),
}

/// The signals the daemon handles. Every one a supervisor may send is
/// handled and logged: an unhandled SIGUSR2 used to end the daemon at once
/// with no log line.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    usr2: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            quit: signal(SignalKind::quit())?,
            hup: signal(SignalKind::hangup())?,
            usr2: signal(SignalKind::user_defined2())?,
        })
    }

    async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::Stop("SIGTERM"),
            _ = self.int.recv() => Signal::Stop("SIGINT"),
            _ = self.quit.recv() => Signal::Stop("SIGQUIT"),
            _ = self.hup.recv() => Signal::Reload("SIGHUP"),
            _ = self.usr2.recv() => Signal::Reload("SIGUSR2"),
        }
    }
}

/// SIGHUP/SIGUSR2: re-reads the file; an invalid one is logged and ignored
/// (the running config stays), a valid one is applied as a diff. Returns
/// the plan now in force.
async fn reload(
    running: &mut Running,
    current: Plan,
    path: &Path,
    format: Format,
    signal: &'static str,
) -> Plan {
    tracing::info!(file = %path.display(), signal, "reloading");
    let loaded = Plan::load_checked_with(
        path,
        format,
        current.crontab_options,
        &EngineConfig::default(),
        SystemClock.now(),
    );
    let mut plan = match loaded {
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
    // Transports are built once, at start: a change is named and kept
    // for the restart, and the engine keeps the running queues' configs so
    // it does not apply half of it.
    let changed = super::transports::changes(&current, &plan);
    if !changed.is_empty() {
        tracing::warn!(
            changed = %changed.join("; "),
            "transport changes take effect at restart; keeping the running transports"
        );
        super::transports::keep_running(&current, &mut plan);
    }
    if plan.reboot != current.reboot {
        tracing::info!("@reboot lines changed; they run at the next start");
    }
    for w in &plan.warnings {
        tracing::warn!(code = %w.code, "{}", w.render(&path.display().to_string()));
    }
    match running.reload(plan.setup()).await {
        Ok(report) if report.is_empty() => tracing::info!("reload: nothing changed"),
        Ok(_) => {}
        Err(e) => {
            tracing::error!(error = %e, "reload failed");
            return current;
        }
    }
    // The running crontab worker reads the variables of the plan it was
    // made with: give it the new ones (never logged: they may be secrets).
    if current.crontab_env.replace_with(&plan.crontab_env) {
        tracing::info!("reload: crontab variables changed");
    }
    plan.crontab_env = current.crontab_env.clone();
    plan
}
