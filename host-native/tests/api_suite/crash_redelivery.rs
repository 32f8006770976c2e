//! A node stopped abruptly (SIGKILL) while a worker holds a job it
//! claimed through that node: the job is delivered again, with a new
//! token, and the old token is stale.
//!
//! - Postgres: the leader serves the claim and is killed; the survivor
//!   takes over, and its housekeeping rescues the lease once it has run
//!   out — not before: claims on the survivor get nothing until then. The
//!   expired lease is a failed attempt, so the job is claimable again
//!   after core's retry backoff on top of the lease.
//! - Embedded: the daemon is killed and started again on its data
//!   directory; recovery releases the attempt it interrupted (core's
//!   `Recover`), so the job comes back no later than its lease would
//!   have run out.

use super::deploy::{ADMIN, Deployment, Mode, Store};
use serde_json::json;
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
[[queue]]
name = "crash"
"#;

const LEASE_MS: u64 = 3_000;

pub async fn run(store: Store) {
    let mut d = Deployment::start(store, CONFIG).await;
    let (status, e) = d
        .send(
            "POST",
            "/v1/queues/crash/jobs",
            ADMIN,
            Some(json!({"payload": "x"})),
        )
        .await;
    assert_eq!(status, 200, "{e}");
    let id = e["id"].as_u64().unwrap();
    let victim = d.leader().await;
    let claim = json!({"worker": "w1", "leaseMs": LEASE_MS});
    let (status, c) = d
        .send_at(victim, "POST", "/v1/queues/crash/claim", ADMIN, Some(claim))
        .await;
    let claimed_at = Instant::now();
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["jobs"][0]["job"], id, "{c}");
    let token = c["jobs"][0]["token"].as_u64().unwrap();

    d.kill(victim);
    let survivor = match d.mode {
        Mode::Embedded => {
            d.restart(victim).await;
            victim
        }
        Mode::Postgres => {
            d.ready().await;
            (victim + 1) % d.len()
        }
    };
    let again = json!({"worker": "w2", "leaseMs": 30000});
    let mut got = None;
    while claimed_at.elapsed() < Duration::from_millis(LEASE_MS) + Duration::from_secs(15) {
        let (status, c) = d
            .send_at(
                survivor,
                "POST",
                "/v1/queues/crash/claim",
                ADMIN,
                Some(again.clone()),
            )
            .await;
        assert_eq!(status, 200, "{c}");
        if let Some(j) = c["jobs"].as_array().and_then(|a| a.first()) {
            got = Some((claimed_at.elapsed(), j.clone()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (after, j) =
        got.unwrap_or_else(|| panic!("job {id} was not delivered again\n{}", d.logs()));
    assert_eq!(j["job"], id, "{j}");
    assert_ne!(j["token"].as_u64(), Some(token), "a new token: {j}");
    if d.mode == Mode::Postgres {
        // Nobody may take a job whose lease runs: only its expiry frees it.
        assert!(
            after >= Duration::from_millis(LEASE_MS - 100),
            "delivered again {after:?} after the claim, before the {LEASE_MS} ms lease ran out"
        );
    }
    eprintln!(
        "crash_redelivery ({:?}): job {id} delivered again {after:?} after the claim \
         (lease {LEASE_MS} ms), attempt {}",
        d.mode, j["attempt"]
    );
    // The old token is stale; the new one completes it.
    let (status, err) = d
        .send(
            "POST",
            &format!("/v1/jobs/{id}/complete"),
            ADMIN,
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "lease_lost", "{err}");
    let (status, r) = d
        .send(
            "POST",
            &format!("/v1/jobs/{id}/complete"),
            ADMIN,
            Some(json!({"token": j["token"]})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
}
