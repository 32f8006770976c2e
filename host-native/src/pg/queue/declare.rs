//! Queues: declared, or created implicitly with core's defaults by the
//! first enqueue (or fire) that names them — both through the one
//! statement that writes queue rows, [`sql::upsert_queues`].

use super::{On, Params, PgQueues, QueueError, sql};
use chime_core::{EngineConfig, Error as CoreError, Input, QueueConfig};
use tokio_postgres::types::{ToSql, Type};

/// The parameters of [`sql::upsert_queues`]: queue rows to create and,
/// for a declaration, to update.
#[derive(Debug, Default)]
pub(crate) struct QueueRows {
    name: Vec<String>,
    config: Vec<String>,
    seed: Vec<i64>,
    dedup_window_ms: Vec<i64>,
    replace: bool,
}

impl QueueRows {
    fn push(&mut self, config: &QueueConfig, seed: u64) {
        self.name.push(config.name.clone());
        self.config
            .push(serde_json::to_string(config).expect("QueueConfig serializes"));
        self.seed.push(seed as i64);
        self.dedup_window_ms.push(config.dedup_window_ms);
    }

    /// `config` as declared: created with `engine`'s seed, or its config
    /// replaced (the seed of an existing queue stays).
    pub(crate) fn declared(config: &QueueConfig, engine: &EngineConfig) -> QueueRows {
        let mut rows = QueueRows {
            replace: true,
            ..QueueRows::default()
        };
        rows.push(config, engine.seed);
        rows
    }

    /// Queues `names` as the engine creates them implicitly
    /// ([`QueueConfig::implicit`], `engine`'s seed), where they do not
    /// exist yet.
    pub(crate) fn implicit<'a>(
        names: impl IntoIterator<Item = &'a str>,
        engine: &EngineConfig,
    ) -> QueueRows {
        let mut rows = QueueRows::default();
        for name in names {
            rows.push(&QueueConfig::implicit(name, &engine.limits), engine.seed);
        }
        rows
    }

    /// `$1` to `$5` with their types.
    pub(crate) fn typed(&self) -> [(&(dyn ToSql + Sync), Type); 5] {
        [
            (&self.name, Type::TEXT_ARRAY),
            (&self.config, Type::TEXT_ARRAY),
            (&self.seed, Type::INT8_ARRAY),
            (&self.dedup_window_ms, Type::INT8_ARRAY),
            (&self.replace, Type::BOOL),
        ]
    }
}

impl PgQueues {
    /// Runs [`sql::upsert_queues`] on `on`.
    async fn upsert_queues(
        &self,
        on: On<'_>,
        rows: &QueueRows,
        context: &'static str,
    ) -> Result<(), QueueError> {
        let s = &self.schema;
        let params: &Params<'_> = &rows.typed();
        self.rows(
            on,
            "upsert_queues",
            || sql::upsert_queues(s),
            params,
            context,
        )
        .await?;
        Ok(())
    }

    /// Creates or updates a queue (its mode is ignored: a Postgres queue is
    /// always worked by claimers).
    pub async fn declare(&self, config: &QueueConfig) -> Result<(), QueueError> {
        self.validate(&Input::DeclareQueue(config.clone()))?;
        let rows = QueueRows::declared(config, &self.engine);
        self.upsert_queues(On::Own, &rows, "declaring a queue")
            .await?;
        self.remember(&config.name);
        Ok(())
    }

    fn remember(&self, name: &str) {
        self.queues
            .lock()
            .expect("queue names lock")
            .insert(name.to_owned());
    }

    fn remembered(&self, name: &str) -> bool {
        self.queues.lock().expect("queue names lock").contains(name)
    }

    /// Makes sure `name` exists, creating it with every default if not —
    /// as the engine does on the first `Enqueue` that names a queue.
    /// Queues are never removed, so a name seen once is remembered;
    /// everything else about a queue is read from its row by the
    /// statements that need it (another replica may redeclare it).
    pub(super) async fn ensure_queue(&self, name: &str) -> Result<(), QueueError> {
        if self.remembered(name) {
            return Ok(());
        }
        self.create_queue(On::Own, name).await?;
        self.remember(name);
        Ok(())
    }

    /// Creates queue `name` with every default on `on`, unless it exists.
    pub(super) async fn create_queue(&self, on: On<'_>, name: &str) -> Result<(), QueueError> {
        let rows = QueueRows::implicit([name], &self.engine);
        self.upsert_queues(on, &rows, "creating a queue").await
    }

    /// Whether queue `name` exists for every connection: remembered, or
    /// committed — read on the handle's own connection, which never sees
    /// the rows of a transaction that has not committed. Remembered once
    /// found.
    pub(super) async fn queue_committed(&self, name: &str) -> Result<bool, QueueError> {
        if self.remembered(name) {
            return Ok(true);
        }
        let s = &self.schema;
        let found = self
            .opt(
                "queue_exists",
                || format!("SELECT 1 FROM {s}.chime_queues WHERE name = $1"),
                &[&name],
                "reading a queue",
            )
            .await?
            .is_some();
        if found {
            self.remember(name);
        }
        Ok(found)
    }

    /// Refuses a queue that does not exist (`unknown_queue`).
    pub(super) async fn existing_queue(&self, name: &str) -> Result<(), QueueError> {
        if self.queue_committed(name).await? {
            Ok(())
        } else {
            Err(CoreError::UnknownQueue(name.to_owned()).into())
        }
    }
}
