//! The bodies of the read answers (camelCase, like the core's wire
//! types, which they embed where the core already has one: `QueueStats`,
//! `ScheduleInfo`, `JobInfo`, `Occurrence`). They live below the HTTP
//! layer because every [`ReadBackend`](super::ReadBackend) builds them —
//! the driver from its engine, a Postgres replica from its tables — so
//! both modes answer the same JSON for the same state.

use crate::driver::VitalSigns;
use chime_core::{
    Engine, EngineConfig, JobInfo, Occurrence, Origin, QueueStats, RunRecord, ScheduleInfo,
    ScheduleStatus, Spec, SpecOptions, Timestamp,
};
use serde::{Deserialize, Serialize};

/// How many next fires `GET /v1/schedules/{name}` lists.
pub const NEXT_FIRES: usize = 5;

/// What the health probe reads on the driver task.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    clock: Timestamp,
    schedules: usize,
    live_jobs: usize,
    leader: bool,
}

impl Probe {
    /// Reads the probe's numbers from `e`.
    pub fn read(e: &Engine) -> Probe {
        Probe {
            clock: e.clock(),
            schedules: e.schedule_count(),
            live_jobs: e.live_jobs(),
            leader: e.is_leader(),
        }
    }
}

/// Why a health probe got no answer.
#[derive(Clone, Debug)]
pub enum ProbeFailed {
    /// The engine did not answer within this wait: alive but stuck.
    Timeout(std::time::Duration),
    /// Too many reads in flight to probe now.
    Busy,
    /// The engine has stopped (or the database is unreachable), and why.
    Stopped(String),
}

/// `GET /healthz`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok` (HTTP 200) or `unavailable` (HTTP 503).
    pub status: String,
    /// `running` (answered the probe), `stopped`, or `not_responding`
    /// (alive but stuck past the read timeout); on a Postgres follower,
    /// `standby` (the engine runs on the leader).
    pub driver: String,
    /// `ok`, or `failed` when the driver stopped on a store error (or the
    /// database did not answer).
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
    /// Whether the engine may fire (from the probe; on Postgres, whether
    /// this replica holds the leader lease).
    pub leader: Option<bool>,
    /// Postgres mode only: this replica's role and the lease, flattened
    /// into the body. Not in the OpenAPI document (utoipa would describe
    /// a flattened `Option` as "null or the object", which no body is);
    /// the schema allows the extra fields, docs/postgres.md lists them.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(ignore))]
    pub replica: Option<ReplicaHealth>,
    /// Each configured transport (a broker carrying queues,
    /// `docs/transports.md`): whether it answered a ping, and how fast.
    /// One that does not makes the whole status `unavailable`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<TransportHealth>,
}

/// One transport in `/healthz`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TransportHealth {
    /// `redis` or `nats`.
    pub transport: String,
    /// `ok` or `unavailable`.
    pub status: String,
    /// The ping's round trip, in microseconds, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_trip_micros: Option<u64>,
    /// Why it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a Postgres replica adds to `/healthz` (flattened into it).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReplicaHealth {
    /// `leader` or `follower`.
    pub role: String,
    /// This replica's holder id.
    pub holder: String,
    /// Whether its session to the database is up.
    pub connected: bool,
    /// Its epoch while it leads.
    pub epoch: Option<i64>,
    /// Its lease's expiry while it leads (database clock, Unix ms).
    pub lease_expires_at_ms: Option<i64>,
    /// Whether the database answered this probe, and if not why.
    pub database: DatabaseHealth,
    /// The lease row as the database has it (`None`: no row yet, or the
    /// database did not answer).
    pub lease: Option<LeaseRow>,
}

/// Whether the database answered.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DatabaseHealth {
    /// It answered.
    pub reachable: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The leader lease row.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LeaseRow {
    /// Who holds it (`None`: released).
    pub holder: Option<String>,
    /// Its epoch: every takeover adds one.
    pub epoch: i64,
    /// When it runs out unless renewed (database clock, Unix ms).
    pub lease_expires_at_ms: i64,
    /// Whether a replica holds it unexpired.
    pub live: bool,
}

impl Health {
    /// The driver's health: its vital signs and the probe's answer.
    pub fn new(signs: VitalSigns, probe: Result<&Probe, &ProbeFailed>) -> Health {
        let store_failed = signs.error.is_some();
        let (driver, error) = match probe {
            Ok(_) => ("running", None),
            Err(ProbeFailed::Timeout(_)) => ("not_responding", None),
            Err(ProbeFailed::Busy) => ("running", Some("busy".to_owned())),
            Err(ProbeFailed::Stopped(_)) => ("stopped", None),
        };
        let ok = driver == "running" && error.is_none() && !store_failed && !signs.stopped;
        let error = signs.error.clone().or(error).or_else(|| match probe {
            Err(ProbeFailed::Timeout(w)) => Some(format!("the driver did not answer within {w:?}")),
            Err(ProbeFailed::Stopped(why)) => Some(why.clone()),
            _ => None,
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
            replica: None,
            transports: Vec::new(),
        }
    }

    /// Too many reads in flight to probe: unavailable, `busy`.
    pub fn busy() -> Health {
        Health {
            status: "unavailable".to_owned(),
            driver: "running".to_owned(),
            store: "ok".to_owned(),
            error: Some("busy".to_owned()),
            turns: 0,
            commits: 0,
            last_commit_at: None,
            last_commit_micros: None,
            engine_clock: None,
            schedules: None,
            live_jobs: None,
            leader: None,
            replica: None,
            transports: Vec::new(),
        }
    }
}

/// One schedule in `GET /v1/schedules`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
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
    /// `declared` (by the config) or `api` (made through the API).
    pub origin: Origin,
    /// The newest entry of the schedule's run history (`None`: nothing
    /// fired or was skipped yet); the whole history is in
    /// `GET /v1/schedules/{name}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<RunRecord>,
}

/// `GET /v1/schedules`: every schedule, in name order.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleList {
    /// The schedules.
    pub schedules: Vec<ScheduleSummary>,
}

impl ScheduleList {
    /// Every schedule of `e`, in name order.
    pub fn read(e: &Engine) -> ScheduleList {
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
                origin: s.def.origin,
                last_run: s.runs.into_iter().next(),
            })
            .collect();
        ScheduleList { schedules }
    }
}

/// `GET /v1/schedules/{name}`: the engine's view plus the next boundaries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
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
    /// `info` with its next boundaries under `config`'s spec options.
    pub fn new(info: ScheduleInfo, config: &EngineConfig) -> ScheduleDetail {
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
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueList {
    /// Counts by state and totals, as of the engine clock.
    pub queues: Vec<QueueStats>,
}

impl QueueList {
    /// Every queue of `e`, in name order.
    pub fn read(e: &Engine) -> QueueList {
        QueueList {
            queues: e.queue_names().filter_map(|q| e.queue_stats(q)).collect(),
        }
    }
}

/// `GET /v1/queues/{name}/dead`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeadLetters {
    /// Queue.
    pub queue: String,
    /// Dead letters in the queue (may exceed `jobs.len()`).
    pub total: u64,
    /// The oldest deaths first, up to `?limit=` (default 100, max 1000).
    pub jobs: Vec<JobInfo>,
}
