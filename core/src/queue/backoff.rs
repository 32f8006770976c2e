//! Retry backoff: exponential with equal jitter, deterministic; and what a
//! failed attempt leads to.

use crate::det;
use crate::wire::ids::JobId;
use crate::wire::queue_config::{Backoff, QueueConfig};

/// What a failed attempt (a `Fail`, or a lease that expired) leads to.
///
/// The one place the rule lives: the engine's queues use it, and so does
/// every backend that keeps jobs elsewhere (the Postgres queues), so a job
/// retries at the same instants and dies after the same attempt whichever
/// backend holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    /// Run again `delay_ms` after the failure (unless the failure named its
    /// own `retryAt`; one in the past means now).
    Retry {
        /// The backoff delay (equal jitter, see the module docs).
        delay_ms: i64,
    },
    /// Out of attempts: `dead` (kept for redrive) when the queue keeps dead
    /// letters, else `dropped`.
    Exhausted {
        /// The queue's `deadLetter`.
        dead_letter: bool,
    },
}

/// What failed `attempt` (1-based) of `job` leads to, on a queue with
/// `config`; `max_attempts` is the job's own limit, if it set one.
#[must_use]
pub fn after_failure(
    config: &QueueConfig,
    max_attempts: Option<u32>,
    seed: u64,
    job: JobId,
    attempt: u32,
) -> AfterFailure {
    if attempt >= max_attempts.unwrap_or(config.max_attempts) {
        AfterFailure::Exhausted {
            dead_letter: config.dead_letter,
        }
    } else {
        AfterFailure::Retry {
            delay_ms: retry_delay_ms(config.backoff, seed, job, attempt),
        }
    }
}

/// How long to wait before retrying `job` after its failed `attempt` (1-based).
///
/// Equal jitter: `d = min(cap, base · 2^(attempt−1))`, wait `d/2 + r` with
/// `r` in `[0, d/2]` picked from `(seed, job, attempt)`. Half the delay is
/// guaranteed (so retries back off), half is spread (so a burst of failures
/// does not retry in lockstep), and a replay picks the same `r`. Saturating
/// arithmetic: a huge base or attempt count gives `cap`, never an overflow.
pub(crate) fn retry_delay_ms(backoff: Backoff, seed: u64, job: JobId, attempt: u32) -> i64 {
    let exp = attempt.saturating_sub(1).min(62);
    let cap_ms = backoff.cap_ms.max(0);
    let d = backoff
        .base_ms
        .max(0)
        .saturating_mul(1_i64 << exp)
        .min(cap_ms);
    let half = d / 2;
    let r = det::pick(seed, job.0, u64::from(attempt), half as u64) as i64;
    assert!((0..=half).contains(&r), "jitter out of range");
    half + r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(base_ms: i64, cap_ms: i64) -> Backoff {
        Backoff { base_ms, cap_ms }
    }

    #[test]
    fn equal_jitter_bounds() {
        let cfg = b(5_000, 3_600_000);
        for job in 1..200 {
            for attempt in 1..=12 {
                let d = (5_000_i64 << (attempt - 1)).min(3_600_000);
                let w = retry_delay_ms(cfg, 42, JobId(job), attempt);
                assert!(
                    w >= d / 2 && w <= d,
                    "attempt {attempt}: {w} not in [{}, {d}]",
                    d / 2
                );
            }
        }
    }

    #[test]
    fn deterministic_and_seed_dependent() {
        let cfg = b(1_000, 1_000_000);
        let a: Vec<i64> = (1..50)
            .map(|j| retry_delay_ms(cfg, 7, JobId(j), 3))
            .collect();
        let again: Vec<i64> = (1..50)
            .map(|j| retry_delay_ms(cfg, 7, JobId(j), 3))
            .collect();
        let other: Vec<i64> = (1..50)
            .map(|j| retry_delay_ms(cfg, 8, JobId(j), 3))
            .collect();
        assert_eq!(a, again);
        assert_ne!(a, other);
        // Spread: not all the same value.
        assert!(a.iter().any(|&w| w != a[0]));
    }

    #[test]
    fn saturates() {
        assert_eq!(retry_delay_ms(b(0, 10), 1, JobId(1), 5), 0);
        let w = retry_delay_ms(b(i64::MAX, i64::MAX), 1, JobId(1), u32::MAX);
        assert!(w >= i64::MAX / 2);
        let w = retry_delay_ms(b(1, 100), 1, JobId(1), u32::MAX);
        assert!((50..=100).contains(&w));
        assert_eq!(retry_delay_ms(b(-5, -5), 1, JobId(1), 1), 0);
    }
}
