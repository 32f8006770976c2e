//! Reloading a running instance under tokio's paused clock: a valid setup
//! changes which schedules fire (added, changed, removed); an invalid one
//! is refused as a whole and the old schedules keep firing.

use chime_core::{QueueConfig, ScheduleDef, Timestamp};
use chime_native::ReloadError;
use chime_native::Subject;
use chime_native::driver::{Clock, TokioClock};
use chime_native::store::MemoryStore;
use chime_native::worker::{Handler, Job, PoolConfig};
use chime_native::{Setup, start};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// 2026-01-01T00:00Z.
const T0: i64 = 1_767_225_600_000;

type Log = Arc<Mutex<Vec<(String, i64)>>>;

/// Records (schedule, seconds after T0) of each job.
fn recording(clock: Arc<TokioClock>, log: Log) -> Handler {
    Arc::new(move |job: Job| {
        let (clock, log) = (clock.clone(), log.clone());
        Box::pin(async move {
            let schedule = job.fire.map(|f| f.schedule.to_string()).unwrap_or_default();
            let at = (clock.now().as_millis() - T0) / 1000;
            log.lock().unwrap().push((schedule, at));
            Ok(())
        })
    })
}

fn every(name: &str, spec: &str) -> ScheduleDef {
    serde_json::from_value(serde_json::json!({
        "name": name, "spec": spec, "target": {"queue": "q"}
    }))
    .unwrap()
}

fn setup(schedules: Vec<ScheduleDef>, handler: Handler) -> Setup {
    Setup {
        queues: vec![QueueConfig::new("q")],
        schedules,
        pools: vec![(PoolConfig::new("q"), handler)],
        ..Setup::default()
    }
}

fn fired(log: &Log, from_s: i64, to_s: i64) -> Vec<(String, i64)> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|(_, t)| (from_s..to_s).contains(t))
        .cloned()
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_valid_reload_changes_what_fires_and_an_invalid_one_changes_nothing() {
    let clock = Arc::new(TokioClock::new(Timestamp::from_millis(T0).unwrap()));
    let log = Log::default();
    let handler = recording(clock.clone(), log.clone());
    let first = vec![every("a", "@every 10s"), every("b", "@every 10s")];
    let mut running = start(
        setup(first, handler.clone()),
        Box::new(MemoryStore::default()),
        clock.clone(),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(25_000)).await;
    assert_eq!(
        fired(&log, 0, 25),
        vec![
            ("a".into(), 10),
            ("b".into(), 10),
            ("a".into(), 20),
            ("b".into(), 20)
        ]
    );

    // At 25 s: keep a, change b to every 15 s, remove nothing, add c.
    let second = vec![
        every("a", "@every 10s"),
        every("b", "@every 15s"),
        every("c", "@every 20s"),
    ];
    let report = running
        .reload(setup(second.clone(), handler.clone()))
        .await
        .unwrap();
    assert_eq!(report.added, vec!["c".to_owned()]);
    assert_eq!(report.changed, vec!["b".to_owned()]);
    assert!(report.removed.is_empty());
    assert!(report.queues_declared.is_empty(), "{report:?}");
    assert!(report.pools_not_applied.is_empty(), "{report:?}");
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    let mut window = fired(&log, 25, 45);
    window.sort();
    assert_eq!(
        window,
        vec![
            ("a".into(), 30),
            ("a".into(), 40),
            ("b".into(), 30),
            ("c".into(), 40)
        ]
    );

    // At 45 s: an invalid setup (a bad spec in the second schedule and a
    // bad queue name) is refused whole: a is not removed, d not added.
    let bad = vec![every("d", "@every 5s"), every("e", "61 * * * *")];
    let mut bad_setup = setup(bad, handler.clone());
    bad_setup.queues.push(QueueConfig::new("no spaces allowed"));
    match running.reload(bad_setup).await {
        Err(ReloadError::Invalid(r)) => {
            let got: Vec<(Subject, &str)> = r.iter().map(|r| (r.subject, r.error.code())).collect();
            assert_eq!(
                got,
                vec![
                    (Subject::Queue(1), "invalid_name"),
                    (Subject::Schedule(1), "invalid_spec")
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    let mut window = fired(&log, 45, 65);
    window.sort();
    assert_eq!(
        window,
        vec![
            ("a".into(), 50),
            ("a".into(), 60),
            ("b".into(), 45),
            ("b".into(), 60),
            ("c".into(), 60)
        ]
    );

    // At 65 s: remove b and c; the same setup again is a no-op.
    let third = vec![every("a", "@every 10s")];
    let report = running
        .reload(setup(third.clone(), handler.clone()))
        .await
        .unwrap();
    assert_eq!(report.removed, vec!["b".to_owned(), "c".to_owned()]);
    let again = running
        .reload(setup(third.clone(), handler.clone()))
        .await
        .unwrap();
    assert!(again.is_empty(), "{again:?}");
    // A changed pool is reported, not applied (the running pool goes on).
    let mut bigger = setup(third, handler);
    bigger.pools[0].0.concurrency = 4;
    let report = running.reload(bigger).await.unwrap();
    assert_eq!(report.pools_not_applied, vec!["q".to_owned()]);
    assert!(report.added.is_empty() && report.changed.is_empty() && report.removed.is_empty());
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    assert_eq!(
        fired(&log, 65, 85),
        vec![("a".into(), 70), ("a".into(), 80)]
    );
    let engine = running.shutdown().await.unwrap();
    assert_eq!(
        engine.schedule_names().collect::<Vec<_>>(),
        vec!["a"],
        "removed schedules are gone from the engine"
    );
}
