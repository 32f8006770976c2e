//! The SQL of the job tables, each kind of row written by one statement:
//! [`upsert_queues`] is the only `INSERT` into `chime_queues` and
//! [`insert_jobs`] the only one into `chime_jobs`, used by every enqueue
//! path (one job, a batch, a transaction of the caller's) and by the
//! delivery of fires (`pg::fires`), so a job or a queue is stored the same
//! way whoever creates it. [`remember_keys`] is the only `INSERT` into
//! `chime_job_keys` (enqueue and redrive).
//!
//! The rules in these statements are chime-core's, as values:
//!
//! - **State names** are [`JobState::as_str`], spliced as literals by
//!   [`state`] / [`states`] (a bound parameter would hide from the planner
//!   that a statement matches a partial index on `state`).
//! - **Orders** come from [`CLAIM_ORDER`], [`EVICTION_ORDER`] and
//!   [`LEASE_EXPIRY_ORDER`] through [`order_by`].
//! - **Key activity** ([`key_expired`]) is the negation of
//!   [`chime_core::key_is_active`], and a finished job's key expires
//!   ([`expire_keys`]) as [`chime_core::key_expires_at`] says: the queue's
//!   dedup window after the job ended.
//! - **Numbers** (defaults, bounds, retention horizons, retry delays) are
//!   never written here: they are parameters, computed by core from the
//!   queue's config and the engine's limits.
//!
//! Instants the queues store (`run_at`, `lease_until`) are whole
//! milliseconds, like the engine's timestamps: written as [`NOW`] plus
//! whole milliseconds, and read back exactly by [`ms`]. With Postgres'
//! microseconds, two jobs enqueued within one millisecond would be claimed
//! by time where the engine claims them by id.

use chime_core::{CLAIM_ORDER, Direction, EVICTION_ORDER, JobField, JobState, LEASE_EXPIRY_ORDER};

/// `now()` cut to whole milliseconds, as the engine's clock is.
pub(crate) const NOW: &str = "date_trunc('milliseconds', now())";

/// A wake-up: `$1` the channel, `$2` the queue.
pub(crate) const NOTIFY: &str = "SELECT pg_notify($1, $2)";

/// How many characters of a failure text a job event carries: a
/// notification's payload is at most 8000 bytes, and 1000 characters stay
/// under it even escaped, whatever the queue and fire names (≤ 128
/// characters each).
pub(crate) const EVENT_TEXT_CHARS: i32 = 1_000;

/// A wake-up for queue expression `queue` whose earliest new job is due at
/// `run_at` (a timestamptz expression): the bare queue name when it is due
/// now, else `{"w": queue, "in": ms}` (due in `ms` from now, counted on
/// the listener's clock from the delivery — see `pg::notify`). `$chan` is
/// the parameter holding the channel.
pub(crate) fn wake(chan: &str, queue: &str, run_at: &str) -> String {
    format!(
        "pg_notify({chan}, CASE WHEN {run_at} <= now() THEN {queue}
             ELSE json_build_object('w', {queue}, 'in', {due} - {now})::text END)",
        due = ms(run_at),
        now = ms("now()"),
    )
}

/// A job event (see `pg::notify`) about the job row `j` (columns `id`,
/// `queue`, `fire`), of kind `kind` (an SQL text expression: core's name
/// of the outcome), for attempt `attempt`, with failure text or reason
/// `reason` (cut to [`EVENT_TEXT_CHARS`]), `run_at` (a retry's, epoch ms)
/// and `duration` (ms since the claim: [`since_claim`], or NULL). Never a
/// payload: job events are bounded, whatever the job.
pub(crate) fn event(
    chan: &str,
    kind: &str,
    j: &str,
    attempt: &str,
    reason: &str,
    run_at: &str,
    duration: &str,
) -> String {
    format!(
        "pg_notify({chan}, json_build_object(
             'e', {kind}, 'q', {j}.queue, 'j', {j}.id, 'a', {attempt}, 'd', {duration},
             'at', {now}, 'f', {j}.fire, 'r', left({reason}, {EVENT_TEXT_CHARS}),
             'ra', {run_at})::text)",
        now = ms("now()"),
    )
}

/// Milliseconds from the claim of job row `j` (column `claimed_at`) to
/// now: an event's duration.
pub(crate) fn since_claim(j: &str) -> String {
    format!("{} - {}", ms("now()"), ms(&format!("{j}.claimed_at")))
}

/// No value of an event field.
pub(crate) const NONE: &str = "NULL";

/// `state` as an SQL literal: core's name for it.
pub(crate) fn state(state: JobState) -> String {
    format!("'{}'", state.as_str())
}

/// The states `which` selects, as an SQL list: `('completed', 'dead')`.
pub(crate) fn states(which: impl Fn(JobState) -> bool) -> String {
    let names: Vec<String> = JobState::ALL
        .into_iter()
        .filter(|&s| which(s))
        .map(state)
        .collect();
    format!("({})", names.join(", "))
}

/// The column of `chime_jobs` holding `field`.
fn column(field: JobField) -> &'static str {
    match field {
        JobField::Priority => "priority",
        JobField::RunAt => "run_at",
        JobField::FinishedAt => "finished_at",
        JobField::LeaseDeadline => "lease_until",
        JobField::Id => "id",
    }
}

/// The `ORDER BY` list of one of core's orders over `chime_jobs` columns
/// qualified by `alias` (`""`: none); `reversed` gives the opposite order
/// (the newest first of [`EVICTION_ORDER`], which a bound keeps).
pub(crate) fn order_by(order: &[(JobField, Direction)], alias: &str, reversed: bool) -> String {
    let prefix = if alias.is_empty() {
        String::new()
    } else {
        format!("{alias}.")
    };
    let terms: Vec<String> = order
        .iter()
        .map(|&(field, dir)| {
            let descending = (dir == Direction::Descending) != reversed;
            let suffix = if descending { " DESC" } else { "" };
            format!("{prefix}{}{suffix}", column(field))
        })
        .collect();
    terms.join(", ")
}

/// Claim order over `chime_jobs` (alias `j`).
pub(crate) fn claim_order() -> String {
    order_by(&CLAIM_ORDER, "", false)
}

/// Newest finished first: the jobs a bound keeps come first.
pub(crate) fn newest_first(alias: &str) -> String {
    order_by(&EVICTION_ORDER, alias, true)
}

/// Oldest lease deadline first.
pub(crate) fn expiry_order(alias: &str) -> String {
    order_by(&LEASE_EXPIRY_ORDER, alias, false)
}

/// Milliseconds since the epoch of a timestamptz expression (floor).
pub(crate) fn ms(expr: &str) -> String {
    format!("floor(extract(epoch from {expr}) * 1000)::bigint")
}

/// An instant from epoch milliseconds `at` (may be NULL), else `delay`
/// milliseconds from now; one in the past means now — as core's
/// `run_at` of an enqueue and of a `Fail{retryAt}`.
pub(crate) fn run_at(at: &str, delay: &str) -> String {
    format!(
        "GREATEST(COALESCE(timestamptz 'epoch' + {at} * interval '1 millisecond', \
         {NOW} + {delay} * interval '1 millisecond'), {NOW})"
    )
}

/// Whether key row `k` is no longer active: its job ended and the dedup
/// window since has passed — `NOT key_is_active(expires_at, now())`.
pub(crate) fn key_expired(k: &str) -> String {
    format!("({k}.expires_at IS NOT NULL AND {k}.expires_at <= now())")
}

/// Creates queues, or (with `$5` true) updates their config: `$1` names,
/// `$2` configs (JSON), `$3` seeds, `$4` dedup windows. A queue that
/// exists keeps its seed; without `$5` it is left alone (and not locked,
/// unless it was created concurrently).
pub(crate) fn upsert_queues(s: &str) -> String {
    format!(
        "INSERT INTO {s}.chime_queues AS q (name, config, seed, dedup_window_ms)
         SELECT t.name, t.config, t.seed, t.dedup_window_ms
         FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
              AS t(name, config, seed, dedup_window_ms)
         WHERE $5::bool OR NOT EXISTS (SELECT 1 FROM {s}.chime_queues e WHERE e.name = t.name)
         ON CONFLICT (name) DO UPDATE
             SET config = EXCLUDED.config, dedup_window_ms = EXCLUDED.dedup_window_ms
             WHERE $5::bool"
    )
}

/// The CTE `name` that remembers the keys of the rows of `source`
/// (columns `queue`, `key`, `job`; rows without a key are skipped) as held
/// by those live jobs, taking over a key row only where `takeover` (an
/// expression on the existing row `k`) holds; it returns the jobs whose
/// key it remembered.
pub(crate) fn remember_keys(s: &str, name: &str, source: &str, takeover: &str) -> String {
    format!(
        "{name} AS (
             INSERT INTO {s}.chime_job_keys AS k (queue, key, job, expires_at)
             SELECT queue, key, job, NULL FROM {source} WHERE key IS NOT NULL
             ON CONFLICT (queue, key) DO UPDATE
                 SET job = EXCLUDED.job, expires_at = NULL
                 WHERE {takeover}
             RETURNING job)"
    )
}

/// Inserts jobs, one per element of the arrays `$1` id (NULL: a new one
/// from the sequence), `$2` queue, `$3` priority, `$4` `runAt` (epoch ms
/// or NULL), `$5` `delayMs`, `$6` `maxAttempts`, `$7` payload, `$8`
/// headers (JSON text), `$9` key, `$10` fire id. A job with a key is
/// inserted only if its key was free (or expired: [`key_expired`]); ids
/// of new jobs follow the arrays' order. One row per element, in order:
/// the new job's id (NULL if none was inserted) and, for a key, the job
/// the key row named before this statement (NULL if none).
pub(crate) fn insert_jobs(s: &str) -> String {
    let keys = remember_keys(s, "k", "t", &key_expired("k"));
    format!(
        "WITH t AS MATERIALIZED (
             SELECT u.*, COALESCE(u.id, nextval(pg_get_serial_sequence('{s}.chime_jobs', 'id')))
                        AS job
             FROM unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[], $5::bigint[],
                         $6::int[], $7::text[], $8::text[], $9::text[], $10::text[])
                  WITH ORDINALITY
                  AS u(id, queue, priority, run_at, delay, max_attempts, payload, headers,
                       key, fire, ord)),
         {keys},
         j AS (
             INSERT INTO {s}.chime_jobs
                 (id, queue, state, priority, run_at, max_attempts, payload, headers, key, fire)
             SELECT t.job, t.queue, {available}, t.priority, {run_at}, t.max_attempts,
                    t.payload, t.headers, t.key, t.fire
             FROM t WHERE t.key IS NULL OR t.job IN (SELECT job FROM k)
             ORDER BY t.ord
             RETURNING id)
         SELECT j.id, e.job
         FROM t LEFT JOIN j ON j.id = t.job
                LEFT JOIN {s}.chime_job_keys e ON e.queue = t.queue AND e.key = t.key
         ORDER BY t.ord",
        available = state(JobState::Available),
        run_at = run_at("t.run_at", "t.delay"),
    )
}

/// [`insert_jobs`] that also wakes the queues it added jobs to, inside
/// its transaction (delivered at commit): one notification per queue,
/// `$11` the channel ([`wake`]: a delayed batch says when it is due).
pub(crate) fn insert_jobs_waking(s: &str) -> String {
    let plain = insert_jobs(s);
    let (ctes, select) = plain
        .rsplit_once("SELECT j.id, e.job")
        .expect("insert_jobs ends with its SELECT");
    let ctes = ctes.replace("RETURNING id)", "RETURNING id, queue, run_at)");
    format!(
        "{ctes}n AS (SELECT {wake} FROM j GROUP BY j.queue)
         SELECT j.id, e.job, (SELECT count(*) FROM n){select}",
        ctes = ctes.trim_end().trim_end_matches(',').to_owned() + ",\n         ",
        wake = wake("$11", "j.queue", "min(j.run_at)"),
    )
}

/// The CTE `k` that starts the dedup window of the keys of the jobs a CTE
/// `j` (columns `id`, `queue`, `key`) has just finished: each key still
/// naming its job expires the queue's `dedupWindowMs` from now
/// ([`chime_core::key_expires_at`]).
pub(crate) fn expire_keys(s: &str) -> String {
    format!(
        "k AS (
             UPDATE {s}.chime_job_keys k
             SET expires_at = now() + q.dedup_window_ms * interval '1 millisecond'
             FROM j, {s}.chime_queues q
             WHERE k.queue = j.queue AND k.key = j.key AND k.job = j.id
               AND q.name = j.queue
             RETURNING 1)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_cores() {
        assert_eq!(claim_order(), "priority DESC, run_at, id");
        assert_eq!(newest_first("j"), "j.finished_at DESC, j.id DESC");
        assert_eq!(expiry_order("j"), "j.lease_until, j.id");
    }

    #[test]
    fn the_claim_index_is_in_claim_order() {
        // Migrations are history (never rewritten), so their text is
        // checked against core instead of built from it: the claim
        // statement's `ORDER BY` must be the index's, or claims scan.
        let index = format!("(queue, {})", claim_order());
        let ddl = crate::pg::migrate::sql_of(2);
        assert!(ddl.contains(&format!(
            "chime_jobs_claim ON {{schema}}.chime_jobs {index}"
        )));
        let ddl = crate::pg::migrate::sql_of(4);
        assert!(
            ddl.contains(&format!(
                "chime_jobs_claim ON {{schema}}.chime_jobs {index}\n    WHERE state = {}",
                state(JobState::Available)
            )),
            "{ddl}"
        );
    }

    #[test]
    fn the_stored_states_are_cores() {
        // Every state but `scheduled` is stored (a job waiting for its
        // `run_at` is stored available: claims filter on the time).
        let stored = states(|s| s != JobState::Scheduled);
        assert_eq!(
            stored,
            "('available', 'claimed', 'completed', 'dead', 'dropped', 'cancelled')"
        );
        let ddl = crate::pg::migrate::sql_of(4);
        assert!(ddl.contains(&format!("CHECK (state IN {stored})")), "{ddl}");
    }
}
