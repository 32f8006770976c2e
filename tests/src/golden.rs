//! Golden traces: JSON Lines fixtures of inputs and the exact replies and
//! commands the engine must produce for them.
//!
//! Format (one JSON object per line, fields in this order):
//!
//! ```text
//! {"note":"what this fixture pins down","config":{...EngineConfig...}}   first line (optional)
//! {"note":"optional","now":<ms>,"input":<Input>,"reply":<Reply>,"commands":[<Command>,...]}
//! {"now":<ms>,"input":<Input>,"error":{"code":"lease_lost","message":"..."},"commands":[...]}
//! ```
//!
//! Each input line is handled by one fresh engine, in order; `reply` (or
//! `error`) and `commands` (everything drained after the call, in order)
//! are compared with the serialized engine output as **strings** — the
//! fixture keeps the engine's canonical JSON verbatim (payloads included),
//! so any change in field order, number formatting or content fails.
//!
//! Regenerate with `CHIME_BLESS=1 cargo test -p chime-tests --test
//! engine_golden`: inputs (and notes) are kept, outputs are rewritten. A
//! fixture is a specification: read the diff before committing it.

use crate::checker::Checker;
use chime_core::{Engine, EngineConfig, Input, Snapshot};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// One fixture line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    /// Free text for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Engine configuration (first line only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Box<RawValue>>,
    /// The host clock for `input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<i64>,
    /// The input, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Box<RawValue>>,
    /// The reply on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Box<RawValue>>,
    /// `{"code", "message"}` on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Box<RawValue>>,
    /// Every command drained after the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<Box<RawValue>>>,
}

fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("serde_json output is JSON")
}

/// The result of running a fixture's inputs.
pub struct Run {
    /// The fixture re-rendered with the engine's actual outputs.
    pub lines: Vec<String>,
    /// The engine after the last input.
    pub engine: Engine,
    /// What recorded and checked every call (journal and commands too).
    pub checker: Checker,
}

/// Parses a fixture (blank lines ignored).
pub fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("fixture line {}: {e}", i + 1))
        })
        .collect()
}

/// Runs every input of `lines` through a fresh engine and the shared
/// [`Checker`] (so a fixture is also checked against every invariant of the
/// model test and the simulation), and renders the fixture with the actual
/// outputs.
pub fn run(lines: Vec<Line>) -> Run {
    let mut config = EngineConfig::default();
    let mut harness: Option<(Engine, Checker)> = None;
    let mut out = Vec::new();
    for mut line in lines {
        if let Some(c) = &line.config {
            assert!(harness.is_none(), "config must come first");
            config = serde_json::from_str(c.get()).expect("a valid EngineConfig");
        }
        if let Some(input) = &line.input {
            let (e, chk) = harness.get_or_insert_with(|| {
                let e = Engine::new(config.clone());
                let chk = Checker::new(&e);
                (e, chk)
            });
            let input: Input = serde_json::from_str(input.get())
                .unwrap_or_else(|err| panic!("bad input {}: {err}", input.get()));
            let now = line.now.expect("an input has a now");
            let before = chk.commands.len();
            let (reply, error) = match chk.handle(e, now, input).0 {
                Ok(r) => (Some(raw(serde_json::to_string(&r).unwrap())), None),
                Err(err) => {
                    let v = serde_json::json!({"code": err.code(), "message": err.to_string()});
                    (None, Some(raw(v.to_string())))
                }
            };
            line.reply = reply;
            line.error = error;
            line.commands = Some(chk.commands[before..].iter().cloned().map(raw).collect());
        }
        out.push(serde_json::to_string(&line).unwrap());
    }
    let (engine, checker) = harness.unwrap_or_else(|| {
        let e = Engine::new(config);
        let chk = Checker::new(&e);
        (e, chk)
    });
    Run {
        lines: out,
        engine,
        checker,
    }
}

/// Replays fixture `path`, checks that the journal replays to the same
/// commands and that the final snapshot round-trips byte for byte, then
/// compares the fixture line by line with the engine's output (or, only
/// once every check passed, rewrites it when `CHIME_BLESS=1`).
pub fn check_file(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let run = run(parse(&text));
    // The same journal replays to the same bytes, and the snapshot round-trips.
    run.checker.replay_from_start(&run.engine);
    let snap = run.engine.snapshot().to_json();
    let back = Engine::restore(Snapshot::from_json(&snap).unwrap()).unwrap();
    assert_eq!(
        back.snapshot().to_json(),
        snap,
        "{path:?}: snapshot round trip"
    );
    if std::env::var_os("CHIME_BLESS").is_some_and(|v| v == "1") {
        let mut new = run.lines.join("\n");
        new.push('\n');
        std::fs::write(path, new).unwrap();
        return;
    }
    let expected: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(expected.len(), run.lines.len());
    for (i, (want, got)) in expected.iter().zip(&run.lines).enumerate() {
        if *want != got.as_str() {
            let w: Line = serde_json::from_str(want).unwrap();
            let g: Line = serde_json::from_str(got).unwrap();
            let show = |l: &Line| {
                let mut v: Vec<String> = Vec::new();
                v.extend(l.reply.iter().map(|r| format!("reply {}", r.get())));
                v.extend(l.error.iter().map(|r| format!("error {}", r.get())));
                for c in l.commands.iter().flatten() {
                    v.push(c.get().to_owned());
                }
                v
            };
            let (w, g) = (show(&w), show(&g));
            let first = w.iter().zip(&g).position(|(a, b)| a != b);
            panic!(
                "{}: line {} differs (expected {} outputs, got {}); first difference at output \
                 {first:?}:\n  expected: {:?}\n  actual:   {:?}\n(CHIME_BLESS=1 regenerates; \
                 review the diff)",
                path.display(),
                i + 1,
                w.len(),
                g.len(),
                first.and_then(|k| w.get(k)),
                first.and_then(|k| g.get(k)),
            );
        }
    }
}
