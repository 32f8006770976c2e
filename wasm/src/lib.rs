//! chime-wasm: wasm-bindgen bindings of [`chime_core`] for JavaScript.
//!
//! A thin layer: every method converts its arguments (in [`convert`]), calls
//! the core and converts the result back. No scheduling decision is made
//! here. The JS package (`js/`) wraps these raw exports with `Date`
//! handling, `JSON.parse` of results and `ChimeError`; users never see the
//! raw JSON strings.
// Unsafe code only in the allocator (`alloc.rs`, where it is allowed).
#![deny(unsafe_code)]

#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
mod alloc;
mod convert;
mod packed;

use chime_core::{
    Command, DstPolicy, Engine, EngineConfig, JobId, Snapshot, Spec, SpecError, SpecOptions,
    Timestamp, journal,
};
use convert::{count, engine_error, from_json, ms, result, timestamp, to_json};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// The raw engine behind the JS `Engine` class.
#[wasm_bindgen(js_name = RawEngine)]
pub struct JsEngine {
    engine: Engine,
    /// Reused between drains so a steady stream of batches allocates once.
    batch: Vec<Command>,
    /// The last drain in packed form, until JS takes its numbers.
    packed: packed::Packed,
    /// What the restore that made this engine moved (`TzRuleChange[]`).
    tz_changes: Vec<chime_core::TzRuleChange>,
}

impl JsEngine {
    fn wrap(engine: Engine) -> JsEngine {
        JsEngine {
            engine,
            batch: Vec::new(),
            packed: packed::Packed::default(),
            tz_changes: Vec::new(),
        }
    }
}

#[wasm_bindgen(js_class = RawEngine)]
impl JsEngine {
    /// A new engine; `config` is `EngineConfig` JSON (`""` for defaults).
    #[wasm_bindgen(constructor)]
    pub fn new(config: &str) -> Result<JsEngine, JsValue> {
        let config: EngineConfig = if config.is_empty() {
            EngineConfig::default()
        } else {
            convert::decode("config", config)?
        };
        Ok(JsEngine::wrap(Engine::new(config)))
    }

    /// `Engine::handle` with `input` as `Input` JSON; returns `Reply` JSON.
    pub fn handle(&mut self, now: f64, input: &str) -> Result<String, JsValue> {
        let now = timestamp("now", now)?;
        let input: chime_core::Input = convert::decode("input", input)?;
        result(self.engine.handle(now, input))
    }

    /// Every pending command as one JSON array (the journal's and the
    /// golden traces' form; `drainPacked` is the fast path).
    #[wasm_bindgen(js_name = drainJson)]
    pub fn drain_json(&mut self) -> String {
        self.batch.clear();
        self.engine.drain_commands(&mut self.batch);
        to_json(&self.batch)
    }

    /// Packs up to `max` pending commands, oldest first (see `packed.rs`),
    /// and returns how many; `packedLayout` then says where they are.
    #[wasm_bindgen(js_name = drainPacked)]
    pub fn drain_packed(&mut self, max: u32) -> u32 {
        self.packed.clear();
        let mut n = 0;
        while n < max {
            let Some(cmd) = self.engine.poll_command() else {
                break;
            };
            self.packed.push(&cmd);
            n += 1;
        }
        n
    }

    /// Where the last `drainPacked` put its output in wasm memory: text
    /// address and length in bytes, numbers address and count. JS reads
    /// them in place (no copy) before its next call into wasm, which may
    /// move or grow the memory.
    #[wasm_bindgen(js_name = packedLayout)]
    pub fn packed_layout(&self) -> Vec<u32> {
        self.packed.layout()
    }

    /// `Engine::poll_timeout` in ms, `undefined` when nothing is pending.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        self.engine.poll_timeout().map(ms)
    }

    /// The engine clock in ms.
    #[wasm_bindgen(getter)]
    pub fn clock(&self) -> f64 {
        ms(self.engine.clock())
    }

    /// Whether the engine may fire now.
    #[wasm_bindgen(getter, js_name = isLeader)]
    pub fn is_leader(&self) -> bool {
        self.engine.is_leader()
    }

    /// Whether a graceful stop has begun (`stop`) and no `recover` has
    /// ended it: nothing fires meanwhile.
    #[wasm_bindgen(getter, js_name = isStopping)]
    pub fn is_stopping(&self) -> bool {
        self.engine.is_stopping()
    }

    /// `EngineConfig` JSON.
    #[wasm_bindgen(getter)]
    pub fn config(&self) -> String {
        to_json(self.engine.config())
    }

    /// `ScheduleInfo` JSON, `undefined` if unknown.
    pub fn schedule(&self, name: &str) -> Option<String> {
        self.engine.schedule(name).map(|s| to_json(&s))
    }

    /// Schedule names in order, as a JSON array.
    #[wasm_bindgen(js_name = scheduleNames)]
    pub fn schedule_names(&self) -> String {
        to_json(&self.engine.schedule_names().collect::<Vec<_>>())
    }

    /// Number of schedules.
    #[wasm_bindgen(getter, js_name = scheduleCount)]
    pub fn schedule_count(&self) -> u32 {
        saturate(self.engine.schedule_count())
    }

    /// `QueueStats` JSON, `undefined` if unknown.
    #[wasm_bindgen(js_name = queueStats)]
    pub fn queue_stats(&self, queue: &str) -> Option<String> {
        self.engine.queue_stats(queue).map(|s| to_json(&s))
    }

    /// Queue names in order, as a JSON array.
    #[wasm_bindgen(js_name = queueNames)]
    pub fn queue_names(&self) -> String {
        to_json(&self.engine.queue_names().collect::<Vec<_>>())
    }

    /// Up to `limit` dead letters (`JobInfo[]` JSON), oldest first.
    #[wasm_bindgen(js_name = deadLetters)]
    pub fn dead_letters(&self, queue: &str, limit: u32) -> String {
        to_json(&self.engine.dead_letters(queue, limit as usize))
    }

    /// `JobInfo` JSON, `undefined` if unknown or pruned.
    pub fn job(&self, id: f64) -> Option<String> {
        // Job ids are engine-issued integers; anything else names no job.
        let id = (id.fract() == 0.0 && id >= 0.0).then_some(id as u64)?;
        self.engine.job(JobId(id)).map(|j| to_json(&j))
    }

    /// Jobs not yet terminal.
    #[wasm_bindgen(getter, js_name = liveJobs)]
    pub fn live_jobs(&self) -> u32 {
        saturate(self.engine.live_jobs())
    }

    /// Commands waiting to be drained.
    #[wasm_bindgen(getter, js_name = pendingCommands)]
    pub fn pending_commands(&self) -> u32 {
        saturate(self.engine.pending_commands())
    }

    /// The canonical snapshot JSON (drain first: pending commands are not
    /// part of it).
    pub fn snapshot(&self) -> String {
        self.engine.snapshot().to_json()
    }

    /// An engine from snapshot JSON.
    pub fn restore(snapshot: &str) -> Result<JsEngine, JsValue> {
        let restored = Snapshot::from_json(snapshot)
            .and_then(|s| Engine::restore_with(s, chime_core::TzDatabase::bundled()))
            .map_err(|e| JsValue::from(engine_error(&e)))?;
        let mut js = JsEngine::wrap(restored.engine);
        js.tz_changes = restored.tz_changes;
        Ok(js)
    }

    /// The zoned boundaries the restore that made this engine moved to a
    /// new instant (the snapshot was computed with another tz database),
    /// as `TzRuleChange[]` JSON; `[]` otherwise.
    #[wasm_bindgen(js_name = restoredTzChanges)]
    pub fn restored_tz_changes(&self) -> String {
        to_json(&self.tz_changes)
    }

    /// Restores `snapshot` (JSON; `""` for a new default engine) and
    /// replays `journal` (JSON Lines) on it with `journal::replay`.
    pub fn replay(snapshot: &str, journal: &str) -> Result<Replayed, JsValue> {
        let snapshot = if snapshot.is_empty() {
            Engine::new(EngineConfig::default()).snapshot()
        } else {
            Snapshot::from_json(snapshot).map_err(|e| JsValue::from(engine_error(&e)))?
        };
        let entries = journal::read(journal).map_err(|e| {
            JsValue::from(convert::Thrown {
                code: e.code(),
                field: Some("journal"),
                message: e.to_string(),
            })
        })?;
        let out =
            journal::replay(snapshot, &entries).map_err(|e| JsValue::from(engine_error(&e)))?;
        let replies = out
            .replies
            .iter()
            .map(|r| match r {
                Ok(reply) => format!("{{\"ok\":{}}}", to_json(reply)),
                Err(e) => format!("{{\"error\":{}}}", engine_error(e).to_json()),
            })
            .collect::<Vec<_>>();
        Ok(Replayed {
            engine: Some(JsEngine::wrap(out.engine)),
            // Each command is already JSON: join, do not re-serialize.
            commands: format!("[{}]", out.commands.join(",")),
            replies: format!("[{}]", replies.join(",")),
        })
    }
}

/// The outcome of `RawEngine.replay`.
#[wasm_bindgen]
pub struct Replayed {
    engine: Option<JsEngine>,
    commands: String,
    replies: String,
}

#[wasm_bindgen]
impl Replayed {
    /// The engine after the last entry (can be taken once).
    #[wasm_bindgen(js_name = takeEngine)]
    pub fn take_engine(&mut self) -> Option<JsEngine> {
        self.engine.take()
    }

    /// Every command emitted, as a JSON array, in order.
    #[wasm_bindgen(getter)]
    pub fn commands(&self) -> String {
        self.commands.clone()
    }

    /// One `{"ok": reply}` or `{"error": {...}}` per entry, as a JSON array.
    #[wasm_bindgen(getter)]
    pub fn replies(&self) -> String {
        self.replies.clone()
    }
}

/// Options of `preview` and `validate`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SpecQuery {
    #[serde(default)]
    tz: Option<String>,
    /// Read by the core's compact decoder, which the rest of the package
    /// uses (same result; one decoder of `DstPolicy` in the .wasm).
    #[serde(default, deserialize_with = "decode_dst")]
    dst: DstPolicy,
    /// Occurrences strictly after this instant (`preview`, `validate`).
    #[serde(default)]
    from: Option<Timestamp>,
    /// How many (the core caps a preview at 10,000).
    #[serde(default = "default_count")]
    count: usize,
    #[serde(default)]
    min_interval_ms: Option<i64>,
    #[serde(default)]
    horizon_years: Option<u32>,
}

fn decode_dst<'de, D: serde::Deserializer<'de>>(d: D) -> Result<DstPolicy, D::Error> {
    <DstPolicy as chime_core::decode::Decode>::decode(d)
}

fn default_count() -> usize {
    10
}

impl SpecQuery {
    fn parse(spec: &str, opts: &str) -> Result<(Spec, SpecQuery), JsValue> {
        let q: SpecQuery = from_json("options", opts)?;
        let defaults = SpecOptions::default();
        let opts = SpecOptions {
            tz: q.tz.clone(),
            dst: q.dst,
            min_interval_ms: q.min_interval_ms.unwrap_or(defaults.min_interval_ms),
            horizon_years: q.horizon_years.unwrap_or(defaults.horizon_years),
        };
        let spec = Spec::parse(spec, &opts).map_err(|e| spec_error(&e))?;
        Ok((spec, q))
    }

    fn from(&self) -> Result<Timestamp, JsValue> {
        self.from
            .ok_or_else(|| convert::invalid("from", "required").into())
    }
}

fn spec_error(e: &SpecError) -> JsValue {
    convert::Thrown {
        code: e.code(),
        field: Some(e.field()),
        message: e.to_string(),
    }
    .into()
}

/// The next `count` occurrences of `spec` after `from`, with civil time,
/// offset and DST notes (`Occurrence[]` JSON). A spec with no occurrence
/// after `from` throws what `validate` throws (`spec_never_fires`, saying
/// so when an `@at` is in the past) instead of returning `[]`.
#[wasm_bindgen]
pub fn preview(spec: &str, opts: &str) -> Result<String, JsValue> {
    let (spec, q) = SpecQuery::parse(spec, opts)?;
    let from = q.from()?;
    spec.first_after(from).map_err(|e| spec_error(&e))?;
    Ok(to_json(&spec.preview(from, q.count)))
}

/// What `validate` reports about a valid spec.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpecSummary<'a> {
    zone: &'a str,
    fixed_time: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    every_ms: Option<i64>,
    next: Timestamp,
}

/// Parses `spec` as an upsert would and checks that it fires after `from`
/// within the horizon; throws the same errors an upsert would.
#[wasm_bindgen]
pub fn validate(spec: &str, opts: &str) -> Result<String, JsValue> {
    let (spec, q) = SpecQuery::parse(spec, opts)?;
    let next = spec.first_after(q.from()?).map_err(|e| spec_error(&e))?;
    Ok(to_json(&SpecSummary {
        zone: spec.zone_name(),
        fixed_time: spec.is_fixed_time(),
        every_ms: spec.every_ms(),
        next,
    }))
}

/// A parsed spec kept on the wasm side, for callers that ask for many
/// occurrences: the parse happens once, and `next` is one call per instant.
#[wasm_bindgen(js_name = RawSpec)]
pub struct JsSpec {
    spec: Spec,
}

#[wasm_bindgen(js_class = RawSpec)]
impl JsSpec {
    /// Parses `spec` under `opts` (`tz`, `dst`, `minIntervalMs`,
    /// `horizonYears` as JSON).
    #[wasm_bindgen(constructor)]
    pub fn new(spec: &str, opts: &str) -> Result<JsSpec, JsValue> {
        let (spec, _) = SpecQuery::parse(spec, opts)?;
        Ok(JsSpec { spec })
    }

    /// The first occurrence strictly after `after` (ms), or `undefined`.
    pub fn next(&self, after: f64) -> Result<Option<f64>, JsValue> {
        Ok(self.spec.next_after(timestamp("after", after)?).map(ms))
    }

    /// Up to `count` successive occurrences after `after`, as a
    /// `Float64Array` (one crossing for the whole run).
    #[wasm_bindgen(js_name = nextTimes)]
    pub fn next_times(&self, after: f64, count: u32) -> Result<Vec<f64>, JsValue> {
        let mut t = timestamp("after", after)?;
        let mut out = Vec::with_capacity(count.min(MAX_RUN) as usize);
        while out.len() < count.min(MAX_RUN) as usize
            && let Some(next) = self.spec.next_after(t)
        {
            out.push(ms(next));
            t = next;
        }
        Ok(out)
    }

    /// `Occurrence[]` JSON, as `preview`.
    pub fn preview(&self, after: f64, count: u32) -> Result<String, JsValue> {
        let after = timestamp("after", after)?;
        Ok(to_json(&self.spec.preview(after, count as usize)))
    }

    /// The zone the spec is evaluated in.
    #[wasm_bindgen(getter)]
    pub fn zone(&self) -> String {
        self.spec.zone_name().to_owned()
    }

    /// Whether it is a fixed-time cron spec (DST `auto` shifts and folds it).
    #[wasm_bindgen(getter, js_name = fixedTime)]
    pub fn fixed_time(&self) -> bool {
        self.spec.is_fixed_time()
    }
}

/// Most instants one `nextTimes` call returns: a bounded call, as the core
/// bounds a preview.
const MAX_RUN: u32 = 1_000_000;

/// The IANA tz database version bundled into this build, e.g. `2025b`.
#[wasm_bindgen(js_name = tzdbVersion)]
pub fn tzdb_version() -> String {
    chime_core::tzdb_version().to_owned()
}

/// `chime_core::host::snapshot_due`: whether the `Scheduler` snapshots
/// now, after `entries` journal lines, with the engine's next deadline
/// `slackMs` away (`undefined`: nothing pending) and the last snapshot's
/// cost `costMs`, which ended `sinceMs` ago (`undefined`: long ago).
#[wasm_bindgen(js_name = snapshotDue)]
pub fn snapshot_due(
    entries: f64,
    every: f64,
    slack_ms: Option<f64>,
    cost_ms: f64,
    since_ms: Option<f64>,
) -> bool {
    let (entries, every, cost_ms) = (count(entries), count(every), count(cost_ms));
    let slack_ms = slack_ms.map(|s| s as i64);
    let since_ms = since_ms.map_or(u64::MAX, count);
    chime_core::host::snapshot_due(entries, every, slack_ms, cost_ms, since_ms)
}

/// `chime_core::host::SNAPSHOT_EVERY`: the `Scheduler`'s default
/// `snapshotEvery`.
#[wasm_bindgen(js_name = snapshotEvery)]
pub fn snapshot_every() -> f64 {
    chime_core::host::SNAPSHOT_EVERY as f64
}

/// `chime_core::host::heartbeat_period_ms`: how often a job leased for
/// `leaseMs` is heartbeaten.
#[wasm_bindgen(js_name = heartbeatPeriodMs)]
pub fn heartbeat_period_ms(lease_ms: f64) -> f64 {
    chime_core::host::heartbeat_period_ms(lease_ms as i64) as f64
}

/// The wasm memory, for reading a packed drain in place.
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The fire reasons' wire names, in the order of their index in a packed
/// drain (JSON array).
#[wasm_bindgen(js_name = fireReasons)]
pub fn fire_reasons() -> String {
    packed::fire_reasons()
}

/// Counts over 2^32 cannot occur under the default limits; saturate rather
/// than wrap if a configured limit allows them.
fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
