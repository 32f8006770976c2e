//! Whether a schedule with a `start_at` ever fires is decided from just
//! before `start_at` when that is after now (a boundary at `start_at` is
//! the schedule's), and from now otherwise (a boundary at or before now
//! is not): an `@at` one-shot at exactly `start_at` in the future is
//! accepted and fires there; one before a future `start_at`, one in the
//! past under a past `start_at`, and one at now with `start_at` now are
//! refused with `spec_never_fires` and change nothing, on create and on a
//! regridding upsert alike. (Mutation testing: every mutant of
//! `start_from`'s guard `start > now` and of its `start - 1` was not
//! noticed.)

use chime_core::{Input, ScheduleDef};
use chime_tests::scenario::*;

/// 2027-01-15T08:00:00Z.
const T0: i64 = 1_800_000_000_000;
const SEC: i64 = 1_000;

/// `@at <at>` with `start_at`.
fn one_shot(at: i64, start_at: i64) -> ScheduleDef {
    let mut d = def("once", &format!("@at {}", t(at)), "q");
    d.start_at = Some(t(start_at));
    d
}

/// Upserting `d` at `now` is refused with `spec_never_fires` and changes
/// nothing (the input is tried after a plain advance to `now`).
fn never_fires(h: &mut Harness, now: i64, d: ScheduleDef) {
    h.advance(now);
    let before = h.engine.snapshot().to_json();
    let (r, cmds) = h.run(now, Input::UpsertSchedule(d.clone()));
    let err = r.unwrap_err();
    assert_eq!(err.code(), "spec_never_fires", "{d:?}: {err}");
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(h.engine.snapshot().to_json(), before, "{d:?}");
}

#[test]
fn at_start_at_in_the_future_fires_there() {
    let mut h = Harness::standalone();
    h.ok(
        T0,
        Input::UpsertSchedule(one_shot(T0 + 30 * SEC, T0 + 30 * SEC)),
    );
    let info = h.engine.schedule("once").unwrap();
    assert_eq!(info.next_nominal, Some(t(T0 + 30 * SEC)));
    assert_eq!(nominals(&h.advance(T0 + 30 * SEC)), vec![T0 + 30 * SEC]);
    h.check_replay();
}

#[test]
fn before_a_future_start_at_never_fires() {
    let mut h = Harness::standalone();
    never_fires(&mut h, T0, one_shot(T0 + 20 * SEC, T0 + 30 * SEC));
    assert_eq!(h.engine.schedule_count(), 0);
    // The same as a regridding upsert of an existing schedule.
    h.ok(T0, Input::UpsertSchedule(one_shot(T0 + 60 * SEC, T0)));
    never_fires(&mut h, T0, one_shot(T0 + 20 * SEC, T0 + 30 * SEC));
    let info = h.engine.schedule("once").unwrap();
    assert_eq!(info.next_nominal, Some(t(T0 + 60 * SEC)));
    h.check_replay();
}

#[test]
fn in_the_past_under_a_past_start_at_never_fires() {
    let mut h = Harness::standalone();
    never_fires(&mut h, T0, one_shot(T0 - 50 * SEC, T0 - 100 * SEC));
    h.ok(T0, Input::UpsertSchedule(one_shot(T0 + 60 * SEC, T0)));
    never_fires(&mut h, T0, one_shot(T0 - 50 * SEC, T0 - 100 * SEC));
    h.check_replay();
}

#[test]
fn at_now_with_start_at_now_never_fires() {
    let mut h = Harness::standalone();
    never_fires(&mut h, T0, one_shot(T0, T0));
    h.ok(T0, Input::UpsertSchedule(one_shot(T0 + 60 * SEC, T0 - SEC)));
    never_fires(&mut h, T0, one_shot(T0, T0));
    h.check_replay();
}
