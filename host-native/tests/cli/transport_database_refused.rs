//! `chime run --database URL` on a config with a queue in a broker is
//! refused at start, naming the queues, before any connection: a
//! replica's fires would wait in the Postgres outbox that no publisher
//! empties into the broker (docs/transports.md, "Not yet").

use std::process::Command;

#[test]
fn a_replica_with_a_transport_queue_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("chime.toml");
    std::fs::write(
        &config,
        "[[queue]]\nname = \"planner\"\ntransport = \"redis\"\n\n[[queue]]\nname = \"local\"\n\n[transport.redis]\nurl = \"redis://127.0.0.1:1\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chime"))
        .args(["run", "--config"])
        .arg(&config)
        // Nothing listens there: the refusal comes before any connection.
        .args(["--database", "postgres://chime@127.0.0.1:1/chime"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "queues with a transport (planner) run with the embedded engine, not with a database"
        ),
        "{err}"
    );
}
