//! The library entry point for services that embed chime: a builder of
//! queues, schedules and async handlers over a store, started into a
//! [`Running`] instance whose cloneable [`Handle`](crate::driver::Handle)
//! has typed calls ([`crate::calls`]).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use chime_core::{EnqueueRequest, Payload, QueueConfig};
//! use chime_native::{Builder, store::RedbStore};
//!
//! let running = Builder::new()
//!     .store(RedbStore::open(std::path::Path::new("./data"))?)
//!     .queue(QueueConfig::new("emails"))
//!     .schedule(serde_json::from_str(
//!         r#"{"name": "digest", "spec": "0 8 * * *", "tz": "Europe/Paris",
//!             "target": {"queue": "emails"}}"#,
//!     )?)
//!     .handler("emails", 4, |job| async move {
//!         println!("sending job {} (attempt {})", job.id.0, job.attempt);
//!         Ok(())
//!     })
//!     .start()
//!     .await?;
//! let handle = running.handle().clone();
//! handle.enqueue(EnqueueRequest::new("emails", Payload::from_json(r#"{"to":"a@b"}"#)?)).await?;
//! running.shutdown().await?;
//! # Ok(()) }
//! ```

use super::{RunError, Running, Setup, start};
use crate::driver::{Clock, DriverConfig, SystemClock};
use crate::store::{MemoryStore, Store};
use crate::worker::{Handler, Job, PoolConfig};
use chime_core::{QueueConfig, ScheduleDef};
use std::future::Future;
use std::sync::Arc;

/// Builds a [`Running`] instance. Defaults: an in-memory store (nothing
/// durable), the system clock, [`DriverConfig::default`].
pub struct Builder {
    setup: Setup,
    store: Box<dyn Store>,
    clock: Arc<dyn Clock>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// An empty instance on a memory store.
    pub fn new() -> Builder {
        Builder {
            setup: Setup::default(),
            store: Box::new(MemoryStore::default()),
            clock: Arc::new(SystemClock),
        }
    }

    /// Where the state lives (e.g. [`RedbStore`](crate::store::RedbStore)).
    pub fn store(mut self, store: impl Store) -> Builder {
        self.store = Box::new(store);
        self
    }

    /// The source of `now` (tests pass a [`TokioClock`](crate::driver::TokioClock)).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Builder {
        self.clock = clock;
        self
    }

    /// Driver settings (snapshot interval, batch size, engine config).
    pub fn driver(mut self, config: DriverConfig) -> Builder {
        self.setup.driver = config;
        self
    }

    /// Declares a queue at start.
    pub fn queue(mut self, queue: QueueConfig) -> Builder {
        self.setup.queues.push(queue);
        self
    }

    /// Upserts a schedule at start. Stored schedules that no `schedule`
    /// call names are removed, so the code is the source of truth.
    pub fn schedule(mut self, def: ScheduleDef) -> Builder {
        self.setup.schedules.push(def);
        self
    }

    /// Runs `handler` for the jobs of `queue`, at most `concurrency` at
    /// once; `Err(text)` fails the attempt (retried per the queue's policy).
    pub fn handler<F, Fut>(self, queue: &str, concurrency: usize, handler: F) -> Builder
    where
        F: Fn(Job) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        let mut pool = PoolConfig::new(queue);
        pool.concurrency = concurrency.max(1);
        self.pool(pool, Arc::new(move |job| Box::pin(handler(job))))
    }

    /// A worker pool with every setting ([`PoolConfig`]: lease, timeout,
    /// grace period).
    pub fn pool(mut self, pool: PoolConfig, handler: Handler) -> Builder {
        self.setup.pools.push((pool, handler));
        self
    }

    /// Recovers the store, applies queues and schedules, starts the driver
    /// and the pools.
    pub async fn start(self) -> Result<Running, RunError> {
        start(self.setup, self.store, self.clock).await
    }
}
