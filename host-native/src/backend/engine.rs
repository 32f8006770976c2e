//! The embedded engine driven in place behind a mutex, without a store.

use super::{
    Enqueued, Failed, PortError, PortFuture, QueueBackend, Redriven, claim_input, fail_input,
    failed, purge_input, replies,
};
use crate::driver::Clock;
use chime_core::{
    Claimed, Command, Engine, EnqueueRequest, Error, Input, JobId, JobInfo, LeaseToken,
    QueueConfig, Reply, Timestamp,
};
use std::sync::{Arc, Mutex};

/// An engine driven in place, without a store: each call brings the
/// engine to `clock` (an `Advance`, as the driver's timer would have) and
/// handles its input there. The commands the engine produces (wake-ups,
/// events, the fires of schedules that came due) are kept for
/// [`take_commands`](Self::take_commands). For tests and simulations in
/// virtual time, and embedders that persist the engine themselves.
pub struct EngineQueues {
    state: Mutex<(Engine, Vec<Command>)>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for EngineQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineQueues").finish_non_exhaustive()
    }
}

impl EngineQueues {
    /// Drives `engine` at `clock`'s time (never behind the engine's own).
    pub fn new(engine: Engine, clock: Arc<dyn Clock>) -> EngineQueues {
        EngineQueues {
            state: Mutex::new((engine, Vec::new())),
            clock,
        }
    }

    /// Handles `input` at the clock (no `Advance` first); the clock it was
    /// handled at and the reply.
    pub fn handle(&self, input: Input) -> (Timestamp, Result<Reply, Error>) {
        self.run(false, input)
    }

    /// Takes the commands produced so far, in order.
    pub fn take_commands(&self) -> Vec<Command> {
        std::mem::take(&mut self.state.lock().expect("engine lock").1)
    }

    /// Reads the engine.
    pub fn with_engine<R>(&self, read: impl FnOnce(&Engine) -> R) -> R {
        read(&self.state.lock().expect("engine lock").0)
    }

    fn run(&self, advance: bool, input: Input) -> (Timestamp, Result<Reply, Error>) {
        let mut state = self.state.lock().expect("engine lock");
        let (engine, out) = &mut *state;
        let now = self.clock.now().max(engine.clock());
        if advance && let Err(e) = engine.handle(now, Input::Advance) {
            tracing::error!(error = %e, "advance rejected");
        }
        let reply = engine.handle(now, input);
        engine.drain_commands(out);
        (engine.clock(), reply)
    }

    /// A port call: advance, then `input`.
    fn call(&self, input: Input) -> Result<Reply, PortError> {
        Ok(self.run(true, input).1?)
    }
}

/// A port future that runs `f` when first polled (not when created, so
/// an `EngineQueues` call, like any backend's, does nothing until awaited).
fn lazy<'a, T: Send + 'a>(
    f: impl FnOnce() -> Result<T, PortError> + Send + 'a,
) -> PortFuture<'a, T> {
    Box::pin(async move { f() })
}

impl QueueBackend for EngineQueues {
    fn backend(&self) -> &'static str {
        "engine"
    }

    fn declare<'a>(&'a self, config: &'a QueueConfig) -> PortFuture<'a, ()> {
        lazy(move || self.call(Input::DeclareQueue(config.clone())).map(drop))
    }

    fn enqueue<'a>(&'a self, request: &'a EnqueueRequest) -> PortFuture<'a, Enqueued> {
        lazy(move || {
            self.call(Input::Enqueue(request.clone()))
                .and_then(replies::enqueued)
        })
    }

    fn claim<'a>(
        &'a self,
        queue: &'a str,
        worker: &'a str,
        max: u32,
        lease_ms: Option<i64>,
    ) -> PortFuture<'a, Vec<Claimed>> {
        lazy(move || {
            self.call(claim_input(queue, worker, max, lease_ms))
                .and_then(replies::claimed)
        })
    }

    fn heartbeat(
        &self,
        job: JobId,
        token: LeaseToken,
        lease_ms: Option<i64>,
    ) -> PortFuture<'_, Timestamp> {
        let input = Input::Heartbeat {
            job,
            token,
            lease_ms,
        };
        lazy(move || self.call(input).and_then(replies::extended))
    }

    fn complete(&self, job: JobId, token: LeaseToken) -> PortFuture<'_, ()> {
        lazy(move || self.call(Input::Complete { job, token }).map(drop))
    }

    fn fail<'a>(
        &'a self,
        job: JobId,
        token: LeaseToken,
        error: &'a str,
        retry_at: Option<Timestamp>,
    ) -> PortFuture<'a, Failed> {
        lazy(move || {
            let (now, reply) = self.run(true, fail_input(job, token, error, retry_at));
            failed(reply?, now)
        })
    }

    fn cancel(&self, job: JobId) -> PortFuture<'_, ()> {
        lazy(move || self.call(Input::CancelJob { job }).map(drop))
    }

    fn redrive<'a>(&'a self, queue: &'a str, job: Option<JobId>) -> PortFuture<'a, Redriven> {
        let queue = queue.to_owned();
        lazy(move || {
            self.call(Input::Redrive { queue, job })
                .and_then(replies::redriven)
        })
    }

    fn purge_dead<'a>(&'a self, queue: &'a str, before: Option<Timestamp>) -> PortFuture<'a, u64> {
        lazy(move || {
            self.call(purge_input(queue, before))
                .and_then(replies::count)
        })
    }

    fn job(&self, job: JobId) -> PortFuture<'_, Option<JobInfo>> {
        lazy(move || Ok(self.with_engine(|e| e.job(job))))
    }

    /// All or none, as the driver's batch: checked whole first
    /// (`driver::precheck`), then applied under one lock.
    fn enqueue_batch<'a>(
        &'a self,
        requests: &'a [EnqueueRequest],
    ) -> PortFuture<'a, Result<Vec<Enqueued>, (usize, Error)>> {
        lazy(move || {
            let inputs: Vec<Input> = requests.iter().cloned().map(Input::Enqueue).collect();
            let mut state = self.state.lock().expect("engine lock");
            let (engine, out) = &mut *state;
            let now = self.clock.now().max(engine.clock());
            if let Err(e) = engine.handle(now, Input::Advance) {
                tracing::error!(error = %e, "advance rejected");
            }
            if let Err(refused) = crate::driver::precheck(&inputs, engine, now) {
                return Ok(Err(refused));
            }
            let mut done = Vec::with_capacity(inputs.len());
            for (i, input) in inputs.into_iter().enumerate() {
                let reply = engine.handle(now, input);
                engine.drain_commands(out);
                match reply {
                    Ok(r) => done.push(replies::enqueued(r)?),
                    Err(e) => return Ok(Err((i, e))),
                }
            }
            Ok(Ok(done))
        })
    }

    fn search<'a>(
        &'a self,
        query: &'a chime_core::JobQuery,
    ) -> PortFuture<'a, chime_core::JobPage> {
        lazy(move || Ok(self.with_engine(|e| e.search_jobs(query))))
    }

    fn maintain(&self) -> PortFuture<'_, ()> {
        lazy(move || self.call(Input::Advance).map(drop))
    }
}
