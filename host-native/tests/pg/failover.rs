//! Failover with real processes: three `chime run --database` replicas on
//! one Postgres schema, two `@every 1s` schedules (overlap `skip` and
//! `allow`) and a load of jobs enqueued while they run. The leader is
//! killed with SIGKILL three times (and restarted), then paused with
//! SIGSTOP past its lease TTL and resumed with SIGCONT. Checked from the
//! database and the replicas' logs:
//! - after each kill or stall a new leader (epoch + 1) fires within
//!   TTL + one renew interval of the kill (the lease's promise);
//! - no `(schedule, nominal)` has two fires, and for each schedule every
//!   boundary from its first to its last accounted one was fired or
//!   skipped with a reason, exactly once;
//! - every fire's job and every enqueued job completed, and each fire's
//!   side effect ran;
//! - the stalled leader's writes after the takeover were refused (its log
//!   says so, and no journal row or fire of its epoch follows the next
//!   epoch's first);
//! - SIGTERM stops every replica with exit code 0.
//!
//! Prints the failover times and the fire lateness (for BENCHMARKS.md).

use crate::pg_support;

use chime_core::{EngineConfig, EnqueueRequest, Payload};
use chime_native::pg::{PgConfig, PgQueues};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const TTL_MS: u64 = 3_000;
const RENEW_MS: u64 = TTL_MS / 3;
const JOBS: usize = 400;

fn config(effects: &Path) -> String {
    format!(
        r#"
[[queue]]
name = "ticks"
leaseMs = 3000
maxAttempts = 20

[[queue]]
name = "work"
leaseMs = 3000
maxAttempts = 20
backoff = {{ baseMs = 100, capMs = 200 }}

[[schedule]]
name = "skipper"
spec = "@every 1s"
overlap = "skip"
target = {{ queue = "ticks" }}

[[schedule]]
name = "allower"
spec = "@every 1s"
overlap = "allow"
target = {{ queue = "ticks" }}

[[worker]]
queue = "ticks"
concurrency = 4
command = ["sh", "-c", "echo \"$CHIME_FIRE_ID $CHIME_ATTEMPT\" >> {}"]

[[worker]]
queue = "work"
concurrency = 4
command = ["true"]
"#,
        effects.display()
    )
}

/// One replica process and its log file.
struct Replica {
    child: Child,
    log: PathBuf,
}

/// A failing test must not leave replicas running.
impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(pg: &PgConfig, config: &Path, log: &Path) -> Replica {
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(config)
        .args(["--database", &pg.url, "--schema", &pg.schema])
        .args(["--lease-ttl-ms", &TTL_MS.to_string()])
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    Replica {
        child,
        log: log.to_owned(),
    }
}

/// The lease row: (pid of the holder, epoch), if held.
async fn leader(c: &tokio_postgres::Client, s: &str) -> Option<(u32, i64)> {
    let row = c
        .query_opt(
            &format!("SELECT holder, epoch FROM \"{s}\".chime_leader WHERE expires_at > now()"),
            &[],
        )
        .await
        .unwrap()?;
    let holder: Option<String> = row.get(0);
    // `host/pid/start-nanos`
    let pid = holder?.split('/').nth(1)?.parse().ok()?;
    Some((pid, row.get(1)))
}

async fn count(c: &tokio_postgres::Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).await.unwrap().get(0)
}

/// Waits until a fire of an epoch above `epoch` exists; returns when it
/// was seen and that epoch.
/// The last lines of each replica's log, for a failure message.
fn tails(logs: &[PathBuf]) -> String {
    let mut out = String::new();
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        out += &format!("== {}\n", log.display());
        for l in &lines[lines.len().saturating_sub(25)..] {
            out += l;
            out.push('\n');
        }
    }
    out
}

async fn next_term_fire(
    c: &tokio_postgres::Client,
    s: &str,
    epoch: i64,
    logs: &[PathBuf],
) -> (Instant, i64) {
    let t = Instant::now();
    loop {
        let row = c
            .query_opt(
                &format!("SELECT min(epoch) FROM \"{s}\".chime_fires WHERE epoch > $1 HAVING count(*) > 0"),
                &[&epoch],
            )
            .await
            .unwrap();
        if let Some(r) = row {
            return (Instant::now(), r.get(0));
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no fire after epoch {epoch}:\n{}",
            tails(logs)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_killed_and_stalled_no_double_or_lost_fire() {
    let Some(pg) = pg_support::config("failover") else {
        return;
    };
    let s = pg.schema.clone();
    let mut dir = tempfile::tempdir().unwrap();
    // The replicas' logs stay for a look when asked.
    dir.disable_cleanup(std::env::var_os("CHIME_KEEP_TEST_DIR").is_some());
    eprintln!("replica logs in {}", dir.path().display());
    let effects = dir.path().join("effects.log");
    let config_file = dir.path().join("chime.toml");
    std::fs::write(&config_file, config(&effects)).unwrap();
    let mut c = chime_native::pg::connect(&pg.url).await.unwrap();
    chime_native::pg::migrate::migrate(&mut c, &s)
        .await
        .unwrap();

    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| spawn(&pg, &config_file, &dir.path().join(format!("r{i}.log"))))
        .collect();
    // A first leader and its first fires.
    let logs: Vec<PathBuf> = replicas.iter().map(|r| r.log.clone()).collect();
    let (_, first_epoch) = next_term_fire(&c, &s, 0, &logs).await;

    // The job load, enqueued in batches while the leaders change.
    let producer = {
        let pg = pg.clone();
        tokio::spawn(async move {
            let q = PgQueues::connect(&pg, EngineConfig::default())
                .await
                .unwrap();
            let mut ids = Vec::new();
            for batch in 0..20 {
                let reqs: Vec<EnqueueRequest> = (0..JOBS / 20)
                    .map(|i| {
                        let n = batch * (JOBS / 20) + i;
                        EnqueueRequest::new("work", Payload::from_json(&format!("{n}")).unwrap())
                    })
                    .collect();
                ids.extend(
                    q.enqueue_many(&reqs)
                        .await
                        .unwrap()
                        .into_iter()
                        .map(|e| e.job),
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            ids
        })
    };

    let bound = Duration::from_millis(TTL_MS + RENEW_MS);
    let mut failovers = Vec::new();
    let mut epoch = first_epoch;
    for round in 0..4 {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let (pid, e) = leader(&c, &s).await.expect("a leader");
        assert!(e >= epoch);
        let idx = replicas
            .iter()
            .position(|r| r.child.id() == pid)
            .expect("the leader is one of ours");
        let stall = round == 3;
        let refusals = |r: &Replica| {
            std::fs::read_to_string(&r.log)
                .unwrap()
                .matches("store write refused")
                .count()
        };
        let refused_before = refusals(&replicas[idx]);
        let killed_at = Instant::now();
        if stall {
            signal(pid, "-STOP");
        } else {
            signal(pid, "-KILL");
        }
        let (seen, new_epoch) = next_term_fire(&c, &s, e, &logs).await;
        let took = seen - killed_at;
        failovers.push((if stall { "SIGSTOP" } else { "SIGKILL" }, took));
        assert!(
            took <= bound,
            "round {round}: the next leader fired {took:?} after the old one stopped \
             (bound TTL + renew = {bound:?})"
        );
        epoch = new_epoch;
        if stall {
            // Well past its TTL: then let it run into the new term.
            tokio::time::sleep(Duration::from_millis(1_000)).await;
            signal(pid, "-CONT");
            tokio::time::sleep(Duration::from_millis(3_000)).await;
            // It still holds a term it lost: its next write (at the
            // latest the snapshot it writes on leaving) must be refused.
            assert!(
                refusals(&replicas[idx]) > refused_before,
                "the stalled leader's late write was not refused:\n{}",
                std::fs::read_to_string(&replicas[idx].log).unwrap()
            );
        } else {
            replicas[idx].child.wait().unwrap();
            let log = replicas[idx].log.clone();
            replicas[idx] = spawn(&pg, &config_file, &log);
        }
    }
    let job_ids = producer.await.unwrap();
    assert_eq!(job_ids.len(), JOBS);

    // Let the last leader run a little, then wait for the queues to drain.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let t = Instant::now();
    loop {
        let open = count(
            &c,
            &format!("SELECT count(*) FROM \"{s}\".chime_jobs WHERE state <> 'completed'"),
        )
        .await;
        if open == 0 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{open} jobs did not complete"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for r in &mut replicas {
        signal(r.child.id(), "-TERM");
    }
    for (i, r) in replicas.iter_mut().enumerate() {
        let status = r.child.wait().unwrap();
        assert!(
            status.success(),
            "replica {i} exited with {status}:\n{}",
            std::fs::read_to_string(&r.log).unwrap()
        );
    }

    // Every enqueued job completed.
    let done = count(
        &c,
        &format!(
            "SELECT count(*) FROM \"{s}\".chime_jobs WHERE state = 'completed' AND fire IS NULL"
        ),
    )
    .await;
    assert_eq!(done as usize, JOBS);

    // Fires: one per (schedule, nominal), each with a completed job whose
    // side effect ran.
    let rows = c
        .query(
            &format!(
                "SELECT f.schedule, f.nominal_ms, f.fired_ms, f.fire_id, f.epoch, j.state
                 FROM \"{s}\".chime_fires f JOIN \"{s}\".chime_jobs j ON j.id = f.job
                 WHERE f.kind = 'scheduled' ORDER BY f.schedule, f.nominal_ms"
            ),
            &[],
        )
        .await
        .unwrap();
    let side_effects: BTreeSet<String> = std::fs::read_to_string(&effects)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .collect();
    let mut fired: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    let mut lateness = Vec::new();
    for r in &rows {
        let (schedule, nominal): (String, i64) = (r.get(0), r.get(1));
        let state: &str = r.get(5);
        let id: &str = r.get(3);
        assert_eq!(state, "completed", "fire {id}");
        assert!(side_effects.contains(id), "fire {id} never ran");
        assert!(
            fired.entry(schedule).or_default().insert(nominal),
            "{id} fired twice"
        );
        lateness.push(r.get::<_, i64>(2) - nominal);
    }
    let dupes = count(
        &c,
        &format!(
            "SELECT count(*) FROM (SELECT 1 FROM \"{s}\".chime_jobs WHERE fire IS NOT NULL
             GROUP BY fire HAVING count(*) > 1) d"
        ),
    )
    .await;
    assert_eq!(dupes, 0, "a fire has two jobs");

    // Accounting: each boundary of the 1 s grid, from the first to the last
    // one accounted for, fired or skipped exactly once.
    let skips = c
        .query(
            &format!("SELECT schedule, first_ms, last_ms, count, reason FROM \"{s}\".chime_skips"),
            &[],
        )
        .await
        .unwrap();
    let mut reasons = BTreeSet::new();
    for (schedule, nominals) in &fired {
        let runs: Vec<(i64, i64, i64)> = skips
            .iter()
            .filter(|r| r.get::<_, &str>(0) == schedule)
            .map(|r| {
                reasons.insert(r.get::<_, String>(4));
                (r.get(1), r.get(2), r.get(3))
            })
            .collect();
        let first = *nominals.first().unwrap();
        let last = runs
            .iter()
            .map(|r| r.1)
            .chain(nominals.last().copied())
            .max()
            .unwrap();
        assert_eq!(first % 1000, 0);
        let boundaries = (last - first) / 1000 + 1;
        let skipped: i64 = runs.iter().map(|r| r.2).sum();
        assert_eq!(
            nominals.len() as i64 + skipped,
            boundaries,
            "{schedule}: {} fired + {skipped} skipped != {boundaries} boundaries",
            nominals.len()
        );
        for b in (first..=last).step_by(1000) {
            let in_skip = runs.iter().filter(|r| r.0 <= b && b <= r.1).count();
            assert!(
                nominals.contains(&b) != (in_skip > 0),
                "{schedule}: boundary {b} fired={} in {in_skip} skip runs",
                nominals.contains(&b)
            );
        }
        assert!(boundaries >= 15, "{schedule}: only {boundaries} boundaries");
    }
    assert_eq!(fired.len(), 2, "both schedules fired");

    // The stalled leader's epoch wrote nothing after the next term began.
    let stalled_epoch = epoch - 1;
    let late_fires = count(
        &c,
        &format!(
            "SELECT count(*) FROM \"{s}\".chime_fires WHERE epoch = {stalled_epoch}
             AND created_at > (SELECT min(created_at) FROM \"{s}\".chime_fires WHERE epoch > {stalled_epoch})"
        ),
    )
    .await;
    assert_eq!(
        late_fires, 0,
        "the stalled leader delivered fires after the takeover"
    );
    let late_journal = count(
        &c,
        &format!(
            "SELECT count(*) FROM \"{s}\".chime_journal WHERE epoch = {stalled_epoch}
             AND seq > (SELECT coalesce(min(seq), 0) FROM \"{s}\".chime_journal WHERE epoch > {stalled_epoch})"
        ),
    )
    .await;
    assert_eq!(
        late_journal, 0,
        "the stalled leader journaled after the takeover"
    );

    lateness.sort_unstable();
    let pct = |p: usize| lateness[(lateness.len() - 1) * p / 100];
    eprintln!(
        "failover: {}",
        failovers
            .iter()
            .map(|(how, t)| format!("{how} {} ms", t.as_millis()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    eprintln!(
        "fires: {} ({} skipped runs: {reasons:?}); lateness ms p50 {} p90 {} p99 {} max {}",
        lateness.len(),
        skips.len(),
        pct(50),
        pct(90),
        pct(99),
        lateness.last().unwrap()
    );
    pg_support::drop_schema(&pg).await;
}
