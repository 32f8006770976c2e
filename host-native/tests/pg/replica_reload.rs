//! SIGHUP reloads a replica's config with `--database`: the schedule
//! diff goes through the inbox, so a signal to the follower changes the
//! leader's engine (a new schedule fires from the leader, a removed one
//! stops), and an invalid file changes nothing.

use crate::pg_support;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const BASE: &str = r#"
[[queue]]
name = "ticks"

[[schedule]]
name = "old"
spec = "@every 1s"
overlap = "allow"
target = { queue = "ticks" }
"#;

const NEW: &str = r#"
[[queue]]
name = "ticks"

[[schedule]]
name = "new"
spec = "@every 1s"
overlap = "allow"
target = { queue = "ticks" }
"#;

struct Replica(Child);

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(pg: &chime_native::pg::PgConfig, config: &Path, log: &Path) -> Replica {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(config)
        .args(["--database", &pg.url, "--schema", &pg.schema])
        .args(["--lease-ttl-ms", "3000", "--http", "off"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Replica(child)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_on_the_follower_reloads_the_leaders_schedules() {
    let Some(pg) = pg_support::config("replica_reload") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Each replica its own file, as on two hosts.
    let (fa, fb) = (dir.path().join("a.toml"), dir.path().join("b.toml"));
    std::fs::write(&fa, BASE).unwrap();
    std::fs::write(&fb, BASE).unwrap();
    let (la, lb) = (dir.path().join("a.log"), dir.path().join("b.log"));
    let a = spawn(&pg, &fa, &la);
    let c = chime_native::pg::connect(&pg.url).await.unwrap();
    let s = &pg.schema;
    let fires = |name: &'static str| {
        let c = &c;
        async move {
            c.query_one(
                &format!("SELECT count(*) FROM \"{s}\".chime_fires WHERE schedule = $1"),
                &[&name],
            )
            .await
            .map(|r| r.get::<_, i64>(0))
            .unwrap_or(0)
        }
    };
    // `a` leads (it fires); `b` starts after, as the follower.
    let t = Instant::now();
    while fires("old").await == 0 {
        assert!(t.elapsed() < Duration::from_secs(15), "a never fired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let b = spawn(&pg, &fb, &lb);
    tokio::time::sleep(Duration::from_millis(500)).await;
    // An invalid file: refused whole, nothing changes.
    std::fs::write(&fb, "[[schedule]]\nname = \"broken\"\nspec = \"nope\"\n").unwrap();
    let hup = |child: &Child| {
        assert!(
            std::process::Command::new("kill")
                .args(["-HUP", &child.id().to_string()])
                .status()
                .unwrap()
                .success()
        );
    };
    hup(&b.0);
    let t = Instant::now();
    while !std::fs::read_to_string(&lb)
        .unwrap_or_default()
        .contains("reload refused: the file is invalid")
    {
        assert!(t.elapsed() < Duration::from_secs(10), "no refusal logged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::write(&fb, NEW).unwrap();
    hup(&b.0);
    let t = Instant::now();
    while fires("new").await == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "the reloaded schedule never fired: {}",
            std::fs::read_to_string(&lb).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let log = std::fs::read_to_string(&lb).unwrap();
    assert!(log.contains("reload refused: the file is invalid"), "{log}");
    assert!(log.contains("reload applied by the leader"), "{log}");
    // `old` was removed: its fires stop.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = fires("old").await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(
        fires("old").await,
        before,
        "the removed schedule still fires"
    );
    let broken: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM \"{s}\".chime_fires WHERE schedule = 'broken'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(broken, 0);
    drop((a, b));
    pg_support::drop_schema(&pg).await;
}
