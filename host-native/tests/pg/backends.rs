//! Every implementation of the queue port (`chime_native::backend`)
//! under test, for the conformance suites: each scenario runs on each of
//! them, written once against `dyn QueueBackend`. A new backend (the HTTP
//! API, a NATS transport) joins every scenario by adding its constructor
//! to [`queue_backends`]; the Redis transport runs when `CHIME_REDIS_URL`
//! is set (`redis_support`), the NATS one when `CHIME_NATS_URL` is
//! (`nats_support`).

use chime_core::{Engine, EngineConfig};
use chime_native::backend::{EngineQueues, QueueBackend};
use chime_native::driver::{Driver, DriverConfig, Handle, SystemClock};
use chime_native::pg::{PgConfig, PgQueues};
use chime_native::store::MemoryStore;
use std::sync::Arc;

/// One backend under test, and what ends it.
pub struct Under {
    /// Which one, for messages.
    pub name: &'static str,
    /// The backend, through the port only.
    pub backend: Arc<dyn QueueBackend>,
    /// Whether it orders claims by priority (a transport refuses a
    /// priority instead: streams deliver in publish order).
    pub priorities: bool,
    end: End,
}

enum End {
    Nothing,
    Driver(Handle),
    Schema(PgConfig),
    Streams { url: String, namespace: String },
}

impl Under {
    /// Stops the backend and removes what it left (a driver task, a
    /// Postgres schema).
    pub async fn end(self) {
        drop(self.backend);
        match self.end {
            End::Nothing => {}
            End::Driver(handle) => {
                handle.stop();
                handle.closed().await;
            }
            End::Schema(pg) => crate::pg_support::drop_schema(&pg).await,
            End::Streams { url, namespace } => {
                crate::nats_support::drop_streams(&url, &namespace).await
            }
        }
    }
}

/// The embedded engine through its driver (on an in-memory store, the
/// wall clock): every call journaled and committed, as the daemon runs.
fn driver(config: &EngineConfig) -> Under {
    let driver_config = DriverConfig {
        engine: config.clone(),
        ..DriverConfig::default()
    };
    let store = Box::new(MemoryStore::default());
    let driver = Driver::recover(store, Arc::new(SystemClock), driver_config).unwrap();
    let handle = driver.handle();
    tokio::spawn(driver.run());
    Under {
        name: "engine (driver)",
        backend: Arc::new(handle.clone()),
        priorities: true,
        end: End::Driver(handle),
    }
}

/// The engine driven in place at the wall clock (no store).
fn in_place(config: &EngineConfig) -> Under {
    let engine = Engine::new(config.clone());
    Under {
        name: "engine (in place)",
        backend: Arc::new(EngineQueues::new(engine, Arc::new(SystemClock))),
        priorities: true,
        end: End::Nothing,
    }
}

/// `PgQueues` on the test server, in a schema of the test's own (none
/// without a server: see `pg_support`).
async fn postgres(test: &str, config: &EngineConfig) -> Option<Under> {
    let pg = crate::pg_support::config(test)?;
    let queues = PgQueues::connect(&pg, config.clone()).await.unwrap();
    Some(Under {
        name: "postgres",
        backend: Arc::new(queues),
        priorities: true,
        end: End::Schema(pg),
    })
}

/// The Redis Streams transport on the test server, in a database of the
/// test's own (none without a server: see `redis_support`).
async fn redis(config: &EngineConfig) -> Option<Under> {
    let t = crate::redis_support::plain(config).await?;
    Some(Under {
        name: "redis",
        backend: t,
        priorities: false,
        end: End::Nothing,
    })
}

/// The NATS JetStream transport on the test server, in a namespace of
/// the test's own (none without a server: see `nats_support`).
async fn nats(test: &str, config: &EngineConfig) -> Option<Under> {
    let (t, namespace) = crate::nats_support::queues(test, config).await?;
    Some(Under {
        name: "nats",
        backend: Arc::new(t),
        priorities: false,
        end: End::Streams {
            url: crate::nats_support::url()?,
            namespace,
        },
    })
}

/// A fresh instance of every queue backend, each with `config` (its
/// limits and seed).
pub async fn queue_backends(test: &str, config: &EngineConfig) -> Vec<Under> {
    let mut all = vec![driver(config), in_place(config)];
    all.extend(postgres(test, config).await);
    all.extend(redis(config).await);
    all.extend(nats(test, config).await);
    all
}
