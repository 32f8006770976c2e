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

use chime_core::{Command, Event, FireReason, QueueStats, SkipReason};
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
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// What [`Metrics::render`] needs from the engine, read on the driver task.
#[derive(Clone, Debug, Default)]
pub struct EngineGauges {
    /// Stats of every queue.
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
        Metrics {
            registry,
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
}
