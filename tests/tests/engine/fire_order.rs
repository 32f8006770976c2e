//! The order of fires within one advance: by `(dueAt, name, nominal)`
//! across schedules (docs/semantics.md, "Order"), also when schedules
//! catch up several boundaries at once — a schedule that fired one
//! boundary of its backlog is due again at the next one and must not
//! jump ahead of (or fall behind) the others' boundaries due in between.
//! (Kills the merge mutants of `Schedules::pop_due`.)

use chime_core::{Input, Overlap, QueueConfig, QueueMode};
use chime_tests::scenario::*;

const S: i64 = 1_000_000_020_000; // a multiple of 30 s: on every grid below

fn harness(schedules: &[(&str, &str, i64)]) -> Harness {
    let mut h = Harness::standalone();
    let mut q = QueueConfig::new("out");
    q.mode = QueueMode::External;
    h.ok(S, Input::DeclareQueue(q));
    for &(name, spec, jitter_ms) in schedules {
        let mut d = def(name, spec, "out");
        d.overlap = Overlap::Allow;
        d.catchup.max = 64;
        d.jitter_ms = jitter_ms;
        h.ok(S, Input::UpsertSchedule(d));
    }
    h
}

/// `(dueAt, name, nominal)` of every fire, in command order.
fn order(h: &mut Harness, now: i64) -> Vec<(i64, String, i64)> {
    let cmds = h.advance(now);
    fires(&cmds)
        .iter()
        .map(|f| {
            (
                f.due_at.as_millis(),
                f.fire_id.schedule.to_string(),
                f.nominal().as_millis(),
            )
        })
        .collect()
}

fn assert_sorted(got: &[(i64, String, i64)]) {
    let mut want = got.to_vec();
    want.sort();
    assert_eq!(got, want, "fires not in (dueAt, name, nominal) order");
}

#[test]
fn backlogs_of_equal_grids_interleave_by_name() {
    // Created out of name order, so insertion order cannot pass for name order.
    let mut h = harness(&[
        ("c", "@every 1s", 0),
        ("a", "@every 1s", 0),
        ("b", "@every 1s", 0),
    ]);
    let got = order(&mut h, S + 4_000);
    let want: Vec<(i64, String, i64)> = (1..=4)
        .flat_map(|k| ["a", "b", "c"].map(|n| (S + k * 1000, n.to_string(), S + k * 1000)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn backlogs_of_different_grids_merge_by_due_time() {
    let mut h = harness(&[
        ("z", "@every 1s", 0),
        ("m", "@every 2s", 0),
        ("a", "@every 3s", 0),
    ]);
    let got = order(&mut h, S + 12_000);
    assert_eq!(got.len(), 12 + 6 + 4);
    assert_sorted(&got);
    // The first few, spelled out: at S+2s `m` (name order) before `z`.
    let head: Vec<(i64, &str)> = got[..4]
        .iter()
        .map(|(d, n, _)| (*d - S, n.as_str()))
        .collect();
    assert_eq!(
        head,
        vec![(1000, "z"), (2000, "m"), (2000, "z"), (3000, "a")]
    );
}

#[test]
fn jittered_backlogs_merge_by_due_time_not_nominal() {
    // Jitter moves due times off the nominal grid, differently per name.
    let mut h = harness(&[
        ("b", "@every 10s", 9_000),
        ("a", "@every 10s", 9_000),
        ("c", "@every 5s", 4_000),
    ]);
    let got = order(&mut h, S + 60_000);
    assert_sorted(&got);
    // The jitter does reorder something: nominal order differs from due order.
    let mut by_nominal = got.clone();
    by_nominal.sort_by(|x, y| (x.2, &x.1).cmp(&(y.2, &y.1)));
    assert_ne!(
        by_nominal, got,
        "the jitter moved nothing: the test is too weak"
    );
}
