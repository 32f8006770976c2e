//! The journal: one [`JournalEntry`] (`{"now": <ms>, "input": {...}}`) per
//! line (JSON Lines), and [`replay`], which runs entries on an engine
//! restored from a snapshot and returns every command it emitted,
//! serialized — the byte-for-byte record that tests and `chime replay`
//! compare.

use crate::engine::Engine;
use crate::engine::snapshot::Snapshot;
use crate::wire::error::Error;
use crate::wire::input::JournalEntry;
use crate::wire::reply::Reply;
// The npm package reads journals with the smaller decoder (same results).
#[cfg(feature = "compact-decode")]
use crate::wire::decode::from_str as parse;
#[cfg(not(feature = "compact-decode"))]
use serde_json::from_str as parse;

/// A journal line that is not a valid entry.
#[derive(Debug, thiserror::Error)]
#[error("invalid_journal: line {line}: {message}")]
pub struct JournalError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl JournalError {
    /// Stable machine-readable code: `"invalid_journal"`.
    pub fn code(&self) -> &'static str {
        "invalid_journal"
    }
}

/// One entry as a JSON line (without the newline).
pub fn encode(entry: &JournalEntry) -> String {
    serde_json::to_string(entry).expect("journal entries serialize")
}

/// Entries as JSON Lines (each line ends with `\n`).
pub fn write(entries: &[JournalEntry]) -> String {
    let mut text = String::new();
    for e in entries {
        text.push_str(&encode(e));
        text.push('\n');
    }
    text
}

/// Parses JSON Lines; blank lines are ignored.
pub fn read(text: &str) -> Result<Vec<JournalEntry>, JournalError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            parse(l).map_err(|e| JournalError {
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// The outcome of [`replay`].
#[derive(Debug)]
pub struct Replayed {
    /// The engine after the last entry.
    pub engine: Engine,
    /// Every command, serialized as JSON, in emission order.
    pub commands: Vec<String>,
    /// The reply (or error) of each entry.
    pub replies: Vec<Result<Reply, Error>>,
}

/// Restores `snapshot` and handles `entries` in order, draining and
/// serializing the commands after each. A rejected input is part of the
/// history (its reply is the error) and does not stop the replay.
pub fn replay(snapshot: Snapshot, entries: &[JournalEntry]) -> Result<Replayed, Error> {
    let mut engine = Engine::restore(snapshot)?;
    let mut commands = Vec::new();
    let mut replies = Vec::with_capacity(entries.len());
    for e in entries {
        replies.push(engine.handle(e.now, e.input.clone()));
        commands.extend(drain_json(&mut engine));
    }
    Ok(Replayed {
        engine,
        commands,
        replies,
    })
}

/// Drains every pending command of `engine` as JSON.
pub fn drain_json(engine: &mut Engine) -> Vec<String> {
    std::iter::from_fn(|| engine.poll_command())
        .map(|c| serde_json::to_string(&c).expect("commands serialize"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;
    use crate::wire::input::Input;

    #[test]
    fn lines_round_trip() {
        let entries = vec![
            JournalEntry {
                now: Timestamp::from_millis(5).unwrap(),
                input: Input::Advance,
            },
            JournalEntry {
                now: Timestamp::from_millis(6).unwrap(),
                input: Input::remove_schedule("x"),
            },
        ];
        let text = write(&entries);
        assert_eq!(text.lines().count(), 2);
        assert_eq!(read(&text).unwrap(), entries);
        let err = read("{\"now\":1,\"input\":\"advance\"}\n\nnope").unwrap_err();
        assert_eq!(err.line, 3);
        assert_eq!(err.code(), "invalid_journal");
        assert!(err.to_string().starts_with("invalid_journal: line 3: "));
    }
}
