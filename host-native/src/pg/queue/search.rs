//! The job search (`GET /v1/queues/{queue}/jobs`): core's
//! [`Engine::search_jobs`](chime_core::Engine::search_jobs) on the tables,
//! page for page. One statement, so a page is one snapshot.
//!
//! Core's rules, as values: the page size (`limit`, 0 means 100, at most
//! [`SEARCH_LIMIT`]), the bound on jobs looked at ([`SEARCH_SCAN`], over
//! every queue in id order, as the engine scans its one job map), and the
//! cursor: when a page stops early (full, or the scan bound reached) with
//! jobs left in the range, `next` is the id before the first job not
//! looked at, so the next page (`after: next`) starts there. A queue that
//! does not exist has no page and no cursor.

use super::{PgQueues, QueueError, job_columns, job_info, sql};
use chime_core::{JobId, JobPage, JobQuery, JobState, SEARCH_LIMIT, SEARCH_SCAN};

/// `$1` queue, `$2` state (NULL: any), `$3` key (NULL: any), ids in
/// `[$4, $5)`, `$6` the page size. Rows: the wanted jobs before the stop
/// (in id order; one row of NULLs if none), each with the stop — the first
/// job not looked at, if the page stopped early.
fn search_sql(s: &str) -> String {
    format!(
        "WITH r AS (
             SELECT j.id,
                    (j.queue = $1
                     AND ($2::text IS NULL OR $2::text =
                          CASE WHEN j.state = {available} AND j.run_at > now() THEN {scheduled}
                               ELSE j.state END)
                     AND ($3::text IS NULL OR j.key = $3::text)) AS wanted
             FROM {s}.chime_jobs j
             WHERE j.id >= $4::bigint AND j.id < $5::bigint
               AND EXISTS (SELECT 1 FROM {s}.chime_queues e WHERE e.name = $1)
             ORDER BY j.id
             LIMIT {scan_rows}),
         w AS (
             SELECT id, wanted, row_number() OVER (ORDER BY id) - 1 AS scanned,
                    count(*) FILTER (WHERE wanted)
                        OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                        AS found
             FROM r),
         stop AS (SELECT min(id) AS id FROM w WHERE found = $6::bigint OR scanned = {scan})
         SELECT {columns}, stop.id
         FROM stop LEFT JOIN (w JOIN {s}.chime_jobs j ON j.id = w.id
                                JOIN {s}.chime_queues q ON q.name = j.queue)
              ON w.wanted AND (stop.id IS NULL OR w.id < stop.id)
         ORDER BY j.id",
        available = sql::state(JobState::Available),
        scheduled = sql::state(JobState::Scheduled),
        scan = SEARCH_SCAN,
        scan_rows = SEARCH_SCAN + 1,
        columns = job_columns(),
    )
}

impl PgQueues {
    /// One page of the jobs of a queue by state, key and id range, as
    /// [`Engine::search_jobs`](chime_core::Engine::search_jobs) gives it.
    pub async fn search(&self, query: &JobQuery) -> Result<JobPage, QueueError> {
        let limit = match query.limit {
            0 => 100,
            n => n.min(SEARCH_LIMIT),
        } as i64;
        let start = query.after.map_or(0, |a| a.0.saturating_add(1));
        let end = query.before.map_or(u64::MAX, |b| b.0);
        if start >= end {
            return Ok(JobPage {
                jobs: Vec::new(),
                next: None,
            });
        }
        // Ids are bigints: beyond i64::MAX there are none.
        let bound = |id: u64| i64::try_from(id).unwrap_or(i64::MAX);
        let (start, end) = (bound(start), bound(end));
        let state = query.state.map(JobState::as_str);
        let s = &self.schema;
        let st = self.stmt("search", || search_sql(s)).await?;
        let rows = self
            .client
            .query(
                &st,
                &[&query.queue, &state, &query.key, &start, &end, &limit],
            )
            .await
            .map_err(super::db("searching jobs"))?;
        let stop = rows.first().and_then(|r| r.get::<_, Option<i64>>(17));
        let mut jobs = Vec::with_capacity(rows.len());
        for row in &rows {
            if row.get::<_, Option<i64>>(0).is_some() {
                jobs.push(job_info(row)?);
            }
        }
        Ok(JobPage {
            jobs,
            next: stop.map(|id| JobId(id as u64 - 1)),
        })
    }
}
