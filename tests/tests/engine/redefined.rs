//! Issue 6, bug G: a redefinition (spec, tz, dst or `startAt` change)
//! recomputes the cursor; a boundary of the old grid that was due or
//! pending at that moment (jitter not elapsed, a leadership gap, a backlog
//! held back by `firesPerAdvance`) used to vanish with no fire and no
//! skip. Each is now reported as `fire_skipped{reason: "redefined"}` and
//! counted, so fires + skipped == boundaries processed.

use chime_core::{
    EngineConfig, Epoch, Event, Input, LeadershipGrant, Limits, Overlap, Reply, ScheduleDef,
    SkipReason,
};
use chime_tests::scenario::*;

/// Hour-aligned: `@every 1h` and hourly cron boundaries are `T0 + k * HOUR`.
const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

fn hourly(spec: &str) -> ScheduleDef {
    let mut d = def("g", spec, "q");
    d.jitter_ms = 1_800_000;
    d.overlap = Overlap::Allow;
    d
}

/// Runs `d` on time until the cursor's boundary `c` has a jitter above one
/// minute and the clock is just past `c` (before its due time). Returns
/// `(c, due time of c, boundaries fired so far)`.
fn just_after_a_jittered_nominal(h: &mut Harness, d: ScheduleDef) -> (i64, i64, u64) {
    h.ok(T0, Input::UpsertSchedule(d));
    let mut fired = 0;
    loop {
        let info = h.engine.schedule("g").unwrap();
        let c = info.next_nominal.unwrap().as_millis();
        let due = info.next_due_at.unwrap().as_millis();
        if due - c > 60_000 {
            let cmds = h.advance(c + 1);
            assert!(cmds.is_empty(), "{cmds:?}");
            return (c, due, fired);
        }
        assert_eq!(nominals(&h.advance(due)), vec![c]);
        fired += 1;
        assert!(fired < 20, "no boundary with a jitter above a minute");
    }
}

/// Upserts `d` at `now` and expects exactly one `redefined` skip of `c`,
/// the new version, and the counters to cover every processed boundary.
fn expect_redefined_one(h: &mut Harness, now: i64, d: ScheduleDef, c: i64, fired: u64) {
    let (r, cmds) = h.ok(now, Input::UpsertSchedule(d));
    assert!(
        matches!(
            r,
            Reply::ScheduleUpserted {
                version: 2,
                changed: true,
                ..
            }
        ),
        "{r:?}"
    );
    assert_eq!(skips(&cmds), vec![(SkipReason::Redefined, 1, c, c)]);
    assert!(fires(&cmds).is_empty(), "{cmds:?}");
    let info = h.engine.schedule("g").unwrap();
    assert_eq!((info.fires, info.skipped), (fired, 1));
    // Every boundary up to c (the first is T0 + 1h) was fired or skipped.
    assert_eq!(info.fires + info.skipped, ((c - T0) / HOUR) as u64);
    assert!(info.next_nominal.unwrap().as_millis() > now);
}

#[test]
fn same_cadence_written_differently() {
    let mut h = Harness::standalone();
    let (c, due, fired) = just_after_a_jittered_nominal(&mut h, hourly("@every 1h"));
    expect_redefined_one(&mut h, c + 1, hourly("@every 60m"), c, fired);
    let info = h.engine.schedule("g").unwrap();
    assert_eq!(info.next_nominal, Some(t(c + HOUR)));
    // Nothing fires at c's old due time.
    assert_eq!(fires(&h.advance(due)), Vec::<&chime_core::Fire>::new());
    h.check_replay();
}

#[test]
fn zone_change_of_a_cron_spec() {
    let mut h = Harness::standalone();
    let (c, _, fired) = just_after_a_jittered_nominal(&mut h, hourly("0 * * * *"));
    let mut d = hourly("0 * * * *");
    // +05:30: the hourly boundaries move to half past the UTC hour.
    d.tz = Some("Asia/Kolkata".into());
    expect_redefined_one(&mut h, c + 1, d, c, fired);
    let info = h.engine.schedule("g").unwrap();
    assert_eq!(info.next_nominal, Some(t(c + HOUR / 2)));
    h.check_replay();
}

#[test]
fn start_at_change() {
    let mut h = Harness::standalone();
    let (c, _, fired) = just_after_a_jittered_nominal(&mut h, hourly("@every 1h"));
    let mut d = hourly("@every 1h");
    d.start_at = Some(t(T0 - 10 * HOUR));
    expect_redefined_one(&mut h, c + 1, d, c, fired);
    let info = h.engine.schedule("g").unwrap();
    assert_eq!(info.next_nominal, Some(t(c + HOUR)));
    h.check_replay();
}

#[test]
fn spec_change_during_a_leadership_gap() {
    let mut h = Harness::new(EngineConfig {
        standalone: false,
        ..EngineConfig::default()
    });
    let grant = |epoch, until| {
        Input::Leadership(Some(LeadershipGrant {
            epoch: Epoch(epoch),
            valid_until: t(until),
        }))
    };
    h.ok(T0, grant(1, T0 + 90 * 60_000));
    let mut d = def("g", "@every 1h", "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d.clone()));
    assert_eq!(nominals(&h.advance(T0 + HOUR)), vec![T0 + HOUR]);
    let cmds = h.advance(T0 + 90 * 60_000);
    assert_eq!(
        events(&cmds),
        vec![&Event::LeadershipLost { epoch: Epoch(1) }]
    );
    // T0+2h ..= T0+11h came due in the gap.
    d.spec = "@every 60m".into();
    let (r, cmds) = h.ok(T0 + 11 * HOUR + 1_800_000, Input::UpsertSchedule(d));
    assert_eq!(
        r,
        Reply::ScheduleUpserted {
            version: 2,
            next_fire: Some(t(T0 + 12 * HOUR)),
            changed: true
        }
    );
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Redefined, 10, T0 + 2 * HOUR, T0 + 11 * HOUR)]
    );
    let (_, cmds) = h.ok(T0 + 12 * HOUR + 1000, grant(2, T0 + 20 * HOUR));
    assert_eq!(nominals(&cmds), vec![T0 + 12 * HOUR]);
    assert_eq!(skips(&cmds), vec![]);
    let info = h.engine.schedule("g").unwrap();
    assert_eq!((info.fires, info.skipped), (2, 10));
    h.check_replay();
}

#[test]
fn backlog_held_back_by_the_fire_limit() {
    let mut h = Harness::new(EngineConfig {
        limits: Limits {
            fires_per_advance: 3,
            ..Limits::default()
        },
        ..EngineConfig::default()
    });
    let mut d = def("g", "@every 1s", "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d.clone()));
    // T0+1s ..= T0+10s are due; three fire per advance.
    let cmds = h.advance(T0 + 10_000);
    assert_eq!(nominals(&cmds), vec![T0 + 1000, T0 + 2000, T0 + 3000]);
    assert_eq!(h.engine.poll_timeout(), Some(t(T0 + 10_000)));
    d.spec = "@every 1000ms".into();
    // The upsert's own advance fires three more; the rest are redefined.
    let (_, cmds) = h.ok(T0 + 10_000, Input::UpsertSchedule(d));
    assert_eq!(nominals(&cmds), vec![T0 + 4000, T0 + 5000, T0 + 6000]);
    assert_eq!(
        skips(&cmds),
        vec![(SkipReason::Redefined, 4, T0 + 7000, T0 + 10_000)]
    );
    let info = h.engine.schedule("g").unwrap();
    assert_eq!((info.fires, info.skipped), (6, 4));
    assert_eq!(info.next_nominal, Some(t(T0 + 11_000)));
    h.check_replay();
}
