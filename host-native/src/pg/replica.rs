//! One replica of a deployment on Postgres (`chime run --database`).
//!
//! Every replica runs the worker pools of its config on the shared job
//! tables ([`PgQueues`]), the queues' housekeeping (lease rescue,
//! retention), and a bid for the leader lease. The replica holding the
//! lease runs the engine for the schedules: it loads the engine's state
//! from Postgres ([`PgStore`], fenced by its epoch), feeds it
//! `Leadership` on every renewal (so it stops firing on its own when
//! renewals stop getting through), delivers its fires as jobs with a
//! unique fire row, and tells it when a fire's job has ended
//! (`FireSettled`). Losing the lease, or a write refused because another
//! replica took over, stops the engine; the replica goes back to bidding.
//!
//! In the engine every queue is *external* (its jobs live in the tables,
//! not in the engine), with the settle timeout as its lease: a fire whose
//! job has not ended after that long stops counting as in flight.

use super::connection::{PgConfig, PgError};
use super::fires::{ended, mark_settled};
use super::inbox::{Consumer, DrainError, InboxSlot};
use super::lease::{LeaderLease, LeaseGrant, LeaseOptions};
use super::queue::{PgQueues, QueueError};
use super::reconnect::{Backoff, retryable};
use super::status::ReplicaStatus;
use super::store::PgStore;
use super::workers::{PgSource, PoolWakes, forward_from, forward_wakes};
use crate::driver::{Clock, Driver, DriverConfig, EVENT_BUFFER, Handle, StreamEvent};
use crate::runtime::apply;
use crate::{RunError, Setup, worker};
use chime_core::{FireId, Input, QueueConfig, QueueMode};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, broadcast, watch};
use tokio::task::JoinSet;

/// How a replica runs.
#[derive(Clone, Debug)]
pub struct ReplicaConfig {
    /// The database and schema.
    pub pg: PgConfig,
    /// The leader lease's name, which is also the engine's in the state
    /// tables: deployments sharing a schema use different names.
    pub name: String,
    /// This replica's holder id (unique among live replicas).
    pub holder: String,
    /// Lease timing.
    pub lease: LeaseOptions,
    /// The leader's driver (its engine config also checks queue inputs).
    pub driver: DriverConfig,
    /// The longest a fire counts as in flight when its job does not end
    /// (for overlap policies); the engine's lease of its external queues.
    pub settle_timeout_ms: i64,
    /// How often each replica rescues expired job leases and prunes
    /// finished jobs.
    pub maintain_every: Duration,
    /// How often the leader looks for fires whose job ended.
    pub settle_every: Duration,
    /// The first wait before opening a new session after the database
    /// went away (doubling on each failed attempt).
    pub reconnect_first: Duration,
    /// The longest wait between attempts.
    pub reconnect_max: Duration,
    /// What the replica reports on its listener (shared with it).
    pub status: Arc<ReplicaStatus>,
    /// How long applied inbox rows are kept (see `pg/inbox.rs`).
    pub inbox_retention: Duration,
    /// Where this replica's leader terms send their driver's events
    /// (fires, skips, job outcomes the engine sees), for `/v1/events`:
    /// give the same sender to the replica's read port. Bounded: a slow
    /// receiver loses the oldest (`Lagged`), the driver never waits.
    pub events: broadcast::Sender<Arc<StreamEvent>>,
    /// The replica's one LISTEN connection (wake-ups and every replica's
    /// job events, into `events`), shared with its API queue port; `None`:
    /// the pools start a listener of their own.
    pub listener: Option<Arc<super::PgListener>>,
}

impl ReplicaConfig {
    /// Defaults: lease `chime` with TTL 15 s, a fresh holder id, settle
    /// timeout 1 h, housekeeping every second, settling every 250 ms,
    /// reconnecting after 200 ms doubling up to 5 s.
    pub fn new(pg: PgConfig) -> ReplicaConfig {
        ReplicaConfig {
            pg,
            name: "chime".into(),
            holder: super::lease::default_holder(),
            lease: LeaseOptions::default(),
            driver: DriverConfig::default(),
            settle_timeout_ms: 3_600_000,
            maintain_every: Duration::from_secs(1),
            settle_every: Duration::from_millis(250),
            reconnect_first: Duration::from_millis(200),
            reconnect_max: Duration::from_secs(5),
            status: Arc::default(),
            inbox_retention: super::InboxOptions::default().retention,
            events: broadcast::channel(EVENT_BUFFER).0,
            listener: None,
        }
    }
}

/// Runs a replica until `stop` turns true: then its pools finish their
/// jobs (grace period), and a leader writes a final snapshot and releases
/// the lease, so another replica takes over at once.
///
/// The replica survives its database (see `pg/reconnect.rs`): when a
/// connection closes (the server restarted or went away) or cannot be
/// opened (at start-up, the server is not up yet), the session in place
/// — pools, listener, housekeeping, the engine if it led — is stopped and
/// a fresh one opened after a backoff (`reconnect_first`, doubling up to
/// `reconnect_max`; back to the first once a session connects), each
/// retry logged with its reason. A leader that
/// cannot renew stops firing at its grant's end on its own (the fence),
/// and leads again only through a new election. Only errors waiting
/// cannot fix (a wrong password, a bad schema name, a config the engine
/// refuses) end the replica with an error.
pub async fn run(
    cfg: ReplicaConfig,
    setup: Setup,
    clock: Arc<dyn Clock>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), RunError> {
    let mut backoff = Backoff::new(cfg.reconnect_first, cfg.reconnect_max);
    loop {
        let (reason, connected) = match session(&cfg, &setup, clock.clone(), stop.clone()).await {
            Ok(()) => return Ok(()),
            Err(Ended::Fatal(e)) => return Err(e),
            Err(Ended::Lost { reason, connected }) => (reason, connected),
        };
        if *stop.borrow() {
            return Ok(());
        }
        // A session that got connected was a recovery: the backoff starts
        // over, so a restart right after an outage is retried promptly
        // (not after the long waits the outage had reached).
        if connected {
            backoff.reset();
        }
        cfg.status.set_connected(false);
        cfg.status.db_error();
        let delay = backoff.next_delay();
        tracing::warn!(
            reason = %reason,
            attempt = backoff.attempt,
            retry_in_ms = delay.as_millis() as u64,
            "the database is unavailable; retrying"
        );
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = stop.changed() => return Ok(()),
        }
    }
}

/// Why a session ended without being asked to stop.
enum Ended {
    /// The database went away or is not reachable yet: open a new session.
    Lost {
        /// What failed.
        reason: String,
        /// Whether the session had connected (its queues and lease).
        connected: bool,
    },
    /// Waiting cannot fix it: the replica ends with this error.
    Fatal(RunError),
}

/// Sorts a backend error into [`Ended`].
fn ended_by(what: &str, e: PgError) -> Ended {
    if retryable(&e) {
        Ended::Lost {
            reason: format!("{what}: {e}"),
            connected: false,
        }
    } else {
        Ended::Fatal(RunError::Backend(format!("{what}: {e}")))
    }
}

/// One session on the database: connects the queues (declaring the
/// config's) and the lease, runs the pools, the listener, housekeeping
/// and the bid, until `stop` (`Ok`) or a connection closes.
async fn session(
    cfg: &ReplicaConfig,
    setup: &Setup,
    clock: Arc<dyn Clock>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), Ended> {
    let queues = PgQueues::connect(&cfg.pg, cfg.driver.engine.clone())
        .await
        .map_err(|e| ended_by("opening the job queues", e))?;
    let queues = Arc::new(queues);
    for q in &setup.queues {
        queues.declare(q).await.map_err(|e| match e {
            QueueError::Db(e) => ended_by(&format!("queue {}", q.name), e),
            e @ QueueError::Refused(_) => {
                Ended::Fatal(RunError::Backend(format!("queue {}: {e}", q.name)))
            }
        })?;
    }
    let lease = LeaderLease::connect(&cfg.pg, &cfg.name, &cfg.holder, cfg.lease, clock.clone())
        .await
        .map_err(|e| ended_by("opening the leader lease", e))?;
    tracing::info!("connected to the database");
    cfg.status.set_connected(true);
    // Everything below stops on this: the caller's stop, or a lost
    // connection.
    let (halt, halted) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let source = PgSource::new(queues.clone());
    let mut wakes = PoolWakes::new();
    for (mut pool, handler) in setup.pools.iter().cloned() {
        let wake = Arc::new(Notify::new());
        wakes
            .entry(pool.queue.clone())
            .or_default()
            .push(wake.clone());
        // Wake-ups come by LISTEN; polling finds retries whose time came
        // (nobody announces those) and covers a lost connection.
        pool.poll = pool.poll.min(Duration::from_secs(1));
        tasks.spawn(worker::run_pool(
            source.clone(),
            wake,
            pool,
            handler,
            halted.clone(),
        ));
    }
    match &cfg.listener {
        Some(l) => tasks.spawn(forward_from(l.clone(), wakes, halted.clone())),
        None => tasks.spawn(forward_wakes(cfg.pg.clone(), wakes, halted.clone())),
    };
    tasks.spawn(maintain(queues.clone(), cfg.maintain_every, halted.clone()));
    let bidding = bid(cfg, setup, queues.clone(), lease, clock, halted);
    tokio::pin!(bidding);
    let mut lost = None;
    let ended = loop {
        tokio::select! {
            r = &mut bidding => break r,
            _ = stop.changed(), if !*halt.borrow() => {
                let _ = halt.send(true);
            }
            () = tokio::time::sleep(Duration::from_millis(250)), if !*halt.borrow() => {
                if queues.is_closed() {
                    let _ = halt.send(true);
                    lost = Some("the job queues' connection to the database closed".to_owned());
                }
            }
        }
    };
    let _ = halt.send(true);
    while tasks.join_next().await.is_some() {}
    let lost_with = |reason: String| Ended::Lost {
        reason: lost.clone().unwrap_or(reason),
        connected: true,
    };
    match ended {
        Ok(()) if *stop.borrow() => Ok(()),
        Ok(()) => Err(lost_with(
            "the job queues' connection to the database closed".into(),
        )),
        Err(Ended::Lost { reason, .. }) => Err(lost_with(reason)),
        Err(e) => Err(e),
    }
}

/// Bids for the lease until `stop`; leads whenever it wins.
async fn bid(
    cfg: &ReplicaConfig,
    setup: &Setup,
    queues: Arc<PgQueues>,
    mut lease: LeaderLease,
    clock: Arc<dyn Clock>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), Ended> {
    // Four times per renew interval: a dead leader's lease is taken
    // within TTL + a quarter of a renew interval of its last renewal,
    // leaving the rest of the interval for loading the engine.
    let retry = cfg.lease.renew_every() / 4;
    loop {
        if *stop.borrow() {
            return Ok(());
        }
        if lease.is_closed() {
            return Err(Ended::Lost {
                reason: "the leader lease's connection to the database closed".into(),
                connected: true,
            });
        }
        match lease.acquire().await {
            Ok(Some(grant)) => {
                let term = lead(
                    cfg,
                    setup,
                    &queues,
                    &mut lease,
                    grant,
                    clock.clone(),
                    &mut stop,
                );
                match term.await {
                    Ok(Term::Stopped) => return Ok(()),
                    Ok(Term::Lost) => {}
                    Err(e) => tracing::error!(error = %e, "leading failed"),
                }
            }
            Ok(None) => {}
            Err(e) => {
                cfg.status.db_error();
                tracing::warn!(error = %e, "bidding for the leader lease failed");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            _ = stop.changed() => {}
        }
    }
}

/// How a term ended.
enum Term {
    /// `stop` was asked: shut down.
    Stopped,
    /// The lease or the store's fencing ended it: bid again.
    Lost,
}

/// One term as leader: load the engine, apply the config, renew, settle.
async fn lead(
    cfg: &ReplicaConfig,
    setup: &Setup,
    queues: &Arc<PgQueues>,
    lease: &mut LeaderLease,
    grant: LeaseGrant,
    clock: Arc<dyn Clock>,
    stop: &mut watch::Receiver<bool>,
) -> Result<Term, RunError> {
    let epoch = grant.epoch;
    let (pg, name, mut driver_cfg) = (cfg.pg.clone(), cfg.name.clone(), cfg.driver.clone());
    // Not standalone: the engine fires only while its latest grant is
    // valid on its own clock, whatever the lease loop manages to do.
    driver_cfg.engine.standalone = false;
    // A paused leader must not hold the lease row's lock past its TTL.
    let idle_limit = cfg.lease.ttl / 2;
    let slot = InboxSlot::default();
    let store_slot = slot.clone();
    let driver = tokio::task::spawn_blocking(move || {
        let mut store =
            PgStore::open(&pg, &name, epoch, &driver_cfg.engine)?.with_inbox(store_slot);
        store.limit_idle_in_transaction(idle_limit)?;
        Driver::recover(Box::new(store), clock, driver_cfg)
    })
    .await??;
    let handle = driver.handle();
    let forwarding = tokio::spawn(forward_events(handle.events(), cfg.events.clone()));
    let running = tokio::spawn(driver.run());
    tracing::info!(epoch = epoch.0, "leading: engine loaded");
    cfg.status.set_driver(Some(handle.clone()));
    cfg.status.begin_term(epoch.0, grant.db_expires_at_ms);
    let term = async {
        handle
            .call(Input::Leadership(Some(grant.leadership())))
            .await?
            .map_err(|error| RunError::Rejected {
                what: "leadership".into(),
                error,
            })?;
        apply(
            &handle,
            engine_queues(setup, cfg.settle_timeout_ms),
            setup.schedules.clone(),
        )
        .await?;
        let inbox = Consumer {
            client: super::connect(&cfg.pg.url).await.map_err(pg_error)?,
            schema: cfg.pg.schema.clone(),
            engine: cfg.name.clone(),
            epoch: epoch.0,
            slot,
            retention: cfg.inbox_retention,
            queues: queues.clone(),
            settle_timeout_ms: cfg.settle_timeout_ms,
        };
        serve(cfg, lease, &handle, inbox, stop).await
    }
    .await;
    cfg.status.end_term();
    cfg.status.set_driver(None);
    handle.stop();
    let ended = running.await;
    forwarding.abort();
    match (&term, ended) {
        (Ok(Term::Stopped), Ok(Ok(_))) => {
            if let Err(e) = lease.release().await {
                tracing::warn!(error = %e, "releasing the leader lease failed");
            }
        }
        (_, Ok(Err(e))) => tracing::warn!(error = %e, epoch = epoch.0, "engine stopped"),
        (_, Err(e)) => tracing::error!(error = %e, "engine task failed"),
        _ => {}
    }
    tracing::info!(epoch = epoch.0, "no longer leading");
    term
}

/// Sends a term's driver events on to the replica's broadcast until the
/// driver ends (a lag loses events, as it would for any receiver).
async fn forward_events(
    mut from: broadcast::Receiver<Arc<StreamEvent>>,
    to: broadcast::Sender<Arc<StreamEvent>>,
) {
    loop {
        match from.recv().await {
            // No receiver now is fine: nobody is watching.
            Ok(e) => drop(to.send(e)),
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// The leader's loop: renew the lease (and tell the engine), settle ended
/// fires, until the lease is lost, the driver stops or `stop`.
async fn serve(
    cfg: &ReplicaConfig,
    lease: &mut LeaderLease,
    handle: &Handle,
    inbox: Consumer,
    stop: &mut watch::Receiver<bool>,
) -> Result<Term, RunError> {
    let client = super::connect(&cfg.pg.url).await.map_err(pg_error)?;
    // Wake-ups of submitted rows; the inbox tick covers a lost one.
    let (_listening, submitted) =
        super::inbox::listen(&cfg.pg.url, &super::inbox::channel(&cfg.pg.schema))
            .await
            .map_err(pg_error)?;
    let mut submitted = Some(submitted);
    if let Err(e) = inbox.settle_lost_replies().await {
        tracing::warn!(error = %e, "settling lost inbox replies failed");
        cfg.status.db_error();
    }
    let mut renew = tokio::time::interval(cfg.lease.renew_every());
    renew.reset();
    let mut settle = tokio::time::interval(cfg.settle_every);
    let mut inbox_tick = tokio::time::interval(Duration::from_millis(500));
    let mut prune = tokio::time::interval(Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = renew.tick() => match lease.renew().await {
                Ok(g) => {
                    cfg.status.renewed(g.db_expires_at_ms, g.round_trip);
                    let _ = handle.call(Input::Leadership(Some(g.leadership()))).await?;
                }
                Err(e @ PgError::LeaseLost { .. }) => {
                    tracing::warn!(error = %e, "leader lease lost");
                    return Ok(Term::Lost);
                }
                // The grant runs out on its own if this keeps failing.
                Err(e) => {
                    cfg.status.db_error();
                    tracing::warn!(error = %e, "renewing the leader lease failed");
                }
            },
            n = async { submitted.as_mut()?.recv().await }, if submitted.is_some() => {
                if n.is_none() {
                    // Polled on the tick for the rest of the term.
                    submitted = None;
                    tracing::warn!("the inbox listener's connection closed");
                }
                if drain(cfg, &inbox, handle).await.is_err() {
                    return Ok(Term::Lost);
                }
            }
            _ = inbox_tick.tick() => {
                if drain(cfg, &inbox, handle).await.is_err() {
                    return Ok(Term::Lost);
                }
            }
            _ = prune.tick() => {
                if let Err(e) = inbox.prune().await {
                    cfg.status.db_error();
                    tracing::warn!(error = %e, "pruning the inbox failed");
                }
            }
            _ = settle.tick() => {
                if client.is_closed() {
                    // A new term opens a new connection.
                    tracing::warn!("the settling connection closed; leaving the term");
                    return Ok(Term::Lost);
                }
                if let Err(e) = settle_ended(&client, cfg, handle).await {
                    cfg.status.db_error();
                    tracing::warn!(error = %e, "settling ended fires failed");
                }
            }
            () = handle.closed() => return Ok(Term::Lost),
            _ = stop.changed() => return Ok(Term::Stopped),
        }
    }
}

/// Applies the pending inbox rows (a few batches, then back to the loop
/// so renewals are not starved; the next wake-up or tick goes on). `Err`:
/// the engine stopped, the term is over.
async fn drain(cfg: &ReplicaConfig, inbox: &Consumer, handle: &Handle) -> Result<(), ()> {
    for _ in 0..4 {
        match inbox.drain(handle).await {
            Ok(n) => {
                cfg.status.applied(n as u64);
                if n < super::inbox::BATCH as usize {
                    return Ok(());
                }
            }
            Err(DrainError::Stopped) => return Err(()),
            Err(DrainError::Db(e)) => {
                cfg.status.db_error();
                tracing::warn!(error = %e, "applying the inbox failed");
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Tells the engine about fires whose job ended, then marks them: only
/// after the `FireSettled` inputs were committed to this term's journal,
/// so a takeover in between finds them either unmarked or in the journal.
async fn settle_ended(
    client: &tokio_postgres::Client,
    cfg: &ReplicaConfig,
    handle: &Handle,
) -> Result<(), RunError> {
    let fires = ended(client, &cfg.pg.schema, &cfg.name, 1_000)
        .await
        .map_err(pg_error)?;
    if fires.is_empty() {
        return Ok(());
    }
    // Sent at once, so the driver commits them in one turn.
    let calls: Vec<_> = fires
        .into_iter()
        .map(|(fire, outcome, job)| {
            let handle = handle.clone();
            tokio::spawn(async move {
                let r = handle
                    .call(Input::FireSettled {
                        fire: fire.clone(),
                        outcome,
                        job,
                    })
                    .await;
                (fire, r)
            })
        })
        .collect();
    let mut settled: Vec<FireId> = Vec::new();
    for c in calls {
        let (fire, r) = c.await?;
        match r? {
            Ok(_) => settled.push(fire),
            // Settling is accepted even late or twice; a refusal means the
            // fire is not this engine's (`unknown_fire`): never ask again.
            Err(e) => {
                tracing::warn!(%fire, error = %e, "fire settlement refused");
                settled.push(fire);
            }
        }
    }
    mark_settled(client, &cfg.pg.schema, &cfg.name, &settled)
        .await
        .map_err(pg_error)
}

/// The engine's view of the queues: each config queue and each schedule's
/// target, external, with the settle timeout as its lease.
fn engine_queues(setup: &Setup, settle_timeout_ms: i64) -> Vec<QueueConfig> {
    let names: BTreeSet<&str> = setup
        .queues
        .iter()
        .map(|q| q.name.as_str())
        .chain(setup.schedules.iter().map(|s| s.target.queue.as_str()))
        .collect();
    names
        .into_iter()
        .map(|name| QueueConfig {
            mode: QueueMode::External,
            lease_ms: settle_timeout_ms,
            ..QueueConfig::new(name)
        })
        .collect()
}

/// Every replica's housekeeping on the shared queues.
async fn maintain(queues: Arc<PgQueues>, every: Duration, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            _ = stop.changed() => return,
        }
        match queues.maintain(1_000).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                rescued = n,
                "job leases expired; attempts counted as failed"
            ),
            Err(e) => tracing::warn!(error = %e, "queue housekeeping failed"),
        }
    }
}

fn pg_error(e: PgError) -> RunError {
    RunError::Backend(e.to_string())
}
