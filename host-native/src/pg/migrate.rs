//! Versioned schema migrations. Each migration is applied at most once, in
//! its own transaction together with its row in `chime_schema_migrations`,
//! so a crash mid-migration leaves either all of it or none. Every replica
//! runs [`migrate`] at start; a transaction-scoped advisory lock (keyed by
//! the schema) makes concurrent starts take turns instead of racing on
//! `CREATE TABLE`.
//!
//! Migrations are append-only: never edit one that has shipped, add the
//! next version instead.

use super::{PgError, check_schema};
use tokio_postgres::Client;

/// One schema change. `{schema}` in the SQL is replaced by the quoted
/// schema name.
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[Migration {
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
}];

/// The newest schema version this binary knows.
pub fn latest_version() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Brings `schema` up to [`latest_version`], creating it if missing.
/// Returns the versions applied by this call (empty: already current).
/// Refuses a schema newer than this binary.
pub async fn migrate(client: &mut Client, schema: &str) -> Result<Vec<i32>, PgError> {
    check_schema(schema)?;
    let quoted = format!("\"{schema}\"");
    let mut applied = Vec::new();
    for m in MIGRATIONS {
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
