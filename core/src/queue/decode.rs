//! The compact decoder's records of the queue state a snapshot keeps (see
//! `wire::decode`): fields in declaration order, as the derived
//! `Deserialize` impls in `store.rs` and `view.rs` read them.

use super::Queues;
use super::store::{DedupEntry, Job, JobLease, QueueState};
use super::view::QueuesData;
use crate::time::Timestamp;
use crate::wire::decode::{Field, Restore, Restoring, Slot, record_decoder};
use crate::wire::ids::{FireId, JobId, LeaseToken};
use crate::wire::job::JobState;
use crate::wire::payload::{Headers, Payload};
use crate::wire::queue_config::{QueueConfig, QueueTotals};
use std::collections::BTreeMap;

record_decoder! {
    JobB => Job, "Job", "15 elements", deny_unknown: true;
    queue: String, "queue", req;
    state: JobState, "state", req;
    payload: Payload, "payload", req;
    headers: Headers, "headers", def;
    priority: i32, "priority", def;
    key: Option<String>, "key", def;
    fire: Option<FireId>, "fire", def;
    attempt: u32, "attempt", def;
    interruptions: u32, "interruptions", def;
    max_attempts: Option<u32>, "maxAttempts", def;
    run_at: Timestamp, "runAt", req;
    lease: Option<JobLease>, "lease", def;
    last_error: Option<String>, "lastError", def;
    finished_at: Option<Timestamp>, "finishedAt", def;
    retain_until: Option<Timestamp>, "retainUntil", def;
}

record_decoder! {
    JobLeaseB => JobLease, "JobLease", "4 elements", deny_unknown: true;
    token: LeaseToken, "token", req;
    deadline: Timestamp, "deadline", req;
    worker: String, "worker", req;
    interrupted: bool, "interrupted", def;
}

record_decoder! {
    DedupEntryB => DedupEntry, "DedupEntry", "2 elements", deny_unknown: true;
    job: JobId, "job", req;
    expires_at: Option<Timestamp>, "expiresAt", def;
}

record_decoder! {
    QueueStateB => QueueState, "QueueState", "4 elements", deny_unknown: true;
    config: QueueConfig, "config", req;
    totals: QueueTotals, "totals", req;
    dedup: BTreeMap<String, DedupEntry>, "dedup", def;
    fire_keys: BTreeMap<String, DedupEntry>, "fireKeys", def;
    ; skip { idx: Default::default() }
}

record_decoder! {
    QueuesDataB => QueuesData, "QueuesData", "5 elements", deny_unknown: true;
    last_job: u64, "lastJob", req;
    last_token: u64, "lastToken", req;
    queues: BTreeMap<String, QueueState>, "queues", req;
    jobs: BTreeMap<JobId, Job>, "jobs", req;
    finished: Vec<(JobId, Option<FireId>)>, "finished", def;
}

/// `Queues` reads its fields, then rebuilds and checks its indexes, as its
/// `Deserialize` impl does.
impl Restore for Queues {
    type Parts = QueuesData;

    fn restore(p: QueuesData) -> Result<Queues, String> {
        Queues::restored(p.last_job, p.last_token, p.queues, p.jobs, p.finished)
    }
}

impl Field for Queues {
    type Store = Restoring<Queues>;

    fn slot(store: &mut Restoring<Queues>) -> Slot<'_> {
        Slot::Checked(store)
    }

    fn take(store: &mut Restoring<Queues>) -> Option<Queues> {
        store.take()
    }
}
