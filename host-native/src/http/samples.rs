//! The metric history behind the dashboard's charts: a bounded ring of
//! samples (by default one every 10 s for an hour) kept in this process,
//! served at `GET /v1/metrics/history`.
//!
//! It is built from what every backend already offers through the read
//! port, so the embedded daemon and each Postgres replica keep one the
//! same way: queue depth from `queues()` at each tick, and throughput,
//! job duration and fire lateness counted from the event stream between
//! ticks. A sampler that falls behind the stream counts the events it
//! lost (`missed`) and goes on. History starts when the process starts
//! (a restart begins an empty ring), which is what a dashboard of the
//! last hour needs; long-term series are Prometheus' job (`/metrics`).

use super::App;
use super::auth::{Principal, Scope};
use super::error::ApiError;
use crate::backend::ReadBackend;
use crate::driver::StreamEvent;
use axum::extract::State;
use axum::{Extension, Json};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast::error::RecvError;

/// Most queues one sample holds (the first ones by name): a bound on the
/// ring's memory whatever the deployment declares.
pub const MAX_QUEUES_PER_SAMPLE: usize = 256;

/// One queue in one sample.
#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueSample {
    /// The queue.
    pub queue: String,
    /// Depth by state at the sample's time.
    pub scheduled: u64,
    /// Available now.
    pub available: u64,
    /// Claimed by a worker.
    pub claimed: u64,
    /// Dead letters.
    pub dead: u64,
    /// Attempts completed since the previous sample.
    pub completed: u64,
    /// Attempts failed and retried since the previous sample.
    pub retried: u64,
    /// Jobs that died since the previous sample.
    pub died: u64,
    /// Fires into this queue since the previous sample.
    pub fires: u64,
    /// Sum and count of the attempts' durations (claim to outcome) that
    /// ended since the previous sample, and the longest, in ms.
    pub duration_ms_sum: i64,
    /// How many durations the sum holds.
    pub duration_count: u64,
    /// The longest.
    pub duration_ms_max: i64,
    /// Sum of the fires' lateness (fired at minus nominal), in ms.
    pub lateness_ms_sum: i64,
    /// The latest fire's lateness.
    pub lateness_ms_max: i64,
}

/// One sample: wall time and the queues.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// Wall time of the sample, ms since the epoch.
    pub at: i64,
    /// Stream events the sampler lost since the previous sample (it fell
    /// behind the broadcast): throughput is a lower bound when not 0.
    pub missed: u64,
    /// Every queue (at most [`MAX_QUEUES_PER_SAMPLE`]), by name.
    pub queues: Vec<QueueSample>,
}

/// `GET /v1/metrics/history`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// Time between samples, ms.
    pub interval_ms: u64,
    /// Most samples kept (older ones are dropped).
    pub capacity: usize,
    /// Oldest first.
    pub samples: Vec<Sample>,
}

/// The ring, shared by the sampler task and the route.
#[derive(Debug)]
pub(crate) struct Ring {
    interval: Duration,
    capacity: usize,
    samples: Mutex<VecDeque<Sample>>,
    /// Dropped with the ring: the sampler sees it and ends at once.
    alive: tokio::sync::watch::Sender<()>,
}

impl Ring {
    pub(crate) fn new(interval: Duration, capacity: usize) -> Arc<Ring> {
        Arc::new(Ring {
            interval: interval.max(Duration::from_millis(10)),
            capacity: capacity.max(1),
            samples: Mutex::new(VecDeque::new()),
            alive: tokio::sync::watch::channel(()).0,
        })
    }

    fn push(&self, s: Sample) {
        let mut ring = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        while ring.len() >= self.capacity {
            ring.pop_front();
        }
        ring.push_back(s);
    }

    /// The history, with only the queues `who` may read.
    fn view(&self, who: &Principal) -> History {
        let ring = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        History {
            interval_ms: self.interval.as_millis() as u64,
            capacity: self.capacity,
            samples: ring
                .iter()
                .map(|s| Sample {
                    at: s.at,
                    missed: s.missed,
                    queues: s
                        .queues
                        .iter()
                        .filter(|q| who.may(Scope::Read, Some(&q.queue)))
                        .cloned()
                        .collect(),
                })
                .collect(),
        }
    }
}

/// What the stream adds up between two ticks.
#[derive(Default)]
struct Counts {
    queues: BTreeMap<String, QueueSample>,
    missed: u64,
}

impl Counts {
    fn add(&mut self, e: &StreamEvent) {
        let Some(queue) = &e.queue else { return };
        if !self.queues.contains_key(queue) && self.queues.len() >= MAX_QUEUES_PER_SAMPLE {
            return;
        }
        let q = self.queues.entry(queue.clone()).or_default();
        match e.kind {
            "completed" => q.completed += 1,
            "retried" => q.retried += 1,
            "dead" => q.died += 1,
            "fire" => {
                q.fires += 1;
                let ms = |k: &str| e.detail.get(k).and_then(serde_json::Value::as_i64);
                if let (Some(fired), Some(nominal)) = (ms("firedAt"), ms("nominal")) {
                    let late = (fired - nominal).max(0);
                    q.lateness_ms_sum += late;
                    q.lateness_ms_max = q.lateness_ms_max.max(late);
                }
                return;
            }
            _ => return,
        }
        if let Some(d) = e.duration_ms {
            q.duration_ms_sum += d;
            q.duration_count += 1;
            q.duration_ms_max = q.duration_ms_max.max(d);
        }
    }

    /// The sample of this tick: depth from `stats`, counts since the last.
    fn take(&mut self, stats: Vec<chime_core::QueueStats>) -> Sample {
        let mut counted = std::mem::take(&mut self.queues);
        let queues = stats
            .into_iter()
            .take(MAX_QUEUES_PER_SAMPLE)
            .map(|s| {
                let mut q = counted.remove(&s.queue).unwrap_or_default();
                q.queue = s.queue;
                q.scheduled = s.scheduled;
                q.available = s.available;
                q.claimed = s.claimed;
                q.dead = s.dead;
                q
            })
            .collect();
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        Sample {
            at,
            missed: std::mem::take(&mut self.missed),
            queues,
        }
    }
}

/// Starts the sampler on the current tokio runtime (none: no history).
/// It ends when the ring's last router is dropped.
pub(crate) fn start(ring: &Arc<Ring>, reads: Arc<dyn ReadBackend>, read_timeout: Duration) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let gone = ring.alive.subscribe();
    rt.spawn(sample(Arc::downgrade(ring), gone, reads, read_timeout));
}

async fn sample(
    ring: Weak<Ring>,
    mut gone: tokio::sync::watch::Receiver<()>,
    reads: Arc<dyn ReadBackend>,
    read_timeout: Duration,
) {
    let Some(interval) = ring.upgrade().map(|r| r.interval) else {
        return;
    };
    let mut events = reads.events();
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut counts = Counts::default();
    loop {
        tokio::select! {
            e = events.recv() => match e {
                Ok(e) => counts.add(&e),
                Err(RecvError::Lagged(n)) => counts.missed += n,
                // The backend is gone.
                Err(RecvError::Closed) => return,
            },
            _ = gone.changed() => return,
            _ = tick.tick() => {
                let stats = match tokio::time::timeout(read_timeout, reads.queues()).await {
                    Ok(Ok(list)) => list.queues,
                    _ => Vec::new(),
                };
                let s = counts.take(stats);
                let Some(ring) = ring.upgrade() else { return };
                ring.push(s);
            }
        }
    }
}

/// `GET /v1/metrics/history` (`read`; queues the token may not read are
/// left out of every sample).
pub(super) async fn history(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
) -> Result<Json<History>, ApiError> {
    who.require_some(Scope::Read)?;
    Ok(Json(app.samples.view(&who)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_its_bound() {
        let ring = Ring::new(Duration::from_secs(1), 3);
        for at in 0..10 {
            ring.push(Sample {
                at,
                missed: 0,
                queues: Vec::new(),
            });
        }
        let ring = ring.samples.lock().unwrap();
        assert_eq!(ring.iter().map(|s| s.at).collect::<Vec<_>>(), [7, 8, 9]);
    }
}
