//! Reloading a running instance (SIGHUP): the new queues and schedules are
//! checked as a whole by the core first ([`crate::check`]); a setup with
//! any error is refused and the running one stays untouched. A valid one
//! is applied as a diff: queues declared where new or changed, schedules
//! upserted where new or changed, removed where gone.
//!
//! Worker pools are not changed live: the driver routes `Wake` commands to
//! pools registered before it started, so a new pool would only ever claim
//! on its poll. A reload reports the pools that differ and the daemon logs
//! that a restart applies them. (A crontab never needs one: its single
//! worker runs whatever command each job carries.)

use super::check::{Rejection, check};
use super::{Running, Setup};
use crate::driver::{Clock, DriverError};
use chime_core::{EngineConfig, Input, QueueConfig, Reply, ScheduleDef};
use serde::Serialize;
use std::sync::Arc;

/// What the running instance was last given (the base of the next diff).
pub(crate) struct Applied {
    queues: Vec<QueueConfig>,
    schedules: Vec<ScheduleDef>,
    /// Each pool's settings, rendered (handlers cannot be compared).
    pools: Vec<(String, String)>,
    engine: EngineConfig,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Applied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applied")
            .field("queues", &self.queues.len())
            .field("schedules", &self.schedules.len())
            .finish()
    }
}

fn pool_keys(setup: &Setup) -> Vec<(String, String)> {
    setup
        .pools
        .iter()
        .map(|(p, _)| (p.queue.clone(), format!("{p:?}")))
        .collect()
}

impl Applied {
    pub(crate) fn new(setup: &Setup, clock: Arc<dyn Clock>) -> Applied {
        Applied {
            queues: setup.queues.clone(),
            schedules: setup.schedules.clone(),
            pools: pool_keys(setup),
            engine: setup.driver.engine.clone(),
            clock,
        }
    }
}

/// What a reload changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadReport {
    /// Schedules created.
    pub added: Vec<String>,
    /// Schedules whose definition changed (new version).
    pub changed: Vec<String>,
    /// Schedules removed.
    pub removed: Vec<String>,
    /// Queues declared (new, or with a changed config).
    pub queues_declared: Vec<String>,
    /// Queues no longer in the config: kept, with their jobs (the engine
    /// has no queue removal; nothing fires into them any more).
    pub queues_kept: Vec<String>,
    /// Queues whose worker pool was added, removed or changed: not applied
    /// until the daemon restarts.
    pub pools_not_applied: Vec<String>,
}

impl ReloadReport {
    /// Whether the reload changed nothing at all.
    pub fn is_empty(&self) -> bool {
        *self == ReloadReport::default()
    }
}

impl std::fmt::Display for ReloadReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "added {:?}, changed {:?}, removed {:?}, queues declared {:?}",
            self.added, self.changed, self.removed, self.queues_declared
        )
    }
}

/// Why a reload was not (fully) applied.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The core refused part of the new setup; nothing was changed.
    #[error("invalid config, nothing changed: {}", list(.0))]
    Invalid(Vec<Rejection>),
    /// The engine refused an item that passed the check (e.g. a limit
    /// reached by the live state): the items before it were applied.
    #[error("{what}: {error} (items before it were applied)")]
    Partial {
        /// Which item.
        what: String,
        /// The engine's error.
        error: chime_core::Error,
    },
    /// The driver has stopped.
    #[error(transparent)]
    Driver(#[from] DriverError),
}

fn list(r: &[Rejection]) -> String {
    r.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl Running {
    /// Applies `setup`'s queues and schedules as a diff against the last
    /// applied setup (see the module docs); `setup.driver` and the pools'
    /// handlers are ignored. Each change is logged.
    pub async fn reload(&mut self, setup: Setup) -> Result<ReloadReport, ReloadError> {
        let now = self.applied.clock.now();
        let rejected = check(&setup.queues, &setup.schedules, &self.applied.engine, now);
        if !rejected.is_empty() {
            return Err(ReloadError::Invalid(rejected));
        }
        let mut report = ReloadReport::default();
        let call = |input: Input, what: String| {
            let handle = self.handle.clone();
            async move {
                match handle.call(input).await? {
                    Ok(r) => Ok(r),
                    Err(error) => Err(ReloadError::Partial { what, error }),
                }
            }
        };
        let old = &self.applied;
        for q in &setup.queues {
            if old.queues.contains(q) {
                continue;
            }
            call(Input::DeclareQueue(q.clone()), format!("queue {}", q.name)).await?;
            tracing::info!(queue = %q.name, "reload: queue declared");
            report.queues_declared.push(q.name.clone());
        }
        for q in &old.queues {
            if !setup.queues.iter().any(|n| n.name == q.name) {
                tracing::warn!(queue = %q.name, "reload: queue no longer in the config; kept with its jobs");
                report.queues_kept.push(q.name.clone());
            }
        }
        for s in &setup.schedules {
            if old.schedules.contains(s) {
                continue;
            }
            let existed = old.schedules.iter().any(|o| o.name == s.name);
            let reply = call(
                Input::UpsertSchedule(s.clone()),
                format!("schedule {}", s.name),
            )
            .await?;
            if let Reply::ScheduleUpserted {
                version,
                next_fire,
                changed: true,
            } = reply
            {
                let next = next_fire.map_or_else(|| "none".to_owned(), |t| t.to_string());
                if existed {
                    tracing::info!(schedule = %s.name, version, next_fire = %next, "reload: schedule changed");
                    report.changed.push(s.name.clone());
                } else {
                    tracing::info!(schedule = %s.name, version, next_fire = %next, "reload: schedule added");
                    report.added.push(s.name.clone());
                }
            }
        }
        for s in &old.schedules {
            if setup.schedules.iter().any(|n| n.name == s.name) {
                continue;
            }
            let name = s.name.clone();
            call(Input::remove_schedule(name.clone()), name.clone()).await?;
            tracing::info!(schedule = %name, "reload: schedule removed");
            report.removed.push(name);
        }
        let pools = pool_keys(&setup);
        let mut differ: Vec<String> = pools
            .iter()
            .filter(|p| !old.pools.contains(p))
            .chain(old.pools.iter().filter(|p| !pools.contains(p)))
            .map(|(q, _)| q.clone())
            .collect();
        differ.sort();
        differ.dedup();
        for q in &differ {
            tracing::warn!(queue = %q, "reload: worker pool changed; restart chime to apply it");
        }
        report.pools_not_applied = differ;
        self.applied.queues = setup.queues;
        self.applied.schedules = setup.schedules;
        tracing::info!(%report, "reload applied");
        Ok(report)
    }
}
