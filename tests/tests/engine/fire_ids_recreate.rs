//! Issue 6, bug D: manual (`#m<n>`) and backfill (`#b<n>`) fire ids must
//! be unique for the life of the engine — also across remove + re-create
//! and snapshot/restore — or the queue de-duplicates the new run into the
//! old, completed job and it is silently lost. A re-created schedule's
//! version is also above every version the old one had, so
//! `(schedule, version)` is unique.

use chime_core::{Fire, FireId, Input, JobId, Overlap, Reply};
use chime_tests::scenario::*;
use std::collections::BTreeSet;

const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;
const DAY: i64 = 86_400_000;

fn upsert(h: &mut Harness, now: i64, payload: &str) -> u64 {
    let mut d = def("p", "@every 1h", "q");
    d.overlap = Overlap::Allow;
    d.target = target("q", payload);
    match h.ok(now, Input::UpsertSchedule(d)).0 {
        Reply::ScheduleUpserted {
            version,
            changed: true,
            ..
        } => version,
        other => panic!("{other:?}"),
    }
}

/// Backfills `[T0 − 3h, T0)` at `now`.
fn backfill_3h(h: &mut Harness, now: i64) -> (Vec<FireId>, Vec<Fire>) {
    let (r, cmds) = h.ok(
        now,
        Input::Backfill {
            name: "p".into(),
            from: t(T0 - 3 * HOUR),
            to: t(T0),
            overlap: None,
        },
    );
    let Reply::Backfilled {
        fires: ids,
        skipped,
    } = r
    else {
        panic!("{r:?}")
    };
    assert_eq!(skipped, 0);
    (ids, fires(&cmds).into_iter().cloned().collect())
}

fn trigger(h: &mut Harness, now: i64) -> (FireId, Fire) {
    let (r, cmds) = h.ok(
        now,
        Input::TriggerSchedule {
            name: "p".into(),
            overlap: None,
        },
    );
    let Reply::Triggered {
        fire: Some(id),
        buffered: false,
    } = r
    else {
        panic!("{r:?}")
    };
    let fs = fires(&cmds);
    assert_eq!(fs.len(), 1);
    (id, fs[0].clone())
}

fn remove(h: &mut Harness, now: i64) {
    let (r, _) = h.ok(now, Input::remove_schedule("p"));
    assert_eq!(r, Reply::ScheduleRemoved { existed: true });
}

fn complete_all(h: &mut Harness, now: i64) {
    for c in h.claim(now, "q", 10, Some(DAY)) {
        h.ok(
            now,
            Input::Complete {
                job: c.job,
                token: c.token,
            },
        );
    }
}

fn jobs(fs: &[Fire]) -> BTreeSet<JobId> {
    fs.iter().map(|f| f.job.expect("local job")).collect()
}

#[test]
fn backfill_after_remove_and_recreate_makes_new_jobs() {
    let mut h = Harness::standalone();
    assert_eq!(upsert(&mut h, T0, "1"), 1);
    assert_eq!(upsert(&mut h, T0, "2"), 2);
    let (ids1, fs1) = backfill_3h(&mut h, T0);
    assert_eq!(ids1.len(), 3);
    assert!(fs1.iter().all(|f| f.version == 2));
    complete_all(&mut h, T0);
    remove(&mut h, T0 + 1000);
    let v = upsert(&mut h, T0 + 1000, "2");
    assert_eq!(v, 3, "above every version the old schedule had");
    let (ids2, fs2) = backfill_3h(&mut h, T0 + 1000);
    assert_eq!(ids2.len(), 3);
    assert_eq!(
        ids2.iter().map(|i| i.nominal).collect::<Vec<_>>(),
        ids1.iter().map(|i| i.nominal).collect::<Vec<_>>(),
        "the same boundaries"
    );
    let all: BTreeSet<&FireId> = ids1.iter().chain(&ids2).collect();
    assert_eq!(all.len(), 6, "fire ids are all distinct: {ids1:?} {ids2:?}");
    assert_eq!(
        fs2.iter().map(|f| f.fire_id.clone()).collect::<Vec<_>>(),
        ids2
    );
    assert!(fs2.iter().all(|f| f.version == 3));
    let (j1, j2) = (jobs(&fs1), jobs(&fs2));
    assert_eq!(j1.len(), 3);
    assert_eq!(j2.len(), 3);
    assert!(j1.is_disjoint(&j2), "new jobs, not the old completed ones");
    let stats = h.engine.queue_stats("q").unwrap();
    assert_eq!(stats.totals.enqueued, 6);
    assert_eq!(stats.available, 3);
    h.check_replay();
}

#[test]
fn triggers_in_one_millisecond_around_remove_and_recreate() {
    let mut h = Harness::standalone();
    assert_eq!(upsert(&mut h, T0, "1"), 1);
    let (id1, f1) = trigger(&mut h, T0);
    assert_eq!(id1.to_string(), format!("p@{T0}#m1"));
    assert_eq!(f1.version, 1);
    remove(&mut h, T0);
    assert_eq!(upsert(&mut h, T0, "1"), 2);
    let (id2, f2) = trigger(&mut h, T0);
    assert_ne!(id2, id1);
    assert_eq!(id2.to_string(), format!("p@{T0}#m2"));
    assert_eq!(f2.version, 2);
    assert_ne!(f2.job, f1.job);
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 2);
    h.check_replay();
}

#[test]
fn ids_and_versions_stay_unique_across_snapshot_restore() {
    let mut h = Harness::standalone();
    assert_eq!(upsert(&mut h, T0, "1"), 1);
    assert_eq!(upsert(&mut h, T0, "2"), 2);
    let (m1, fm1) = trigger(&mut h, T0);
    let (b1, fb1) = backfill_3h(&mut h, T0);
    complete_all(&mut h, T0);
    remove(&mut h, T0);
    h.check_replay();

    // Restore after the removal, then re-create.
    h.restart();
    assert_eq!(upsert(&mut h, T0, "2"), 3);
    let (m2, fm2) = trigger(&mut h, T0);
    let (b2, fb2) = backfill_3h(&mut h, T0);
    assert_eq!(fm2.version, 3);
    assert!(fb2.iter().all(|f| f.version == 3));
    let ids: BTreeSet<&FireId> = [&m1, &m2].into_iter().chain(&b1).chain(&b2).collect();
    assert_eq!(ids.len(), 8, "all fire ids distinct: {ids:?}");
    let old: BTreeSet<JobId> = jobs(&fb1).union(&jobs(&[fm1])).copied().collect();
    let new: BTreeSet<JobId> = jobs(&fb2).union(&jobs(&[fm2])).copied().collect();
    assert_eq!((old.len(), new.len()), (4, 4));
    assert!(old.is_disjoint(&new));
    assert_eq!(h.engine.queue_stats("q").unwrap().totals.enqueued, 8);
    h.check_replay();
}
