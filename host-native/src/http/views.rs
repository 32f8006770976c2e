//! The JSON bodies of the HTTP API (camelCase, like the core's wire
//! types, which they embed where the core already has one: `QueueStats`,
//! `ScheduleInfo`, `JobInfo`, `Occurrence`).

use super::error::ApiError;
use crate::driver::VitalSigns;
use chime_core::{
    Engine, EngineConfig, JobInfo, Occurrence, QueueStats, ScheduleInfo, ScheduleStatus, Spec,
    SpecOptions, Timestamp,
};
use serde::{Deserialize, Serialize};

/// How many next fires `GET /v1/schedules/{name}` lists.
pub const NEXT_FIRES: usize = 5;

/// An error answer.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Stable code: core's (`invalid_input`, `lease_lost`, …) for an
    /// engine refusal, else the listener's (`not_found`, `unauthorized`,
    /// `forbidden`, `body_too_large`, `busy`, …; see `docs/http.md`).
    pub error: String,
    /// For people.
    pub message: String,
    /// The input field it is about, camelCase as on the wire, when there
    /// is one (core's [`chime_core::Error::field`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// What the health probe reads on the driver task.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    clock: Timestamp,
    schedules: usize,
    live_jobs: usize,
    leader: bool,
}

impl Probe {
    pub(super) fn read(e: &Engine) -> Probe {
        Probe {
            clock: e.clock(),
            schedules: e.schedule_count(),
            live_jobs: e.live_jobs(),
            leader: e.is_leader(),
        }
    }
}

/// `GET /healthz`.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok` (HTTP 200) or `unavailable` (HTTP 503).
    pub status: String,
    /// `running` (answered the probe), `stopped`, or `not_responding`
    /// (alive but stuck past the read timeout).
    pub driver: String,
    /// `ok`, or `failed` when the driver stopped on a store error.
    pub store: String,
    /// Why the driver stopped or did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Driver loop turns so far: a moving counter means a live loop.
    pub turns: u64,
    /// Journal commits so far.
    pub commits: u64,
    /// Wall time of the last commit (ms since the epoch).
    pub last_commit_at: Option<i64>,
    /// How long it took, in microseconds.
    pub last_commit_micros: Option<u64>,
    /// The engine clock (from the probe).
    pub engine_clock: Option<Timestamp>,
    /// Schedules held (from the probe).
    pub schedules: Option<usize>,
    /// Jobs not yet terminal (from the probe).
    pub live_jobs: Option<usize>,
    /// Whether the engine may fire (from the probe).
    pub leader: Option<bool>,
}

impl Health {
    pub(super) fn new(signs: VitalSigns, probe: Result<&Probe, &ApiError>) -> Health {
        let store_failed = signs.error.is_some();
        let (driver, error) = match probe {
            Ok(_) => ("running", None),
            Err(ApiError::Timeout(_)) => ("not_responding", None),
            Err(ApiError::Busy) => ("running", Some("busy".to_owned())),
            Err(_) => ("stopped", None),
        };
        let ok = driver == "running" && error.is_none() && !store_failed && !signs.stopped;
        let error = signs.error.clone().or(error).or_else(|| match probe {
            Err(e) => Some(e.to_string()),
            Ok(_) => None,
        });
        let p = probe.ok();
        Health {
            status: if ok { "ok" } else { "unavailable" }.to_owned(),
            driver: driver.to_owned(),
            store: if store_failed { "failed" } else { "ok" }.to_owned(),
            error,
            turns: signs.turns,
            commits: signs.commits,
            last_commit_at: signs.last_commit_unix_ms,
            last_commit_micros: signs.last_commit_us,
            engine_clock: p.map(|p| p.clock),
            schedules: p.map(|p| p.schedules),
            live_jobs: p.map(|p| p.live_jobs),
            leader: p.map(|p| p.leader),
        }
    }
}

/// One schedule in `GET /v1/schedules`.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleSummary {
    /// Name.
    pub name: String,
    /// Spec text.
    pub spec: String,
    /// Zone (`None`: UTC).
    pub tz: Option<String>,
    /// Target queue.
    pub queue: String,
    /// Active, paused or completed.
    pub status: ScheduleStatus,
    /// The next boundary.
    pub next_nominal: Option<Timestamp>,
    /// When it is due (boundary plus jitter).
    pub next_due_at: Option<Timestamp>,
    /// Fires so far.
    pub fires: u64,
    /// Boundaries skipped so far.
    pub skipped: u64,
    /// Fires whose job is not finished yet.
    pub in_flight: usize,
}

/// `GET /v1/schedules`: every schedule, in name order.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleList {
    /// The schedules.
    pub schedules: Vec<ScheduleSummary>,
}

impl ScheduleList {
    pub(super) fn read(e: &Engine) -> ScheduleList {
        let schedules = e
            .schedule_names()
            .filter_map(|n| e.schedule(n))
            .map(|s| ScheduleSummary {
                name: s.def.name,
                spec: s.def.spec,
                tz: s.def.tz,
                queue: s.def.target.queue,
                status: s.status,
                next_nominal: s.next_nominal,
                next_due_at: s.next_due_at,
                fires: s.fires,
                skipped: s.skipped,
                in_flight: s.in_flight.len(),
            })
            .collect();
        ScheduleList { schedules }
    }
}

/// `GET /v1/schedules/{name}`: the engine's view plus the next boundaries.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleDetail {
    /// Definition, state and counters, as the core reports them.
    pub schedule: ScheduleInfo,
    /// The next (up to five) nominal boundaries from the cursor,
    /// with civil time and DST notes; within `endAt` and `maxFires`, empty
    /// once completed. Jitter is not added (the first one's due time is
    /// `schedule.nextDueAt`); a paused schedule lists the boundaries it
    /// would skip.
    pub next_fires: Vec<Occurrence>,
}

impl ScheduleDetail {
    pub(super) fn new(info: ScheduleInfo, config: &EngineConfig) -> ScheduleDetail {
        let next_fires = next_fires(&info, config, NEXT_FIRES);
        ScheduleDetail {
            schedule: info,
            next_fires,
        }
    }
}

/// Up to `n` boundaries from the schedule's cursor, through the core's own
/// spec evaluation under the engine's options.
fn next_fires(info: &ScheduleInfo, config: &EngineConfig, n: usize) -> Vec<Occurrence> {
    let Some(first) = info.next_nominal else {
        return Vec::new();
    };
    if info.status == ScheduleStatus::Completed {
        return Vec::new();
    }
    let opts = SpecOptions {
        tz: info.def.tz.clone(),
        dst: info.def.dst,
        min_interval_ms: config.min_interval_ms,
        horizon_years: config.horizon_years,
    };
    let Ok(spec) = Spec::parse(&info.def.spec, &opts) else {
        // The engine accepted it under these options; nothing to list if not.
        return Vec::new();
    };
    let left = info
        .def
        .max_fires
        .map_or(n as u64, |m| m.saturating_sub(info.fires));
    spec.preview(first.saturating_add_ms(-1), n)
        .into_iter()
        .take_while(|o| info.def.end_at.is_none_or(|end| o.at < end))
        .take(left.min(n as u64) as usize)
        .collect()
}

/// `GET /v1/queues`: stats of every queue, in name order.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueList {
    /// Counts by state and totals, as of the engine clock.
    pub queues: Vec<QueueStats>,
}

impl QueueList {
    pub(super) fn read(e: &Engine) -> QueueList {
        QueueList {
            queues: e.queue_names().filter_map(|q| e.queue_stats(q)).collect(),
        }
    }
}

/// `GET /v1/queues/{name}/dead`.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetters {
    /// Queue.
    pub queue: String,
    /// Dead letters in the queue (may exceed `jobs.len()`).
    pub total: u64,
    /// The oldest deaths first, up to `?limit=` (default 100, max 1000).
    pub jobs: Vec<JobInfo>,
}
