//! Listing the jobs of one queue, by state, key and id range, a page at a
//! time: what an HTTP `GET /v1/queues/{queue}/jobs` shows. Bounded twice,
//! so a read never holds the host's engine task for long: at most
//! `limit` jobs returned and at most [`SEARCH_SCAN`] jobs looked at.

use super::Queues;
use crate::wire::ids::JobId;
use crate::wire::job::{JobInfo, JobState};
use serde::{Deserialize, Serialize};

/// Most jobs one search looks at (over every queue, in id order) before
/// it returns what it found with a cursor to go on from.
pub const SEARCH_SCAN: usize = 10_000;

/// Most jobs one page returns.
pub const SEARCH_LIMIT: usize = 1_000;

/// What to list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobQuery {
    /// The queue.
    pub queue: String,
    /// Only jobs in this state.
    #[serde(default)]
    pub state: Option<JobState>,
    /// Only jobs with this idempotency key.
    #[serde(default)]
    pub key: Option<String>,
    /// Only ids greater than this (the previous page's `next`).
    #[serde(default)]
    pub after: Option<JobId>,
    /// Only ids smaller than this.
    #[serde(default)]
    pub before: Option<JobId>,
    /// Most jobs returned (capped at [`SEARCH_LIMIT`]; 0 means 100).
    #[serde(default)]
    pub limit: usize,
}

/// One page of a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct JobPage {
    /// The jobs found, by id.
    pub jobs: Vec<JobInfo>,
    /// Where the next page starts (`after`), if the range is not done.
    pub next: Option<JobId>,
}

impl Queues {
    /// The jobs `query` asks for, in id order.
    pub(crate) fn search(&self, query: &JobQuery) -> JobPage {
        let limit = match query.limit {
            0 => 100,
            n => n.min(SEARCH_LIMIT),
        };
        let Some(q) = self.queues.get(&query.queue) else {
            return JobPage {
                jobs: Vec::new(),
                next: None,
            };
        };
        let start = query.after.map_or(0, |a| a.0.saturating_add(1));
        let end = query.before.map_or(u64::MAX, |b| b.0);
        let mut jobs = Vec::new();
        let mut next = None;
        if start < end {
            for (scanned, (&id, job)) in self.jobs.range(JobId(start)..JobId(end)).enumerate() {
                if jobs.len() == limit || scanned == SEARCH_SCAN {
                    // More may follow: the caller goes on after the last
                    // job looked at.
                    next = Some(JobId(id.0 - 1));
                    break;
                }
                let wanted = job.queue == query.queue
                    && query.state.is_none_or(|s| s == job.state)
                    && query
                        .key
                        .as_ref()
                        .is_none_or(|k| job.key.as_ref() == Some(k));
                if wanted {
                    jobs.push(job.info(id, &q.config));
                }
            }
        }
        JobPage { jobs, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Engine, EngineConfig, EnqueueRequest, Input, Payload, QueueConfig, Timestamp};

    #[test]
    fn search_filters_by_queue_state_and_key_and_pages_by_id() {
        let mut e = Engine::new(EngineConfig::default());
        let now = Timestamp::from_millis(1_000).unwrap();
        for q in ["a", "b"] {
            e.handle(now, Input::DeclareQueue(QueueConfig::new(q)))
                .unwrap();
        }
        for i in 0..6 {
            let mut r = EnqueueRequest::new(if i % 2 == 0 { "a" } else { "b" }, Payload::null());
            r.key = Some(format!("k{i}"));
            if i == 4 {
                r.delay_ms = Some(60_000);
            }
            e.handle(now, Input::Enqueue(r)).unwrap();
        }
        let ids = |p: &JobPage| p.jobs.iter().map(|j| j.id.0).collect::<Vec<_>>();
        let q = |f: fn(&mut JobQuery)| {
            let mut q = JobQuery {
                queue: "a".into(),
                ..JobQuery::default()
            };
            f(&mut q);
            e.search_jobs(&q)
        };
        assert_eq!(ids(&q(|_| {})), [1, 3, 5]);
        assert_eq!(ids(&q(|q| q.state = Some(JobState::Scheduled))), [5]);
        assert_eq!(ids(&q(|q| q.key = Some("k2".into()))), [3]);
        assert_eq!(ids(&q(|q| q.before = Some(JobId(5)))), [1, 3]);
        let first = q(|q| q.limit = 2);
        assert_eq!((ids(&first), first.next), (vec![1, 3], Some(JobId(3))));
        let rest = q(|q| {
            q.limit = 2;
            q.after = Some(JobId(3));
        });
        assert_eq!((ids(&rest), rest.next), (vec![5], None));
        let none = e.search_jobs(&JobQuery {
            queue: "nope".into(),
            ..JobQuery::default()
        });
        assert!(none.jobs.is_empty() && none.next.is_none());
    }
}
