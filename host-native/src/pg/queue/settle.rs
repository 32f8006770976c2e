//! The end of an attempt: complete (one or a batch), fail (retried after
//! core's backoff, or dead / dropped), the rescue of expired leases, and
//! cancel. Every change to a claimed job is fenced by its token.

use super::{PgQueues, QueueError, db, sql, stored_config, ts};
use crate::backend::Failed;
use chime_core::{
    AfterFailure, CancelReason, Error as CoreError, Input, JobId, JobState, LeaseToken,
    QueueConfig, Timestamp, after_failure, truncate_text,
};
use tokio_postgres::types::ToSql;

/// Which claimed jobs a fenced statement may change: those still within
/// their lease (a worker's heartbeat, complete, fail) or those past it (the
/// rescue).
#[derive(Clone, Copy)]
enum Lease {
    Live,
    Expired,
}

impl Lease {
    /// The statement cache key of statement `what` with this condition.
    fn key(self, what: &'static str) -> &'static str {
        match (what, self) {
            ("finish", Lease::Live) => "finish_live",
            ("finish", Lease::Expired) => "finish_expired",
            (_, Lease::Live) => "retry_live",
            (_, Lease::Expired) => "retry_expired",
        }
    }

    /// The events of an attempt that ends (`kind` with `reason` and
    /// `run_at`, SQL expressions) on job row `j`, notified on channel
    /// parameter `chan`, as the engine orders them: a rescue's
    /// `lease_expired` first, which takes the time since the claim (the
    /// driver forgets the claim at the first outcome).
    fn events(self, chan: &str, kind: &str, reason: &str, run_at: &str) -> String {
        let since = sql::since_claim("j");
        let outcome =
            |duration: &str| sql::event(chan, kind, "j", "j.attempt", reason, run_at, duration);
        match self {
            Lease::Live => outcome(&since),
            Lease::Expired => format!(
                "{}, {}",
                sql::event(
                    chan,
                    "'lease_expired'",
                    "j",
                    "j.attempt",
                    sql::NONE,
                    sql::NONE,
                    &since
                ),
                outcome(sql::NONE)
            ),
        }
    }

    fn sql(self) -> &'static str {
        match self {
            Lease::Live => "lease_until > now()",
            Lease::Expired => "lease_until <= now()",
        }
    }
}

/// The reason of a cancel through the port, as the engine's event names it.
fn cancel_reason() -> String {
    match serde_json::to_value(CancelReason::Requested) {
        Ok(serde_json::Value::String(s)) => s,
        other => unreachable!("a cancel reason serializes as a string: {other:?}"),
    }
}

/// The ids and tokens of `jobs`, as the arrays [`complete_ctes`] takes.
pub(super) fn ids_and_tokens(jobs: &[(JobId, LeaseToken)]) -> (Vec<i64>, Vec<i64>) {
    jobs.iter().map(|(j, t)| (j.0 as i64, t.0 as i64)).unzip()
}

/// The CTEs `done`, `j` (the jobs of arrays `ids` and `tokens`, SQL
/// parameters, that are held with those tokens and within their lease,
/// completed; columns `id`, `token`, `queue`, `key`, `attempt`, `fire`,
/// `claimed_at`) and `k` ([`sql::expire_keys`] of their keys).
pub(super) fn complete_ctes(s: &str, ids: &str, tokens: &str) -> String {
    format!(
        "done AS (SELECT * FROM unnest({ids}::bigint[], {tokens}::bigint[]) AS d(id, token)),
         j AS (
             UPDATE {s}.chime_jobs c
             SET state = {completed}, finished_at = now(), token = NULL,
                 worker = NULL, lease_until = NULL
             FROM done
             WHERE c.id = done.id AND c.token = done.token AND c.state = {claimed}
               AND c.lease_until > now()
             RETURNING c.id, done.token, c.queue, c.key, c.attempt, c.fire, c.claimed_at),
         {k}",
        completed = sql::state(JobState::Completed),
        claimed = sql::state(JobState::Claimed),
        k = sql::expire_keys(s),
    )
}

/// The `completed` event of a row of [`complete_ctes`]' `j`, notified on
/// channel parameter `chan`.
pub(super) fn complete_event(chan: &str) -> String {
    sql::event(
        chan,
        &sql::state(JobState::Completed),
        "j",
        "j.attempt",
        sql::NONE,
        sql::NONE,
        &sql::since_claim("j"),
    )
}

/// `job = $1 AND token = $2`, claimed, with its lease as `lease` says.
fn fenced(lease: Lease) -> String {
    format!(
        "id = $1 AND token = $2 AND state = {} AND {}",
        sql::state(JobState::Claimed),
        lease.sql()
    )
}

/// A claimed job's failed attempt, read with its queue's config and seed
/// as they are now (not as cached: another replica may have redeclared the
/// queue), so core decides with what the table says.
struct Attempt {
    job: JobId,
    token: LeaseToken,
    queue: String,
    attempt: u32,
    max_attempts: Option<u32>,
    config: QueueConfig,
    seed: u64,
}

/// The columns [`Attempt::read`] reads, of `chime_jobs j` joined with its
/// queue `q`.
const ATTEMPT_COLUMNS: &str = "j.id, j.token, j.queue, j.attempt, j.max_attempts, q.config, q.seed";

impl Attempt {
    fn read(row: &tokio_postgres::Row) -> Result<Attempt, QueueError> {
        let queue: String = row.get(2);
        Ok(Attempt {
            job: JobId(row.get::<_, i64>(0) as u64),
            token: LeaseToken(row.get::<_, i64>(1) as u64),
            config: stored_config(&queue, row.get(5))?,
            queue,
            attempt: row.get::<_, i32>(3) as u32,
            max_attempts: row.get::<_, Option<i32>>(4).map(|n| n as u32),
            seed: row.get::<_, i64>(6) as u64,
        })
    }
}

impl PgQueues {
    /// Why a fenced statement changed no row: the job does not exist
    /// (`unknown_job`) or is not held with that token (`lease_lost`).
    pub(super) async fn refusal(&self, job: JobId) -> QueueError {
        let s = &self.schema;
        let sql = || format!("SELECT 1 FROM {s}.chime_jobs WHERE id = $1");
        match self
            .opt("job_exists", sql, &[&(job.0 as i64)], "checking a job")
            .await
        {
            Ok(Some(_)) => CoreError::LeaseLost { job }.into(),
            Ok(None) => CoreError::UnknownJob(job).into(),
            Err(e) => e,
        }
    }

    /// Marks a held job completed; its key stays remembered for the
    /// queue's dedup window.
    pub async fn complete(&self, job: JobId, token: LeaseToken) -> Result<(), QueueError> {
        let done = self
            .finish(job, token, JobState::Completed, None, Lease::Live)
            .await?;
        if done {
            Ok(())
        } else {
            Err(self.refusal(job).await)
        }
    }

    /// Completes many held jobs in one statement (one commit), as a worker
    /// pool does with the jobs it finished since its last call; each result
    /// is [`complete`](Self::complete)'s for that job, in input order.
    pub async fn complete_many(
        &self,
        jobs: &[(JobId, LeaseToken)],
    ) -> Result<Vec<Result<(), QueueError>>, QueueError> {
        let (ids, tokens) = ids_and_tokens(jobs);
        let s = &self.schema;
        let sql = || {
            format!(
                "WITH {ctes}
                 SELECT j.id, j.token, (SELECT count(*) FROM k), {event} FROM j",
                ctes = complete_ctes(s, "$1", "$2"),
                event = complete_event("$3"),
            )
        };
        let st = self.stmt("complete_many", sql).await?;
        let rows = self
            .client
            .query(&st, &[&ids, &tokens, &self.channel])
            .await
            .map_err(db("completing jobs"))?;
        self.completed(jobs, rows.iter().map(|r| (r.get(0), r.get(1))))
            .await
    }

    /// Each of `jobs`' result, given the `(id, token)` pairs a completing
    /// statement changed: `Ok` for those, the refusal for the others.
    pub(super) async fn completed(
        &self,
        jobs: &[(JobId, LeaseToken)],
        changed: impl Iterator<Item = (i64, i64)>,
    ) -> Result<Vec<Result<(), QueueError>>, QueueError> {
        // By job and token: the same job may come twice, once with a stale
        // token.
        let completed: std::collections::BTreeSet<(i64, i64)> = changed.collect();
        let mut out = Vec::with_capacity(jobs.len());
        for &(job, token) in jobs {
            if completed.contains(&(job.0 as i64, token.0 as i64)) {
                out.push(Ok(()));
            } else {
                out.push(Err(self.refusal(job).await));
            }
        }
        Ok(out)
    }

    /// Ends a job claimed with `token` in `state`; `false` when the fence
    /// refused.
    async fn finish(
        &self,
        job: JobId,
        token: LeaseToken,
        state: JobState,
        error: Option<&str>,
        lease: Lease,
    ) -> Result<bool, QueueError> {
        let s = &self.schema;
        let sql = || {
            format!(
                "WITH j AS (
                     UPDATE {s}.chime_jobs
                     SET state = $3, finished_at = now(), token = NULL, worker = NULL,
                         lease_until = NULL, last_error = COALESCE($4, last_error)
                     WHERE {fenced}
                     RETURNING id, queue, key, attempt, fire, claimed_at),
                 {k},
                 ev AS MATERIALIZED (SELECT {events} FROM j)
                 SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM k),
                        (SELECT count(*) FROM ev)",
                fenced = fenced(lease),
                k = sql::expire_keys(s),
                events = lease.events(
                    "$5",
                    "$3::text",
                    "CASE WHEN $3::text = 'completed' THEN NULL ELSE 'exhausted' END",
                    sql::NONE,
                ),
            )
        };
        let params: [&(dyn ToSql + Sync); 5] = [
            &(job.0 as i64),
            &(token.0 as i64),
            &state.as_str(),
            &error,
            &self.channel,
        ];
        let row = self
            .opt(lease.key("finish"), sql, &params, "finishing a job")
            .await?
            .expect("SELECT returns a row");
        Ok(row.get::<_, i64>(0) == 1)
    }

    /// Records a failed attempt of a held job: retried after core's backoff
    /// (or at `retry_at`; one in the past means now), or dead / dropped
    /// when out of attempts.
    pub async fn fail(
        &self,
        job: JobId,
        token: LeaseToken,
        error: &str,
        retry_at: Option<Timestamp>,
    ) -> Result<Failed, QueueError> {
        self.validate(&Input::Fail {
            job,
            token,
            error: error.to_owned(),
            retry_at,
        })?;
        let error = truncate_text(error, self.engine.limits.text_bytes);
        let s = &self.schema;
        let sql = || {
            format!(
                "SELECT {ATTEMPT_COLUMNS}
                 FROM {s}.chime_jobs j JOIN {s}.chime_queues q ON q.name = j.queue
                 WHERE j.id = $1 AND j.token = $2 AND j.state = {claimed}
                   AND j.lease_until > now()",
                claimed = sql::state(JobState::Claimed),
            )
        };
        let params: [&(dyn ToSql + Sync); 2] = [&(job.0 as i64), &(token.0 as i64)];
        let Some(row) = self
            .opt("fail_read", sql, &params, "reading a failed job")
            .await?
        else {
            return Err(self.refusal(job).await);
        };
        match self
            .settle_failure(&Attempt::read(&row)?, error, retry_at, Lease::Live)
            .await?
        {
            Some(failed) => Ok(failed),
            // The lease ran out between the read and the write.
            None => Err(CoreError::LeaseLost { job }.into()),
        }
    }

    /// Applies core's decision for a failed attempt; `None` when the job's
    /// row no longer matches (claimed with the attempt's token, its lease
    /// as `lease`).
    async fn settle_failure(
        &self,
        a: &Attempt,
        error: &str,
        retry_at: Option<Timestamp>,
        lease: Lease,
    ) -> Result<Option<Failed>, QueueError> {
        match after_failure(&a.config, a.max_attempts, a.seed, a.job, a.attempt) {
            AfterFailure::Retry { delay_ms } => {
                self.retry(
                    a,
                    error,
                    retry_at.map(Timestamp::as_millis),
                    delay_ms,
                    lease,
                )
                .await
            }
            AfterFailure::Exhausted { dead_letter } => {
                let (state, failed) = if dead_letter {
                    (JobState::Dead, Failed::Dead)
                } else {
                    (JobState::Dropped, Failed::Dropped)
                };
                let done = self
                    .finish(a.job, a.token, state, Some(error), lease)
                    .await?;
                if done && dead_letter {
                    self.trim_dead(&a.queue).await?;
                }
                Ok(done.then_some(failed))
            }
        }
    }

    /// Makes a failed attempt's job available again at `retry_at` (epoch
    /// ms) or `delay_ms` from now (core's backoff).
    async fn retry(
        &self,
        a: &Attempt,
        error: &str,
        retry_at: Option<i64>,
        delay_ms: i64,
        lease: Lease,
    ) -> Result<Option<Failed>, QueueError> {
        let s = &self.schema;
        let sql = || {
            format!(
                "WITH j AS (
                     UPDATE {s}.chime_jobs
                     SET state = {available}, token = NULL, worker = NULL,
                         lease_until = NULL, last_error = $3, run_at = {run_at}
                     WHERE {fenced}
                     RETURNING id, queue, run_at, attempt, fire, claimed_at)
                 SELECT {run_at_ms}, {run_at_ms} - {now}, {wake}, {events} FROM j",
                available = sql::state(JobState::Available),
                run_at = sql::run_at("$4::bigint", "$5::bigint"),
                fenced = fenced(lease),
                run_at_ms = sql::ms("j.run_at"),
                now = sql::ms("now()"),
                wake = sql::wake("$6", "j.queue", "j.run_at"),
                events = lease.events("$6", "'retried'", "$3::text", &sql::ms("j.run_at")),
            )
        };
        let params: [&(dyn ToSql + Sync); 6] = [
            &(a.job.0 as i64),
            &(a.token.0 as i64),
            &error,
            &retry_at,
            &delay_ms,
            &self.channel,
        ];
        let Some(row) = self
            .opt(lease.key("retry"), sql, &params, "retrying a job")
            .await?
        else {
            return Ok(None);
        };
        let delay_ms: i64 = row.get(1);
        Ok(Some(Failed::Retry {
            run_at: ts(row.get(0))?,
            delay_ms,
        }))
    }

    /// Rescues up to `max` jobs whose lease expired (oldest deadline
    /// first): each counts as a failed attempt with error
    /// `lease_expired`. Returns how many this call rescued (another
    /// replica may rescue some of the same ones; each is rescued once).
    pub async fn rescue_expired(&self, max: u32) -> Result<u32, QueueError> {
        let s = &self.schema;
        let sql = || {
            format!(
                "SELECT {ATTEMPT_COLUMNS}
                 FROM {s}.chime_jobs j JOIN {s}.chime_queues q ON q.name = j.queue
                 WHERE j.state = {claimed} AND j.lease_until <= now()
                 ORDER BY {order} LIMIT $1",
                claimed = sql::state(JobState::Claimed),
                order = sql::expiry_order("j"),
            )
        };
        let st = self.stmt("rescue_find", sql).await?;
        let rows = self
            .client
            .query(&st, &[&i64::from(max)])
            .await
            .map_err(db("finding expired leases"))?;
        let mut rescued = 0;
        for row in rows {
            let attempt = Attempt::read(&row)?;
            if self
                .settle_failure(&attempt, "lease_expired", None, Lease::Expired)
                .await?
                .is_some()
            {
                rescued += 1;
            }
        }
        Ok(rescued)
    }

    /// Cancels a job that has not ended: a waiting one never runs, a
    /// claimed one's token is void from now on (its worker's heartbeat or
    /// completion is `lease_lost`). An ended job is `invalid_state`, as in
    /// the engine.
    pub async fn cancel(&self, job: JobId) -> Result<(), QueueError> {
        let s = &self.schema;
        let sql = || {
            format!(
                "WITH prev AS (
                     SELECT id, state FROM {s}.chime_jobs WHERE id = $1 FOR UPDATE),
                 j AS (
                     UPDATE {s}.chime_jobs c
                     SET state = {cancelled}, finished_at = now(), token = NULL,
                         worker = NULL, lease_until = NULL
                     FROM prev
                     WHERE c.id = prev.id AND prev.state IN {live}
                     RETURNING c.id, c.queue, c.key, c.attempt, c.fire, c.claimed_at,
                               prev.state AS was),
                 {k},
                 ev AS MATERIALIZED (SELECT {event} FROM j)
                 SELECT (SELECT state FROM prev), (SELECT count(*) FROM j),
                        (SELECT count(*) FROM k), (SELECT count(*) FROM ev)",
                cancelled = sql::state(JobState::Cancelled),
                live = sql::states(|s| !s.is_terminal()),
                k = sql::expire_keys(s),
                // The time since the claim only if it was running, as the
                // driver (which forgets a claim at its attempt's end).
                event = sql::event(
                    "$2",
                    &sql::state(JobState::Cancelled),
                    "j",
                    "j.attempt",
                    &format!("'{}'", cancel_reason()),
                    sql::NONE,
                    &format!(
                        "CASE WHEN j.was = {claimed} THEN {since} END",
                        claimed = sql::state(JobState::Claimed),
                        since = sql::since_claim("j"),
                    ),
                ),
            )
        };
        let params: [&(dyn ToSql + Sync); 2] = [&(job.0 as i64), &self.channel];
        let row = self
            .opt("cancel", sql, &params, "cancelling a job")
            .await?
            .expect("SELECT returns a row");
        let state: Option<String> = row.get(0);
        match (state.as_deref(), row.get::<_, i64>(1)) {
            (None, _) => Err(CoreError::UnknownJob(job).into()),
            (Some(_), 1) => Ok(()),
            (Some(state), _) => Err(CoreError::InvalidState {
                job,
                state: super::stored_state(state)?.as_str(),
                op: "cancel",
            }
            .into()),
        }
    }
}
