//! Replicas outlive their database: three real `chime run --database`
//! processes on a PostgreSQL server of this test's own (its restarts must
//! not disturb the other tests on the shared one), with an `@every 1s`
//! schedule and a worker for its jobs.
//!
//! 1. The replicas start while the server is still down: they stay up,
//!    logging each retry with its reason, and fire once it is up.
//! 2. `pg_ctl restart -m fast` under them (the 0.6 s restart that made
//!    every replica exit before).
//! 3. `pg_ctl stop -m fast`, four seconds down (longer than the lease
//!    TTL), `pg_ctl start`.
//!
//! After each, fires resume; no replica ever exits on its own; at the end
//! no `(schedule, nominal)` fired twice, no fire has two jobs, every
//! fire's job completed, and every 1 s boundary from the first fire to the
//! last accounted one was fired or skipped with a reason, exactly once.
//! SIGTERM then stops each replica with exit code 0.
//!
//! Prints how long fires took to resume after each outage.

use crate::pg_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TTL_MS: u64 = 3_000;

const CONFIG: &str = r#"
[[queue]]
name = "ticks"
leaseMs = 3000
maxAttempts = 50
backoff = { baseMs = 100, capMs = 500 }

[[schedule]]
name = "tick"
spec = "@every 1s"
target = { queue = "ticks" }

[[worker]]
queue = "ticks"
concurrency = 2
command = ["true"]
"#;

/// A PostgreSQL cluster in a temporary directory, run as the `postgres`
/// user when the test runs as root (the server refuses root), with the
/// binaries `scripts/pg-test-server.sh` found (`CHIME_TEST_PG_BIN`).
struct Server {
    bin: PathBuf,
    owner: Option<String>,
    data: PathBuf,
    _dir: tempfile::TempDir,
    url: String,
}

impl Server {
    fn pg_ctl(&self, args: &[&str]) -> std::process::ExitStatus {
        let log = self.data.parent().unwrap().join("server.log");
        let mut cmd = self.command("pg_ctl");
        cmd.arg("-D").arg(&self.data).arg("-l").arg(log).args(args);
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.owner {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    /// initdb (scram password on TCP) and a free port, not started.
    fn init() -> Server {
        let bin = std::env::var_os("CHIME_TEST_PG_BIN")
            .map(PathBuf::from)
            .or_else(|| {
                let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                    .ok()?
                    .filter_map(|e| Some(e.ok()?.path().join("bin")))
                    .filter(|b| b.join("initdb").exists())
                    .collect();
                dirs.sort();
                dirs.pop()
            })
            .expect("no PostgreSQL binaries (CHIME_TEST_PG_BIN or /usr/lib/postgresql/*/bin)");
        let root = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| o.stdout.trim_ascii() == b"0")
            .unwrap();
        let owner = root.then(|| {
            std::env::var("CHIME_TEST_PG_USER")
                .ok()
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| "postgres".into())
        });
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let password = format!("pw{}", std::process::id());
        let pwfile = dir.path().join("pwfile");
        std::fs::write(&pwfile, &password).unwrap();
        if let Some(user) = &owner {
            let ok = Command::new("chown")
                .args(["-R", user])
                .arg(dir.path())
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown {user}");
        }
        let mut server = Server {
            bin,
            owner,
            data,
            _dir: dir,
            url: String::new(),
        };
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&server.data)
            .args([
                "-U",
                "chime",
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
            ])
            .args(["-E", "UTF8", "--no-locale", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb: {out:?}");
        // The port: the first free one of a few random tries (appended
        // settings override earlier ones, so a retry just appends).
        let sock = server.data.parent().unwrap().to_owned();
        for i in 0..20u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos();
            let port = 20_000 + (nanos / 1_000 + i * 7_919) % 40_000;
            let conf = format!(
                "\nlisten_addresses = '127.0.0.1'\nport = {port}\n\
                 unix_socket_directories = '{}'\nmax_connections = 50\n",
                sock.display()
            );
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(server.data.join("postgresql.conf"))
                .unwrap();
            std::io::Write::write_all(&mut f, conf.as_bytes()).unwrap();
            if server.pg_ctl(&["-w", "-t", "60", "start"]).success() {
                server.url = format!("postgresql://chime:{password}@127.0.0.1:{port}/postgres");
                assert!(server.pg_ctl(&["-w", "-m", "fast", "stop"]).success());
                return server;
            }
        }
        panic!("no free port for the test's server");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["-w", "-m", "immediate", "stop"]);
    }
}

/// One replica process and its log file.
struct Replica {
    child: Child,
    log: PathBuf,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(url: &str, config: &Path, log: &Path) -> Replica {
    let child = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(config)
        .args(["--database", url, "--schema", "app"])
        .args(["--lease-ttl-ms", &TTL_MS.to_string()])
        .env("CHIME_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Replica {
        child,
        log: log.to_owned(),
    }
}

fn tails(replicas: &[Replica]) -> String {
    let mut out = String::new();
    for r in replicas {
        let text = std::fs::read_to_string(&r.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        out += &format!("== {}\n", r.log.display());
        for l in &lines[lines.len().saturating_sub(30)..] {
            out += l;
            out.push('\n');
        }
    }
    out
}

/// Panics if a replica has exited.
fn all_running(replicas: &mut [Replica]) {
    for i in 0..replicas.len() {
        if let Some(status) = replicas[i].child.try_wait().unwrap() {
            panic!("replica {i} exited ({status}):\n{}", tails(replicas));
        }
    }
}

/// Keeps checking that no replica exits for `d`.
async fn watch(replicas: &mut [Replica], d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        all_running(replicas);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    all_running(replicas);
}

/// Waits (checking that the replicas stay up) until a fire created after
/// `after` (the database's clock, Unix ms) exists; returns when it was
/// seen. A fresh connection per look: the server may still be starting.
async fn fire_after(url: &str, after_ms: i64, replicas: &mut [Replica]) -> Instant {
    let t = Instant::now();
    loop {
        all_running(replicas);
        if let Ok(c) = chime_native::pg::connect(url).await {
            let n = c
                .query_one(
                    "SELECT count(*) FROM app.chime_fires
                     WHERE floor(extract(epoch FROM created_at) * 1000)::bigint > $1",
                    &[&after_ms],
                )
                .await
                .map(|r| r.get::<_, i64>(0))
                .unwrap_or(0);
            if n > 0 {
                return Instant::now();
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(40),
            "no fire after {after_ms}:\n{}",
            tails(replicas)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn db_now_ms(url: &str) -> i64 {
    let c = chime_native::pg::connect(url).await.unwrap();
    c.query_one(
        "SELECT floor(extract(epoch FROM now()) * 1000)::bigint",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_outlive_restarts_and_outages_of_their_database() {
    if pg_support::database_url().is_none() {
        return;
    }
    let server = Server::init();
    let url = server.url.clone();
    let mut dir = tempfile::tempdir().unwrap();
    dir.disable_cleanup(std::env::var_os("CHIME_KEEP_TEST_DIR").is_some());
    eprintln!("replica logs in {}", dir.path().display());
    let config = dir.path().join("chime.toml");
    std::fs::write(&config, CONFIG).unwrap();

    // 1. Started before their database.
    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| spawn(&url, &config, &dir.path().join(format!("r{i}.log"))))
        .collect();
    watch(&mut replicas, Duration::from_millis(1_500)).await;
    for r in &replicas {
        let text = std::fs::read_to_string(&r.log).unwrap();
        assert!(
            text.contains("the database is unavailable; retrying") && text.contains("refused"),
            "no retry with its reason in the log:\n{text}"
        );
    }
    assert!(server.pg_ctl(&["-w", "-t", "60", "start"]).success());
    fire_after(&url, 0, &mut replicas).await;
    watch(&mut replicas, Duration::from_secs(3)).await;

    // 2. A fast restart.
    let mut resumed = Vec::new();
    let t = Instant::now();
    assert!(server.pg_ctl(&["-w", "-m", "fast", "restart"]).success());
    let restart_took = t.elapsed();
    let back_ms = db_now_ms(&url).await;
    let seen = fire_after(&url, back_ms, &mut replicas).await;
    resumed.push(("restart", restart_took, seen - t));
    watch(&mut replicas, Duration::from_secs(3)).await;

    // 3. Down for longer than the lease TTL.
    let t = Instant::now();
    assert!(server.pg_ctl(&["-w", "-m", "fast", "stop"]).success());
    watch(&mut replicas, Duration::from_secs(4)).await;
    assert!(server.pg_ctl(&["-w", "-t", "60", "start"]).success());
    let down = t.elapsed();
    let back_ms = db_now_ms(&url).await;
    let started = Instant::now();
    let seen = fire_after(&url, back_ms, &mut replicas).await;
    resumed.push(("stop+start", down, seen - started));
    watch(&mut replicas, Duration::from_secs(4)).await;

    // Every fire's job done.
    let c = chime_native::pg::connect(&url).await.unwrap();
    let t = Instant::now();
    loop {
        all_running(&mut replicas);
        let open: i64 = c
            .query_one(
                "SELECT count(*) FROM app.chime_jobs WHERE state <> 'completed'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if open == 0 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{open} jobs did not complete:\n{}",
            tails(&replicas)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for r in &replicas {
        let ok = Command::new("kill")
            .args(["-TERM", &r.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    for i in 0..replicas.len() {
        let status = replicas[i].child.wait().unwrap();
        assert!(
            status.success(),
            "replica {i}: {status}:\n{}",
            tails(&replicas)
        );
    }

    // No doubled fire, one job per fire, none lost.
    let rows = c
        .query(
            "SELECT f.nominal_ms, j.state FROM app.chime_fires f
             JOIN app.chime_jobs j ON j.id = f.job
             WHERE f.kind = 'scheduled' AND f.schedule = 'tick' ORDER BY f.nominal_ms",
            &[],
        )
        .await
        .unwrap();
    let mut fired = BTreeSet::new();
    for r in &rows {
        let nominal: i64 = r.get(0);
        assert!(fired.insert(nominal), "{nominal} fired twice");
        assert_eq!(r.get::<_, &str>(1), "completed");
    }
    let fires_without_job: i64 = c
        .query_one(
            "SELECT count(*) FROM app.chime_fires f
             WHERE NOT EXISTS (SELECT 1 FROM app.chime_jobs j WHERE j.id = f.job)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(fires_without_job, 0);
    let doubled_jobs: i64 = c
        .query_one(
            "SELECT count(*) FROM (SELECT fire FROM app.chime_jobs WHERE fire IS NOT NULL
             GROUP BY fire HAVING count(*) > 1) d",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(doubled_jobs, 0, "a fire has two jobs");
    let skips = c
        .query(
            "SELECT first_ms, last_ms, count, reason FROM app.chime_skips WHERE schedule = 'tick'",
            &[],
        )
        .await
        .unwrap();
    let runs: Vec<(i64, i64, i64)> = skips
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let mut reasons: BTreeMap<String, i64> = BTreeMap::new();
    for r in &skips {
        assert!(!r.get::<_, &str>(3).is_empty(), "a skip without a reason");
        *reasons.entry(r.get(3)).or_default() += r.get::<_, i64>(2);
    }
    let first = *fired.first().unwrap();
    let last = runs
        .iter()
        .map(|r| r.1)
        .chain(fired.last().copied())
        .max()
        .unwrap();
    let boundaries = (last - first) / 1000 + 1;
    let skipped: i64 = runs.iter().map(|r| r.2).sum();
    assert_eq!(
        fired.len() as i64 + skipped,
        boundaries,
        "{} fired + {skipped} skipped != {boundaries} boundaries",
        fired.len()
    );
    for b in (first..=last).step_by(1000) {
        let in_skip = runs.iter().filter(|r| r.0 <= b && b <= r.1).count();
        assert!(
            fired.contains(&b) != (in_skip > 0),
            "boundary {b}: fired={} in {in_skip} skip runs",
            fired.contains(&b)
        );
    }
    assert!(boundaries >= 15, "only {boundaries} boundaries");
    let retries: usize = replicas
        .iter()
        .map(|r| {
            std::fs::read_to_string(&r.log)
                .unwrap()
                .matches("retrying")
                .count()
        })
        .sum();
    eprintln!(
        "db restart: {}; {} fires, skipped {reasons:?}, {retries} logged retries",
        resumed
            .iter()
            .map(|(what, outage, resumed)| format!(
                "{what} (down {} ms): fires resumed {} ms after",
                outage.as_millis(),
                resumed.as_millis()
            ))
            .collect::<Vec<_>>()
            .join("; "),
        fired.len()
    );
}
