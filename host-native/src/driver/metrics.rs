//! Prometheus metrics of a running instance, served at `GET /metrics`.
//!
//! Built on `prometheus-client`, the Prometheus project's own Rust client:
//! it has no global registry (each instance owns one, so tests in one
//! process do not share counters), typed label sets, no `unsafe`, and it
//! writes the OpenMetrics text format that Prometheus scrapes natively. The
//! older `prometheus` crate keeps a process-wide default registry and
//! pulls `protobuf`; we need neither.
//!
//! Counters and histograms move as the driver executes commands (fires,
//! job events) and commits turns; workers time their handlers. Queue depth
//! and leadership are not tracked incrementally: [`Metrics::render`] takes
//! them from the engine's own state, read on the driver task at scrape
//! time, so they cannot drift from what the core holds.
//!
//! The transports (queues in a broker) count what they do into
//! [`TransportCounters`], registered here so one `/metrics` carries
//! them: the outbox publisher counts publishes, duplicates, refusals and
//! the retries while a broker is away; the adapters count at their
//! settle paths (acked, retried, dead-lettered, dropped). The engine's
//! own depth series are only for its local queues: an external queue's
//! jobs are not the engine's, so its depth comes from its broker alone.

use chime_core::{Command, Event, FireReason, QueueMode, QueueStats, SkipReason};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Duration;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Fire lateness buckets (seconds): a few ms on time up to catch-up fires
/// hours late.
const LATENESS_BUCKETS: [f64; 16] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0, 3600.0,
    86400.0,
];

/// Job handler duration buckets (seconds): 10 ms to an hour.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DepthLabels {
    queue: String,
    state: &'static str,
    /// Where the queue lives: `local` (the engine), `postgres`, or a
    /// transport (`redis`, `nats`).
    transport: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FireLabels {
    outcome: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    queue: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabel {
    queue: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TransportQueue {
    transport: &'static str,
    queue: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TransportLabel {
    transport: &'static str,
}

/// What a transport did to one message (each a counter
/// `chime_transport_<name>_total{transport, queue}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportEvent {
    /// The broker took a new message (`published`).
    Published,
    /// The broker already held the message's id: nothing added
    /// (`duplicates`; a re-publish after a crash, or a second producer).
    Duplicate,
    /// A publish failed with the broker away; it is retried
    /// (`publish_errors`: one per failed try, not per message).
    PublishError,
    /// The transport refused the message (a rule it cannot honour); it is
    /// not published (`publish_refused`).
    Refused,
    /// An attempt completed and the broker acknowledged it (`acked`).
    Acked,
    /// A failed attempt (or an expired lease) is delivered again later
    /// (`retried`: a NAK with delay, a Redis retry).
    Retried,
    /// Out of attempts: copied to the dead-letter stream
    /// (`dead_lettered`).
    DeadLettered,
    /// Out of attempts on a queue without dead letters (`dropped`).
    Dropped,
}

const TRANSPORT_EVENTS: [(TransportEvent, &str, &str); 8] = [
    (
        TransportEvent::Published,
        "chime_transport_published",
        "Messages the broker took from the outbox, by transport and queue",
    ),
    (
        TransportEvent::Duplicate,
        "chime_transport_duplicates",
        "Publishes the broker de-duplicated by the message id (published before)",
    ),
    (
        TransportEvent::PublishError,
        "chime_transport_publish_errors",
        "Publish tries that failed with the broker away (each is retried, in order)",
    ),
    (
        TransportEvent::Refused,
        "chime_transport_publish_refused",
        "Messages the transport refused (a rule it cannot honour); not published",
    ),
    (
        TransportEvent::Acked,
        "chime_transport_acked",
        "Attempts completed and acknowledged in the broker",
    ),
    (
        TransportEvent::Retried,
        "chime_transport_retried",
        "Failed attempts and expired leases delivered again later (NAK with delay)",
    ),
    (
        TransportEvent::DeadLettered,
        "chime_transport_dead_lettered",
        "Messages out of attempts copied to the dead-letter stream",
    ),
    (
        TransportEvent::Dropped,
        "chime_transport_dropped",
        "Messages out of attempts on a queue without dead letters",
    ),
];

/// The transports' counters: cheap to clone (the counters are shared
/// atomics), so the outbox publisher and each adapter hold one. One made
/// by [`Default`] counts into nothing anyone renders (a transport used
/// without a daemon: tests, the conformance suite).
#[derive(Clone, Debug)]
pub struct TransportCounters {
    events: [Family<TransportQueue, Counter>; 8],
    publish_seconds: HistogramFamily<TransportLabel>,
}

impl Default for TransportCounters {
    fn default() -> Self {
        TransportCounters {
            events: Default::default(),
            publish_seconds: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.0001, 2.0, 16))
            }),
        }
    }
}

impl TransportCounters {
    /// Counts one `event` of `queue` in `transport`.
    pub fn count(&self, event: TransportEvent, transport: &'static str, queue: &str) {
        self.add(event, transport, queue, 1);
    }

    /// Counts `n` `event`s of `queue` in `transport`.
    pub fn add(&self, event: TransportEvent, transport: &'static str, queue: &str, n: u64) {
        let i = TRANSPORT_EVENTS
            .iter()
            .position(|(e, _, _)| *e == event)
            .expect("every event is listed");
        self.events[i]
            .get_or_create(&TransportQueue {
                transport,
                queue: queue.to_owned(),
            })
            .inc_by(n);
    }

    /// The value of one counter (tests).
    pub fn get(&self, event: TransportEvent, transport: &'static str, queue: &str) -> u64 {
        let i = TRANSPORT_EVENTS
            .iter()
            .position(|(e, _, _)| *e == event)
            .expect("every event is listed");
        self.events[i]
            .get_or_create(&TransportQueue {
                transport,
                queue: queue.to_owned(),
            })
            .get()
    }

    /// Records one publish round trip to `transport` (acknowledged or
    /// de-duplicated).
    pub fn observe_publish(&self, transport: &'static str, took: Duration) {
        self.publish_seconds
            .get_or_create(&TransportLabel { transport })
            .observe(took.as_secs_f64());
    }

    fn register(&self, registry: &mut Registry) {
        for (i, (_, name, help)) in TRANSPORT_EVENTS.iter().enumerate() {
            registry.register(*name, *help, self.events[i].clone());
        }
        registry.register(
            "chime_transport_publish_seconds",
            "Round trip of one publish the broker acknowledged, by transport",
            self.publish_seconds.clone(),
        );
    }
}

/// The metrics of one instance (shared by the driver, workers and the
/// HTTP server through [`crate::driver::Handle::metrics`]).
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    queue_depth: Family<DepthLabels, Gauge>,
    fires: Family<FireLabels, Counter>,
    lateness: Histogram,
    jobs: Family<JobLabels, Counter>,
    interrupted: Family<QueueLabel, Counter>,
    job_duration: HistogramFamily<QueueLabel>,
    leader: Gauge,
    commit: Histogram,
    transport: TransportCounters,
    outbox_pending: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// What [`Metrics::render`] needs from the engine, read on the driver task.
#[derive(Clone, Debug, Default)]
pub struct EngineGauges {
    /// Stats of every local queue (an external queue's jobs live in its
    /// broker: its depth is the transport's to report).
    pub queues: Vec<QueueStats>,
    /// Whether the engine may fire.
    pub leader: bool,
}

impl EngineGauges {
    /// Reads the gauges from `engine` (cheap: counts the core keeps).
    pub fn read(engine: &chime_core::Engine) -> EngineGauges {
        EngineGauges {
            queues: engine
                .queue_names()
                .filter(|q| {
                    engine
                        .queue_config(q)
                        .is_none_or(|c| c.mode != QueueMode::External)
                })
                .filter_map(|q| engine.queue_stats(q))
                .collect(),
            leader: engine.is_leader(),
        }
    }
}

impl Metrics {
    /// Every metric registered, all at zero.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let queue_depth = Family::<DepthLabels, Gauge>::default();
        registry.register(
            "chime_queue_depth",
            "Jobs per queue, state (scheduled, available, claimed, dead) and where the queue lives (transport: local, or a broker), read at scrape time",
            queue_depth.clone(),
        );
        let fires = Family::<FireLabels, Counter>::default();
        registry.register(
            "chime_fires",
            "Schedule boundaries by outcome (fired or skipped) and reason",
            fires.clone(),
        );
        let lateness = Histogram::new(LATENESS_BUCKETS);
        registry.register(
            "chime_fire_lateness_seconds",
            "Fire time minus the nominal boundary (includes jitter and catch-up delay)",
            lateness.clone(),
        );
        let jobs = Family::<JobLabels, Counter>::default();
        registry.register(
            "chime_jobs",
            "Job attempt outcomes as the engine decided them (completed, retried, dead, dropped, expired, cancelled)",
            jobs.clone(),
        );
        let interrupted = Family::<QueueLabel, Counter>::default();
        registry.register(
            "chime_jobs_interrupted",
            "Attempts interrupted by the host (a crash, or a stop past its grace period), \
             released at the next start to run again: not failures",
            interrupted.clone(),
        );
        let job_duration: HistogramFamily<QueueLabel> =
            Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS));
        registry.register(
            "chime_job_duration_seconds",
            "Wall time of one attempt in a local worker's handler",
            job_duration.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "chime_leader",
            "1 while this engine may fire (always for the embedded single node)",
            leader.clone(),
        );
        // 100 µs .. ~3.3 s: an fsync on a healthy disk is a few ms.
        let commit = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        registry.register(
            "chime_journal_commit_seconds",
            "Time to append and durably commit one driver turn's journal entries",
            commit.clone(),
        );
        let transport = TransportCounters::default();
        transport.register(&mut registry);
        let outbox_pending = Gauge::default();
        registry.register(
            "chime_transport_outbox_pending",
            "Messages in the transport outbox not yet acknowledged by their broker \
             (one outbox for every transport, published in order; 0 without transports)",
            outbox_pending.clone(),
        );
        Metrics {
            registry,
            transport,
            outbox_pending,
            queue_depth,
            fires,
            lateness,
            jobs,
            interrupted,
            job_duration,
            leader,
            commit,
        }
    }

    /// Counts what a command tells: fires, skips and job outcomes.
    pub fn on_command(&self, cmd: &Command) {
        match cmd {
            Command::Fire(f) => {
                self.fires
                    .get_or_create(&FireLabels {
                        outcome: "fired",
                        reason: fire_reason(f.reason),
                    })
                    .inc();
                let late_ms = f.fired_at.as_millis() - f.nominal().as_millis();
                self.lateness.observe(late_ms.max(0) as f64 / 1000.0);
            }
            Command::Event(e) => self.on_event(e),
            _ => {}
        }
    }

    fn on_event(&self, e: &Event) {
        let (queue, outcome) = match e {
            Event::FireSkipped { reason, count, .. } => {
                self.fires
                    .get_or_create(&FireLabels {
                        outcome: "skipped",
                        reason: skip_reason(*reason),
                    })
                    .inc_by(*count);
                return;
            }
            Event::JobCompleted { queue, .. } => (queue, "completed"),
            Event::JobRetried { queue, .. } => (queue, "retried"),
            Event::JobDead { queue, .. } => (queue, "dead"),
            Event::JobDropped { queue, .. } => (queue, "dropped"),
            Event::LeaseExpired { queue, .. } => (queue, "expired"),
            Event::JobCancelled { queue, .. } => (queue, "cancelled"),
            Event::JobInterrupted { queue, .. } => {
                self.interrupted
                    .get_or_create(&QueueLabel {
                        queue: queue.clone(),
                    })
                    .inc();
                return;
            }
            _ => return,
        };
        self.jobs
            .get_or_create(&JobLabels {
                queue: queue.clone(),
                outcome,
            })
            .inc();
    }

    /// Records one journal commit's latency.
    pub fn observe_commit(&self, took: Duration) {
        self.commit.observe(took.as_secs_f64());
    }

    /// Records one handler run of `queue`.
    pub fn observe_job(&self, queue: &str, took: Duration) {
        self.job_duration
            .get_or_create(&QueueLabel {
                queue: queue.to_owned(),
            })
            .observe(took.as_secs_f64());
    }

    /// The transports' counters (a clone sharing the same counters).
    pub fn transport(&self) -> TransportCounters {
        self.transport.clone()
    }

    /// Sets how many messages wait in the transport outbox (read by the
    /// caller before [`Metrics::render`]).
    pub fn set_outbox_pending(&self, n: u64) {
        self.outbox_pending
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// Sets the depth of a queue that lives in `transport` (a broker):
    /// `chime_queue_depth{queue, state, transport}`, read by the caller
    /// from the broker before [`Metrics::render`].
    pub fn set_transport_depth(
        &self,
        transport: &'static str,
        queue: &str,
        state: &'static str,
        n: u64,
    ) {
        self.queue_depth
            .get_or_create(&DepthLabels {
                queue: queue.to_owned(),
                state,
                transport,
            })
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// The OpenMetrics text of every metric, with the gauges set from
    /// `gauges` first.
    pub fn render(&self, gauges: &EngineGauges) -> String {
        for s in &gauges.queues {
            for (state, n) in [
                ("scheduled", s.scheduled),
                ("available", s.available),
                ("claimed", s.claimed),
                ("dead", s.dead),
            ] {
                self.queue_depth
                    .get_or_create(&DepthLabels {
                        queue: s.queue.clone(),
                        state,
                        transport: "local",
                    })
                    .set(n as i64);
            }
        }
        self.leader.set(i64::from(gauges.leader));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

fn fire_reason(r: FireReason) -> &'static str {
    match r {
        FireReason::Scheduled => "scheduled",
        FireReason::Catchup => "catchup",
        FireReason::Manual => "manual",
        FireReason::Backfill => "backfill",
        FireReason::Buffered => "buffered",
    }
}

fn skip_reason(r: SkipReason) -> &'static str {
    match r {
        SkipReason::TooOld => "too_old",
        SkipReason::CatchupCap => "catchup_cap",
        SkipReason::Overlap => "overlap",
        SkipReason::Superseded => "superseded",
        SkipReason::Paused => "paused",
        SkipReason::QueueFull => "queue_full",
        SkipReason::Redefined => "redefined",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_sets_depth_from_stats() {
        let m = Metrics::new();
        let stats = QueueStats {
            queue: "q".into(),
            available: 3,
            dead: 1,
            ..QueueStats::default()
        };
        let text = m.render(&EngineGauges {
            queues: vec![stats],
            leader: true,
        });
        assert!(text.contains(
            "chime_queue_depth{queue=\"q\",state=\"available\",transport=\"local\"} 3\n"
        ));
        assert!(
            text.contains("chime_queue_depth{queue=\"q\",state=\"dead\",transport=\"local\"} 1\n")
        );
        assert!(text.contains("chime_leader 1\n"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn an_external_queue_has_no_local_depth() {
        let mut engine = chime_core::Engine::new(chime_core::EngineConfig::default());
        for (name, mode) in [("l", QueueMode::Local), ("x", QueueMode::External)] {
            let config = chime_core::QueueConfig {
                mode,
                ..chime_core::QueueConfig::new(name)
            };
            engine
                .handle(
                    chime_core::Timestamp::from_millis(0).unwrap(),
                    chime_core::Input::DeclareQueue(config),
                )
                .unwrap();
        }
        let text = Metrics::new().render(&EngineGauges::read(&engine));
        assert!(
            text.contains(r#"chime_queue_depth{queue="l",state="available",transport="local"} 0"#),
            "{text}"
        );
        assert!(!text.contains(r#"queue="x""#), "{text}");
    }

    #[test]
    fn transport_counters_render_with_help_and_type() {
        let m = Metrics::new();
        let c = m.transport();
        c.count(TransportEvent::Published, "redis", "q");
        c.add(TransportEvent::DeadLettered, "redis", "q", 2);
        c.observe_publish("redis", Duration::from_millis(1));
        m.set_outbox_pending(4);
        let text = m.render(&EngineGauges::default());
        assert!(
            text.contains("# TYPE chime_transport_published counter\n"),
            "{text}"
        );
        assert!(
            text.contains("# HELP chime_transport_dead_lettered "),
            "{text}"
        );
        assert!(
            text.contains(r#"chime_transport_published_total{transport="redis",queue="q"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"chime_transport_dead_lettered_total{transport="redis",queue="q"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(r#"chime_transport_publish_seconds_count{transport="redis"} 1"#),
            "{text}"
        );
        assert!(
            text.contains("chime_transport_outbox_pending 4\n"),
            "{text}"
        );
        assert_eq!(c.get(TransportEvent::DeadLettered, "redis", "q"), 2);
    }
}
