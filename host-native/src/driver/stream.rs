//! What the driver publishes to listeners without a round trip: a wake-up
//! per queue when claimable work appears (the HTTP long-poll waits on it),
//! and a bounded broadcast of fires, skips and job outcomes (the HTTP
//! `/v1/events` stream). Both are fed from the commands the driver
//! executes, after the turn's commit; neither can stall the driver: a
//! wake is a counter bump, and a broadcast overwrites what a slow
//! receiver has not read (the receiver sees `Lagged`).

use chime_core::{Command, Engine, Event, JobId, Timestamp};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// Events a slow `/v1/events` client may fall behind by before it is
/// dropped.
pub const EVENT_BUFFER: usize = 1_024;

/// Queues with a wake-up channel at most; beyond it, channels nobody waits
/// on are dropped first (a client polling made-up names cannot grow it
/// without bound while it waits).
const MAX_WAKE_QUEUES: usize = 4_096;

/// One event of the stream, as `/v1/events` sends it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StreamEvent {
    /// `fire`, `skip`, `completed`, `retried`, `dead`, `dropped`,
    /// `cancelled`, `interrupted`, `lease_expired`, `schedule_completed`.
    #[cfg_attr(feature = "http", schema(value_type = String))]
    pub kind: &'static str,
    /// The engine clock of the turn it happened in.
    pub at: Timestamp,
    /// The schedule, for fires, skips and jobs a fire created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// The queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// The job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobId>,
    /// The attempt it was about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Time from the claim to this outcome, when this driver saw the
    /// claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// The skip reason, cancel reason or error text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The core's own command or event, verbatim.
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub detail: serde_json::Value,
}

/// The driver's publishing side (in [`super::handle::Shared`]).
#[derive(Debug)]
pub(super) struct Publisher {
    events: broadcast::Sender<Arc<StreamEvent>>,
    wakes: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Default for Publisher {
    fn default() -> Self {
        Publisher {
            events: broadcast::channel(EVENT_BUFFER).0,
            wakes: Mutex::new(HashMap::new()),
        }
    }
}

impl Publisher {
    pub(super) fn subscribe(&self) -> broadcast::Receiver<Arc<StreamEvent>> {
        self.events.subscribe()
    }

    /// A receiver that changes whenever `queue` gets claimable work after
    /// this call (the current value counts as seen).
    pub(super) fn availability(&self, queue: &str) -> watch::Receiver<u64> {
        let mut wakes = self.wakes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = wakes.get(queue) {
            return tx.subscribe();
        }
        if wakes.len() >= MAX_WAKE_QUEUES {
            wakes.retain(|_, tx| tx.receiver_count() > 0);
        }
        let (tx, rx) = watch::channel(0);
        wakes.insert(queue.to_owned(), tx);
        rx
    }

    /// `queue` has claimable work: wakes whoever waits on it.
    pub(super) fn wake(&self, queue: &str) {
        let wakes = self.wakes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = wakes.get(queue) {
            tx.send_modify(|v| *v = v.wrapping_add(1));
        }
    }

    fn listening(&self) -> bool {
        self.events.receiver_count() > 0
    }

    fn send(&self, e: StreamEvent) {
        let _ = self.events.send(Arc::new(e));
    }
}

/// The claim times the stream's durations are measured from.
#[derive(Debug, Default)]
pub(super) struct Claims(HashMap<JobId, Timestamp>);

impl Claims {
    pub(super) fn claimed(&mut self, jobs: impl Iterator<Item = JobId>, now: Timestamp) {
        for j in jobs {
            self.0.insert(j, now);
        }
    }

    fn ended(&mut self, job: JobId, now: Timestamp) -> Option<i64> {
        self.0
            .remove(&job)
            .map(|t| now.as_millis().saturating_sub(t.as_millis()))
    }
}

fn blank(kind: &'static str, at: Timestamp, detail: serde_json::Value) -> StreamEvent {
    StreamEvent {
        kind,
        at,
        schedule: None,
        queue: None,
        job: None,
        attempt: None,
        duration_ms: None,
        reason: None,
        detail,
    }
}

/// Publishes `cmd` (a fire, a skip, a job outcome) if anyone listens.
/// Claim times are forgotten at an outcome whether or not anyone listens.
pub(super) fn publish(
    p: &Publisher,
    claims: &mut Claims,
    cmd: &Command,
    engine: &Engine,
    now: Timestamp,
) {
    let listening = p.listening();
    let detail = || {
        if listening {
            serde_json::to_value(cmd).unwrap_or(serde_json::Value::Null)
        } else {
            serde_json::Value::Null
        }
    };
    let job_event = |kind, job: &JobId, queue: &str, claims: &mut Claims| {
        let duration_ms = claims.ended(*job, now);
        let mut e = blank(kind, now, detail());
        e.job = Some(*job);
        e.queue = Some(queue.to_owned());
        e.duration_ms = duration_ms;
        if listening && let Some(info) = engine.job(*job) {
            e.attempt = Some(info.attempt);
            e.schedule = info.fire.map(|f| f.schedule.to_string());
        }
        e
    };
    let e = match cmd {
        Command::Fire(f) => {
            let mut e = blank("fire", now, detail());
            e.schedule = Some(f.schedule().to_string());
            e.queue = Some(f.queue.to_string());
            e.job = f.job;
            e.reason = Some(super::events::name(&f.reason));
            e
        }
        Command::Event(ev) => match ev {
            Event::FireSkipped {
                schedule, reason, ..
            } => {
                let mut e = blank("skip", now, detail());
                e.schedule = Some(schedule.clone());
                e.reason = Some(super::events::name(reason));
                e
            }
            Event::ScheduleCompleted { schedule, reason } => {
                let mut e = blank("schedule_completed", now, detail());
                e.schedule = Some(schedule.clone());
                e.reason = Some(reason.clone());
                e
            }
            Event::JobCompleted { job, queue } => job_event("completed", job, queue, claims),
            Event::JobRetried {
                job,
                queue,
                attempt,
                error,
                ..
            } => {
                let mut e = job_event("retried", job, queue, claims);
                e.attempt = Some(*attempt);
                e.reason = Some(error.clone());
                e
            }
            Event::LeaseExpired {
                job,
                queue,
                attempt,
            } => {
                let mut e = job_event("lease_expired", job, queue, claims);
                e.attempt = Some(*attempt);
                e
            }
            Event::JobDead {
                job,
                queue,
                attempts,
                reason,
            } => {
                let mut e = job_event("dead", job, queue, claims);
                e.attempt = Some(*attempts);
                e.reason = Some(reason.clone());
                e
            }
            Event::JobDropped { job, queue, reason } => {
                let mut e = job_event("dropped", job, queue, claims);
                e.reason = Some(reason.clone());
                e
            }
            Event::JobCancelled { job, queue, reason } => {
                let mut e = job_event("cancelled", job, queue, claims);
                e.reason = Some(super::events::name(reason));
                e
            }
            Event::JobInterrupted {
                job,
                queue,
                attempt,
                ..
            } => {
                let mut e = job_event("interrupted", job, queue, claims);
                e.attempt = Some(*attempt);
                e
            }
            _ => return,
        },
        _ => return,
    };
    if listening {
        p.send(e);
    }
}
