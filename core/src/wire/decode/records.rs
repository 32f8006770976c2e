//! The wire's definitions and configs, read in inputs and snapshots.

use super::record_decoder;
use crate::spec::{DstPolicy, FoldPolicy, GapPolicy};
use crate::time::Timestamp;
use crate::wire::command::{FireReason, SkipReason};
use crate::wire::config::{EngineConfig, Limits};
use crate::wire::ids::{FireId, JobId};
use crate::wire::job::JobState;
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::{Backoff, QueueConfig, QueueMode, QueueTotals, Retention};
use crate::wire::run::{JobEnd, RunOutcome, RunRecord};
use crate::wire::schedule_def::{Catchup, Origin, Overlap, ScheduleDef, Target};

record_decoder! {
    ScheduleDefB => ScheduleDef, "ScheduleDef", "13 elements", deny_unknown: true;
    name: String, "name", req;
    spec: String, "spec", req;
    tz: Option<String>, "tz", def;
    dst: DstPolicy, "dst", def;
    target: Target, "target", req;
    jitter_ms: i64, "jitterMs", def;
    start_at: Option<Timestamp>, "startAt", def;
    end_at: Option<Timestamp>, "endAt", def;
    max_fires: Option<u64>, "maxFires", def;
    paused: bool, "paused", def;
    overlap: Overlap, "overlap", def;
    catchup: Catchup, "catchup", def;
    origin: Origin, "origin", def;
}

record_decoder! {
    DstPolicyB => DstPolicy, "DstPolicy", "2 elements", deny_unknown: true;
    gap: Option<GapPolicy>, "gap", def;
    fold: Option<FoldPolicy>, "fold", def;
}

record_decoder! {
    TargetB => Target, "Target", "5 elements", deny_unknown: true;
    queue: String, "queue", req;
    payload: Payload, "payload", def;
    priority: i32, "priority", def;
    max_attempts: Option<u32>, "maxAttempts", def;
    headers: Headers, "headers", def;
}

record_decoder! {
    CatchupB => Catchup, "Catchup", "2 elements", deny_unknown: true;
    window_ms: i64, "windowMs", or(Catchup::default().window_ms);
    max: u32, "max", or(Catchup::default().max);
}

record_decoder! {
    QueueConfigB => QueueConfig, "QueueConfig", "9 elements", deny_unknown: true;
    name: String, "name", req;
    mode: QueueMode, "mode", def;
    lease_ms: i64, "leaseMs", or(QueueConfig::new("").lease_ms);
    max_attempts: u32, "maxAttempts", or(QueueConfig::new("").max_attempts);
    backoff: Backoff, "backoff", def;
    dead_letter: bool, "deadLetter", or(true);
    retention: Retention, "retention", def;
    dedup_window_ms: i64, "dedupWindowMs", or(QueueConfig::new("").dedup_window_ms);
    max_interruptions: u32, "maxInterruptions", or(QueueConfig::new("").max_interruptions);
}

record_decoder! {
    BackoffB => Backoff, "Backoff", "2 elements", deny_unknown: true;
    base_ms: i64, "baseMs", or(Backoff::default().base_ms);
    cap_ms: i64, "capMs", or(Backoff::default().cap_ms);
}

record_decoder! {
    RetentionB => Retention, "Retention", "2 elements", deny_unknown: true;
    completed_max: u32, "completedMax", or(Retention::default().completed_max);
    completed_ms: i64, "completedMs", or(Retention::default().completed_ms);
}

record_decoder! {
    EngineConfigB => EngineConfig, "EngineConfig", "5 elements", deny_unknown: true;
    seed: u64, "seed", or(EngineConfig::default().seed);
    standalone: bool, "standalone", or(EngineConfig::default().standalone);
    min_interval_ms: i64, "minIntervalMs", or(EngineConfig::default().min_interval_ms);
    horizon_years: u32, "horizonYears", or(EngineConfig::default().horizon_years);
    limits: Limits, "limits", or(EngineConfig::default().limits);
}

record_decoder! {
    LimitsB => Limits, "Limits", "17 elements", deny_unknown: true;
    payload_bytes: usize, "payloadBytes", or(Limits::default().payload_bytes);
    name_chars: usize, "nameChars", or(Limits::default().name_chars);
    schedules: usize, "schedules", or(Limits::default().schedules);
    queues: usize, "queues", or(Limits::default().queues);
    claim_batch: u32, "claimBatch", or(Limits::default().claim_batch);
    catchup_fires: u32, "catchupFires", or(Limits::default().catchup_fires);
    backfill_fires: u32, "backfillFires", or(Limits::default().backfill_fires);
    fires_per_advance: u32, "firesPerAdvance", or(Limits::default().fires_per_advance);
    live_jobs: usize, "liveJobs", or(Limits::default().live_jobs);
    dedup_keys: usize, "dedupKeys", or(Limits::default().dedup_keys);
    dead_letters_per_queue: usize, "deadLettersPerQueue", or(Limits::default().dead_letters_per_queue);
    completed_per_queue: usize, "completedPerQueue", or(Limits::default().completed_per_queue);
    pending_commands: usize, "pendingCommands", or(Limits::default().pending_commands);
    text_bytes: usize, "textBytes", or(Limits::default().text_bytes);
    headers: usize, "headers", or(Limits::default().headers);
    pause_changes: usize, "pauseChanges", or(Limits::default().pause_changes);
    runs_per_schedule: usize, "runsPerSchedule", or(Limits::default().runs_per_schedule);
}

// A queue's totals (a wire type), as snapshots keep them.
record_decoder! {
    QueueTotalsB => QueueTotals, "QueueTotals", "8 elements", deny_unknown: false;
    enqueued: u64, "enqueued", req;
    completed: u64, "completed", req;
    retried: u64, "retried", req;
    dead: u64, "dead", req;
    dropped: u64, "dropped", req;
    expired: u64, "expired", req;
    cancelled: u64, "cancelled", req;
    interrupted: u64, "interrupted", def;
}

// A schedule's run history (snapshots) and a job's end (`FireSettled`).
record_decoder! {
    RunRecordB => RunRecord, "RunRecord", "14 elements", deny_unknown: true;
    fire: Option<FireId>, "fire", def;
    nominal: Timestamp, "nominal", req;
    last_nominal: Option<Timestamp>, "lastNominal", def;
    reason: Option<FireReason>, "reason", def;
    skip_reason: Option<SkipReason>, "skipReason", def;
    at: Timestamp, "at", req;
    count: u64, "count", req;
    outcome: RunOutcome, "outcome", req;
    job: Option<JobId>, "job", def;
    attempts: u32, "attempts", def;
    started_at: Option<Timestamp>, "startedAt", def;
    finished_at: Option<Timestamp>, "finishedAt", def;
    duration_ms: Option<i64>, "durationMs", def;
    error: Option<String>, "error", def;
}

record_decoder! {
    JobEndB => JobEnd, "JobEnd", "6 elements", deny_unknown: true;
    id: JobId, "id", req;
    state: JobState, "state", req;
    attempts: u32, "attempts", def;
    started_at: Option<Timestamp>, "startedAt", def;
    finished_at: Option<Timestamp>, "finishedAt", def;
    error: Option<String>, "error", def;
}
