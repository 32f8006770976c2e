//! The cloneable [`Handle`] every caller holds: it sends inputs and reads
//! to the driver task through one channel and reads the metrics and
//! vitals the driver publishes without a round trip.

use super::DriverError;
use super::metrics::Metrics;
use super::vitals::Vitals;
use chime_core::{Engine, Error, Input, Reply};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A read of the engine, run on the driver task between inputs.
pub(super) type Inspect = Box<dyn FnOnce(&Engine) + Send>;

/// A call to the driver.
// Nearly every message is an `Input`: boxing it would cost an allocation
// per call to shrink only the rare `Stop`.
#[allow(clippy::large_enum_variant)]
pub(super) enum Msg {
    Input(Input, oneshot::Sender<Result<Reply, Error>>),
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
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::Input(i, _) => f.debug_tuple("Input").field(i).finish(),
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
