//! `chime replay`: checks that a journal reproduces its recorded outputs.
//!
//! A *trace* is JSON Lines in the format of the golden fixtures
//! (`tests/golden/*.jsonl`, see `chime-tests`' `golden.rs`): an optional
//! first line with `config` (a fresh engine) or `snapshot` (the state to
//! start from), then one line per input, `{"now", "input"}`, optionally
//! with what it produced: `reply` or `error` (`{"code", "message"}`) and
//! `commands`. Recorded outputs are compared as strings with the engine's
//! canonical JSON, so any difference fails. A plain journal (no recorded
//! outputs) is a trace too.
//!
//! The redb store records inputs only, so for a data directory replay
//! checks determinism instead: snapshot + journal replayed twice give the
//! same commands and the same final snapshot byte for byte, the final
//! snapshot round-trips, and every engine invariant holds.
//! [`Trace::record`] turns a data directory into a trace with its outputs, which
//! a later build can replay to prove it still behaves the same.

use chime_core::{Engine, EngineConfig, Error, JournalEntry, Snapshot, Timestamp, journal};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// One trace line.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    snapshot: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    now: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commands: Option<Vec<Box<RawValue>>>,
}

/// What one input is recorded to have produced.
#[derive(Clone, Debug, Default)]
struct Recorded {
    /// 1-based line in the trace.
    line: usize,
    reply: Option<String>,
    error: Option<String>,
    commands: Option<Vec<String>>,
}

/// A parsed trace: where to start, the inputs, and what each produced.
#[derive(Debug)]
pub struct Trace {
    base: Snapshot,
    entries: Vec<JournalEntry>,
    recorded: Vec<Recorded>,
}

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace does not parse.
    #[error("line {line}: {message}")]
    Invalid {
        /// 1-based.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The snapshot does not restore.
    #[error("the snapshot does not restore: {0}")]
    Restore(Error),
    /// An output differs from the recorded one.
    #[error("line {line}: {what} differs\n  recorded: {recorded}\n  replayed: {replayed}")]
    Mismatch {
        /// 1-based trace line.
        line: usize,
        /// `reply`, `error`, `command 2`, `number of commands`, ….
        what: String,
        /// What the trace says.
        recorded: String,
        /// What the engine did.
        replayed: String,
    },
    /// Two replays of the same input differ, or the state does not round-trip.
    #[error("not deterministic: {0}")]
    Nondeterministic(String),
}

/// What a successful replay covered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Inputs replayed.
    pub entries: usize,
    /// Inputs the engine refused (part of the history, not a failure).
    pub rejected: usize,
    /// Commands produced.
    pub commands: usize,
    /// Inputs whose recorded outputs were compared.
    pub verified: usize,
    /// The engine clock at the start.
    pub start_clock: Timestamp,
    /// The engine clock after the last input.
    pub final_clock: Timestamp,
    /// Schedules at the end.
    pub schedules: usize,
    /// Live jobs at the end.
    pub live_jobs: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ok: {} entries ({} rejected), {} commands, {} entries checked against recorded outputs; \
             clock {} -> {}; {} schedules, {} live jobs",
            self.entries,
            self.rejected,
            self.commands,
            self.verified,
            self.start_clock,
            self.final_clock,
            self.schedules,
            self.live_jobs
        )?;
        if self.entries == 0 {
            f.write_str(" (nothing to replay: the journal is empty since the last snapshot)")?;
        }
        Ok(())
    }
}

impl Trace {
    /// A trace of `entries` from `base` with nothing recorded.
    pub fn new(base: Snapshot, entries: Vec<JournalEntry>) -> Trace {
        let recorded = (1..=entries.len())
            .map(|line| Recorded {
                line,
                ..Recorded::default()
            })
            .collect();
        Trace {
            base,
            entries,
            recorded,
        }
    }

    /// Parses a trace (blank lines ignored).
    pub fn parse(text: &str) -> Result<Trace, ReplayError> {
        let mut base = None;
        let mut entries = Vec::new();
        let mut recorded = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let line = i + 1;
            let invalid = |message: String| ReplayError::Invalid { line, message };
            if l.trim().is_empty() {
                continue;
            }
            let parsed: Line = serde_json::from_str(l).map_err(|e| invalid(e.to_string()))?;
            if parsed.config.is_some() || parsed.snapshot.is_some() {
                if base.is_some() || !entries.is_empty() {
                    return Err(invalid("config/snapshot only on the first line".into()));
                }
                base = Some(match (&parsed.config, &parsed.snapshot) {
                    (Some(c), None) => {
                        let c: EngineConfig =
                            serde_json::from_str(c.get()).map_err(|e| invalid(e.to_string()))?;
                        Engine::new(c).snapshot()
                    }
                    (None, Some(s)) => {
                        Snapshot::from_json(s.get()).map_err(|e| invalid(e.to_string()))?
                    }
                    _ => return Err(invalid("both config and snapshot".into())),
                });
            }
            let (now, input) = match (parsed.now, &parsed.input) {
                (Some(now), Some(input)) => (now, input),
                (None, None) => continue,
                _ => return Err(invalid("an input line needs both now and input".into())),
            };
            let input = serde_json::from_str(input.get()).map_err(|e| invalid(e.to_string()))?;
            entries.push(JournalEntry { now, input });
            recorded.push(Recorded {
                line,
                reply: parsed.reply.map(|r| r.get().to_owned()),
                error: parsed.error.map(|r| r.get().to_owned()),
                commands: parsed
                    .commands
                    .map(|c| c.iter().map(|r| r.get().to_owned()).collect()),
            });
        }
        Ok(Trace {
            base: base.unwrap_or_else(|| Engine::new(EngineConfig::default()).snapshot()),
            entries,
            recorded,
        })
    }

    /// Replays the trace: every recorded output must match, and a second
    /// replay must give the same commands and final state.
    pub fn verify(&self) -> Result<Summary, ReplayError> {
        let mut engine = Engine::restore(self.base.clone()).map_err(ReplayError::Restore)?;
        let start_clock = engine.clock();
        let (mut commands, mut rejected, mut verified) = (0, 0, 0);
        let mut stream = Vec::new();
        for (e, rec) in self.entries.iter().zip(&self.recorded) {
            let result = engine.handle(e.now, e.input.clone());
            let out = journal::drain_json(&mut engine);
            rejected += usize::from(result.is_err());
            commands += out.len();
            if compare(rec, &result, &out)? {
                verified += 1;
            }
            stream.extend(out);
        }
        // Determinism: the core's own replay, from the same start, again.
        let again =
            journal::replay(self.base.clone(), &self.entries).map_err(ReplayError::Restore)?;
        if let Some(i) = (0..stream.len().max(again.commands.len()))
            .find(|&i| stream.get(i) != again.commands.get(i))
        {
            return Err(ReplayError::Nondeterministic(format!(
                "command {} differs between two replays",
                i + 1
            )));
        }
        let snapshot = engine.snapshot().to_json();
        if again.engine.snapshot().to_json() != snapshot {
            return Err(ReplayError::Nondeterministic(
                "two replays end in different states".into(),
            ));
        }
        let restored = Snapshot::from_json(&snapshot)
            .and_then(Engine::restore)
            .map_err(ReplayError::Restore)?;
        if restored.snapshot().to_json() != snapshot {
            return Err(ReplayError::Nondeterministic(
                "the final snapshot does not round-trip".into(),
            ));
        }
        engine.check_invariants();
        Ok(Summary {
            entries: self.entries.len(),
            rejected,
            commands,
            verified,
            start_clock,
            final_clock: engine.clock(),
            schedules: engine.schedule_count(),
            live_jobs: engine.live_jobs(),
        })
    }

    /// The trace with every output recorded (a `snapshot` first line, then
    /// one line per input with its reply or error and its commands).
    pub fn record(&self) -> Result<String, ReplayError> {
        let mut engine = Engine::restore(self.base.clone()).map_err(ReplayError::Restore)?;
        let raw = |s: String| RawValue::from_string(s).expect("serde_json output is JSON");
        let mut text = serde_json::to_string(&Line {
            snapshot: Some(raw(self.base.to_json())),
            ..Line::default()
        })
        .expect("serializes");
        text.push('\n');
        for e in &self.entries {
            let result = engine.handle(e.now, e.input.clone());
            let (reply, error) = render(&result);
            let line = Line {
                now: Some(e.now),
                input: Some(raw(serde_json::to_string(&e.input).expect("serializes"))),
                reply: reply.map(raw),
                error: error.map(raw),
                commands: Some(
                    journal::drain_json(&mut engine)
                        .into_iter()
                        .map(raw)
                        .collect(),
                ),
                ..Line::default()
            };
            text.push_str(&serde_json::to_string(&line).expect("serializes"));
            text.push('\n');
        }
        Ok(text)
    }
}

/// A reply or error as a trace records it.
fn render(result: &Result<chime_core::Reply, Error>) -> (Option<String>, Option<String>) {
    match result {
        Ok(r) => (Some(serde_json::to_string(r).expect("serializes")), None),
        Err(e) => (
            None,
            Some(serde_json::json!({"code": e.code(), "message": e.to_string()}).to_string()),
        ),
    }
}

/// Compares one input's outputs with the recorded ones; `Ok(true)` if
/// anything was recorded (and matched).
fn compare(
    rec: &Recorded,
    result: &Result<chime_core::Reply, Error>,
    out: &[String],
) -> Result<bool, ReplayError> {
    let mismatch = |what: String, recorded: String, replayed: String| ReplayError::Mismatch {
        line: rec.line,
        what,
        recorded,
        replayed,
    };
    let (reply, error) = render(result);
    let none = || "(none)".to_owned();
    if rec.reply.is_some() || rec.error.is_some() {
        if rec.reply != reply {
            return Err(mismatch(
                "reply".into(),
                rec.reply.clone().unwrap_or_else(none),
                reply.unwrap_or_else(none),
            ));
        }
        if let Some(recorded) = &rec.error {
            let same = serde_json::from_str::<serde_json::Value>(recorded).ok()
                == error.as_deref().and_then(|e| serde_json::from_str(e).ok());
            if !same {
                return Err(mismatch(
                    "error".into(),
                    recorded.clone(),
                    error.unwrap_or_else(none),
                ));
            }
        }
    }
    if let Some(cmds) = &rec.commands {
        for (i, (r, o)) in cmds.iter().zip(out).enumerate() {
            if r != o {
                return Err(mismatch(format!("command {}", i + 1), r.clone(), o.clone()));
            }
        }
        if cmds.len() != out.len() {
            return Err(mismatch(
                "number of commands".into(),
                cmds.len().to_string(),
                out.len().to_string(),
            ));
        }
    }
    Ok(rec.reply.is_some() || rec.error.is_some() || rec.commands.is_some())
}
