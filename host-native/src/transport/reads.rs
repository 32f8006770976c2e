//! The embedded daemon's reads with its transports: `/healthz` pings each
//! broker (status and round trip per transport; one that does not answer
//! makes the whole status `unavailable`, HTTP 503) and `/metrics` reads
//! each transport queue's depth into `chime_queue_depth{transport}`
//! before rendering, and the outbox's backlog into
//! `chime_transport_outbox_pending` (the transports' counters are counted
//! where they happen, `crate::driver::TransportCounters`). Everything
//! else is the driver's.

use super::Transport;
use crate::backend::PortFuture;
use crate::backend::ReadBackend;
use crate::backend::fires::FireWindow;
use crate::backend::inspection::Inspection;
use crate::backend::views::{
    DeadLetters, Health, QueueList, ScheduleDetail, ScheduleFilter, ScheduleList, TransportHealth,
};
use crate::driver::{Handle, StreamEvent};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// The driver's reads plus its transports'.
#[derive(Clone)]
pub struct WithTransports {
    handle: Handle,
    transports: Vec<Arc<dyn Transport>>,
    outbox: Option<super::outbox::Outbox>,
}

impl WithTransports {
    /// `handle`'s reads, with `transports` in health and metrics.
    pub fn new(handle: Handle, transports: Vec<Arc<dyn Transport>>) -> WithTransports {
        WithTransports {
            handle,
            transports,
            outbox: None,
        }
    }

    /// With `outbox`'s backlog in `/metrics`.
    pub fn with_outbox(mut self, outbox: super::outbox::Outbox) -> WithTransports {
        self.outbox = Some(outbox);
        self
    }

    /// The transport that carries `queue`, if one does.
    fn transport_of(&self, queue: &str) -> Option<&Arc<dyn Transport>> {
        self.transports
            .iter()
            .find(|t| t.queues().iter().any(|q| q == queue))
    }

    /// Every transport queue, its transport and its depth in the broker,
    /// all read at once, each within 2 s (`None`: no answer): a broker
    /// that is down delays a read by 2 s however many queues it has.
    async fn depths(&self) -> Vec<(&Arc<dyn Transport>, String, Option<super::Depth>)> {
        let reads = self.transports.iter().flat_map(|t| {
            t.queues().into_iter().map(move |q| async move {
                let d = tokio::time::timeout(Duration::from_secs(2), t.depth(&q)).await;
                (t, q, d.ok().and_then(Result::ok))
            })
        });
        futures_util::future::join_all(reads).await
    }

    /// Pings every transport, each within `wait`.
    pub async fn ping_all(&self, wait: Duration) -> Vec<TransportHealth> {
        let mut out = Vec::with_capacity(self.transports.len());
        for t in &self.transports {
            let (status, rtt, error) = match tokio::time::timeout(wait, t.ping()).await {
                Ok(Ok(d)) => ("ok", Some(d.as_micros() as u64), None),
                Ok(Err(e)) => ("unavailable", None, Some(e.to_string())),
                Err(_) => (
                    "unavailable",
                    None,
                    Some(format!("no answer within {} ms", wait.as_millis())),
                ),
            };
            out.push(TransportHealth {
                transport: t.backend().to_owned(),
                status: status.to_owned(),
                round_trip_micros: rtt,
                error,
            });
        }
        out
    }
}

impl ReadBackend for WithTransports {
    fn backend(&self) -> &'static str {
        ReadBackend::backend(&self.handle)
    }

    fn health(&self, wait: Duration) -> PortFuture<'_, Health> {
        Box::pin(async move {
            let mut h = ReadBackend::health(&self.handle, wait).await?;
            // Within 2 s at most: a stopped broker shows within the 5 s a
            // load balancer's probe allows.
            h.transports = self.ping_all(wait.min(Duration::from_secs(2))).await;
            if h.transports.iter().any(|t| t.status != "ok") {
                h.status = "unavailable".to_owned();
            }
            Ok(h)
        })
    }

    fn metrics(&self) -> PortFuture<'_, String> {
        Box::pin(async move {
            for (t, q, d) in self.depths().await {
                // A broker that does not answer keeps its last values.
                for (state, n) in d.iter().flat_map(|d| d.states()) {
                    self.handle
                        .metrics()
                        .set_transport_depth(t.backend(), &q, state, n);
                }
            }
            if let Some(o) = &self.outbox {
                // One count of a redb read transaction: cheap.
                match o.pending_len() {
                    Ok(n) => self.handle.metrics().set_outbox_pending(n),
                    Err(e) => tracing::warn!(error = %e, "transport outbox unreadable"),
                }
            }
            ReadBackend::metrics(&self.handle).await
        })
    }

    fn inspect(&self, dead: usize) -> PortFuture<'_, Inspection> {
        ReadBackend::inspect(&self.handle, dead)
    }

    fn schedules(&self, filter: ScheduleFilter) -> PortFuture<'_, ScheduleList> {
        ReadBackend::schedules(&self.handle, filter)
    }

    fn schedule<'a>(&'a self, name: &'a str) -> PortFuture<'a, Option<ScheduleDetail>> {
        ReadBackend::schedule(&self.handle, name)
    }

    fn schedule_fires<'a>(
        &'a self,
        name: &'a str,
        from: Option<chime_core::Timestamp>,
        n: usize,
    ) -> PortFuture<'a, Option<FireWindow>> {
        ReadBackend::schedule_fires(&self.handle, name, from, n)
    }

    /// The engine's list, a transport queue's counts by state read from
    /// its broker (the engine holds none of its jobs; its `totals` stay
    /// the engine's: the fires it sent there).
    fn queues(&self) -> PortFuture<'_, QueueList> {
        Box::pin(async move {
            let mut list = ReadBackend::queues(&self.handle).await?;
            let depths = self.depths().await;
            for q in &mut list.queues {
                let Some((_, _, d)) = depths.iter().find(|(_, name, _)| *name == q.queue) else {
                    continue;
                };
                // A broker that does not answer within 2 s shows nothing
                // it cannot vouch for.
                let d = d.unwrap_or_default();
                (q.scheduled, q.available, q.claimed, q.dead) =
                    (d.scheduled, d.available, d.claimed, d.dead);
                (q.completed, q.cancelled, q.oldest_available_age_ms) = (0, 0, None);
            }
            Ok(list)
        })
    }

    fn dead_letters<'a>(
        &'a self,
        queue: &'a str,
        limit: usize,
    ) -> PortFuture<'a, Option<DeadLetters>> {
        match self.transport_of(queue) {
            Some(t) => t.dead_letters(queue, limit),
            None => ReadBackend::dead_letters(&self.handle, queue, limit),
        }
    }

    fn events(&self) -> broadcast::Receiver<Arc<StreamEvent>> {
        ReadBackend::events(&self.handle)
    }
}
