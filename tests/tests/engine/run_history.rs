//! Per-schedule run history (`ScheduleInfo::runs`, newest first): built by
//! the engine from the fires, skips, claims and job ends it handles, in
//! virtual time, one test per outcome; it survives snapshot/restore byte
//! for byte, replays from the journal, and stays within
//! `limits.runsPerSchedule`. The Postgres counterpart (the same expected
//! histories through the job tables) is `host-native/tests/pg/
//! schedule_conformance.rs`.

use chime_core::{
    EngineConfig, FireId, FireOutcome, Input, JobEnd, JobId, JobState, Limits, QueueConfig,
    QueueMode, Snapshot,
};
use chime_tests::scenario::*;
use serde_json::{Value, json};

const S: i64 = 1_000_000_000_000;

/// A standalone engine with schedule `s` (`@every 10s`, overlap `skip`)
/// into queue `q` (`max_attempts` attempts).
fn setup(max_attempts: u32, config: EngineConfig) -> Harness {
    let mut h = Harness::new(config);
    let mut q = QueueConfig::new("q");
    q.max_attempts = max_attempts;
    h.ok(S, Input::DeclareQueue(q));
    h.ok(S, Input::UpsertSchedule(def("s", "@every 10s", "q")));
    h
}

/// The history as JSON (the shape the API and the JS package show).
fn runs(h: &Harness) -> Value {
    serde_json::to_value(h.engine.schedule("s").unwrap().runs).unwrap()
}

/// Ends the test: the history replays from the journal and survives a
/// restart byte for byte.
fn replay_and_restart(h: &mut Harness) {
    let before = runs(h);
    h.check_replay();
    h.restart();
    assert_eq!(runs(h), before, "the history is restored");
}

fn fire(nominal: i64) -> String {
    format!("s@{nominal}")
}

#[test]
fn completed() {
    let mut h = setup(5, EngineConfig::default());
    h.advance(S + 10_000);
    let c = h.claim_one(S + 10_100, "q");
    assert_eq!(
        runs(&h),
        json!([{
            "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
            "at": S + 10_000, "count": 1, "outcome": "pending", "job": c.job.0,
            "attempts": 1, "startedAt": S + 10_100
        }])
    );
    h.ok(
        S + 10_350,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    assert_eq!(
        runs(&h),
        json!([{
            "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
            "at": S + 10_000, "count": 1, "outcome": "completed", "job": c.job.0,
            "attempts": 1, "startedAt": S + 10_100, "finishedAt": S + 10_350,
            "durationMs": 250
        }])
    );
    replay_and_restart(&mut h);
}

#[test]
fn retried_then_completed() {
    let mut h = setup(5, EngineConfig::default());
    h.advance(S + 10_000);
    let c = h.claim_one(S + 10_000, "q");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "boom".into(),
        retry_at: Some(t(S + 12_000)),
    };
    h.ok(S + 10_500, fail);
    assert_eq!(
        runs(&h)[0]["outcome"],
        "pending",
        "a retry is still pending"
    );
    let c2 = h.claim_one(S + 12_000, "q");
    assert_eq!(c2.attempt, 2);
    h.ok(
        S + 12_040,
        Input::Complete {
            job: c2.job,
            token: c2.token,
        },
    );
    assert_eq!(
        runs(&h),
        json!([{
            "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
            "at": S + 10_000, "count": 1, "outcome": "completed", "job": c.job.0,
            "attempts": 2, "startedAt": S + 12_000, "finishedAt": S + 12_040,
            "durationMs": 40, "error": "boom"
        }])
    );
    replay_and_restart(&mut h);
}

#[test]
fn dead() {
    let mut h = setup(1, EngineConfig::default());
    h.advance(S + 10_000);
    let c = h.claim_one(S + 10_000, "q");
    let fail = Input::Fail {
        job: c.job,
        token: c.token,
        error: "boom".into(),
        retry_at: None,
    };
    h.ok(S + 13_000, fail);
    assert_eq!(
        runs(&h),
        json!([{
            "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
            "at": S + 10_000, "count": 1, "outcome": "dead", "job": c.job.0,
            "attempts": 1, "startedAt": S + 10_000, "finishedAt": S + 13_000,
            "durationMs": 3_000, "error": "boom"
        }])
    );
    replay_and_restart(&mut h);
}

#[test]
fn cancelled() {
    let mut h = setup(5, EngineConfig::default());
    h.advance(S + 10_000);
    let job = JobId(1);
    assert_eq!(
        h.engine.job(job).unwrap().fire.unwrap().to_string(),
        fire(S + 10_000)
    );
    h.ok(S + 11_000, Input::CancelJob { job });
    assert_eq!(
        runs(&h),
        json!([{
            "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
            "at": S + 10_000, "count": 1, "outcome": "cancelled", "job": 1,
            "finishedAt": S + 11_000
        }])
    );
    replay_and_restart(&mut h);
}

#[test]
fn skipped_by_overlap_merged_into_one_run() {
    let mut h = setup(5, EngineConfig::default());
    h.advance(S + 10_000);
    let c = h.claim_one(S + 10_000, "q");
    // In flight: the next two boundaries are skipped, one advance each.
    h.advance(S + 20_000);
    h.advance(S + 30_000);
    h.ok(
        S + 35_000,
        Input::Complete {
            job: c.job,
            token: c.token,
        },
    );
    h.advance(S + 40_000);
    assert_eq!(
        runs(&h),
        json!([
            {
                "fire": fire(S + 40_000), "nominal": S + 40_000, "reason": "scheduled",
                "at": S + 40_000, "count": 1, "outcome": "pending", "job": 2
            },
            {
                "nominal": S + 20_000, "lastNominal": S + 30_000, "skipReason": "overlap",
                "at": S + 30_000, "count": 2, "outcome": "skipped"
            },
            {
                "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
                "at": S + 10_000, "count": 1, "outcome": "completed", "job": 1,
                "attempts": 1, "startedAt": S + 10_000, "finishedAt": S + 35_000,
                "durationMs": 25_000
            }
        ])
    );
    replay_and_restart(&mut h);
}

#[test]
fn skipped_by_pause() {
    let mut h = setup(5, EngineConfig::default());
    let pause = Input::PauseSchedule {
        name: "s".into(),
        note: None,
    };
    h.ok(S + 5_000, pause);
    h.advance(S + 20_000);
    h.advance(S + 35_000);
    h.ok(S + 36_000, Input::ResumeSchedule { name: "s".into() });
    h.advance(S + 40_000);
    assert_eq!(
        runs(&h),
        json!([
            {
                "fire": fire(S + 40_000), "nominal": S + 40_000, "reason": "scheduled",
                "at": S + 40_000, "count": 1, "outcome": "pending", "job": 1
            },
            {
                "nominal": S + 10_000, "lastNominal": S + 30_000, "skipReason": "paused",
                "at": S + 35_000, "count": 3, "outcome": "skipped"
            }
        ])
    );
    replay_and_restart(&mut h);
}

#[test]
fn skipped_by_catch_up() {
    let mut def = def("s", "@every 10s", "q");
    def.catchup.max = 4;
    let mut h = Harness::standalone();
    h.ok(S, Input::UpsertSchedule(def));
    // Ten boundaries pass at once (downtime): the cap keeps the four most
    // recent, and `skip` collapses those to the last one, which is then
    // on time (core's reason `scheduled`: no due boundary is left behind it).
    h.advance(S + 100_500);
    assert_eq!(
        runs(&h),
        json!([
            {
                "fire": fire(S + 100_000), "nominal": S + 100_000, "reason": "scheduled",
                "at": S + 100_500, "count": 1, "outcome": "pending", "job": 1
            },
            {
                "nominal": S + 70_000, "lastNominal": S + 90_000, "skipReason": "superseded",
                "at": S + 100_500, "count": 3, "outcome": "skipped"
            },
            {
                "nominal": S + 10_000, "lastNominal": S + 60_000, "skipReason": "catchup_cap",
                "at": S + 100_500, "count": 6, "outcome": "skipped"
            }
        ])
    );
    replay_and_restart(&mut h);
}

#[test]
fn manual_and_external_fires_with_the_hosts_job_detail() {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("ext");
    q.mode = QueueMode::External;
    q.lease_ms = 5_000;
    h.ok(S, Input::DeclareQueue(q));
    h.ok(S, Input::UpsertSchedule(def("s", "@every 10s", "ext")));
    h.advance(S + 10_000);
    // A Postgres replica's settlement: the job row's detail.
    let end = JobEnd {
        id: JobId(77),
        state: JobState::Dead,
        attempts: 3,
        started_at: Some(t(S + 10_100)),
        finished_at: Some(t(S + 10_500)),
        error: Some("no route".into()),
    };
    let settled = Input::FireSettled {
        fire: fire(S + 10_000).parse::<FireId>().unwrap(),
        outcome: FireOutcome::Failed,
        job: Some(end),
    };
    h.ok(S + 10_600, settled);
    let trigger = Input::TriggerSchedule {
        name: "s".into(),
        overlap: None,
    };
    h.ok(S + 11_000, trigger);
    // The manual fire is never settled: its queue's lease runs out.
    h.advance(S + 16_000);
    assert_eq!(
        runs(&h),
        json!([
            {
                "fire": format!("s@{}#m1", S + 11_000), "nominal": S + 11_000,
                "reason": "manual", "at": S + 11_000, "count": 1, "outcome": "unsettled",
                "finishedAt": S + 16_000
            },
            {
                "fire": fire(S + 10_000), "nominal": S + 10_000, "reason": "scheduled",
                "at": S + 10_000, "count": 1, "outcome": "dead", "job": 77, "attempts": 3,
                "startedAt": S + 10_100, "finishedAt": S + 10_500, "durationMs": 400,
                "error": "no route"
            }
        ])
    );
    replay_and_restart(&mut h);
}

#[test]
fn the_history_stays_within_its_bound_and_round_trips() {
    let config = EngineConfig {
        limits: Limits {
            runs_per_schedule: 5,
            ..Limits::default()
        },
        ..EngineConfig::default()
    };
    let mut h = setup(5, config);
    for k in 1..=12 {
        let now = S + k * 10_000;
        h.advance(now);
        let c = h.claim_one(now + 1, "q");
        let done = Input::Complete {
            job: c.job,
            token: c.token,
        };
        h.ok(now + 5, done);
        assert!(runs(&h).as_array().unwrap().len() <= 5);
        if k % 4 == 0 {
            h.restart();
        }
    }
    let got = runs(&h);
    let nominals: Vec<i64> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["nominal"].as_i64().unwrap())
        .collect();
    let newest: Vec<i64> = (8..=12).rev().map(|k| S + k * 10_000).collect();
    assert_eq!(nominals, newest, "the newest five, newest first");
    assert!(
        got.as_array()
            .unwrap()
            .iter()
            .all(|r| r["outcome"] == "completed")
    );
    // The snapshot holds the bound in its config and the runs oldest first.
    let snap: Value = serde_json::from_str(&h.engine.snapshot().to_json()).unwrap();
    assert_eq!(snap["config"]["limits"]["runsPerSchedule"], 5);
    let kept = snap["schedules"][0]["runs"].as_array().unwrap();
    assert_eq!(kept.len(), 5);
    assert_eq!(kept[0]["nominal"], S + 80_000);
    replay_and_restart(&mut h);
}

#[test]
fn no_history_with_a_bound_of_zero() {
    let config = EngineConfig {
        limits: Limits {
            runs_per_schedule: 0,
            ..Limits::default()
        },
        ..EngineConfig::default()
    };
    let mut h = setup(5, config);
    h.advance(S + 10_000);
    h.advance(S + 20_000);
    assert_eq!(runs(&h), json!([]));
    let snap = h.engine.snapshot().to_json();
    assert!(!snap.contains("\"runs\""), "{snap}");
    replay_and_restart(&mut h);
}

#[test]
fn a_snapshot_without_history_restores_byte_for_byte() {
    let mut h = setup(5, EngineConfig::default());
    h.advance(S + 10_000);
    let json = h.engine.snapshot().to_json();
    let snap: Value = serde_json::from_str(&json).unwrap();
    assert!(snap["schedules"][0]["runs"].is_array());
    assert!(
        snap["config"]["limits"].get("runsPerSchedule").is_none(),
        "the default bound is left out"
    );
    // As written before the history existed: the text without `runs`.
    let start = json.find(",\"runs\":[").expect("runs in the snapshot");
    let mut depth = 0;
    let mut end = start;
    for (i, ch) in json[start..].char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    end = start + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let old = format!("{}{}", &json[..start], &json[end..]);
    assert!(!old.contains("\"runs\""));
    let engine = chime_core::Engine::restore(Snapshot::from_json(&old).unwrap()).unwrap();
    assert_eq!(engine.snapshot().to_json(), old);
    assert_eq!(engine.config().limits.runs_per_schedule, 50);
    assert!(engine.schedule("s").unwrap().runs.is_empty());
}
