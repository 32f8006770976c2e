//! A replica whose database connections are cut (the server restarted,
//! a proxy dropped them) stays up: it drops the session whose handles can
//! only fail, opens a new one (logging the retry and its reason) and fires
//! again, instead of exiting: a real `chime run` process with a
//! `[database]` table in its config, its backends terminated with
//! `pg_terminate_backend`.

use crate::pg_support;

use std::process::Stdio;
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
[[queue]]
name = "ticks"
# A job whose outcome was lost with the connection is rescued this soon
# (until then the `skip` overlap policy skips the boundaries).
leaseMs = 2000

[[schedule]]
name = "tick"
spec = "@every 1s"
target = { queue = "ticks" }

[[worker]]
queue = "ticks"
command = ["true"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_reconnects_when_its_connections_are_cut() {
    let Some(pg) = pg_support::config("conn_lost") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (config, log) = (dir.path().join("chime.toml"), dir.path().join("r.log"));
    let app = pg.schema.clone();
    let sep = if pg.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{sep}application_name={app}", pg.url);
    // The database from the config file's `[database]` table this time.
    let database = format!(
        "[database]\nurl = {url:?}\nschema = {:?}\nleaseTtlMs = 3000\n",
        pg.schema
    );
    std::fs::write(&config, format!("{CONFIG}\n{database}")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(&config)
        .env_remove("CHIME_DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    // Running and leading: its fires arrive.
    let t = Instant::now();
    loop {
        let fires = c
            .query_one(
                &format!(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = '{s}' AND tablename = 'chime_fires'"
                ),
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0);
        if fires == 1 {
            let n: i64 = c
                .query_one(&format!("SELECT count(*) FROM \"{s}\".chime_fires"), &[])
                .await
                .unwrap()
                .get(0);
            if n > 0 {
                break;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the replica never fired:\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cut: i64 = c
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                                   WHERE application_name = $1) t",
            &[&app],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        cut >= 4,
        "queues, lease, listener and store connections: {cut}"
    );
    // Not an exit: a new session, and fires from it.
    let cut_at: i64 = c
        .query_one(
            "SELECT floor(extract(epoch FROM now()) * 1000)::bigint",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the replica exited ({status}) when its connections were cut:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        let n: i64 = c
            .query_one(
                &format!(
                    "SELECT count(*) FROM \"{s}\".chime_fires
                     WHERE floor(extract(epoch FROM created_at) * 1000)::bigint > $1"
                ),
                &[&cut_at],
            )
            .await
            .unwrap()
            .get(0);
        if n > 0 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "no fire after the connections were cut:\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("fires resumed {} ms after the cut", t.elapsed().as_millis());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("closed") && text.contains("retrying"),
        "the log does not say what closed and that it retried:\n{text}"
    );
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "SIGTERM: {status}:\n{}",
        std::fs::read_to_string(&log).unwrap()
    );
    pg_support::drop_schema(&pg).await;
}
