//! The job search of the queue port on every backend (`backends`): the
//! same workload on the embedded engine (through its driver, and in
//! place) and on the Postgres queues must give the same pages — ids,
//! states, keys, priorities, attempts, payloads, errors, the cursor — for
//! every filter, page size and id range, including pages cut by core's
//! scan bound (`SEARCH_SCAN`) over another queue's jobs. Timestamps are
//! each backend's own clock and are left out. (The workload has no key
//! collision: a deduplicated enqueue uses up an id in Postgres, whose ids
//! come from a sequence, and not in the engine.)

use crate::backends;
use chime_core::{
    EngineConfig, EnqueueRequest, JobId, JobInfo, JobPage, JobQuery, JobState, Payload,
    QueueConfig, SEARCH_SCAN,
};
use chime_native::backend::QueueBackend;

/// A page without the backend's clock: what must match exactly.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    jobs: Vec<Job>,
    next: Option<JobId>,
}

#[derive(Debug, PartialEq, Eq)]
#[allow(dead_code)] // compared through Debug and PartialEq
struct Job {
    id: JobId,
    queue: String,
    state: JobState,
    key: Option<String>,
    priority: i32,
    attempt: u32,
    max_attempts: u32,
    payload: String,
    headers: String,
    worker: Option<String>,
    last_error: Option<String>,
    leased: bool,
    finished: bool,
}

fn seen(page: JobPage) -> Seen {
    let job = |j: JobInfo| Job {
        id: j.id,
        queue: j.queue,
        state: j.state,
        key: j.key,
        priority: j.priority,
        attempt: j.attempt,
        max_attempts: j.max_attempts,
        payload: j.payload.as_json().to_owned(),
        headers: serde_json::to_string(&j.headers).unwrap(),
        worker: j.worker,
        last_error: j.last_error,
        leased: j.lease_deadline.is_some(),
        finished: j.finished_at.is_some(),
    };
    Seen {
        jobs: page.jobs.into_iter().map(job).collect(),
        next: page.next,
    }
}

fn req(queue: &str, n: i32) -> EnqueueRequest {
    let mut r = EnqueueRequest::new(
        queue,
        Payload::from_json(&format!("{{\"n\":{n}}}")).unwrap(),
    );
    r.priority = n % 3;
    r
}

fn query(f: impl FnOnce(&mut JobQuery)) -> JobQuery {
    let mut q = JobQuery {
        queue: "a".into(),
        ..JobQuery::default()
    };
    f(&mut q);
    q
}

/// The workload: jobs of `a` in every state among jobs of `b`, then more
/// than a scan's worth of `b` between two runs of `a`.
async fn workload(b: &dyn QueueBackend) {
    let mut strict = QueueConfig::new("a");
    strict.max_attempts = 1;
    b.declare(&strict).await.unwrap();
    b.declare(&QueueConfig::new("b")).await.unwrap();
    for n in 0..24 {
        let mut r = req(if n % 3 == 0 { "b" } else { "a" }, n);
        if n % 4 == 1 {
            r.key = Some(format!("k{n}"));
        }
        if n % 5 == 2 {
            r.delay_ms = Some(3_600_000);
        }
        b.enqueue(&r).await.unwrap();
    }
    // Claimed, completed, dead (one attempt), cancelled.
    let mut claimed = b.claim("a", "w1", 4, None).await.unwrap();
    let last = claimed.pop().unwrap();
    b.complete(claimed[0].job, claimed[0].token).await.unwrap();
    b.fail(claimed[1].job, claimed[1].token, "boom", None)
        .await
        .unwrap();
    b.cancel(claimed[2].job).await.unwrap();
    let _ = last; // stays claimed by w1
    let _ = b.cancel(JobId(5)).await; // the same refusal on all if it ended
    let many: Vec<EnqueueRequest> = (0..SEARCH_SCAN as i32 + 50).map(|n| req("b", n)).collect();
    b.enqueue_batch(&many).await.unwrap().unwrap();
    for n in 0..5 {
        b.enqueue(&req("a", 1_000 + n)).await.unwrap();
    }
}

/// Every page the queries give, walking each cursor to its end.
async fn pages(b: &dyn QueueBackend) -> Vec<(JobQuery, Seen)> {
    let mut queries = vec![
        query(|_| {}),
        query(|q| q.limit = 3),
        query(|q| q.limit = 1_000),
        query(|q| q.limit = 5_000),
        query(|q| q.key = Some("k5".into())),
        query(|q| q.key = Some("k9".into())),
        query(|q| q.after = Some(JobId(24))),
        query(|q| q.queue = "b".into()),
        query(|q| {
            q.queue = "b".into();
            q.limit = 1_000;
        }),
        query(|q| q.queue = "nope".into()),
        query(|q| {
            q.after = Some(JobId(5));
            q.before = Some(JobId(20));
        }),
        query(|q| {
            q.after = Some(JobId(9));
            q.before = Some(JobId(10));
        }),
        query(|q| q.after = Some(JobId(u64::MAX - 1))),
    ];
    for state in JobState::ALL {
        queries.push(query(|q| q.state = Some(state)));
    }
    let mut out = Vec::new();
    for mut q in queries {
        for _ in 0..100 {
            let page = b.search(&q).await.unwrap();
            let next = page.next;
            out.push((q.clone(), seen(page)));
            match next {
                Some(n) => q.after = Some(n),
                None => break,
            }
        }
    }
    out
}

#[tokio::test]
async fn search_pages_match_the_engine() {
    let config = EngineConfig::default();
    let mut results = Vec::new();
    // The transports refuse priorities (and have no search): they join
    // the conformance scenarios, not this comparison with the engine.
    let backends = backends::queue_backends("q_search", &config).await;
    let (backends, transports): (Vec<_>, Vec<_>) = backends.into_iter().partition(|u| u.priorities);
    for under in transports {
        under.end().await;
    }
    for under in backends {
        let b = under.backend.as_ref();
        workload(b).await;
        results.push((under.name, pages(b).await));
        under.end().await;
    }
    let (name, pages) = &results[0];
    // The engine's own pages, as a check that the workload covers what it
    // means to.
    assert!(
        pages
            .iter()
            .any(|(_, p)| p.jobs.is_empty() && p.next.is_some()),
        "{name}: no page cut by the scan bound"
    );
    let states = [
        JobState::Available,
        JobState::Claimed,
        JobState::Completed,
        JobState::Dead,
        JobState::Cancelled,
        JobState::Scheduled,
    ];
    for state in states {
        assert!(
            pages
                .iter()
                .any(|(q, p)| q.state == Some(state) && !p.jobs.is_empty()),
            "{name}: no {state:?} job"
        );
    }
    for (other, other_pages) in &results[1..] {
        assert_eq!(pages.len(), other_pages.len(), "pages: {name} vs {other}");
        for ((q, p), (_, o)) in pages.iter().zip(other_pages) {
            assert_eq!(p, o, "{name} vs {other}: {q:?}");
        }
    }
    assert!(results.len() == 3 || no_server(), "not every backend ran");
}

/// No server: the Postgres side was skipped (`pg_support` said so).
fn no_server() -> bool {
    crate::pg_support::database_url().is_none()
}
