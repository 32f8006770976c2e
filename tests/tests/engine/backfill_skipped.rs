//! `Backfill` counts the boundaries its overlap policy skipped: with
//! `skip` and a fire of the schedule in flight every boundary of the range
//! is skipped (`skipped` = all of them, no fire); with `skip` and nothing
//! in flight the first boundary fires and the rest are skipped behind it;
//! with `allow` all fire and none is skipped. (Mutation testing: the
//! `skipped += 1` of `backfill` turned into `-=`/`*=` was not noticed:
//! every earlier backfill test had `skipped` 0.)

use chime_core::{Input, Overlap, Reply};
use chime_tests::scenario::*;

/// A multiple of 10 s, so `@every 10s` boundaries are `S + k * 10 s`.
const S: i64 = 1_000_000_000_000;
const TEN: i64 = 10_000;

/// Backfills the six boundaries `S - 60 s ..= S - 10 s` of `tick` with
/// `overlap` at `now`; the nominal times fired (the reply's and the
/// commands', which agree) and the reply's `skipped`.
fn backfill(h: &mut Harness, now: i64, overlap: Overlap) -> (Vec<i64>, u64) {
    let input = Input::Backfill {
        name: "tick".into(),
        from: t(S - 6 * TEN),
        to: t(S),
        overlap: Some(overlap),
    };
    let (r, cmds) = h.ok(now, input);
    let Reply::Backfilled {
        fires: ids,
        skipped,
    } = r
    else {
        panic!("{r:?}")
    };
    let made: Vec<i64> = ids.iter().map(|id| id.nominal.as_millis()).collect();
    assert_eq!(nominals(&cmds), made);
    (made, skipped)
}

fn harness() -> Harness {
    let mut h = Harness::standalone();
    h.ok(S, Input::UpsertSchedule(def("tick", "@every 10s", "q")));
    h
}

#[test]
fn skip_with_a_fire_in_flight_skips_every_boundary() {
    let mut h = harness();
    // The grid fire at S + 10 s is in flight (its job is not done).
    assert_eq!(nominals(&h.advance(S + TEN)), vec![S + TEN]);
    assert_eq!(backfill(&mut h, S + TEN, Overlap::Skip), (vec![], 6));
    h.check_replay();
}

#[test]
fn skip_with_nothing_in_flight_fires_the_first_and_skips_the_rest() {
    let mut h = harness();
    assert_eq!(
        backfill(&mut h, S + 1, Overlap::Skip),
        (vec![S - 6 * TEN], 5)
    );
    h.check_replay();
}

#[test]
fn allow_fires_every_boundary() {
    let mut h = harness();
    assert_eq!(nominals(&h.advance(S + TEN)), vec![S + TEN]);
    let all: Vec<i64> = (1..=6).rev().map(|k| S - k * TEN).collect();
    assert_eq!(backfill(&mut h, S + TEN, Overlap::Allow), (all, 0));
    h.check_replay();
}
