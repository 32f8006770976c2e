//! Rules of the host's loop that every host applies the same way: when to
//! snapshot, and how often a worker heartbeats. Pure functions of plain
//! numbers that a host measures (journal length, the engine's next
//! deadline, how long the last snapshot took), so the native driver and the
//! npm package's `Scheduler` (through the wasm exports `snapshotDue`,
//! `heartbeatPeriodMs` and `snapshotEvery`) follow one cadence instead of
//! each keeping its own constants.
//!
//! This module imports nothing of the crate: it sits with the ground
//! (`docs/architecture.md`).

/// Journal entries after which a host snapshots (and truncates the
/// journal) in a quiet moment, unless configured otherwise: the default
/// `every` of [`snapshot_due`] in both hosts.
pub const SNAPSHOT_EVERY: u64 = 10_000;

/// At this many times `every` entries a snapshot is due however busy the
/// engine is (once [`SNAPSHOT_AMORTIZE`] allows it): the bound on the
/// journal, and so on the replay at restart.
pub const SNAPSHOT_BOUND: u64 = 4;

/// A snapshot waits until the time since the last one is at least this
/// many times the last one's cost, so that snapshots take at most a tenth
/// of the loop's time however large the state grows.
pub const SNAPSHOT_AMORTIZE: u64 = 9;

/// Whether a host writes a snapshot now: once `entries` (journaled since
/// the last snapshot) reach `every`, in a quiet moment, when the engine's
/// next deadline is `slack_ms` away (`None`: nothing pending; negative: a
/// backlog) and a snapshot takes `cost_ms` (the last one's time, `0`
/// before the first); at [`SNAPSHOT_BOUND`] × `every` entries, at once;
/// but never sooner than [`SNAPSHOT_AMORTIZE`] × `cost_ms` after the last
/// one ended (`since_ms`, real time measured by the host).
///
/// Why: a snapshot stops the loop while the engine's whole state is
/// serialized and written (tens of milliseconds with many schedules or
/// remembered keys); taken just before a burst of fires is due, it makes
/// the burst that much late (measured on the native daemon: 10,000 fires
/// due each second, p99 lateness 139 ms with immediate snapshots, 2 ms
/// with this rule). So it waits for twice its cost of slack (nothing due:
/// any time), but not beyond the bound, which keeps the journal short.
///
/// A fixed count alone makes the cost per entry grow with the state: with
/// a few hundred thousand live jobs a snapshot takes hundreds of
/// milliseconds, and at 20,000 enqueues a second a snapshot every 40,000
/// entries kept the daemon snapshotting most of the time (batch enqueue
/// ×8 slower than with snapshots off). The amortization keeps the
/// snapshots' share of the time at most 1 / (1 + [`SNAPSHOT_AMORTIZE`]);
/// the journal then holds at most what the loop journaled in
/// `SNAPSHOT_AMORTIZE × cost_ms`, so a restart replays in about that time
/// (the bound on replay scales with the state, as Redis's AOF rewrite
/// does with its `auto-aof-rewrite-percentage`). `every` = 0 snapshots
/// after every turn.
///
/// ```
/// use chime_core::host::snapshot_due;
/// assert!(!snapshot_due(9_999, 10_000, None, 0, 60_000)); // not yet
/// assert!(snapshot_due(10_000, 10_000, Some(500), 40, 60_000)); // quiet enough
/// assert!(!snapshot_due(10_000, 10_000, Some(50), 40, 60_000)); // a fire is near
/// assert!(snapshot_due(40_000, 10_000, Some(-5), 40, 60_000)); // the bound
/// assert!(!snapshot_due(40_000, 10_000, Some(-5), 400, 3_000)); // the last one was too recent
/// ```
pub fn snapshot_due(
    entries: u64,
    every: u64,
    slack_ms: Option<i64>,
    cost_ms: u64,
    since_ms: u64,
) -> bool {
    if entries < every || since_ms < cost_ms.saturating_mul(SNAPSHOT_AMORTIZE) {
        return false;
    }
    if entries >= every.saturating_mul(SNAPSHOT_BOUND) {
        return true;
    }
    let needed = cost_ms.saturating_mul(2).saturating_add(1);
    slack_ms.is_none_or(|s| u64::try_from(s).is_ok_and(|s| s >= needed))
}

/// How often a worker heartbeats a job leased for `lease_ms`: every third
/// of the lease (at least 1 ms), so that two heartbeats can be lost or late
/// before the lease expires.
///
/// ```
/// use chime_core::host::heartbeat_period_ms;
/// assert_eq!(heartbeat_period_ms(60_000), 20_000);
/// assert_eq!(heartbeat_period_ms(2), 1);
/// ```
pub fn heartbeat_period_ms(lease_ms: i64) -> u64 {
    u64::try_from(lease_ms / 3).unwrap_or(0).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long time since the last snapshot: only the count and the slack
    /// decide.
    const LONG_AGO: u64 = u64::MAX;

    #[test]
    fn snapshots_wait_for_slack_but_not_forever() {
        let due = |entries, every, slack, cost| snapshot_due(entries, every, slack, cost, LONG_AGO);
        // Not before `every` entries, however quiet.
        assert!(!due(9, 10, None, 0));
        // Nothing due: at once.
        assert!(due(10, 10, None, 50));
        // A fire due in 100 ms and a snapshot that takes 50: too close.
        assert!(!due(10, 10, Some(100), 50));
        assert!(due(10, 10, Some(101), 50));
        // A backlog (deadline passed, or now) defers it...
        assert!(!due(39, 10, Some(-5), 0));
        assert!(!due(39, 10, Some(0), 0));
        assert!(due(39, 10, Some(1), 0));
        // ...until the journal is 4× `every`, whatever the cost.
        assert!(due(40, 10, Some(-5), 0));
        assert!(due(40, 10, Some(0), u64::MAX / SNAPSHOT_AMORTIZE));
        assert!(!due(39, 10, Some(i64::MAX), u64::MAX));
        // Extremes do not overflow.
        assert!(due(
            u64::MAX,
            u64::MAX,
            Some(i64::MIN),
            u64::MAX / SNAPSHOT_AMORTIZE
        ));
        assert!(due(0, 0, Some(-1), 0), "every = 0: every turn");
    }

    #[test]
    fn snapshots_take_at_most_a_tenth_of_the_time() {
        // The last snapshot took 300 ms: none before 2.7 s have passed,
        // not even at the bound, nor when nothing is pending...
        assert!(!snapshot_due(400_000, 10_000, Some(-5), 300, 2_699));
        assert!(!snapshot_due(10_000, 10_000, None, 300, 2_699));
        // ...and then the count and the slack decide as before.
        assert!(snapshot_due(400_000, 10_000, Some(-5), 300, 2_700));
        assert!(snapshot_due(10_000, 10_000, None, 300, 2_700));
        assert!(!snapshot_due(10_000, 10_000, Some(600), 300, 2_700));
        assert!(!snapshot_due(9_999, 10_000, None, 300, 1_000_000));
        // A snapshot that costs nothing is never held back by time.
        assert!(snapshot_due(10, 10, None, 0, 0));
        // A cost too large to multiply saturates: never, until forever.
        assert!(!snapshot_due(40, 10, None, u64::MAX, u64::MAX - 1));
        assert!(snapshot_due(40, 10, None, u64::MAX, u64::MAX));
    }

    #[test]
    fn heartbeats_every_third_of_the_lease() {
        assert_eq!(heartbeat_period_ms(60_000), 20_000);
        assert_eq!(heartbeat_period_ms(30_001), 10_000);
        assert_eq!(heartbeat_period_ms(3), 1);
        // Never 0 (a busy loop), whatever the lease.
        for lease_ms in [2, 1, 0, -1, i64::MIN] {
            assert_eq!(heartbeat_period_ms(lease_ms), 1, "{lease_ms}");
        }
        assert_eq!(heartbeat_period_ms(i64::MAX), (i64::MAX / 3) as u64);
    }
}
