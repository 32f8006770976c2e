//! What `chime inspect` shows: schedules with their next fires, queue
//! depths by state, dead letters. Built from a `&Engine` into one plain
//! serde struct, so the CLI (reading a data directory) and the HTTP API
//! (`/v1/schedules`, `/v1/queues`, `/v1/queues/{name}/dead`, serving a
//! live engine) show the same data in the same JSON.

use chime_core::{Engine, JobInfo, QueueStats, RunRecord, ScheduleInfo, ScheduleStatus, Timestamp};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Dead letters listed per queue unless asked otherwise.
pub const DEAD_LIMIT: usize = 20;

/// A read-only picture of an engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Inspection {
    /// The engine clock everything is as of (the last `now` it handled).
    pub clock: Timestamp,
    /// Every schedule, by name.
    pub schedules: Vec<ScheduleInfo>,
    /// Every queue, by name.
    pub queues: Vec<QueueView>,
}

/// One queue: its stats and its oldest dead letters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    /// Counts by state and totals (`stats.queue` is the name).
    pub stats: QueueStats,
    /// Up to the limit asked for, oldest death first.
    pub dead_letters: Vec<JobInfo>,
}

impl Inspection {
    /// The picture of `engine`, with up to `dead_limit` dead letters per queue.
    pub fn of(engine: &Engine, dead_limit: usize) -> Inspection {
        Inspection {
            clock: engine.clock(),
            schedules: schedules(engine),
            queues: queues(engine, dead_limit),
        }
    }

    /// A human-readable report (what `chime inspect` prints without `--json`).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "as of {} (engine clock)", self.clock);
        let _ = writeln!(s, "\nschedules ({}):", self.schedules.len());
        for i in &self.schedules {
            let next = match (i.status, i.next_due_at) {
                (ScheduleStatus::Completed, _) | (_, None) => "-".to_owned(),
                (_, Some(t)) => t.to_string(),
            };
            let tz = i
                .def
                .tz
                .as_deref()
                .map_or(String::new(), |z| format!(" [{z}]"));
            let _ = writeln!(
                s,
                "  {}  {}  next {}  spec {:?}{}  -> {}  fires {}  skipped {}  in flight {}",
                i.def.name,
                status(i.status),
                next,
                i.def.spec,
                tz,
                i.def.target.queue,
                i.fires,
                i.skipped,
                i.in_flight.len()
            );
            for r in i.runs.iter().take(RUNS_SHOWN) {
                let _ = writeln!(s, "    {}", run_line(r));
            }
            if i.runs.len() > RUNS_SHOWN {
                let more = i.runs.len() - RUNS_SHOWN;
                let _ = writeln!(s, "    … {more} older runs (--json shows them)");
            }
        }
        let _ = writeln!(s, "\nqueues ({}):", self.queues.len());
        for q in &self.queues {
            let st = &q.stats;
            let _ = writeln!(
                s,
                "  {}  scheduled {}  available {}  claimed {}  completed {}  dead {}  cancelled {}  \
                 (total enqueued {}, completed {}, retried {}, dropped {})",
                st.queue,
                st.scheduled,
                st.available,
                st.claimed,
                st.completed,
                st.dead,
                st.cancelled,
                st.totals.enqueued,
                st.totals.completed,
                st.totals.retried,
                st.totals.dropped
            );
        }
        let dead: Vec<&JobInfo> = self.queues.iter().flat_map(|q| &q.dead_letters).collect();
        let _ = writeln!(s, "\ndead letters ({} shown):", dead.len());
        for j in dead {
            let _ = writeln!(
                s,
                "  {} job {}  attempts {}/{}  fire {}  error {:?}",
                j.queue,
                j.id.0,
                j.attempt,
                j.max_attempts,
                j.fire.as_ref().map_or("-".to_owned(), ToString::to_string),
                j.last_error.as_deref().unwrap_or("")
            );
        }
        s
    }
}

/// Runs listed per schedule in the text report (newest first).
const RUNS_SHOWN: usize = 5;

/// One run of the history: `<outcome> <fire or skipped span> …`.
fn run_line(r: &RunRecord) -> String {
    let mut s = wire_name(&r.outcome);
    match &r.fire {
        Some(fire) => {
            let reason = r.reason.as_ref().map_or(String::new(), wire_name);
            let _ = write!(s, "  {fire}  {reason} at {}", r.at);
        }
        None => {
            let why = r.skip_reason.as_ref().map_or(String::new(), wire_name);
            let last = r.last_nominal.unwrap_or(r.nominal);
            let _ = write!(s, "  {why} x{}  {} .. {}", r.count, r.nominal, last);
        }
    }
    if let Some(job) = r.job {
        let _ = write!(s, "  job {}", job.0);
    }
    if r.attempts > 0 {
        let _ = write!(s, "  attempts {}", r.attempts);
    }
    if let Some(ms) = r.duration_ms {
        let _ = write!(s, "  {ms} ms");
    }
    if let Some(e) = &r.error {
        let _ = write!(s, "  error {e:?}");
    }
    s
}

/// A unit enum's wire name (`"catchup"`).
fn wire_name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn status(s: ScheduleStatus) -> &'static str {
    match s {
        ScheduleStatus::Active => "active",
        ScheduleStatus::Paused => "paused",
        ScheduleStatus::Completed => "completed",
    }
}

/// Every schedule of `engine`, by name (`/v1/schedules`).
pub fn schedules(engine: &Engine) -> Vec<ScheduleInfo> {
    engine
        .schedule_names()
        .filter_map(|n| engine.schedule(n))
        .collect()
}

/// Every queue of `engine` with up to `dead_limit` dead letters each
/// (`/v1/queues`; `/v1/queues/{name}/dead` is [`Engine::dead_letters`]).
pub fn queues(engine: &Engine, dead_limit: usize) -> Vec<QueueView> {
    engine
        .queue_names()
        .filter_map(|n| {
            Some(QueueView {
                stats: engine.queue_stats(n)?,
                dead_letters: engine.dead_letters(n, dead_limit),
            })
        })
        .collect()
}
