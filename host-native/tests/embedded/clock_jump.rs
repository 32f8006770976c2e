//! The driver when the wall clock jumps, under tokio's paused clock with a
//! test clock that can be set: backwards, nothing fires twice and the
//! engine reports `clock_clamped`; forwards, what became due fires (within
//! the driver's 1 s sleep cap) or is skipped per catch-up, never twice.

use chime_core::{Input, QueueConfig, ScheduleDef, Timestamp};
use chime_native::driver::{Clock, TokioClock};
use chime_native::store::MemoryStore;
use chime_native::worker::{Handler, Job, PoolConfig};
use chime_native::{Running, Setup, start};
use std::io::Write;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// 2026-01-01T00:00Z.
const T0: i64 = 1_767_225_600_000;

/// Tokio's (paused) time plus an offset the test moves: a wall clock that
/// keeps ticking after someone sets it.
struct JumpClock {
    base: TokioClock,
    offset_ms: AtomicI64,
}

impl JumpClock {
    fn jump(&self, ms: i64) {
        self.offset_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for JumpClock {
    fn now(&self) -> Timestamp {
        self.base
            .now()
            .saturating_add_ms(self.offset_ms.load(Ordering::SeqCst))
    }
}

/// (nominal s, wall s when the job ran), both after T0.
type Log = Arc<Mutex<Vec<(i64, i64)>>>;

fn recording(clock: Arc<JumpClock>, log: Log) -> Handler {
    Arc::new(move |job: Job| {
        let (clock, log) = (clock.clone(), log.clone());
        Box::pin(async move {
            let nominal = (job.fire.unwrap().nominal.as_millis() - T0) / 1000;
            let wall = clock.now().as_millis() - T0;
            log.lock().unwrap().push((nominal, wall / 1000));
            Ok(())
        })
    })
}

/// Log lines written while the guard lives (this thread only: the paused
/// runtime is single-threaded).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let me = self.clone();
        let sub = tracing_subscriber::fmt()
            .with_writer(move || me.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish();
        tracing::subscriber::set_default(sub)
    }
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

async fn run(def: serde_json::Value, clock: Arc<JumpClock>, log: Log) -> Running {
    let def: ScheduleDef = serde_json::from_value(def).unwrap();
    let setup = Setup {
        queues: vec![QueueConfig::new("q")],
        schedules: vec![def],
        pools: vec![(PoolConfig::new("q"), recording(clock.clone(), log))],
        ..Setup::default()
    };
    start(setup, Box::new(MemoryStore::default()), clock)
        .await
        .unwrap()
}

fn jump_clock() -> Arc<JumpClock> {
    Arc::new(JumpClock {
        base: TokioClock::new(Timestamp::from_millis(T0).unwrap()),
        offset_ms: AtomicI64::new(0),
    })
}

#[tokio::test(start_paused = true)]
async fn a_backward_jump_repeats_no_fire_and_is_reported() {
    let logs = Captured::default();
    let _guard = logs.install();
    let clock = jump_clock();
    let log = Log::default();
    let def = serde_json::json!({
        "name": "tick", "spec": "@every 10s", "overlap": "allow", "target": {"queue": "q"}
    });
    let running = run(def, clock.clone(), log.clone()).await;
    tokio::time::sleep(Duration::from_millis(25_000)).await;
    assert_eq!(*log.lock().unwrap(), vec![(10, 10), (20, 20)]);

    // Wall clock set back 15 s: it reads 10 s again, and keeps ticking.
    clock.jump(-15_000);
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    // An input at the earlier time is clamped to the engine clock.
    running
        .handle()
        .call(Input::Advance)
        .await
        .unwrap()
        .unwrap();
    // Until the wall clock passes 30 s again nothing fires; then 30, 40.
    tokio::time::sleep(Duration::from_millis(33_000)).await;
    let engine = running.shutdown().await.unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        vec![(10, 10), (20, 20), (30, 30), (40, 40)],
        "boundaries 10 and 20 did not fire again after the jump"
    );
    assert_eq!(engine.schedule("tick").unwrap().fires, 4);
    let text = logs.text();
    let clamped: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("wall clock went backwards"))
        .collect();
    assert_eq!(clamped.len(), 1, "{text}");
    // given = wall 12 s, clock = engine clock 20 s.
    assert!(
        clamped[0].contains("given=2026-01-01T00:00:12.000Z")
            && clamped[0].contains("clock=2026-01-01T00:00:20.000Z"),
        "{}",
        clamped[0]
    );
}

#[tokio::test(start_paused = true)]
async fn a_forward_jump_fires_what_became_due_per_catch_up_once() {
    let logs = Captured::default();
    let _guard = logs.install();
    let clock = jump_clock();
    let log = Log::default();
    let def = serde_json::json!({
        "name": "tick", "spec": "@every 10s", "overlap": "allow",
        "catchup": {"max": 3}, "target": {"queue": "q"}
    });
    let running = run(def, clock.clone(), log.clone()).await;
    tokio::time::sleep(Duration::from_millis(15_000)).await;
    // Wall clock set forward 100 s: it reads 115 s. Boundaries 20..=110
    // became due: the 3 most recent fire, the 7 older are skipped.
    clock.jump(100_000);
    tokio::time::sleep(Duration::from_millis(10_000)).await;
    let engine = running.shutdown().await.unwrap();
    let log = log.lock().unwrap().clone();
    let nominals: Vec<i64> = log.iter().map(|(n, _)| *n).collect();
    assert_eq!(nominals, vec![10, 90, 100, 110, 120]);
    // The driver's sleep is capped at 1 s, so the jump is noticed within it.
    for (n, wall) in &log[1..4] {
        assert!((115..=116).contains(wall), "fire {n} ran at wall {wall}");
    }
    assert_eq!(log[4], (120, 120));
    let info = engine.schedule("tick").unwrap();
    assert_eq!((info.fires, info.skipped), (5, 7));
    let text = logs.text();
    let skipped: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("boundaries skipped"))
        .collect();
    assert_eq!(skipped.len(), 1, "one aggregated skip report: {text}");
    assert!(skipped[0].contains("count=7"), "{}", skipped[0]);
}
