//! Engine configuration and limits.

use serde::{Deserialize, Serialize};

/// How an engine is set up; part of its snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct EngineConfig {
    /// Seed for every deterministic "random" choice (jitter, retry backoff).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub seed: u64,
    /// `true`: always leader (epoch 0). `false`: fire only while a
    /// `Leadership` grant is valid.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub standalone: bool,
    /// Smallest accepted `@every` cadence.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub min_interval_ms: i64,
    /// How far ahead a spec must have an occurrence.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub horizon_years: u32,
    /// Bounds on everything the engine holds or does per call.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub limits: Limits,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            seed: 0,
            standalone: true,
            min_interval_ms: 1000,
            horizon_years: 100,
            limits: Limits::default(),
        }
    }
}

/// Bounds; every one is enforced with a typed error or a reported drop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Limits {
    /// Largest payload (JSON text bytes).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub payload_bytes: usize,
    /// Longest schedule, queue, lease, worker name.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub name_chars: usize,
    /// Most schedules.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub schedules: usize,
    /// Most queues, declared or implicit (`limit_exceeded{what: "queues"}`
    /// beyond), so the per-queue bounds add up to a total. Defaulted when
    /// absent, so snapshots written before it existed still load.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub queues: usize,
    /// Most jobs one `Claim` may take.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub claim_batch: u32,
    /// Most catch-up fires per schedule per advance (DESIGN default 64).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub catchup_fires: u32,
    /// Most fires one `Backfill` may produce.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub backfill_fires: u32,
    /// Most fires per advance; the rest go on the next one (`poll_timeout` = now).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub fires_per_advance: u32,
    /// Most live (non-terminal) jobs.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub live_jobs: usize,
    /// Most remembered dedup keys.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub dedup_keys: usize,
    /// Most dead letters kept per queue (oldest beyond are dropped, reported).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub dead_letters_per_queue: usize,
    /// Most completed jobs kept per queue (retention default).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub completed_per_queue: usize,
    /// Most queued commands before `handle` refuses work (`Backpressure`) until drained.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub pending_commands: usize,
    /// Longest error text / note kept (longer is truncated on a char boundary).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub text_bytes: usize,
    /// Most headers per job.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub headers: usize,
    /// Most pause/resume changes one schedule may hold while boundaries
    /// before them are still unprocessed (a leadership gap): each decides
    /// the fate of the boundaries after it.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub pause_changes: usize,
    /// Runs kept per schedule in its history (`ScheduleInfo::runs`, the
    /// newest); 0 keeps none. Left out of the JSON at its default, so
    /// snapshots written before it existed read back byte for byte.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    #[serde(skip_serializing_if = "is_default_runs")]
    pub runs_per_schedule: usize,
}

/// Default of [`Limits::runs_per_schedule`].
pub(crate) const RUNS_PER_SCHEDULE: usize = 50;

fn is_default_runs(n: &usize) -> bool {
    *n == RUNS_PER_SCHEDULE
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            payload_bytes: 1 << 20,
            name_chars: 128,
            schedules: 1_000_000,
            queues: 10_000,
            claim_batch: 1_000,
            catchup_fires: 64,
            backfill_fires: 10_000,
            fires_per_advance: 100_000,
            live_jobs: 10_000_000,
            dedup_keys: 1_000_000,
            dead_letters_per_queue: 100_000,
            completed_per_queue: 1_000,
            pending_commands: 1_000_000,
            text_bytes: 4_096,
            headers: 64,
            pause_changes: 1_000,
            runs_per_schedule: RUNS_PER_SCHEDULE,
        }
    }
}

/// Cuts `text` to at most `max_bytes`, on a char boundary.
pub(crate) fn truncate(mut text: String, max_bytes: usize) -> String {
    let end = truncate_text(&text, max_bytes).len();
    text.truncate(end);
    text
}

/// Cuts `text` to at most `max_bytes` on a character boundary, as the
/// engine cuts a `Fail`'s error (and other stored texts) to
/// `limits.textBytes`: the one rule for every backend that stores them.
#[must_use]
pub fn truncate_text(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundary() {
        assert_eq!(truncate("héllo".into(), 2), "h");
        assert_eq!(truncate("héllo".into(), 3), "hé");
        assert_eq!(truncate("abc".into(), 10), "abc");
        assert_eq!(truncate("abc".into(), 0), "");
    }
}
