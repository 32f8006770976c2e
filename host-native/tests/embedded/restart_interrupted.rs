//! A restart on the data directory (a real redb file), under tokio's
//! paused clock (field report, issue 21, items 2–4):
//! - after a crash, the job the dead process had claimed runs again at
//!   once (the driver's first input is `Recover`), under the same attempt
//!   number, so a crontab queue (`maxAttempts: 1`) does not dead-letter
//!   it and an `overlap: skip` schedule fires again as soon as it is done
//!   (it used to skip every boundary until the old lease ran out);
//! - a graceful stop fires nothing from its first moment (`Stop`), lets the
//!   running job finish within the grace period, and a job cut off by the
//!   grace period is interrupted, not failed, at the next start.

use chime_core::{JobState, QueueConfig, ScheduleDef, Timestamp};
use chime_native::driver::{Clock, EngineGauges, TokioClock};
use chime_native::store::RedbStore;
use chime_native::worker::{Handler, Job, PoolConfig};
use chime_native::{Running, Setup, start};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// 2026-01-01T00:00Z.
const T0: i64 = 1_767_225_600_000;

/// Each run: (job id, attempt, ms after T0).
type Log = Arc<Mutex<Vec<(u64, u32, i64)>>>;

/// Records each run; a run sleeps `long` while `slow` is set, else
/// returns at once.
fn handler(clock: Arc<TokioClock>, log: Log, slow: Arc<AtomicBool>, long: Duration) -> Handler {
    Arc::new(move |job: Job| {
        let (clock, log, slow) = (clock.clone(), log.clone(), slow.clone());
        Box::pin(async move {
            let at = clock.now().as_millis() - T0;
            log.lock().unwrap().push((job.id.0, job.attempt, at));
            if slow.load(Ordering::SeqCst) {
                tokio::time::sleep(long).await;
            }
            Ok(())
        })
    })
}

fn setup(overlap: &str, grace: Duration, h: Handler) -> Setup {
    // A crontab queue: one attempt, the default 60 s lease.
    let mut q = QueueConfig::new("cron");
    q.max_attempts = 1;
    let def: ScheduleDef = serde_json::from_str(&format!(
        r#"{{"name": "tick", "spec": "@every 1s", "overlap": "{overlap}",
            "target": {{"queue": "cron"}}}}"#
    ))
    .unwrap();
    let mut pool = PoolConfig::new("cron");
    pool.grace = grace;
    Setup {
        queues: vec![q],
        schedules: vec![def],
        pools: vec![(pool, h)],
        ..Setup::default()
    }
}

async fn run_on(dir: &Path, setup: Setup, clock: Arc<TokioClock>) -> Running {
    let store = RedbStore::open(dir).unwrap();
    start(setup, Box::new(store), clock).await.unwrap()
}

fn runs_of(log: &Log, job: u64) -> Vec<(u32, i64)> {
    let log = log.lock().unwrap();
    log.iter()
        .filter(|r| r.0 == job)
        .map(|r| (r.1, r.2))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn after_a_crash_the_claimed_job_runs_again_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(TokioClock::new(Timestamp::from_millis(T0).unwrap()));
    let (log, slow) = (Log::default(), Arc::new(AtomicBool::new(true)));
    let h = || {
        handler(
            clock.clone(),
            log.clone(),
            slow.clone(),
            Duration::from_secs(3_600),
        )
    };
    let running = run_on(
        dir.path(),
        setup("skip", Duration::from_secs(10), h()),
        clock.clone(),
    )
    .await;
    // The 1 s fire starts a long job; the crash comes 20 s in (its lease,
    // heartbeaten, would hold for another 40 s or more).
    tokio::time::sleep(Duration::from_millis(20_500)).await;
    running.abort().await;
    let first = log.lock().unwrap()[0].0;
    assert_eq!(runs_of(&log, first), [(1, 1_000)]);
    slow.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let running = run_on(
        dir.path(),
        setup("skip", Duration::from_secs(10), h()),
        clock.clone(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    let metrics = running.handle().metrics().render(&EngineGauges::default());
    assert!(
        metrics.contains(r#"chime_jobs_interrupted_total{queue="cron"} 1"#),
        "{metrics}"
    );
    let engine = running.shutdown().await.unwrap();
    // Run again at the restart (21.5 s), same attempt number: the
    // interruption used no attempt of the single one a crontab job has.
    let runs = runs_of(&log, first);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[1].0, 1);
    assert!(runs[1].1 <= 21_600, "{runs:?}");
    let info = engine.job(chime_core::JobId(first)).unwrap();
    assert_eq!(info.state, JobState::Completed);
    let totals = engine.queue_stats("cron").unwrap().totals;
    assert_eq!((totals.interrupted, totals.dead, totals.expired), (1, 0, 0));
    // And the schedule fires again at once: the boundaries after the
    // restart (22 s, 23 s, 24 s) each ran a new job.
    let later: Vec<i64> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.0 != first)
        .map(|r| r.2)
        .collect();
    assert!(later.len() >= 3, "{later:?}");
}

#[tokio::test(start_paused = true)]
async fn a_graceful_stop_fires_nothing_and_a_job_cut_off_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(TokioClock::new(Timestamp::from_millis(T0).unwrap()));
    let (log, slow) = (Log::default(), Arc::new(AtomicBool::new(true)));
    let h = || {
        handler(
            clock.clone(),
            log.clone(),
            slow.clone(),
            Duration::from_secs(5),
        )
    };
    let running = run_on(
        dir.path(),
        setup("allow", Duration::from_secs(2), h()),
        clock.clone(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // The stop begins at 1.5 s with the 1 s job running (5 s of work, a
    // 2 s grace period): nothing fires during the grace period.
    let engine = running.shutdown().await.unwrap();
    assert_eq!(
        engine.schedule("tick").unwrap().fires,
        1,
        "no fire after the stop began"
    );
    assert!(engine.is_stopping());
    let first = log.lock().unwrap()[0].0;
    assert_eq!(
        engine.job(chime_core::JobId(first)).unwrap().state,
        JobState::Claimed
    );
    // The next start, 10 s later: the job cut off by the grace period runs
    // again at once under attempt 1 (not dead-lettered after its lease),
    // and the schedule fires again.
    slow.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(10_000)).await;
    let running = run_on(
        dir.path(),
        setup("allow", Duration::from_secs(2), h()),
        clock.clone(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let engine = running.shutdown().await.unwrap();
    let runs = runs_of(&log, first);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[1].0, 1);
    assert!(runs[1].1 <= 13_600, "{runs:?}");
    let info = engine.job(chime_core::JobId(first)).unwrap();
    assert_eq!(info.state, JobState::Completed);
    let totals = engine.queue_stats("cron").unwrap().totals;
    assert_eq!((totals.interrupted, totals.dead), (1, 0));
    assert!(engine.schedule("tick").unwrap().fires > 1);
}
