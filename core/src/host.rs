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
/// engine is: the bound on the journal, and so on the replay at restart.
pub const SNAPSHOT_BOUND: u64 = 4;

/// Whether a host writes a snapshot now: once `entries` (journaled since
/// the last snapshot) reach `every`, in a quiet moment, when the engine's
/// next deadline is `slack_ms` away (`None`: nothing pending; negative: a
/// backlog) and a snapshot takes `cost_ms` (the last one's time, `0`
/// before the first); at [`SNAPSHOT_BOUND`] × `every` entries, at once.
///
/// Why: a snapshot stops the loop while the engine's whole state is
/// serialized and written (tens of milliseconds with many schedules or
/// remembered keys); taken just before a burst of fires is due, it makes
/// the burst that much late (measured on the native daemon: 10,000 fires
/// due each second, p99 lateness 139 ms with immediate snapshots, 2 ms
/// with this rule). So it waits for twice its cost of slack (nothing due:
/// any time), but not beyond the bound, which keeps the journal short.
/// `every` = 0 snapshots after every turn.
///
/// ```
/// use chime_core::host::snapshot_due;
/// assert!(!snapshot_due(9_999, 10_000, None, 0)); // not yet
/// assert!(snapshot_due(10_000, 10_000, Some(500), 40)); // quiet enough
/// assert!(!snapshot_due(10_000, 10_000, Some(50), 40)); // a fire is near
/// assert!(snapshot_due(40_000, 10_000, Some(-5), 40)); // the bound
/// ```
pub fn snapshot_due(entries: u64, every: u64, slack_ms: Option<i64>, cost_ms: u64) -> bool {
    if entries < every {
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

    #[test]
    fn snapshots_wait_for_slack_but_not_forever() {
        // Not before `every` entries, however quiet.
        assert!(!snapshot_due(9, 10, None, 0));
        // Nothing due: at once.
        assert!(snapshot_due(10, 10, None, 50));
        // A fire due in 100 ms and a snapshot that takes 50: too close.
        assert!(!snapshot_due(10, 10, Some(100), 50));
        assert!(snapshot_due(10, 10, Some(101), 50));
        // A backlog (deadline passed, or now) defers it...
        assert!(!snapshot_due(39, 10, Some(-5), 0));
        assert!(!snapshot_due(39, 10, Some(0), 0));
        assert!(snapshot_due(39, 10, Some(1), 0));
        // ...until the journal is 4× `every`, whatever the cost.
        assert!(snapshot_due(40, 10, Some(-5), 0));
        assert!(snapshot_due(40, 10, Some(0), u64::MAX));
        assert!(!snapshot_due(39, 10, Some(i64::MAX), u64::MAX));
        // Extremes do not overflow.
        assert!(snapshot_due(u64::MAX, u64::MAX, Some(i64::MIN), u64::MAX));
        assert!(snapshot_due(0, 0, Some(-1), 0), "every = 0: every turn");
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
