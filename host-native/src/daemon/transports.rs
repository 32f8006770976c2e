//! The daemon's transports (`docs/transports.md`): for the queues a
//! config gives a `transport`, the store delivers their fires into the
//! outbox (`transport-outbox.redb` in the data directory), a publisher
//! task empties it into the brokers, each transport's housekeeping runs
//! every second, and the `[[worker]]` pools of those queues claim from
//! the broker instead of the engine. Fire settlements go back to the
//! engine through the driver.

use super::plan::Plan;
use crate::driver::Handle;
use crate::store::Store;
use crate::transport::config::TransportKind;
use crate::transport::outbox::{Outbox, OutboxConfig, Outboxed};
use crate::transport::redis::RedisTransport;
use crate::transport::source::TransportSource;
use crate::transport::{Settlements, Transport};
use crate::worker::{Handler, PoolConfig};
use chime_core::EngineConfig;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// The outbox file's name in the data directory.
pub const OUTBOX_FILE: &str = "transport-outbox.redb";

/// `store`, delivering the fires of the plan's transport queues into the
/// outbox; unchanged (and no outbox) when the plan has none.
pub fn wrap_store<S: Store>(
    store: S,
    data: &Path,
    plan: &Plan,
) -> anyhow::Result<(Box<dyn Store>, Option<Outbox>)> {
    if plan.transports.queues.is_empty() {
        return Ok((Box::new(store), None));
    }
    let mut config = OutboxConfig::default();
    if let Some(ms) = plan.transports.section.remember_ms {
        config.remember_ms = ms;
    }
    let outbox = Outbox::open(&data.join(OUTBOX_FILE), config)?;
    let queues = plan.transports.queues.keys().cloned();
    let wrapped = Outboxed::new(store, outbox.clone(), queues);
    Ok((Box::new(wrapped), Some(outbox)))
}

/// Takes the pools of transport queues out of `pools` (the engine would
/// refuse their claims: the queues are external there).
pub fn take_pools(
    pools: &mut Vec<(PoolConfig, Handler)>,
    plan: &Plan,
) -> Vec<(PoolConfig, Handler)> {
    let (theirs, ours) = std::mem::take(pools)
        .into_iter()
        .partition(|(p, _)| plan.transports.queues.contains_key(&p.queue));
    *pools = ours;
    theirs
}

/// The running transports.
pub struct Transports {
    /// Each configured transport.
    pub all: Vec<Arc<dyn Transport>>,
    /// The outbox their fires wait in (its backlog is a metric).
    pub outbox: Outbox,
    /// The transport of each transport queue.
    pub by_queue: HashMap<String, Arc<dyn Transport>>,
    /// Per transport queue: `true` once it is declared in its broker.
    pub declared: HashMap<String, watch::Receiver<bool>>,
    /// Per transport queue this daemon's pools work: notified when it has
    /// new work (the publisher's fires, the API's enqueues).
    pub wakes: HashMap<String, Arc<Notify>>,
    stop: Arc<Notify>,
    pool_stop: watch::Sender<bool>,
    pools: Vec<JoinHandle<()>>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts the transports of `plan`: publisher, housekeeping, declaring
/// their queues (retried while a broker is away) and `pools`.
pub fn start(
    plan: &Plan,
    engine: &EngineConfig,
    handle: &Handle,
    outbox: Outbox,
    pools: Vec<(PoolConfig, Handler)>,
) -> anyhow::Result<Transports> {
    let settlements: Arc<dyn Settlements> = Arc::new(handle.clone());
    // One set of counters for the publisher and every adapter: the
    // daemon's `/metrics`.
    let counters = handle.metrics().transport();
    let outbox = outbox.with_counters(counters.clone());
    let mut by_kind: HashMap<TransportKind, Arc<dyn Transport>> = HashMap::new();
    let mut tasks = Vec::new();
    for kind in plan.transports.queues.values().copied() {
        if by_kind.contains_key(&kind) {
            continue;
        }
        let queues: Vec<String> = plan
            .transports
            .queues
            .iter()
            .filter(|(_, k)| **k == kind)
            .map(|(q, _)| q.clone())
            .collect();
        let t: Arc<dyn Transport> = match kind {
            TransportKind::Redis => {
                let options = plan.transports.section.redis.clone().unwrap_or_default();
                let t = Arc::new(
                    RedisTransport::new(options, engine.clone(), queues, settlements.clone())?
                        .with_counters(counters.clone()),
                );
                tasks.push(t.spawn_maintenance(Duration::from_secs(1)));
                t
            }
            TransportKind::Nats => {
                let options = plan.transports.section.nats.clone().unwrap_or_default();
                // The client connects (and reconnects) in the background:
                // this returns at once, also while the server is away.
                let connect = crate::transport::nats::NatsQueues::connect(options, engine.clone());
                let t = tokio::task::block_in_place(|| {
                    tokio::runtime::Handle::current().block_on(connect)
                })?
                .with_settlements(settlements.clone())
                .with_counters(counters.clone());
                let t = Arc::new(t);
                tasks.push(crate::transport::nats::spawn_maintenance(
                    t.clone(),
                    Duration::from_secs(1),
                ));
                t
            }
        };
        by_kind.insert(kind, t);
    }
    let mut by_queue: HashMap<String, Arc<dyn Transport>> = HashMap::new();
    for (q, kind) in &plan.transports.queues {
        by_queue.insert(q.clone(), by_kind[kind].clone());
    }
    // Declared in the broker with the config's settings (retries, dead
    // letters, retention), retried while it is away. A queue's pools start
    // claiming once it is declared: before, the adapter would hold the
    // queue under defaults (another lease, other retries).
    let mut declared: HashMap<String, watch::Receiver<bool>> = HashMap::new();
    for q in plan
        .queues
        .iter()
        .filter(|q| by_queue.contains_key(&q.name))
    {
        let (t, q) = (by_queue[&q.name].clone(), q.clone());
        let (done, done_rx) = watch::channel(false);
        declared.insert(q.name.clone(), done_rx);
        tasks.push(tokio::spawn(async move {
            for n in 0u32.. {
                match t.declare(&q).await {
                    Ok(()) => {
                        let _ = done.send(true);
                        return;
                    }
                    Err(e) => {
                        let wait = crate::transport::backoff(
                            n,
                            Duration::from_millis(100),
                            Duration::from_secs(5),
                        );
                        tracing::warn!(queue = %q.name, transport = t.backend(), error = %e,
                            "declaring the queue in its broker; retrying");
                        tokio::time::sleep(wait).await;
                    }
                }
            }
        }));
    }
    let stop = Arc::new(Notify::new());
    let wakes: HashMap<String, Arc<Notify>> = pools
        .iter()
        .map(|(cfg, _)| (cfg.queue.clone(), Arc::new(Notify::new())))
        .collect();
    tasks.push(tokio::spawn(outbox.clone().publish_loop(
        by_queue.clone(),
        wakes.clone(),
        stop.clone(),
    )));
    let (pool_stop, stop_rx) = watch::channel(false);
    let mut running = Vec::new();
    for (mut cfg, handler) in pools {
        let source = TransportSource(by_queue[&cfg.queue].clone());
        // Woken by this daemon's publisher; retries coming due and other
        // producers' messages are found by polling, every second.
        let wake = wakes[&cfg.queue].clone();
        cfg.poll = cfg.poll.min(Duration::from_secs(1));
        let handler = crate::worker::timed(handle.clone(), handler);
        let mut ready = declared.get(&cfg.queue).cloned();
        let (mut stopping, stop_rx) = (stop_rx.clone(), stop_rx.clone());
        running.push(tokio::spawn(async move {
            if let Some(ready) = ready.as_mut() {
                tokio::select! {
                    _ = ready.wait_for(|d| *d) => {}
                    _ = stopping.wait_for(|s| *s) => return,
                }
            }
            crate::worker::run_pool(source, wake, cfg, handler, stop_rx).await
        }));
    }
    Ok(Transports {
        all: by_kind.into_values().collect(),
        outbox,
        by_queue,
        declared,
        wakes,
        stop,
        pool_stop,
        pools: running,
        tasks,
    })
}

impl Transports {
    /// Stops the pools (each waits for its running jobs up to its grace
    /// period), the publisher and housekeeping.
    pub async fn shutdown(self) {
        let _ = self.pool_stop.send(true);
        for p in self.pools {
            let _ = p.await;
        }
        self.stop.notify_one();
        for t in self.tasks {
            t.abort();
            let _ = t.await;
        }
    }
}

/// What a reload from `current` to `new` would change in the running
/// transports, one line each (never a URL: it may hold a password).
/// Transports are built once at start (connections, the publisher, the
/// queues declared in their brokers, the pools claiming there), so these
/// take effect at restart; [`keep_running`] keeps the reload from
/// applying them halfway (the engine's half).
pub fn changes(current: &Plan, new: &Plan) -> Vec<String> {
    let (was, now) = (&current.transports, &new.transports);
    let mut out = Vec::new();
    let names: std::collections::BTreeSet<&String> =
        was.queues.keys().chain(now.queues.keys()).collect();
    let name =
        |k: Option<&crate::transport::config::TransportKind>| k.map_or("local", |k| k.name());
    for q in names {
        let (a, b) = (was.queues.get(q), now.queues.get(q));
        let existed = current.queues.iter().any(|c| &c.name == q);
        if a != b {
            out.push(if existed || a.is_some() {
                format!("queue {q}: transport {} -> {}", name(a), name(b))
            } else {
                format!("queue {q}: new with transport {}", name(b))
            });
        } else {
            let config = |p: &Plan| p.queues.iter().find(|c| &c.name == q).cloned();
            if config(current) != config(new) {
                out.push(format!("queue {q}: settings in its broker ({})", name(a)));
            }
        }
    }
    let (s, t) = (&was.section, &now.section);
    if s.redis != t.redis {
        out.push("[transport.redis]".into());
    }
    if s.nats != t.nats {
        out.push("[transport.nats]".into());
    }
    if s.remember_ms != t.remember_ms {
        out.push("[transport] rememberMs".into());
    }
    out
}

/// `new` with the running transports kept (for a reload whose
/// [`changes`] are not empty): the `[transport]` table and queue map of
/// `current`, and `current`'s config of every queue a transport carries
/// or would carry (so a queue does not turn local in the engine while
/// its pool still claims from the broker, or external while no
/// publisher carries its fires). A queue new with a transport is left
/// as the file says: external, and its fires are not published until
/// the restart (the log line says so).
pub fn keep_running(current: &Plan, new: &mut Plan) {
    let touched: std::collections::BTreeSet<String> = current
        .transports
        .queues
        .keys()
        .chain(new.transports.queues.keys())
        .cloned()
        .collect();
    for q in &mut new.queues {
        if !touched.contains(&q.name) {
            continue;
        }
        if let Some(running) = current.queues.iter().find(|c| c.name == q.name) {
            *q = running.clone();
        }
    }
    new.transports = current.transports.clone();
}

#[cfg(test)]
mod reload_tests {
    use super::*;
    use crate::daemon::plan::Format;

    fn plan(toml: &str) -> Plan {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chime.toml");
        std::fs::write(&path, toml).unwrap();
        Plan::load(&path, Format::Toml).unwrap()
    }

    const REDIS: &str = "[[queue]]\nname = \"a\"\ntransport = \"redis\"\n\
        [[queue]]\nname = \"b\"\n\
        [transport.redis]\nurl = \"redis://:secret@127.0.0.1:1\"\n";

    #[test]
    fn a_reload_names_what_it_cannot_change_and_keeps_it() {
        let current = plan(REDIS);
        assert!(changes(&current, &plan(REDIS)).is_empty());
        let moved = REDIS
            .replace("name = \"a\"\ntransport = \"redis\"", "name = \"a\"")
            .replace("name = \"b\"", "name = \"b\"\ntransport = \"redis\"")
            .replace(":1\"", ":2\"");
        let mut new = plan(&moved);
        let c = changes(&current, &new);
        assert_eq!(
            c,
            [
                "queue a: transport redis -> local",
                "queue b: transport local -> redis",
                "[transport.redis]"
            ],
            "{c:?}"
        );
        assert!(!c.join(" ").contains("secret"), "never the URL: {c:?}");
        keep_running(&current, &mut new);
        assert!(changes(&current, &new).is_empty(), "what runs is kept");
        let mode = |p: &Plan, q: &str| p.queues.iter().find(|c| c.name == q).unwrap().mode;
        assert_eq!(mode(&new, "a"), chime_core::QueueMode::External);
        assert_eq!(mode(&new, "b"), chime_core::QueueMode::Local);
    }

    #[test]
    fn a_transport_queue_s_settings_are_a_change() {
        let current = plan(REDIS);
        let new = plan(&REDIS.replace(
            "transport = \"redis\"",
            "transport = \"redis\"\nmaxAttempts = 9",
        ));
        assert_eq!(
            changes(&current, &new),
            ["queue a: settings in its broker (redis)"]
        );
        let local = plan(&REDIS.replace("name = \"b\"", "name = \"b\"\nmaxAttempts = 9"));
        assert!(
            changes(&current, &local).is_empty(),
            "a local queue reloads"
        );
    }
}
