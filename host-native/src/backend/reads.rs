//! The read port: what the HTTP API shows of a whole deployment — health,
//! metrics, inspect, schedules, queues, dead letters and the event stream
//! — through one trait, [`ReadBackend`], so the same routes, auth guard
//! and limits serve the embedded daemon (the driver [`Handle`]: read on
//! the driver task, between inputs) and every Postgres replica (the
//! leader's committed engine state and the job tables, read from the
//! database). Both build the same view types ([`super::views`]), so one
//! state answers the same JSON in both modes.
//!
//! Bounds are the caller's (the listener's read permits and timeout);
//! only [`ReadBackend::health`] takes its wait, because a probe that
//! does not answer in time is itself an answer (`not_responding`).

use super::fires::FireWindow;
use super::inspection::Inspection;
use super::views::{
    DeadLetters, Health, Probe, ProbeFailed, QueueList, ScheduleDetail, ScheduleFilter,
    ScheduleList,
};
use super::{PortError, PortFuture};
use crate::driver::{EngineGauges, Handle, StreamEvent};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// Whole-deployment reads (see the module docs).
pub trait ReadBackend: Send + Sync {
    /// A short name for messages (`engine`, `postgres`).
    fn backend(&self) -> &'static str;

    /// The health probe, answered within `wait` (a probe that takes
    /// longer is reported as such, never as an error).
    fn health(&self, wait: Duration) -> PortFuture<'_, Health>;

    /// Prometheus text exposition of the deployment's metrics.
    fn metrics(&self) -> PortFuture<'_, String>;

    /// Everything `chime inspect` shows, with up to `dead` dead letters
    /// per queue.
    fn inspect(&self, dead: usize) -> PortFuture<'_, Inspection>;

    /// The schedules `filter` selects, by name (one page of them when it
    /// has a limit).
    fn schedules(&self, filter: ScheduleFilter) -> PortFuture<'_, ScheduleList>;

    /// One schedule with its next boundaries; `None` if there is none by
    /// that name.
    fn schedule<'a>(&'a self, name: &'a str) -> PortFuture<'a, Option<ScheduleDetail>>;

    /// Up to `n` boundaries of one schedule at or after `from` (`None`:
    /// its cursor), with DST notes; `None` if there is no such schedule.
    fn schedule_fires<'a>(
        &'a self,
        name: &'a str,
        from: Option<chime_core::Timestamp>,
        n: usize,
    ) -> PortFuture<'a, Option<FireWindow>>;

    /// Every queue's stats, by name.
    fn queues(&self) -> PortFuture<'_, QueueList>;

    /// Up to `limit` dead letters of `queue`, oldest death first; `None`
    /// if there is no such queue.
    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<DeadLetters>>;

    /// Fires, skips and job outcomes from now on, bounded (a receiver
    /// that falls [`crate::driver::EVENT_BUFFER`] behind gets `Lagged`).
    fn events(&self) -> broadcast::Receiver<Arc<StreamEvent>>;
}

/// Runs `read` on the driver task; every driver error means it is gone.
async fn on_driver<R: Send + 'static>(
    handle: &Handle,
    read: impl FnOnce(&chime_core::Engine) -> R + Send + 'static,
) -> Result<R, PortError> {
    handle.inspect(read).await.map_err(|_| PortError::Stopped)
}

/// The embedded engine: every read runs on the driver task, between
/// inputs (a consistent view without a lock around the engine).
impl ReadBackend for Handle {
    fn backend(&self) -> &'static str {
        "engine"
    }

    fn health(&self, wait: Duration) -> PortFuture<'_, Health> {
        Box::pin(async move {
            let probe = match tokio::time::timeout(wait, self.inspect(Probe::read)).await {
                Ok(Ok(p)) => Ok(p),
                Ok(Err(_)) => Err(ProbeFailed::Stopped("the driver has stopped".to_owned())),
                Err(_) => Err(ProbeFailed::Timeout(wait)),
            };
            Ok(Health::new(self.vitals().read(), probe.as_ref()))
        })
    }

    fn metrics(&self) -> PortFuture<'_, String> {
        Box::pin(async move {
            let gauges = on_driver(self, EngineGauges::read).await?;
            Ok(Handle::metrics(self).render(&gauges))
        })
    }

    fn inspect(&self, dead: usize) -> PortFuture<'_, Inspection> {
        Box::pin(on_driver(self, move |e| Inspection::of(e, dead)))
    }

    fn schedules(&self, filter: ScheduleFilter) -> PortFuture<'_, ScheduleList> {
        Box::pin(on_driver(self, move |e| ScheduleList::read(e, &filter)))
    }

    fn schedule<'a>(&'a self, name: &'a str) -> PortFuture<'a, Option<ScheduleDetail>> {
        let key = name.to_owned();
        Box::pin(async move {
            let (info, config) =
                on_driver(self, move |e| (e.schedule(&key), e.config().clone())).await?;
            // Previewing runs here, off the driver task.
            Ok(info.map(|info| ScheduleDetail::new(info, &config)))
        })
    }

    fn schedule_fires<'a>(
        &'a self,
        name: &'a str,
        from: Option<chime_core::Timestamp>,
        n: usize,
    ) -> PortFuture<'a, Option<FireWindow>> {
        let key = name.to_owned();
        Box::pin(async move {
            let (info, config) =
                on_driver(self, move |e| (e.schedule(&key), e.config().clone())).await?;
            // Previewing runs here, off the driver task.
            Ok(info.map(|info| FireWindow::new(&info, &config, from, n)))
        })
    }

    fn queues(&self) -> PortFuture<'_, QueueList> {
        Box::pin(on_driver(self, QueueList::read))
    }

    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<DeadLetters>> {
        let key = queue.to_owned();
        Box::pin(on_driver(self, move |e| {
            e.queue_stats(&key).map(|s| DeadLetters {
                total: s.dead,
                jobs: e.dead_letters(&key, limit),
                queue: key,
            })
        }))
    }

    fn events(&self) -> broadcast::Receiver<Arc<StreamEvent>> {
        Handle::events(self)
    }
}
