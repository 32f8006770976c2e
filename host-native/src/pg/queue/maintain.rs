//! Housekeeping, run by every replica: rescue expired leases, prune
//! finished jobs by each queue's retention, forget expired keys.

use super::{PgQueues, QueueError, db, sql, stored_config};
use chime_core::JobState;

/// Deletes the finished jobs retention forgets ([`JobState::is_pruned`]):
/// per queue of `$1`, those beyond the newest `$2` (its
/// `retention.completedMax`) and those finished at least `$3` ms (its
/// `retention.completedMs`) ago.
fn prune_sql(s: &str) -> String {
    format!(
        "WITH r AS (
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
                 AS r(queue, keep, keep_ms)),
         f AS (
             SELECT j.id, j.finished_at, r.keep, r.keep_ms,
                    row_number() OVER (PARTITION BY j.queue ORDER BY {newest}) AS newer
             FROM {s}.chime_jobs j JOIN r ON r.queue = j.queue
             WHERE j.state IN {pruned})
         DELETE FROM {s}.chime_jobs j USING f
         WHERE j.id = f.id
           AND (f.newer > f.keep
                OR f.finished_at + f.keep_ms * interval '1 millisecond' <= now())",
        newest = sql::newest_first("j"),
        pruned = sql::states(JobState::is_pruned),
    )
}

impl PgQueues {
    /// Housekeeping that every replica runs periodically: rescues up to
    /// `max` expired leases ([`rescue_expired`](Self::rescue_expired)),
    /// prunes finished jobs (completed, cancelled, dropped) beyond each
    /// queue's `retention.completedMax` or older than its
    /// `retention.completedMs`, and forgets expired idempotency keys.
    /// Returns the number of leases rescued.
    pub async fn maintain(&self, max: u32) -> Result<u32, QueueError> {
        let rescued = self.rescue_expired(max).await?;
        self.prune().await?;
        let s = &self.schema;
        let sql = || {
            format!(
                "DELETE FROM {s}.chime_job_keys k WHERE {}",
                sql::key_expired("k")
            )
        };
        self.exec("forget_keys", sql, &[], "forgetting keys")
            .await?;
        Ok(rescued)
    }

    /// Prunes finished jobs by each queue's retention, read from the
    /// queue's stored config with core's defaults (as River passes the
    /// horizons its Go code computes into its SQL).
    async fn prune(&self) -> Result<(), QueueError> {
        let s = &self.schema;
        let st = self
            .stmt("queue_configs", || {
                format!("SELECT name, config FROM {s}.chime_queues")
            })
            .await?;
        let rows = self
            .client
            .query(&st, &[])
            .await
            .map_err(db("reading queue configs"))?;
        let (mut queue, mut keep, mut keep_ms) = (Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            let name: String = row.get(0);
            let retention = stored_config(&name, row.get(1))?.retention;
            queue.push(name);
            keep.push(i64::from(retention.completed_max));
            keep_ms.push(retention.completed_ms);
        }
        self.exec(
            "prune",
            || prune_sql(s),
            &[&queue, &keep, &keep_ms],
            "pruning finished jobs",
        )
        .await?;
        Ok(())
    }
}
