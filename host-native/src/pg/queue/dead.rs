//! Dead letters: bounded per queue (the oldest beyond the bound become
//! dropped, as in the engine), redriven, or purged.

use super::{PgQueues, QueueError, sql, stored_state};
use crate::backend::Redriven;
use chime_core::{Error as CoreError, JobId, JobState, Timestamp};

/// Redrives the dead letters of queue `$1` (all, or job `$2`): available
/// now with attempt 0; one whose key another live job holds now loses
/// it, the others take theirs back ([`sql::remember_keys`]). Counts the
/// jobs redriven and the keys they lost, and wakes the queue's workers
/// (`$3` the channel) inside the transaction when any was.
fn redrive_sql(s: &str) -> String {
    let dead = sql::state(JobState::Dead);
    let keys = sql::remember_keys(s, "kt", "u", "true");
    format!(
        "WITH d AS (
             SELECT id, queue, key FROM {s}.chime_jobs
             WHERE queue = $1 AND state = {dead} AND ($2::bigint IS NULL OR id = $2)
             FOR UPDATE),
         taken AS (
             SELECT d.id FROM d JOIN {s}.chime_job_keys k
                 ON k.queue = d.queue AND k.key = d.key
             WHERE k.job <> d.id AND k.expires_at IS NULL),
         u AS (
             UPDATE {s}.chime_jobs j
             SET state = {available}, attempt = 0, run_at = {now}, finished_at = NULL,
                 key = CASE WHEN j.id IN (SELECT id FROM taken) THEN NULL ELSE j.key END
             FROM d WHERE j.id = d.id
             RETURNING j.id AS job, j.queue, j.key),
         {keys}
         SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM taken),
                (SELECT count(*) FROM kt),
                CASE WHEN EXISTS (SELECT 1 FROM u) THEN pg_notify($3, $1::text) END",
        available = sql::state(JobState::Available),
        now = sql::NOW,
    )
}

impl PgQueues {
    /// Keeps at most `limits.deadLettersPerQueue` dead letters in `queue`:
    /// the oldest beyond it ([`chime_core::EVICTION_ORDER`]) become
    /// `dropped`, as in the engine.
    pub(super) async fn trim_dead(&self, queue: &str) -> Result<(), QueueError> {
        let s = &self.schema;
        let limit = self.engine.limits.dead_letters_per_queue as i64;
        let sql = || {
            format!(
                "UPDATE {s}.chime_jobs j SET state = {dropped}
                 WHERE id IN (
                     SELECT id FROM {s}.chime_jobs
                     WHERE queue = $1 AND state = {dead}
                     ORDER BY {newest}
                     OFFSET $2)
                 RETURNING {event}",
                dropped = sql::state(JobState::Dropped),
                dead = sql::state(JobState::Dead),
                newest = sql::newest_first(""),
                event = sql::event(
                    "$3",
                    &sql::state(JobState::Dropped),
                    "j",
                    "j.attempt",
                    "'dead_letter_limit'",
                    sql::NONE,
                    sql::NONE,
                ),
            )
        };
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&queue, &limit, &self.channel];
        self.exec("trim_dead", sql, &params, "bounding dead letters")
            .await?;
        Ok(())
    }

    /// Makes dead letters of `queue` available again, now, with their attempt
    /// count reset: one (`job`) or all. Returns how many, and how many of
    /// them lost their idempotency key because another live job holds it
    /// now (it was reused after the dedup window): two live jobs never
    /// share a key. As in the engine, a single job must be a dead letter of
    /// that queue (`unknown_job`, `invalid_state`).
    pub async fn redrive(&self, queue: &str, job: Option<JobId>) -> Result<Redriven, QueueError> {
        self.existing_queue(queue).await?;
        if let Some(id) = job {
            self.check_dead_letter(queue, id).await?;
        }
        let s = &self.schema;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&queue, &job.map(|j| j.0 as i64), &self.channel];
        let row = self
            .opt("redrive", || redrive_sql(s), &params, "redriving")
            .await?
            .expect("SELECT returns a row");
        let (count, keys_dropped): (i64, i64) = (row.get(0), row.get(1));
        Ok(Redriven {
            count: count as u64,
            keys_dropped: keys_dropped as u64,
        })
    }

    /// Refuses to redrive `id` unless it is a dead letter of `queue`.
    async fn check_dead_letter(&self, queue: &str, id: JobId) -> Result<(), QueueError> {
        let s = &self.schema;
        let sql = || format!("SELECT state FROM {s}.chime_jobs WHERE id = $1 AND queue = $2");
        let row = self
            .opt("job_state", sql, &[&(id.0 as i64), &queue], "reading a job")
            .await?;
        let Some(row) = row else {
            return Err(CoreError::UnknownJob(id).into());
        };
        match stored_state(row.get(0))? {
            JobState::Dead => Ok(()),
            state => Err(CoreError::InvalidState {
                job: id,
                state: state.as_str(),
                op: "redrive",
            }
            .into()),
        }
    }

    /// Deletes the dead letters of `queue` that died before `before` (or
    /// all); returns how many. Their keys stay remembered until they expire.
    pub async fn purge_dead(
        &self,
        queue: &str,
        before: Option<Timestamp>,
    ) -> Result<u64, QueueError> {
        self.existing_queue(queue).await?;
        let s = &self.schema;
        let sql = || {
            format!(
                "DELETE FROM {s}.chime_jobs
                 WHERE queue = $1 AND state = {dead}
                   AND ($2::bigint IS NULL
                        OR finished_at < timestamptz 'epoch' + $2::bigint * interval '1 millisecond')",
                dead = sql::state(JobState::Dead),
            )
        };
        let before = before.map(Timestamp::as_millis);
        self.exec(
            "purge_dead",
            sql,
            &[&queue, &before],
            "purging dead letters",
        )
        .await
    }
}
