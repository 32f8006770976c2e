//! Where the backend's tables live ([`PgConfig`]), how it fails
//! ([`PgError`]), and one connection ([`connect`]).

/// Where the backend's tables live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgConfig {
    /// A libpq-style connection string or `postgresql://` URL.
    pub url: String,
    /// The Postgres schema holding chime's tables (created if missing).
    pub schema: String,
}

impl PgConfig {
    /// The default schema, `chime`.
    pub const DEFAULT_SCHEMA: &'static str = "chime";

    /// `url` with the default schema.
    pub fn new(url: impl Into<String>) -> PgConfig {
        PgConfig {
            url: url.into(),
            schema: PgConfig::DEFAULT_SCHEMA.into(),
        }
    }

    /// The same database, another schema.
    pub fn with_schema(mut self, schema: impl Into<String>) -> PgConfig {
        self.schema = schema.into();
        self
    }
}

/// What the Postgres backend failed at.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// A query or the connection failed. The message carries the
    /// server's own reason (severity, SQLSTATE, message, detail, hint) or
    /// the cause of a failed connection (`Connection refused`): the
    /// driver's bare `db error` says nothing an operator can act on.
    #[error("postgres: {context}: {}", describe(.source))]
    Db {
        /// What was being done.
        context: String,
        /// The driver's error (carries the SQLSTATE for server errors).
        source: tokio_postgres::Error,
    },
    /// The schema name is not a plain identifier. It is spliced into SQL
    /// (identifiers cannot be bound as parameters), so only
    /// `[a-z_][a-z0-9_]*` of at most 63 bytes is accepted.
    #[error("invalid schema name {0:?}: use lowercase letters, digits and _ (at most 63)")]
    BadSchema(String),
    /// A lease duration that cannot work (zero, or not longer than the
    /// skew allowance: every grant would be void on arrival).
    #[error("invalid lease options: {0}")]
    BadLease(String),
    /// The lease is no longer ours: another replica took it over (a higher
    /// epoch), or it was released. The holder must stop acting as leader.
    #[error(
        "leader lease {name:?} lost: we held epoch {epoch}, the row now has \
         epoch {current_epoch:?} held by {holder:?}"
    )]
    LeaseLost {
        /// The lease's name.
        name: String,
        /// The epoch we held.
        epoch: u64,
        /// The row's epoch now (`None`: no row).
        current_epoch: Option<u64>,
        /// The row's holder now (`None`: released or no row).
        holder: Option<String>,
    },
    /// The database holds a schema version newer than this binary knows:
    /// an older binary must not write to tables it does not understand.
    #[error(
        "schema {schema} is at version {found}, newer than this binary's {known}; \
         upgrade chime"
    )]
    SchemaTooNew {
        /// The schema.
        schema: String,
        /// Highest version applied in the database.
        found: i32,
        /// Highest version this binary has.
        known: i32,
    },
    /// A row holds what chime cannot read back (a queue config, payload or
    /// headers that no longer parse): the table was edited by hand or by a
    /// newer binary.
    #[error("unreadable stored data: {0}")]
    Stored(String),
    /// A statement kept meeting concurrent writers and gave up after a few
    /// tries (an enqueue with a key that other replicas are enqueueing and
    /// finishing at the same moment); the caller may try again.
    #[error("contended: {0}")]
    Contended(String),
    /// The backend's own thread or runtime could not be started, or ended.
    #[error("postgres client thread: {0}")]
    Thread(String),
}

/// A driver error with what it carries: a server error as `FATAL 28P01:
/// password authentication failed for user "chime"` (with its detail and
/// hint), any other with its chain of causes (`error connecting to
/// server: Connection refused (os error 111)`).
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut out = format!("{} {}: {}", db.severity(), db.code().code(), db.message());
        if let Some(detail) = db.detail() {
            out += &format!(" (detail: {detail})");
        }
        if let Some(hint) = db.hint() {
            out += &format!(" (hint: {hint})");
        }
        return out;
    }
    let mut out = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        out += &format!(": {c}");
        cause = c.source();
    }
    out
}

impl PgError {
    /// The SQLSTATE of a server error, e.g. `28P01` for a wrong password.
    pub fn sql_state(&self) -> Option<&str> {
        match self {
            PgError::Db { source, .. } => source.code().map(|c| c.code()),
            _ => None,
        }
    }

    /// Wraps a driver error with what was being done.
    pub(crate) fn db(context: impl Into<String>) -> impl FnOnce(tokio_postgres::Error) -> PgError {
        let context = context.into();
        move |source| PgError::Db { context, source }
    }
}

impl From<PgError> for crate::store::StoreError {
    fn from(e: PgError) -> Self {
        crate::store::StoreError::Backend {
            backend: "postgres",
            source: Box::new(e),
        }
    }
}

/// The `LISTEN` channel of the job queues' wake-ups in `schema` (each
/// notification's payload is a queue name).
pub(crate) fn wake_channel(schema: &str) -> String {
    format!("chime_jobs_{schema}")
}

/// Checks a schema name before it is spliced into SQL.
pub(crate) fn check_schema(schema: &str) -> Result<(), PgError> {
    let mut chars = schema.chars();
    let ok = schema.len() <= 63
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(PgError::BadSchema(schema.to_owned()))
    }
}

/// Opens one connection and drives it on the current tokio runtime (the
/// connection task ends when the returned client is dropped). A pool comes
/// with the job queues; the lease and the store each need one connection.
pub async fn connect(url: &str) -> Result<tokio_postgres::Client, PgError> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(PgError::db("connecting"))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %describe(&e), "postgres connection closed with an error");
        }
    });
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::check_schema;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for ok in ["chime", "_t1", "t_pg_store_12_3"] {
            check_schema(ok).unwrap();
        }
        for bad in [
            "",
            "1abc",
            "Chime",
            "a-b",
            "a;drop",
            "x\"y",
            &"a".repeat(64),
        ] {
            assert!(check_schema(bad).is_err(), "{bad:?}");
        }
    }
}
