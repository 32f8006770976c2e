//! `chime inspect --data`: from a data directory left by a crash, the
//! schedules with their next fires, queue depths by state and dead
//! letters, as text and as the JSON of `Inspection` (the struct the HTTP
//! API serves); a directory without data is refused and not created.

use chime_core::{EnqueueRequest, Input, Payload, QueueConfig, Timestamp};
use chime_native::http::Inspection;
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, Job, PoolConfig};
use chime_native::{Setup, driver::TokioClock, start};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// 2026-01-01T00:00Z.
const T0: i64 = 1_767_225_600_000;

fn inspect(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .arg("inspect")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// 35 virtual seconds: `tick` fires at 10, 20, 30 s into queue `q`, whose
/// worker always fails (one attempt: dead letters); one job waits for a
/// far `run_at` in `q`, one sits in `idle` (no worker). Then a crash.
fn crash_left_data_dir(dir: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let clock = Arc::new(TokioClock::new(Timestamp::from_millis(T0).unwrap()));
        let failing: Handler = Arc::new(|_: Job| Box::pin(async { Err("boom".to_owned()) }));
        let def = serde_json::from_value(serde_json::json!({
            "name": "tick", "spec": "@every 10s", "target": {"queue": "q"}
        }))
        .unwrap();
        let mut q = QueueConfig::new("q");
        q.max_attempts = 1;
        let setup = Setup {
            queues: vec![q, QueueConfig::new("idle")],
            schedules: vec![def],
            pools: vec![(PoolConfig::new("q"), failing)],
            ..Setup::default()
        };
        let store = RedbStore::open(dir).unwrap();
        let running = start(setup, Box::new(store), clock).await.unwrap();
        let mut later = EnqueueRequest::new("q", Payload::null());
        later.delay_ms = Some(3_600_000);
        let idle = EnqueueRequest::new("idle", Payload::null());
        for req in [later, idle] {
            running
                .handle()
                .call(Input::Enqueue(req))
                .await
                .unwrap()
                .unwrap();
        }
        tokio::time::sleep(Duration::from_secs(35)).await;
        running.abort().await;
    });
}

#[test]
fn schedules_depths_and_dead_letters_of_a_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    crash_left_data_dir(&data);
    let data = data.to_str().unwrap();

    let (ok, out, err) = inspect(&["--json", "--data", data]);
    assert!(ok, "{err}");
    let v: Inspection = serde_json::from_str(&out).unwrap();
    assert_eq!(v.clock.as_millis(), T0 + 30_000, "the last recorded input");
    assert_eq!(v.schedules.len(), 1);
    let tick = &v.schedules[0];
    assert_eq!(tick.def.name, "tick");
    assert_eq!(tick.fires, 3);
    assert_eq!(tick.next_due_at.unwrap().as_millis(), T0 + 40_000);
    let depths: Vec<(&str, u64, u64, u64, u64)> = v
        .queues
        .iter()
        .map(|q| {
            let s = &q.stats;
            (
                s.queue.as_str(),
                s.scheduled,
                s.available,
                s.claimed,
                s.dead,
            )
        })
        .collect();
    assert_eq!(depths, vec![("idle", 0, 1, 0, 0), ("q", 1, 0, 0, 3)]);
    let q = &v.queues[1];
    let dead: Vec<(i64, Option<&str>)> = q
        .dead_letters
        .iter()
        .map(|j| {
            let fire = j.fire.as_ref().unwrap().nominal.as_millis() - T0;
            (fire, j.last_error.as_deref())
        })
        .collect();
    assert_eq!(
        dead,
        vec![
            (10_000, Some("boom")),
            (20_000, Some("boom")),
            (30_000, Some("boom"))
        ]
    );

    let (ok, out, _) = inspect(&["--json", "--dead", "1", "--data", data]);
    assert!(ok);
    let v: Inspection = serde_json::from_str(&out).unwrap();
    assert_eq!(v.queues[1].dead_letters.len(), 1);

    let (ok, text, _) = inspect(&["--data", data]);
    assert!(ok);
    assert!(text.starts_with("as of 2026-01-01T00:00:30.000Z"), "{text}");
    assert!(
        text.contains("  tick  active  next 2026-01-01T00:00:40.000Z  spec \"@every 10s\""),
        "{text}"
    );
    assert!(
        text.contains("  q  scheduled 1  available 0  claimed 0  completed 0  dead 3"),
        "{text}"
    );
    assert!(text.contains("dead letters (3 shown):"), "{text}");
    assert!(
        text.contains("fire tick@1767225610000  error \"boom\""),
        "{text}"
    );

    // With the daemon's config, what each schedule runs: the worker
    // command of its queue.
    let config = dir.path().join("chime.toml");
    std::fs::write(
        &config,
        "[[queue]]\nname = \"q\"\n\n[[worker]]\nqueue = \"q\"\n\
         command = [\"sh\", \"-c\", \"exit 1\"]\n",
    )
    .unwrap();
    let (ok, text, _) = inspect(&["--data", data, "--config", config.to_str().unwrap()]);
    assert!(ok);
    assert!(
        text.contains("commands (1):\n  tick  sh -c \"exit 1\""),
        "{text}"
    );

    let missing = dir.path().join("nothing-here");
    let (ok, _, err) = inspect(&["--data", missing.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("holds no chime data"), "{err}");
    assert!(
        !missing.exists(),
        "inspect must not create a data directory"
    );
}
