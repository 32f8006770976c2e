//! The next fires of a schedule from any instant, with civil time and
//! DST notes: `GET /v1/schedules/{name}/fires`, what the dashboard's
//! timeline draws. Every boundary is the core's own spec evaluation
//! (`Spec::preview`) under the engine's spec options, so the page shows
//! exactly the instants the engine would fire; the host only picks the
//! window.

use chime_core::{EngineConfig, Occurrence, ScheduleInfo, Spec, SpecOptions, Timestamp};
use serde::Serialize;

/// Most fires one request lists.
pub const MAX_FIRES: usize = 500;

/// `GET /v1/schedules/{name}/fires`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FireWindow {
    /// The schedule.
    pub schedule: String,
    /// Its zone (`None`: UTC).
    pub tz: Option<String>,
    /// The boundaries at or after the window's start (the request's
    /// `from`, else the schedule's cursor), before its `endAt`.
    pub fires: Vec<Occurrence>,
}

impl FireWindow {
    /// Up to `n` (at most [`MAX_FIRES`]) boundaries of `info` at or after
    /// `from` (`None`: from the schedule's next boundary), through the
    /// core's spec evaluation under `config`'s options.
    pub fn new(
        info: &ScheduleInfo,
        config: &EngineConfig,
        from: Option<Timestamp>,
        n: usize,
    ) -> FireWindow {
        let opts = SpecOptions {
            tz: info.def.tz.clone(),
            dst: info.def.dst,
            min_interval_ms: config.min_interval_ms,
            horizon_years: config.horizon_years,
        };
        let start = from.or(info.next_nominal);
        let fires = match (Spec::parse(&info.def.spec, &opts), start) {
            (Ok(spec), Some(start)) => spec
                .preview(start.saturating_add_ms(-1), n.min(MAX_FIRES))
                .into_iter()
                .take_while(|o| info.def.end_at.is_none_or(|end| o.at < end))
                .collect(),
            // The engine accepted it under these options; nothing to list if not.
            _ => Vec::new(),
        };
        FireWindow {
            schedule: info.def.name.clone(),
            tz: info.def.tz.clone(),
            fires,
        }
    }
}
