//! Versioned schema migrations. Each migration is applied at most once, in
//! its own transaction together with its row in `chime_schema_migrations`,
//! so a crash mid-migration leaves either all of it or none. Every replica
//! runs [`migrate`] at start; a transaction-scoped advisory lock (keyed by
//! the schema) makes concurrent starts take turns instead of racing on
//! `CREATE TABLE`.
//!
//! Migrations are append-only: never edit one that has shipped, add the
//! next version instead.

use super::connection::{PgError, check_schema};
use tokio_postgres::Client;

/// One schema change. `{schema}` in the SQL is replaced by the quoted
/// schema name.
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "leader lease, snapshot and journal",
        sql: r#"
-- One row per lease name. holder NULL: released. epoch only grows: every
-- takeover adds one, and every store write checks it.
CREATE TABLE {schema}.chime_leader (
    name       text        PRIMARY KEY,
    holder     text,
    epoch      bigint      NOT NULL CHECK (epoch > 0),
    expires_at timestamptz NOT NULL
);
-- The engine's last snapshot (canonical JSON, kept as text so it reads back
-- byte for byte), keyed by the lease name of the engine that owns it.
CREATE TABLE {schema}.chime_snapshot (
    engine     text        PRIMARY KEY,
    epoch      bigint      NOT NULL,
    body       text        NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now()
);
-- Inputs handled since that snapshot, one JSON line each, in seq order.
CREATE TABLE {schema}.chime_journal (
    engine text   NOT NULL,
    seq    bigint NOT NULL,
    epoch  bigint NOT NULL,
    entry  text   NOT NULL,
    PRIMARY KEY (engine, seq)
);
"#,
    },
    Migration {
        version: 2,
        name: "job queues",
        sql: r#"
-- One row per queue: its QueueConfig JSON (checked by chime-core before it
-- is stored), the seed of its retry jitter, and the dedup window (a column
-- so statements can use it without parsing the JSON).
CREATE TABLE {schema}.chime_queues (
    name            text   PRIMARY KEY,
    config          text   NOT NULL,
    seed            bigint NOT NULL,
    dedup_window_ms bigint NOT NULL CHECK (dedup_window_ms >= 0)
);
-- Jobs. state 'pending' is core's available (run_at <= now()) and
-- scheduled (run_at > now()); token, worker and lease_until are set only
-- while claimed. payload and headers are JSON text, kept verbatim.
CREATE TABLE {schema}.chime_jobs (
    id           bigserial   PRIMARY KEY,
    queue        text        NOT NULL REFERENCES {schema}.chime_queues (name),
    state        text        NOT NULL CHECK (state IN
                 ('pending', 'claimed', 'completed', 'dead', 'dropped', 'cancelled')),
    priority     integer     NOT NULL,
    run_at       timestamptz NOT NULL,
    attempt      integer     NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    max_attempts integer     CHECK (max_attempts > 0),
    payload      text        NOT NULL,
    headers      text        NOT NULL,
    key          text,
    fire         text,
    token        bigint,
    worker       text,
    lease_until  timestamptz,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    CHECK ((state = 'claimed') = (token IS NOT NULL AND lease_until IS NOT NULL))
);
-- The claim order (priority, then run_at, then id) over waiting jobs only.
CREATE INDEX chime_jobs_claim ON {schema}.chime_jobs (queue, priority DESC, run_at, id)
    WHERE state = 'pending';
-- Lease-expiry rescue.
CREATE INDEX chime_jobs_lease ON {schema}.chime_jobs (lease_until) WHERE state = 'claimed';
CREATE INDEX chime_jobs_dead ON {schema}.chime_jobs (queue, finished_at) WHERE state = 'dead';
-- Idempotency keys per queue: live while their job is (expires_at NULL),
-- then until expires_at. The primary key makes two enqueues with one key
-- meet on one row.
CREATE TABLE {schema}.chime_job_keys (
    queue      text        NOT NULL,
    key        text        NOT NULL,
    job        bigint      NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (queue, key)
);
-- Claim tokens: one counter, so a token is never handed out twice.
CREATE SEQUENCE {schema}.chime_claim_token;
"#,
    },
    Migration {
        version: 3,
        name: "fires and skips of the leader's engine",
        sql: r#"
-- Every fire of a schedule, written by the leader in the transaction that
-- also creates its job and checks the leader epoch. The primary key is
-- the fire id (`<schedule>@<nominal_ms>`, with `#m<n>`/`#b<n>` for manual
-- and backfill fires), so a fire delivered twice (a new leader replaying
-- the journal of the old one, a deposed leader that did not know yet) is
-- one row and one job. `settled` turns true once the leader has been told
-- that the job ended (FireSettled).
CREATE TABLE {schema}.chime_fires (
    engine     text        NOT NULL,
    fire_id    text        NOT NULL,
    schedule   text        NOT NULL,
    nominal_ms bigint      NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('scheduled', 'manual', 'backfill')),
    reason     text        NOT NULL,
    due_ms     bigint      NOT NULL,
    fired_ms   bigint      NOT NULL,
    epoch      bigint      NOT NULL,
    queue      text        NOT NULL,
    job        bigint      NOT NULL,
    settled    boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (engine, fire_id)
);
-- The boundary itself: at most one scheduled fire per (schedule, nominal).
CREATE UNIQUE INDEX chime_fires_boundary ON {schema}.chime_fires (engine, schedule, nominal_ms)
    WHERE kind = 'scheduled';
CREATE INDEX chime_fires_unsettled ON {schema}.chime_fires (engine, job) WHERE NOT settled;
-- Boundaries the engine skipped, one row per run of them (FireSkipped),
-- keyed by the run's first boundary: a boundary is skipped at most once.
CREATE TABLE {schema}.chime_skips (
    engine     text        NOT NULL,
    schedule   text        NOT NULL,
    first_ms   bigint      NOT NULL,
    last_ms    bigint      NOT NULL,
    count      bigint      NOT NULL CHECK (count > 0),
    reason     text        NOT NULL,
    epoch      bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (engine, schedule, first_ms)
);
"#,
    },
    Migration {
        version: 4,
        name: "job states named as in chime-core",
        sql: r#"
-- Job states take chime-core's names (JobState::as_str): 'pending' becomes
-- 'available'. A job waiting for its run_at is stored 'available' too
-- (core's 'scheduled' is not stored: claims filter on run_at, and reads
-- derive it). The claim index follows its predicate.
ALTER TABLE {schema}.chime_jobs DROP CONSTRAINT chime_jobs_state_check;
DROP INDEX {schema}.chime_jobs_claim;
UPDATE {schema}.chime_jobs SET state = 'available' WHERE state = 'pending';
ALTER TABLE {schema}.chime_jobs ADD CONSTRAINT chime_jobs_state_check
    CHECK (state IN ('available', 'claimed', 'completed', 'dead', 'dropped', 'cancelled'));
CREATE INDEX chime_jobs_claim ON {schema}.chime_jobs (queue, priority DESC, run_at, id)
    WHERE state = 'available';
"#,
    },
    Migration {
        version: 5,
        name: "schedule-write inbox",
        sql: r#"
-- Schedule and queue inputs (core's Input JSON, kept as text) that any
-- replica submitted for the leader's engine, applied in id order. A
-- submitter takes a transaction-scoped advisory lock around its insert,
-- so ids are committed in the order they are handed out (a leader never
-- sees id 7 before id 6 commits). applied_at is set in the transaction
-- that journals the input under the leader's epoch, so an input is
-- applied exactly once; reply or error (JSON) follow, then a NOTIFY.
CREATE TABLE {schema}.chime_inbox (
    id           bigserial   PRIMARY KEY,
    engine       text        NOT NULL,
    input        text        NOT NULL,
    submitted_at timestamptz NOT NULL DEFAULT now(),
    applied_at   timestamptz,
    epoch        bigint,
    reply        text,
    error        text,
    CHECK (reply IS NULL OR error IS NULL)
);
CREATE INDEX chime_inbox_pending ON {schema}.chime_inbox (engine, id) WHERE applied_at IS NULL;
CREATE INDEX chime_inbox_applied ON {schema}.chime_inbox (applied_at) WHERE applied_at IS NOT NULL;
"#,
    },
    Migration {
        version: 6,
        name: "claim times for job events",
        sql: r#"
-- When the current (or last) attempt was claimed: job events carry the
-- time from the claim to the outcome, as the embedded driver's do. Set by
-- every claim; NULL for jobs never claimed (and for jobs claimed before
-- this migration, whose events then carry no duration).
ALTER TABLE {schema}.chime_jobs ADD COLUMN claimed_at timestamptz;
"#,
    },
];

/// The SQL of migration `version` (tests check it against core's rules).
#[cfg(test)]
pub(crate) fn sql_of(version: i32) -> &'static str {
    MIGRATIONS
        .iter()
        .find(|m| m.version == version)
        .map_or("", |m| m.sql)
}

/// The newest schema version this binary knows.
pub fn latest_version() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Brings `schema` up to [`latest_version`], creating it if missing.
/// Returns the versions applied by this call (empty: already current).
/// Refuses a schema newer than this binary.
pub async fn migrate(client: &mut Client, schema: &str) -> Result<Vec<i32>, PgError> {
    migrate_to(client, schema, latest_version()).await
}

/// [`migrate`], stopping at version `target`: a database as an older
/// binary left it (the tests of a migration start from one).
pub async fn migrate_to(
    client: &mut Client,
    schema: &str,
    target: i32,
) -> Result<Vec<i32>, PgError> {
    check_schema(schema)?;
    let quoted = format!("\"{schema}\"");
    let mut applied = Vec::new();
    for m in MIGRATIONS.iter().filter(|m| m.version <= target) {
        let tx = client
            .transaction()
            .await
            .map_err(PgError::db("starting a migration"))?;
        // Held until commit: concurrent migrators of this schema queue here.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('chime_migrate:' || $1::text))",
            &[&schema],
        )
        .await
        .map_err(PgError::db("taking the migration lock"))?;
        tx.batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {quoted};
             CREATE TABLE IF NOT EXISTS {quoted}.chime_schema_migrations (
                 version    integer     PRIMARY KEY,
                 name       text        NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now()
             );"
        ))
        .await
        .map_err(PgError::db("creating the migrations table"))?;
        let found: i32 = tx
            .query_one(
                &format!("SELECT coalesce(max(version), 0) FROM {quoted}.chime_schema_migrations"),
                &[],
            )
            .await
            .map_err(PgError::db("reading the schema version"))?
            .get(0);
        if found > latest_version() {
            return Err(PgError::SchemaTooNew {
                schema: schema.to_owned(),
                found,
                known: latest_version(),
            });
        }
        if found >= m.version {
            continue;
        }
        tx.batch_execute(&m.sql.replace("{schema}", &quoted))
            .await
            .map_err(PgError::db(format!("applying migration {}", m.version)))?;
        tx.execute(
            &format!(
                "INSERT INTO {quoted}.chime_schema_migrations (version, name) VALUES ($1, $2)"
            ),
            &[&m.version, &m.name],
        )
        .await
        .map_err(PgError::db("recording the migration"))?;
        tx.commit()
            .await
            .map_err(PgError::db(format!("committing migration {}", m.version)))?;
        tracing::info!(schema, version = m.version, name = m.name, "migrated");
        applied.push(m.version);
    }
    Ok(applied)
}
