//! The source of `now`: the wall clock in production, tokio's (pausable)
//! clock in tests. The engine never reads a clock itself.

use chime_core::Timestamp;
use tokio::time::Instant;

/// The source of `now`. A seam so tests run on tokio's paused clock.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// Wall-clock time (`SystemTime`). A jump backwards is clamped by the
/// engine (reported as `clock_clamped`); one forwards fires what is due.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        Timestamp::from_millis(ms).unwrap_or(Timestamp::MAX)
    }
}

/// A clock that follows tokio's (possibly paused) monotonic time from a
/// fixed start: `now = start + (Instant::now() - created)`.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    start: Timestamp,
    created: Instant,
}

impl TokioClock {
    /// A clock reading `start` now.
    pub fn new(start: Timestamp) -> TokioClock {
        TokioClock {
            start,
            created: Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        let ms = self.created.elapsed().as_millis() as i64;
        self.start.saturating_add_ms(ms)
    }
}
