//! A schedule written through the API fires. In Postgres mode the write
//! goes to the follower, which hands it to the leader's engine through
//! the inbox: the reply is the engine's, the leader (and only it) counts
//! the input as applied, and the fires arrive as jobs in the target
//! queue. Pause and remove through the follower take effect the same way.

use super::deploy::{ADMIN, Deployment, Mode, Store};
use serde_json::{Value, json};
use std::time::Duration;

const CONFIG: &str = r#"
[[queue]]
name = "other"
"#;

/// A metric's value in a Prometheus text (no labels).
fn metric(text: &Value, name: &str) -> Option<f64> {
    text.as_str()?
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

pub async fn run(store: Store) {
    let d = Deployment::start(store, CONFIG).await;
    let (leader, follower) = (d.leader().await, d.follower().await);
    if d.mode == Mode::Postgres {
        assert_ne!(leader, follower);
        let (_, h) = d.send_at(follower, "GET", "/healthz", None, None).await;
        assert_eq!(h["role"], "follower", "{h}");
    }
    let def = json!({"spec": "@every 1s", "overlap": "allow", "target": {"queue": "fired"}});
    let (status, r) = d
        .send_at(follower, "PUT", "/v1/schedules/sw", ADMIN, Some(def))
        .await;
    assert_eq!(status, 200, "{r}\n{}", d.logs());

    // The follower shows it (from the leader's committed state).
    let shown = d
        .eventually(Duration::from_secs(5), || async {
            d.send_at(follower, "GET", "/v1/schedules/sw", ADMIN, None)
                .await
                .0
                == 200
        })
        .await;
    assert!(shown, "the schedule is not shown by the follower");

    // Its fires arrive as jobs of the target queue, each naming its fire.
    let t = std::time::Instant::now();
    let job = loop {
        let (status, c) = d
            .send_at(
                follower,
                "POST",
                "/v1/queues/fired/claim",
                ADMIN,
                Some(json!({"worker": "w"})),
            )
            .await;
        assert_eq!(status, 200, "{c}");
        if let Some(j) = c["jobs"].as_array().and_then(|a| a.first()) {
            break j.clone();
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no fire of the schedule written through node {follower}\n{}",
            d.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (status, info) = d
        .send_at(
            leader,
            "GET",
            &format!("/v1/jobs/{}", job["job"]),
            ADMIN,
            None,
        )
        .await;
    assert_eq!(status, 200, "{info}");
    assert!(
        info["fire"].as_str().is_some_and(|f| f.starts_with("sw@")),
        "{info}"
    );
    if d.mode == Mode::Postgres {
        // Only the leader's engine applied the write.
        let (_, lm) = d.send_at(leader, "GET", "/metrics", ADMIN, None).await;
        let (_, fm) = d.send_at(follower, "GET", "/metrics", ADMIN, None).await;
        assert!(
            metric(&lm, "chime_inbox_applied_total").unwrap_or(0.0) >= 1.0,
            "{lm}"
        );
        assert_eq!(metric(&fm, "chime_inbox_applied_total"), Some(0.0), "{fm}");
        assert_eq!(metric(&fm, "chime_replica_leader"), Some(0.0), "{fm}");
    }

    // Pause and remove through the follower.
    let (status, r) = d
        .send_at(
            follower,
            "POST",
            "/v1/schedules/sw/pause",
            ADMIN,
            Some(json!({"note": "maintenance"})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let paused = d
        .eventually(Duration::from_secs(5), || async {
            let (_, s) = d
                .send_at(leader, "GET", "/v1/schedules/sw", ADMIN, None)
                .await;
            s["schedule"]["status"] == "paused"
        })
        .await;
    assert!(paused, "the pause did not reach the leader's engine");
    let (status, r) = d
        .send_at(follower, "DELETE", "/v1/schedules/sw", ADMIN, None)
        .await;
    assert_eq!(status, 200, "{r}");
    let gone = d
        .eventually(Duration::from_secs(5), || async {
            d.send("GET", "/v1/schedules/sw", ADMIN, None).await.0 == 404
        })
        .await;
    assert!(gone, "the schedule was not removed");
}
