//! Liveness signals of the driver, read by `GET /healthz` without asking
//! the driver anything: a stuck driver cannot answer, so what it last
//! wrote here (turns, last commit, the error it stopped with) is how a
//! probe tells *stuck* from *stopped* and explains either.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// Counters the driver updates each loop turn; cheap to read from any task.
#[derive(Debug, Default)]
pub struct Vitals {
    turns: AtomicU64,
    commits: AtomicU64,
    last_commit_unix_ms: AtomicI64,
    last_commit_us: AtomicU64,
    stopped: AtomicBool,
    error: Mutex<Option<String>>,
}

/// A copy of [`Vitals`] at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VitalSigns {
    /// Loop turns the driver began (counted before the turn's commit, so
    /// a turn stuck in its commit shows here while probes go unanswered).
    pub turns: u64,
    /// Journal commits that succeeded.
    pub commits: u64,
    /// Wall-clock time of the last successful commit (ms since the epoch).
    pub last_commit_unix_ms: Option<i64>,
    /// How long that commit took, in microseconds.
    pub last_commit_us: Option<u64>,
    /// Whether the driver loop has ended.
    pub stopped: bool,
    /// The error it ended with (a failed commit or snapshot), if any.
    pub error: Option<String>,
}

impl Vitals {
    /// One loop turn done.
    pub(crate) fn turn(&self) {
        self.turns.fetch_add(1, Ordering::Relaxed);
    }

    /// One commit succeeded after `us` microseconds.
    pub(crate) fn committed(&self, us: u64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        self.last_commit_unix_ms.store(now, Ordering::Relaxed);
        self.last_commit_us.store(us, Ordering::Relaxed);
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    /// The loop ended, with the error that ended it if any.
    pub(crate) fn stopped(&self, error: Option<String>) {
        *self.error.lock().unwrap_or_else(|p| p.into_inner()) = error;
        self.stopped.store(true, Ordering::Release);
    }

    /// The current values.
    pub fn read(&self) -> VitalSigns {
        let commits = self.commits.load(Ordering::Relaxed);
        let seen = commits > 0;
        VitalSigns {
            turns: self.turns.load(Ordering::Relaxed),
            commits,
            last_commit_unix_ms: seen.then(|| self.last_commit_unix_ms.load(Ordering::Relaxed)),
            last_commit_us: seen.then(|| self.last_commit_us.load(Ordering::Relaxed)),
            stopped: self.stopped.load(Ordering::Acquire),
            error: self.error.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }
}
