//! The batch enqueue of the queue port on every backend (`backends`):
//! all or nothing, the first refused request's index and error code, keys
//! deduplicated within the batch and against live jobs, queues created by
//! the batch — the same replies from the embedded engine (through its
//! driver, and in place) and from the Postgres queues. Jobs are named by
//! their payloads (ids come from a sequence in Postgres, where a
//! deduplicated enqueue uses one up).

use crate::backends;
use chime_core::{EngineConfig, EnqueueRequest, Payload, QueueConfig};
use chime_native::backend::QueueBackend;

fn req(queue: &str, n: i32) -> EnqueueRequest {
    EnqueueRequest::new(queue, Payload::from_json(&n.to_string()).unwrap())
}

/// A batch's reply: per request the payload of its job and whether it was
/// deduplicated, or the refusal as (index, code).
type Reply = Result<Vec<(String, bool)>, (usize, &'static str)>;

async fn batch(b: &dyn QueueBackend, reqs: &[EnqueueRequest]) -> Reply {
    match b.enqueue_batch(reqs).await.unwrap() {
        Err((i, e)) => Err((i, e.code())),
        Ok(done) => {
            let mut out = Vec::new();
            for e in done {
                let job = b.job(e.job).await.unwrap().expect("the job exists");
                out.push((job.payload.as_json().to_owned(), e.deduplicated));
            }
            Ok(out)
        }
    }
}

/// The payloads of every claimable job of `queue`, in claim order.
async fn claimable(b: &dyn QueueBackend, queue: &str) -> Vec<String> {
    let claimed = b.claim(queue, "w", 1_000, None).await.unwrap();
    claimed
        .iter()
        .map(|c| c.payload.as_json().to_owned())
        .collect()
}

async fn scenario(b: &dyn QueueBackend) -> (Vec<Reply>, Vec<String>, Vec<String>) {
    b.declare(&QueueConfig::new("a")).await.unwrap();
    let mut held = req("a", 1);
    held.key = Some("held".into());
    b.enqueue(&held).await.unwrap();
    let mut replies = Vec::new();
    // One bad request (the fourth) refuses the batch: nothing is added.
    let mut bad: Vec<EnqueueRequest> = (10..16).map(|n| req("a", n)).collect();
    bad[3].max_attempts = Some(0);
    replies.push(batch(b, &bad).await);
    let mut bad_queue: Vec<EnqueueRequest> = (20..23).map(|n| req("a", n)).collect();
    bad_queue[1].queue = "no spaces".into();
    replies.push(batch(b, &bad_queue).await);
    // Keys: against the live job, twice within the batch, fresh; into a
    // queue the batch creates.
    let mut good: Vec<EnqueueRequest> = (30..38).map(|n| req("a", n)).collect();
    good[1].key = Some("held".into());
    good[2].key = Some("twice".into());
    good[5].key = Some("twice".into());
    good[6].key = Some("fresh".into());
    good[7].queue = "made-by-batch".into();
    good[4].priority = 5;
    replies.push(batch(b, &good).await);
    replies.push(batch(b, &[]).await);
    (
        replies,
        claimable(b, "a").await,
        claimable(b, "made-by-batch").await,
    )
}

#[tokio::test]
async fn batches_are_all_or_nothing_as_in_the_engine() {
    let config = EngineConfig::default();
    let mut results = Vec::new();
    // The transports refuse priorities (and have no search): they join
    // the conformance scenarios, not this comparison with the engine.
    let backends = backends::queue_backends("q_batch", &config).await;
    let (backends, transports): (Vec<_>, Vec<_>) = backends.into_iter().partition(|u| u.priorities);
    for under in transports {
        under.end().await;
    }
    for under in backends {
        results.push((under.name, scenario(under.backend.as_ref()).await));
        under.end().await;
    }
    let (name, (replies, a, made)) = &results[0];
    assert_eq!(replies[0], Err((3, "invalid_input")), "{name}");
    assert_eq!(replies[1].as_ref().map_err(|e| e.0), Err(1), "{name}");
    let good = replies[2].as_ref().unwrap();
    assert_eq!(good[1], ("1".to_owned(), true), "{name}");
    assert_eq!(good[5], ("32".to_owned(), true), "{name}");
    // Nothing of the refused batches; the good one's jobs but the
    // deduplicated ones, the priority 5 one first.
    assert_eq!(a, &["34", "1", "30", "32", "33", "36"], "{name}");
    assert_eq!(made, &["37"], "{name}");
    for (other, r) in &results[1..] {
        assert_eq!(&results[0].1, r, "{name} vs {other}");
    }
    let ran_all = results.len() == 3 || crate::pg_support::database_url().is_none();
    assert!(ran_all, "not every backend ran");
}
