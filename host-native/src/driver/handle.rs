//! The cloneable [`Handle`] every caller holds: it sends inputs and reads
//! to the driver task through one channel and reads the metrics and
//! vitals the driver publishes without a round trip.

use super::DriverError;
use super::metrics::Metrics;
use super::stream::{Publisher, StreamEvent};
use super::vitals::Vitals;
use chime_core::{Engine, Error, Input, Reply};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// The answer to a batch: every reply, or the first refusal with its
/// index (and then nothing changed).
pub type BatchReply<T = ()> = Result<T, (usize, Error)>;

/// A read of the engine, run on the driver task between inputs.
pub(super) type Inspect = Box<dyn FnOnce(&Engine) + Send>;

/// A call to the driver.
// Nearly every message is an `Input`: boxing it would cost an allocation
// per call to shrink only the rare `Stop`.
#[allow(clippy::large_enum_variant)]
pub(super) enum Msg {
    Input(Input, oneshot::Sender<Result<Reply, Error>>),
    /// Several inputs applied in one turn, journaled in one commit, all or
    /// none ([`super::precheck`]).
    Batch(Vec<Input>, oneshot::Sender<BatchReply<Vec<Reply>>>),
    Inspect(Inspect),
    Stop,
}

/// A cloneable handle to a running driver.
#[derive(Clone, Debug)]
pub struct Handle {
    pub(super) tx: mpsc::UnboundedSender<Msg>,
    pub(super) shared: Arc<Shared>,
}

/// What the driver shares with every handle: written by the driver,
/// read by the HTTP server and workers without a round trip.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) metrics: Metrics,
    pub(super) vitals: Vitals,
    pub(super) publisher: Publisher,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::Input(i, _) => f.debug_tuple("Input").field(i).finish(),
            Msg::Batch(i, _) => f.debug_tuple("Batch").field(&i.len()).finish(),
            Msg::Inspect(_) => f.write_str("Inspect"),
            Msg::Stop => f.write_str("Stop"),
        }
    }
}

impl Handle {
    /// Sends one input; the reply arrives after it was committed and handled.
    pub async fn call(&self, input: Input) -> Result<Result<Reply, Error>, DriverError> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Msg::Input(input, tx))
            .map_err(|_| DriverError::Stopped)?;
        rx.await.map_err(|_| DriverError::Stopped)
    }

    /// Sends several inputs to be applied in one driver turn and journaled
    /// in one commit, all or none: a batch any input of which fails the
    /// engine's stateless checks (or that would exceed the live-jobs
    /// bound) is refused whole, with the index of the first refused input,
    /// before anything is journaled.
    pub async fn call_batch(
        &self,
        inputs: Vec<Input>,
    ) -> Result<BatchReply<Vec<Reply>>, DriverError> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Msg::Batch(inputs, tx))
            .map_err(|_| DriverError::Stopped)?;
        rx.await.map_err(|_| DriverError::Stopped)
    }

    /// A receiver that changes each time `queue` gets claimable work
    /// (the engine's `Wake`) after this call: what a long-poll claim
    /// waits on between claims.
    pub fn availability(&self, queue: &str) -> watch::Receiver<u64> {
        self.shared.publisher.availability(queue)
    }

    /// The stream of fires, skips and job outcomes from now on (bounded:
    /// a receiver more than [`super::EVENT_BUFFER`] events behind gets
    /// `Lagged`).
    pub fn events(&self) -> broadcast::Receiver<Arc<StreamEvent>> {
        self.shared.publisher.subscribe()
    }

    /// Runs `read` on the driver task, between inputs, and returns what it
    /// returns: a consistent view of the engine without a lock around it,
    /// so readers (the HTTP API) never block the driver for longer than
    /// `read` takes. Keep `read` short; it is not journaled.
    pub async fn inspect<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, DriverError> {
        let (tx, rx) = oneshot::channel();
        let f: Inspect = Box::new(move |engine| {
            let _ = tx.send(read(engine));
        });
        self.tx
            .send(Msg::Inspect(f))
            .map_err(|_| DriverError::Stopped)?;
        rx.await.map_err(|_| DriverError::Stopped)
    }

    /// The instance's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// The driver's liveness signals.
    pub fn vitals(&self) -> &Vitals {
        &self.shared.vitals
    }

    /// Whether the driver loop has ended (its inbox is closed).
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Resolves when the driver has stopped (for whatever reason), so a
    /// daemon can exit instead of running on without its engine.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }

    /// Asks the driver to stop after the current turn.
    pub fn stop(&self) {
        let _ = self.tx.send(Msg::Stop);
    }
}
