//! Claims and heartbeats: leases on the database clock, fenced by token.

use super::{PgQueues, QueueError, db, sql, ts};
use crate::pg::PgError;
use chime_core::{
    Claimed, FireId, Headers, Input, JobId, JobState, LeaseToken, Payload, Timestamp, claim_key,
};

/// The lease a claim or heartbeat grants: `$lease` ms (the call's) or the
/// queue's `leaseMs`, read from its stored config by the statement (so a
/// redeclaration by any replica applies at once), from now.
fn lease_until(lease: &str, queue: &str, s: &str) -> String {
    format!(
        "{now} + COALESCE({lease}::bigint,
             (SELECT (q.config::json ->> 'leaseMs')::bigint
              FROM {s}.chime_queues q WHERE q.name = {queue}))
             * interval '1 millisecond'",
        now = sql::NOW,
    )
}

/// The parameters of a claim statement, by placeholder: the queue, the
/// worker, the most jobs and the lease in ms (NULL: the queue's).
pub(super) struct ClaimParams {
    pub queue: &'static str,
    pub worker: &'static str,
    pub max: &'static str,
    pub lease: &'static str,
}

/// A claim alone: `$1` queue, `$2` worker, `$3` most jobs, `$4` lease.
const CLAIM_PARAMS: ClaimParams = ClaimParams {
    queue: "$1",
    worker: "$2",
    max: "$3",
    lease: "$4",
};

/// The CTEs `pick` (the first pending jobs of the queue in claim order,
/// locked, skipping those other claimers hold) and `cl` (those jobs
/// claimed by the worker, each with a fresh token and a lease; its rows
/// are [`claimed`]'s columns). The claimed table's alias is `cj`, so the
/// CTEs can stand beside others that name theirs `j` (`cycle.rs`).
pub(super) fn claim_ctes(s: &str, p: &ClaimParams) -> String {
    format!(
        "pick AS (
             SELECT id FROM {s}.chime_jobs
             WHERE queue = {queue} AND state = {available} AND run_at <= now()
             ORDER BY {order}
             LIMIT {max}
             FOR UPDATE SKIP LOCKED),
         cl AS (
             UPDATE {s}.chime_jobs cj
             SET state = {claimed}, attempt = cj.attempt + 1, worker = {worker},
                 token = nextval('{s}.chime_claim_token'), lease_until = {lease},
                 claimed_at = now()
             FROM pick WHERE cj.id = pick.id
             RETURNING {returned})",
        queue = p.queue,
        worker = p.worker,
        max = p.max,
        available = sql::state(JobState::Available),
        claimed = sql::state(JobState::Claimed),
        order = sql::claim_order(),
        lease = lease_until(p.lease, p.queue, s),
        returned = claimed_columns(),
    )
}

/// What a claim returns of each job (table alias `cj`), read by
/// [`claimed`]: id, token, lease deadline (ms), attempt, payload,
/// headers, fire, priority, `run_at` (ms).
fn claimed_columns() -> String {
    format!(
        "cj.id, cj.token, {lease_ms} AS lease_ms, cj.attempt, cj.payload, cj.headers,
         cj.fire, cj.priority, {run_at} AS run_at_ms",
        lease_ms = sql::ms("cj.lease_until"),
        run_at = sql::ms("cj.run_at"),
    )
}

/// Claims up to `$3` jobs of queue `$1` for worker `$2` in claim order,
/// leased for `$4` ms (NULL: the queue's).
fn claim_sql(s: &str) -> String {
    format!(
        "WITH {ctes} SELECT * FROM cl",
        ctes = claim_ctes(s, &CLAIM_PARAMS)
    )
}

/// A claimed row, with its claim-order key.
type ClaimedRow = ((std::cmp::Reverse<i32>, Timestamp, JobId), Claimed);

fn claimed(row: &tokio_postgres::Row) -> Result<ClaimedRow, QueueError> {
    let job = JobId(row.get::<_, i64>(0) as u64);
    let stored = |what: &str, e: &dyn std::fmt::Display| PgError::Stored(format!("{what}: {e}"));
    let fire: Option<&str> = row.get(6);
    let claimed = Claimed {
        job,
        token: LeaseToken(row.get::<_, i64>(1) as u64),
        deadline: ts(row.get(2))?,
        attempt: row.get::<_, i32>(3) as u32,
        payload: Payload::from_json(row.get(4)).map_err(|e| stored("stored payload", &e))?,
        headers: serde_json::from_str::<Headers>(row.get(5))
            .map_err(|e| stored("stored headers", &e))?,
        fire: fire.and_then(|f| f.parse::<FireId>().ok()),
    };
    Ok((claim_key(row.get(7), ts(row.get(8))?, job), claimed))
}

/// Claimed rows as jobs, in claim order (`RETURNING` has none).
pub(super) fn in_claim_order<'a>(
    rows: impl Iterator<Item = &'a tokio_postgres::Row>,
) -> Result<Vec<Claimed>, QueueError> {
    let mut jobs = rows.map(claimed).collect::<Result<Vec<_>, _>>()?;
    jobs.sort_by_key(|c| c.0);
    Ok(jobs.into_iter().map(|(_, c)| c).collect())
}

impl PgQueues {
    /// Claims up to `max` runnable jobs of `queue` for `worker`, in claim
    /// order, each with a fresh token and a lease of `lease_ms` (default:
    /// the queue's) on the database clock.
    pub async fn claim(
        &self,
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Vec<Claimed>, QueueError> {
        self.validate(&Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms,
        })?;
        // A queue that does not exist has no jobs (and is not created:
        // workers often start before producers).
        let s = &self.schema;
        let st = self.stmt("claim", || claim_sql(s)).await?;
        let rows = self
            .client
            .query(&st, &[&queue, &worker, &i64::from(max), &lease_ms])
            .await
            .map_err(db("claiming"))?;
        in_claim_order(rows.iter())
    }

    /// Extends a held lease to `lease_ms` (default: the queue's) from now;
    /// returns the new deadline.
    pub async fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> Result<Timestamp, QueueError> {
        self.validate(&Input::Heartbeat {
            job,
            token,
            lease_ms,
        })?;
        let s = &self.schema;
        let sql = || {
            format!(
                "UPDATE {s}.chime_jobs j SET lease_until = {lease}
                 WHERE id = $1 AND token = $2 AND state = {claimed} AND lease_until > now()
                 RETURNING {lease_ms}",
                lease = lease_until("$3", "j.queue", s),
                claimed = sql::state(JobState::Claimed),
                lease_ms = sql::ms("lease_until"),
            )
        };
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&(job.0 as i64), &(token.0 as i64), &lease_ms];
        match self.opt("heartbeat", sql, &params, "heartbeat").await? {
            Some(row) => ts(row.get(0)),
            None => Err(self.refusal(job).await),
        }
    }
}
