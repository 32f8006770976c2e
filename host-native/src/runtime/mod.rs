//! The runtime: what an embedding service starts and stops. [`start`]
//! recovers a driver from a store, applies a [`Setup`] (queues, schedules)
//! and spawns the worker pools; [`Running`] stops it, reloads it
//! ([`reload`](Running::reload)) and hands out its [`Handle`]. The
//! [`Builder`] is the same with defaults; [`check`] is the core's verdict
//! on a whole setup before any of it is applied.
//!
//! Above the driver, store and workers; below the HTTP server, the
//! Postgres replica and the daemon, which all start through here.

mod builder;
mod calls;
mod check;
mod reload;

pub use builder::Builder;
pub use calls::CallError;
pub use check::{Rejection, Subject, check};
pub use reload::{ReloadError, ReloadReport};

use crate::driver::{Clock, Driver, DriverConfig, DriverError, Handle};
use crate::store::Store;
use crate::worker::{self, Handler, PoolConfig};
use chime_core::{Engine, Input, QueueConfig, Reply, ScheduleDef};
use std::sync::Arc;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// Everything a running instance is made of.
#[derive(Default)]
pub struct Setup {
    /// Queues declared at start.
    pub queues: Vec<QueueConfig>,
    /// Schedules upserted at start; stored schedules not listed are removed.
    pub schedules: Vec<ScheduleDef>,
    /// Worker pools with their handlers.
    pub pools: Vec<(PoolConfig, Handler)>,
    /// Driver settings.
    pub driver: DriverConfig,
}

/// Why an instance did not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The driver failed.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// The engine refused part of the setup.
    #[error("{what}: {error}")]
    Rejected {
        /// Which item.
        what: String,
        /// The engine's error.
        error: chime_core::Error,
    },
    /// The driver task panicked.
    #[error("driver task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    /// A backend outside the engine failed (the Postgres queues or lease).
    #[error("{0}")]
    Backend(String),
}

/// A running instance: driver task plus worker pools.
#[derive(Debug)]
pub struct Running {
    handle: Handle,
    stop: watch::Sender<bool>,
    pools: Vec<JoinHandle<()>>,
    driver: JoinHandle<Result<Engine, DriverError>>,
    /// The base of the next [`Running::reload`].
    applied: reload::Applied,
    /// The store has one owner ([`Store::single_owner`]): a graceful stop
    /// is journaled as `Input::Stop`, which the next start's recovery ends.
    single_owner: bool,
}

impl Running {
    /// A handle to send inputs with.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Stops everything at once, as a crash would: no grace period, no
    /// final snapshot, running jobs left to lease expiry (tests use it).
    pub async fn abort(self) {
        for p in &self.pools {
            p.abort();
        }
        self.driver.abort();
        for p in self.pools {
            let _ = p.await;
        }
        let _ = self.driver.await;
    }

    /// Graceful stop: from its first moment nothing new fires or is
    /// claimed (`Input::Stop`, journaled, on a store with one owner), pools
    /// wait for running jobs (up to their grace period), then the driver
    /// writes a final snapshot. Jobs still running when the grace period
    /// ends are left claimed in it: the next start releases them as
    /// interrupted, and its catch-up handles the boundaries missed.
    pub async fn shutdown(self) -> Result<Engine, RunError> {
        if self.single_owner {
            match self.handle.call(Input::Stop).await {
                Ok(Ok(Reply::Stopping { claimed })) if claimed > 0 => {
                    tracing::info!(
                        claimed,
                        "stopping: nothing new fires; waiting for running jobs"
                    )
                }
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "stop rejected"),
                // The driver is gone already: nothing can fire.
                Err(_) => {}
            }
        }
        let _ = self.stop.send(true);
        for p in self.pools {
            p.await?;
        }
        self.handle.stop();
        Ok(self.driver.await??)
    }
}

/// Recovers from `store` (on a store with one owner, releasing the claims
/// of the previous incarnation as interrupted: see [`Driver::recover`]),
/// applies `setup` (queues, schedules), and starts the driver and pools.
pub async fn start(
    setup: Setup,
    store: Box<dyn Store>,
    clock: Arc<dyn Clock>,
) -> Result<Running, RunError> {
    let applied = reload::Applied::new(&setup, clock.clone());
    let single_owner = store.single_owner();
    // On a store with one owner, recovery's first input releases the
    // previous incarnation's claims (`Input::Recover`): a host that must
    // clean up after that incarnation first does so before `start`.
    let mut driver = Driver::recover(store, clock, setup.driver)?;
    let wakes: Vec<Arc<Notify>> = setup
        .pools
        .iter()
        .map(|(cfg, _)| {
            let n = Arc::new(Notify::new());
            driver.add_waker(&cfg.queue, n.clone());
            n
        })
        .collect();
    let handle = driver.handle();
    let driver = tokio::spawn(driver.run());
    apply(&handle, setup.queues, setup.schedules).await?;
    let (stop, stop_rx) = watch::channel(false);
    let pools = setup
        .pools
        .into_iter()
        .zip(wakes)
        .map(|((cfg, handler), wake)| {
            tokio::spawn(worker::run_pool(
                handle.clone(),
                wake,
                cfg,
                worker::timed(handle.clone(), handler),
                stop_rx.clone(),
            ))
        })
        .collect();
    Ok(Running {
        handle,
        stop,
        pools,
        driver,
        applied,
        single_owner,
    })
}

/// Declares `queues`, removes the stored declared schedules not among
/// `schedules` and upserts `schedules`, through a running driver: what a
/// start (and a new leader) does after recovery. Schedules made through
/// the API (`origin: api`) are not the config's to prune: they stay
/// until removed through the API (a declared one of the same name takes
/// it over).
pub(crate) async fn apply(
    handle: &Handle,
    queues: Vec<QueueConfig>,
    schedules: Vec<ScheduleDef>,
) -> Result<(), RunError> {
    let names: Vec<String> = schedules.iter().map(|s| s.name.clone()).collect();
    let stale: Vec<String> = handle
        .inspect(move |engine| {
            engine
                .schedule_names()
                .filter(|n| !names.iter().any(|s| s == n))
                .filter(|n| {
                    engine
                        .schedule(n)
                        .is_some_and(|s| s.def.origin.is_declared())
                })
                .map(str::to_owned)
                .collect()
        })
        .await?;
    let call = |input: Input, what: String| {
        let handle = handle.clone();
        async move {
            match handle.call(input).await? {
                Ok(r) => Ok(r),
                Err(error) => Err(RunError::Rejected { what, error }),
            }
        }
    };
    for q in queues {
        let what = format!("queue {}", q.name);
        call(Input::DeclareQueue(q), what).await?;
    }
    for name in stale {
        tracing::info!(schedule = %name, "removing schedule not in the config");
        call(Input::remove_schedule(name.clone()), name).await?;
    }
    for s in schedules {
        let what = format!("schedule {}", s.name);
        let name = s.name.clone();
        if let Reply::ScheduleUpserted {
            next_fire,
            changed: true,
            version,
        } = call(Input::UpsertSchedule(s), what).await?
        {
            tracing::info!(schedule = %name, version, next_fire = %next_fire.map_or_else(|| "none".to_owned(), |t| t.to_string()), "schedule upserted");
        }
    }
    Ok(())
}
