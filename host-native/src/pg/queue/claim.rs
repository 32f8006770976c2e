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

/// Claims up to `$3` jobs of queue `$1` for worker `$2` in claim order,
/// leased for `$4` ms (NULL: the queue's).
fn claim_sql(s: &str) -> String {
    format!(
        "WITH c AS (
             SELECT id FROM {s}.chime_jobs
             WHERE queue = $1 AND state = {available} AND run_at <= now()
             ORDER BY {order}
             LIMIT $3
             FOR UPDATE SKIP LOCKED)
         UPDATE {s}.chime_jobs j
         SET state = {claimed}, attempt = j.attempt + 1, worker = $2,
             token = nextval('{s}.chime_claim_token'), lease_until = {lease},
             claimed_at = now()
         FROM c WHERE j.id = c.id
         RETURNING j.id, j.token, {lease_ms}, j.attempt, j.payload, j.headers,
                   j.fire, j.priority, {run_at}",
        available = sql::state(JobState::Available),
        claimed = sql::state(JobState::Claimed),
        order = sql::claim_order(),
        lease = lease_until("$4", "$1", s),
        lease_ms = sql::ms("j.lease_until"),
        run_at = sql::ms("j.run_at"),
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
        let mut jobs = rows.iter().map(claimed).collect::<Result<Vec<_>, _>>()?;
        // RETURNING has no order: put them back in claim order.
        jobs.sort_by_key(|c| c.0);
        Ok(jobs.into_iter().map(|(_, c)| c).collect())
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
