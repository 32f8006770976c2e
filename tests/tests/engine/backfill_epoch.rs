//! Issue 6, bug C: `Backfill{from: 0}` fired boundaries that are not on
//! the grid (when `from − 1` is not a valid timestamp the walk started at
//! `from` itself). A backfill fires exactly the grid boundaries in
//! `[from, to)`. Also: a plain backfill in the past, and the decision
//! "backfill is for the past" (`to` after `now` is `invalid_input` and
//! changes nothing, not even the clock).

use chime_core::{Error, FireId, FireReason, Input, Overlap, Reply};
use chime_tests::scenario::*;

const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

fn backfill(name: &str, from: i64, to: i64) -> Input {
    Input::Backfill {
        name: name.into(),
        from: t(from),
        to: t(to),
        overlap: None,
    }
}

/// Upserts `name` with `spec` at T0 and backfills `[from, to)`: the
/// nominal times of the reply's fires.
fn backfilled(spec: &str, from: i64, to: i64) -> Vec<i64> {
    let mut h = Harness::standalone();
    let mut d = def("p", spec, "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));
    let (r, cmds) = h.ok(T0, backfill("p", from, to));
    let Reply::Backfilled {
        fires: ids,
        skipped,
    } = r
    else {
        panic!("{r:?}")
    };
    assert_eq!(skipped, 0);
    let made: Vec<FireId> = fires(&cmds).iter().map(|f| f.fire_id.clone()).collect();
    assert_eq!(made, ids, "the reply lists the fires made");
    for f in fires(&cmds) {
        assert_eq!(f.reason, FireReason::Backfill);
        assert_eq!(
            f.fire_id.to_string(),
            format!("p@{}#b1", f.nominal().as_millis())
        );
    }
    h.check_replay();
    ids.iter().map(|id| id.nominal.as_millis()).collect()
}

#[test]
fn every_with_offset_from_the_epoch() {
    assert_eq!(
        backfilled("@every 1h +15m", 0, 2 * HOUR),
        vec![900_000, 4_500_000]
    );
}

#[test]
fn daily_cron_from_the_epoch() {
    assert_eq!(backfilled("0 12 * * *", 0, 24 * HOUR), vec![43_200_000]);
}

#[test]
fn every_hour_from_the_epoch_includes_the_epoch() {
    assert_eq!(backfilled("@every 1h", 0, 2 * HOUR), vec![0, 3_600_000]);
}

#[test]
fn plain_backfill_in_the_past() {
    let mut h = Harness::standalone();
    let mut d = def("p", "@every 1h", "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));
    // A `from` between boundaries starts at the next boundary.
    let (r, cmds) = h.ok(T0 + 1000, backfill("p", T0 - 3 * HOUR - 1, T0));
    let expected: Vec<FireId> = [T0 - 3 * HOUR, T0 - 2 * HOUR, T0 - HOUR]
        .iter()
        .map(|n| format!("p@{n}#b1").parse().unwrap())
        .collect();
    assert_eq!(
        r,
        Reply::Backfilled {
            fires: expected.clone(),
            skipped: 0
        }
    );
    let fs = fires(&cmds);
    assert_eq!(
        fs.iter().map(|f| f.fire_id.clone()).collect::<Vec<_>>(),
        expected
    );
    for f in &fs {
        assert_eq!(f.reason, FireReason::Backfill);
        assert_eq!(f.due_at, f.nominal());
        assert_eq!(f.fired_at, t(T0 + 1000));
        assert_eq!(f.version, 1);
        assert!(f.job.is_some());
    }
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 3);
    // `fires` counts fires of all reasons; nothing was skipped.
    let info = h.engine.schedule("p").unwrap();
    assert_eq!((info.fires, info.skipped), (3, 0));
    assert_eq!(
        info.next_nominal,
        Some(t(T0 + HOUR)),
        "the grid is untouched"
    );
    h.check_replay();
}

#[test]
fn backfill_into_the_future_is_refused_and_changes_nothing() {
    let mut h = Harness::standalone();
    let mut d = def("p", "@every 1s", "q");
    d.overlap = Overlap::Allow;
    h.ok(T0, Input::UpsertSchedule(d));
    let before = h.engine.snapshot().to_json();
    // Later than the clock (fires would be due at T0+1s..=T0+5s), with a
    // `to` after that `now`.
    let (r, cmds) = h.run(T0 + 5000, backfill("p", T0 - HOUR, T0 + 5001));
    match r {
        Err(Error::InvalidInput { field, .. }) => assert_eq!(field, "to"),
        other => panic!("expected invalid_input on `to`, got {other:?}"),
    }
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.clock(), t(T0), "the clock did not move");
    assert_eq!(h.engine.snapshot().to_json(), before, "state unchanged");
    // `to == now` is accepted.
    let (r, _) = h.ok(T0 + 5000, backfill("p", T0 + 4000, T0 + 5000));
    assert_eq!(
        r,
        Reply::Backfilled {
            fires: vec![format!("p@{}#b1", T0 + 4000).parse().unwrap()],
            skipped: 0
        }
    );
    h.check_replay();
}
