//! The decoder against the derived impls (see `testkit.rs`): every
//! `Input` variant, journal lines (the golden traces' among them) and
//! engine configs. Snapshots are checked beside their type
//! (`engine/snapshot/decode_tests.rs`).

use super::input::INPUT_VARIANTS;
use super::testkit::{ALTS, all_same, same, structural_same, tokens};
use super::{Decode, from_str};
use crate::spec::{FoldPolicy, GapPolicy};
use crate::wire::config::EngineConfig;
use crate::wire::input::{FireOutcome, Input, JournalEntry};
use crate::wire::job::JobState;
use crate::wire::queue_config::QueueMode;
use crate::wire::schedule_def::{Origin, Overlap, ScheduleStatus};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;

/// Every variant of `Input`, in map form with all fields, with the
/// required ones only, in sequence form, plus shapes the derive
/// accepts or refuses in its own ways.
const INPUTS: &[&str] = &[
    r#""advance""#,
    r#"{"advance":null}"#,
    r#""recover""#,
    r#""stop""#,
    r#"{"stop":null}"#,
    r#"{"enqueueOutbox":{"queue":"__chime_outbox:mail","payload":{"to":"a"},"key":"k"}}"#,
    r#"{"enqueueOutbox":{"queue":"__chime_outbox:mail","bogus":1}}"#,
    r#"{"declareQueue":{"name":"q","mode":"external","leaseMs":5,"maxAttempts":2,"backoff":{"baseMs":1,"capMs":2},"deadLetter":false,"retention":{"completedMax":1,"completedMs":2},"dedupWindowMs":3}}"#,
    r#"{"upsertSchedule":{"name":"s","spec":"@every 1s","tz":"UTC","dst":{"gap":"skip","fold":"last"},"target":{"queue":"q","payload":{"a":[1,2.50]},"priority":-3,"maxAttempts":4,"headers":{"h":"v"}},"jitterMs":5,"startAt":1,"endAt":2,"maxFires":3,"paused":true,"overlap":"buffer_one","catchup":{"windowMs":1,"max":2},"origin":"api"}}"#,
    r#"{"removeSchedule":{"name":"s"}}"#,
    r#"{"removeSchedule":["s"]}"#,
    r#"{"pauseSchedule":{"name":"s","note":"why"}}"#,
    r#"{"pauseSchedule":{"note":null,"name":"s"}}"#,
    r#"{"pauseSchedule":["s"]}"#,
    r#"{"pauseSchedule":["s","n"]}"#,
    r#"{"resumeSchedule":{"name":"s","other":[1,{"x":2}]}}"#,
    r#"{"triggerSchedule":{"name":"s","overlap":"cancel_previous"}}"#,
    r#"{"triggerSchedule":["s"]}"#,
    r#"{"backfill":{"name":"s","from":1,"to":2,"overlap":"allow"}}"#,
    r#"{"backfill":["s",1,2]}"#,
    r#"{"backfill":["s",1]}"#,
    r#"{"enqueue":{"queue":"q","payload":{"n":1},"key":"k","runAt":5,"delayMs":6,"priority":7,"maxAttempts":8,"headers":{"a":"b","c":"d"}}}"#,
    r#"{"enqueue":{"queue":"q"}}"#,
    r#"{"enqueue":["q",{"n":1},"k"]}"#,
    r#"{"enqueue":["q",{"n":1},"k",5,6,7,8,{},9]}"#,
    r#"{"claim":{"queue":"q","worker":"w","max":10,"leaseMs":500}}"#,
    r#"{"claim":{"queue":"q","worker":"w","max":10}}"#,
    r#"{"claim":["q","w",10]}"#,
    r#"{"claim":["q","w"]}"#,
    r#"{"heartbeat":{"job":1,"token":2,"leaseMs":3}}"#,
    r#"{"heartbeat":[1,2]}"#,
    r#"{"complete":{"job":1,"token":2}}"#,
    r#"{"complete":{"job":1,"job":1,"token":2}}"#,
    r#"{"complete":[1]}"#,
    r#"{"fail":{"job":1,"token":2,"error":"boom","retryAt":9}}"#,
    r#"{"fail":{"job":1,"token":2}}"#,
    r#"{"cancelJob":{"job":1}}"#,
    r#"{"cancelJob":{}}"#,
    r#"{"redrive":{"queue":"q","job":3}}"#,
    r#"{"redrive":{"queue":"q"}}"#,
    r#"{"purgeDead":{"queue":"q","before":4}}"#,
    r#"{"purgeDead":["q",null]}"#,
    r#"{"fireSettled":{"fire":"s@1000#m2","outcome":"succeeded"}}"#,
    r#"{"fireSettled":{"fire":"s","outcome":"failed"}}"#,
    r#"{"fireSettled":{"fire":"s@1000","outcome":"failed","job":{"id":7,"state":"dead","attempts":3,"startedAt":5,"finishedAt":9,"error":"x"}}}"#,
    r#"{"fireSettled":{"fire":"s@1000","outcome":"failed","job":{"id":7,"state":"completed"}}}"#,
    r#"{"leadership":{"epoch":3,"validUntil":99}}"#,
    r#"{"leadership":null}"#,
    r#"{"leadership":[3,99]}"#,
    r#"{"acquireLease":{"name":"l","owner":"o","ttlMs":5}}"#,
    r#"{"renewLease":{"name":"l","token":1,"ttlMs":5}}"#,
    r#"{"releaseLease":{"name":"l","token":1}}"#,
    r#"{"releaseLease":{"name":"l","token":1},"advance":null}"#,
    r#"{"nope":{}}"#,
    r#"{"claim":{"queue":"q","worker":"w","max":10} }  "#,
    "\n {\n\"claim\" :\n{ \"queue\" : \"q\" ,\"worker\":\"w\",\n\"max\":1}\n}\n",
];

#[test]
fn inputs_decode_as_derived() {
    all_same::<Input>(INPUTS);
}

#[test]
fn journal_entries_decode_as_derived() {
    let entries: Vec<String> = INPUTS
        .iter()
        .map(|i| format!(r#"{{"now":1000,"input":{i}}}"#))
        .chain([
            r#"{"input":"advance","now":5}"#.to_owned(),
            r#"[5,"advance"]"#.to_owned(),
            r#"[5]"#.to_owned(),
            r#"{"now":5,"input":"advance","x":1}"#.to_owned(),
            r#"{"now":-5,"input":"advance"}"#.to_owned(),
        ])
        .collect();
    let docs: Vec<&str> = entries.iter().map(String::as_str).collect();
    all_same::<JournalEntry>(&docs);
}

#[test]
fn golden_journal_lines_decode_as_derived() {
    for file in [
        include_str!("../../../../tests/golden/fencing.jsonl"),
        include_str!("../../../../tests/golden/retry_dead_letter.jsonl"),
        include_str!("../../../../tests/golden/leadership_loss.jsonl"),
        include_str!("../../../../tests/golden/overlap_buffer_one.jsonl"),
    ] {
        for line in file.lines().filter(|l| l.contains("\"input\"")) {
            // The trace lines carry reply and commands too: keep the
            // entry's two fields.
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let entry = serde_json::json!({"now": v["now"], "input": v["input"]});
            let text = serde_json::to_string(&entry).unwrap();
            same::<JournalEntry>(&text);
            for t in tokens(&text) {
                for alt in ALTS {
                    same::<JournalEntry>(&format!("{}{alt}{}", &text[..t.0], &text[t.1..]));
                }
            }
        }
    }
}

#[test]
fn configs_decode_as_derived() {
    all_same::<EngineConfig>(&[
        "{}",
        r#"{"seed":1,"standalone":false,"minIntervalMs":5,"horizonYears":2,"limits":{"payloadBytes":1,"nameChars":2,"schedules":3,"queues":4,"claimBatch":5,"catchupFires":6,"backfillFires":7,"firesPerAdvance":8,"liveJobs":9,"dedupKeys":10,"deadLettersPerQueue":11,"completedPerQueue":12,"pendingCommands":13,"textBytes":14,"headers":15,"pauseChanges":16}}"#,
        r#"{"limits":{"queues":4}}"#,
        r#"[1,true]"#,
        r#"[1,true,5,2,[1,2,3]]"#,
        r#"{"seed":1,"seed":2}"#,
        r#"{"limits":{}, "x":1}"#,
    ]);
}

#[test]
fn structural_changes_decode_as_derived() {
    for input in INPUTS {
        structural_same::<Input>(input);
    }
}

/// Adding a variant to a decoded enum must fail to compile here, until
/// the decoder's tables and these tests have it: the exhaustive matches
/// below list every variant, and each one must round-trip through the
/// decoder as serde writes it.
#[test]
fn tables_cover_every_variant() {
    fn input(i: &Input) -> &'static str {
        match i {
            Input::Advance => "advance",
            Input::DeclareQueue(_) => "declareQueue",
            Input::UpsertSchedule(_) => "upsertSchedule",
            Input::RemoveSchedule { .. } => "removeSchedule",
            Input::PauseSchedule { .. } => "pauseSchedule",
            Input::ResumeSchedule { .. } => "resumeSchedule",
            Input::TriggerSchedule { .. } => "triggerSchedule",
            Input::Backfill { .. } => "backfill",
            Input::Enqueue(_) => "enqueue",
            Input::Claim { .. } => "claim",
            Input::Heartbeat { .. } => "heartbeat",
            Input::Complete { .. } => "complete",
            Input::Fail { .. } => "fail",
            Input::CancelJob { .. } => "cancelJob",
            Input::Redrive { .. } => "redrive",
            Input::PurgeDead { .. } => "purgeDead",
            Input::FireSettled { .. } => "fireSettled",
            Input::Leadership(_) => "leadership",
            Input::AcquireLease { .. } => "acquireLease",
            Input::RenewLease { .. } => "renewLease",
            Input::ReleaseLease { .. } => "releaseLease",
            Input::Recover => "recover",
            Input::Stop => "stop",
            Input::EnqueueOutbox(_) => "enqueueOutbox",
        }
    }
    let mut seen = Vec::new();
    for text in INPUTS {
        if let Ok(i) = serde_json::from_str::<Input>(text) {
            assert_eq!(
                from_str::<Input>(&serde_json::to_string(&i).unwrap()).unwrap(),
                i
            );
            seen.push(input(&i));
        }
    }
    for name in INPUT_VARIANTS {
        assert!(seen.contains(name), "no sample of {name} in INPUTS");
    }

    fn round_trip<T: Decode + Serialize + DeserializeOwned + PartialEq + fmt::Debug>(all: &[T]) {
        for v in all {
            let text = serde_json::to_string(v).unwrap();
            assert_eq!(from_str::<T>(&text).unwrap(), *v, "{text}");
        }
    }
    macro_rules! all {
        ($ty:ident: $($variant:ident),+) => {{
            let all = [$($ty::$variant),+];
            for v in all {
                match v {
                    $($ty::$variant)|+ => {}
                }
            }
            round_trip(&all);
        }};
    }
    all!(Overlap: Skip, Allow, BufferOne, CancelPrevious);
    all!(Origin: Declared, Api);
    all!(QueueMode: Local, External);
    all!(ScheduleStatus: Active, Paused, Completed);
    all!(JobState: Scheduled, Available, Claimed, Completed, Dead, Dropped, Cancelled);
    all!(FireOutcome: Succeeded, Failed);
    all!(GapPolicy: Shift, Skip);
    all!(FoldPolicy: First, Last, Both);
}
