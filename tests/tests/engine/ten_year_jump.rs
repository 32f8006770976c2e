//! Issue 6, bounded work: one schedule's backlog never delays another's
//! due fire. A per-second cron (`* * * * * *`) plus an hourly schedule,
//! then a 10-year clock jump in one `Advance`: the hourly schedule fires
//! in that first advance, and the per-second schedule's skips (`too_old`
//! and `catchup_cap`) plus its fires are exactly its boundaries in the
//! jump, counted (not walked) within one fast advance.

use chime_core::{FireReason, Input, Overlap, SkipReason};
use chime_tests::scenario::*;
use std::time::{Duration, Instant};

/// Hour-aligned (2027-01-15T08:00:00Z).
const T0: i64 = 1_800_000_000_000;
const SEC: i64 = 1000;
const HOUR: i64 = 3_600_000;
const DAY: i64 = 86_400_000;
/// Ten years of days (two or three leap days in any ten years; UTC days
/// are all 86,400 s, so the exact calendar does not matter).
const JUMP: i64 = 3652 * DAY;
/// The default catch-up window (365 days) and cap (64).
const WINDOW: i64 = 365 * DAY;
const CAP: u64 = 64;

/// `(too_old, catchup_cap)` expected for a grid `T0 + k * step`, `k >= 1`,
/// after one advance to `T0 + JUMP`, computed from the catch-up rules:
/// due (here = nominal) before `now − window` is too old; of the rest all
/// but the `CAP` most recent are capped.
fn expected_skips(step: i64) -> (u64, u64, u64) {
    let total = (JUMP / step) as u64;
    // k * step < JUMP − WINDOW  ⇔  k < (JUMP − WINDOW) / step (exact here).
    let too_old = ((JUMP - WINDOW) / step - 1) as u64;
    let cap = total - too_old - CAP;
    (total, too_old, cap)
}

#[test]
fn hourly_fires_in_the_first_advance_after_a_ten_year_jump() {
    let mut h = Harness::standalone();
    // 315 million per-second boundaries: the expected counts below are
    // computed, not enumerated by the checker.
    h.checker.account = false;
    let mut s = def("secondly", "* * * * * *", "q");
    s.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(s));
    let mut d = def("hourly", "@every 1h", "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));

    let start = Instant::now();
    let cmds = h.advance(T0 + JUMP);
    let took = start.elapsed();
    eprintln!("one advance over ten years took {took:?}");
    assert!(
        took < Duration::from_secs(2),
        "one advance must count, not walk: {took:?}"
    );

    let of = |name: &str| -> Vec<i64> {
        fires(&cmds)
            .iter()
            .filter(|f| f.schedule() == name)
            .map(|f| f.nominal().as_millis())
            .collect()
    };
    // Hourly: the 64 most recent boundaries, the last one at the jump's end.
    let hourly = of("hourly");
    assert_eq!(
        hourly,
        (0..CAP as i64)
            .rev()
            .map(|k| T0 + JUMP - k * HOUR)
            .collect::<Vec<_>>()
    );
    let last = fires(&cmds)
        .into_iter()
        .find(|f| f.schedule() == "hourly" && f.nominal() == t(T0 + JUMP))
        .unwrap();
    assert_eq!(last.reason, FireReason::Scheduled);
    // Per second: the 64 most recent seconds.
    let secondly = of("secondly");
    assert_eq!(
        secondly,
        (0..CAP as i64)
            .rev()
            .map(|k| T0 + JUMP - k * SEC)
            .collect::<Vec<_>>()
    );

    let skipped = |name: &str| -> Vec<(SkipReason, u64, i64, i64)> {
        cmds.iter()
            .filter_map(|c| match c {
                chime_core::Command::Event(chime_core::Event::FireSkipped {
                    schedule,
                    reason,
                    count,
                    first,
                    last,
                }) if schedule == name => {
                    Some((*reason, *count, first.as_millis(), last.as_millis()))
                }
                _ => None,
            })
            .collect()
    };
    for (name, step) in [("secondly", SEC), ("hourly", HOUR)] {
        let (total, too_old, cap) = expected_skips(step);
        let first_kept = T0 + JUMP - WINDOW;
        assert_eq!(
            skipped(name),
            vec![
                (SkipReason::TooOld, too_old, T0 + step, first_kept - step),
                (
                    SkipReason::CatchupCap,
                    cap,
                    first_kept,
                    T0 + JUMP - CAP as i64 * step
                ),
            ],
            "{name}"
        );
        assert_eq!(too_old + cap + CAP, total, "{name}");
        let info = h.engine.schedule(name).unwrap();
        assert_eq!((info.fires, info.skipped), (CAP, total - CAP), "{name}");
        assert_eq!(info.next_nominal, Some(t(T0 + JUMP + step)), "{name}");
    }
    // 315,532,800 seconds in the jump.
    assert_eq!(expected_skips(SEC).0, 315_532_800);
    assert_eq!(h.engine.poll_timeout(), Some(t(T0 + JUMP + SEC)));
    h.check_replay();
}
