//! A worker pool's cycle in one statement: the completions it has to
//! report and its next claim, in one transaction and one commit.
//!
//! Why: a pool on Postgres is bound by commit latency, not by CPU. Each
//! cycle was two commits — a claim, then one `complete_many` for the jobs
//! it ran — so a pool of 16 did at most 16 jobs per two WAL flushes
//! (`BENCHMARKS.md`, "Postgres mode: the server API and
//! graphile-worker"). With the completions carried by the next claim, a
//! cycle is one flush. The statement is made of the same parts as
//! [`PgQueues::complete_many`] and [`PgQueues::claim`] (`settle.rs`,
//! `claim.rs`): the same fence on each completion, the same claim order,
//! token and lease, the same events; only the transaction is shared.
//!
//! The two halves touch different rows: the completions only rows held
//! (`claimed`) with their tokens, the claim only `available` ones, so
//! neither sees the other's changes in the statement's snapshot.

use super::claim::{ClaimParams, claim_ctes, in_claim_order};
use super::settle::{complete_ctes, complete_event, ids_and_tokens};
use super::{PgQueues, QueueError, db};
use chime_core::{Claimed, Input, JobId, LeaseToken};

/// `$1`/`$2` the completions' ids and tokens, `$3` the channel, `$4`..`$7`
/// the claim's.
const PARAMS: ClaimParams = ClaimParams {
    queue: "$4",
    worker: "$5",
    max: "$6",
    lease: "$7",
};

/// The statement: one row per completed job (`false` in the last column,
/// its id and token first) and one per claimed job (`true`, the columns
/// of a claim).
fn cycle_sql(s: &str) -> String {
    format!(
        "WITH {complete},
         ev AS MATERIALIZED (SELECT {event} FROM j),
         {claim}
         SELECT j.id, j.token, NULL::bigint, NULL::int, NULL::text, NULL::text, NULL::text,
                NULL::int, (SELECT count(*) FROM ev), false
         FROM j
         UNION ALL
         SELECT cl.*, true FROM cl",
        complete = complete_ctes(s, "$1", "$2"),
        event = complete_event("$3"),
        claim = claim_ctes(s, &PARAMS),
    )
}

/// The results of [`PgQueues::complete_and_claim`]: each completion's, in
/// input order, and the jobs claimed, in claim order.
pub type Cycle = (Vec<Result<(), QueueError>>, Vec<Claimed>);

impl PgQueues {
    /// Completes `done` (as [`complete_many`](Self::complete_many) would)
    /// and claims up to `max` jobs of `queue` for `worker` (as
    /// [`claim`](Self::claim) would) in one statement: one transaction,
    /// so one commit for both. A refused claim (bad input, checked by
    /// core) is refused before anything is sent, completions included; a
    /// database error fails both halves.
    pub async fn complete_and_claim(
        &self,
        done: &[(JobId, LeaseToken)],
        queue: &str,
        worker: &str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> Result<Cycle, QueueError> {
        self.validate(&Input::Claim {
            queue: queue.to_owned(),
            worker: worker.to_owned(),
            max,
            lease_ms,
        })?;
        let (ids, tokens) = ids_and_tokens(done);
        let s = &self.schema;
        let st = self.stmt("complete_and_claim", || cycle_sql(s)).await?;
        let rows = self
            .client
            .query(
                &st,
                &[
                    &ids,
                    &tokens,
                    &self.channel,
                    &queue,
                    &worker,
                    &i64::from(max),
                    &lease_ms,
                ],
            )
            .await
            .map_err(db("completing and claiming jobs"))?;
        let (claimed, completed): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.get::<_, bool>(9));
        let jobs = in_claim_order(claimed.into_iter())?;
        let results = self
            .completed(done, completed.iter().map(|r| (r.get(0), r.get(1))))
            .await?;
        Ok((results, jobs))
    }
}
