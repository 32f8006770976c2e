//! Re-upserting a schedule's definition as it is changes nothing (a host
//! re-applies its whole config on every start and reload): the reply says
//! `changed: false` with the same version, and the schedule's state is
//! untouched. Changing any one field of the definition is a change: a new
//! version, `changed: true`.

use chime_core::{Catchup, DstPolicy, FoldPolicy, Input, Overlap, Payload, Reply, ScheduleDef};
use chime_tests::scenario::*;

const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn base() -> ScheduleDef {
    let mut d = def("s", "*/5 * * * *", "q");
    d.tz = Some("Europe/London".into());
    d.target.payload = Payload::from_json(r#"{"n":1}"#).unwrap();
    d.target.priority = 2;
    d.target.max_attempts = Some(3);
    d.target.headers.insert("a".into(), "1".into());
    d.jitter_ms = 1_000;
    d.start_at = Some(t(NOW - 86_400_000));
    d.end_at = Some(t(NOW + 365 * 86_400_000));
    d.max_fires = Some(10_000);
    d.overlap = Overlap::Allow;
    d.catchup = Catchup {
        window_ms: 3_600_000,
        max: 5,
    };
    d
}

/// `(version, changed)` of upserting `d`.
fn upsert(h: &mut Harness, now: i64, d: ScheduleDef) -> (u64, bool) {
    match h.ok(now, Input::UpsertSchedule(d)).0 {
        Reply::ScheduleUpserted {
            version, changed, ..
        } => (version, changed),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_same_definition_again_is_no_change() {
    let mut h = Harness::standalone();
    let (v1, _) = upsert(&mut h, NOW, base());
    h.advance(NOW + 20 * 60_000);
    let before = h.engine.schedule("s").unwrap();
    assert!(before.fires > 0, "it fired: {before:?}");
    let (v2, changed) = upsert(&mut h, NOW + 20 * 60_000, base());
    assert_eq!((v2, changed), (v1, false));
    assert_eq!(h.engine.schedule("s").unwrap(), before);
}

#[test]
fn any_one_field_changed_is_a_change() {
    type Edit = fn(&mut ScheduleDef);
    let edits: [(&str, Edit); 16] = [
        ("spec", |d| d.spec = "*/10 * * * *".into()),
        ("tz", |d| d.tz = Some("Europe/Paris".into())),
        ("dst", |d| {
            d.dst = DstPolicy {
                gap: None,
                fold: Some(FoldPolicy::Last),
            }
        }),
        ("queue", |d| d.target.queue = "other".into()),
        ("payload", |d| {
            d.target.payload = Payload::from_json(r#"{"n":2}"#).unwrap()
        }),
        ("priority", |d| d.target.priority = 3),
        ("maxAttempts", |d| d.target.max_attempts = Some(4)),
        ("headers", |d| {
            d.target.headers.insert("b".into(), "2".into());
        }),
        ("jitterMs", |d| d.jitter_ms = 2_000),
        ("startAt", |d| d.start_at = Some(t(NOW - 2 * 86_400_000))),
        ("endAt", |d| d.end_at = Some(t(NOW + 366 * 86_400_000))),
        ("maxFires", |d| d.max_fires = Some(10_001)),
        ("paused", |d| d.paused = true),
        ("overlap", |d| d.overlap = Overlap::BufferOne),
        ("catchup.windowMs", |d| d.catchup.window_ms = 7_200_000),
        ("catchup.max", |d| d.catchup.max = 6),
    ];
    for (field, edit) in edits {
        let mut h = Harness::standalone();
        let (v1, _) = upsert(&mut h, NOW, base());
        let mut d = base();
        edit(&mut d);
        let (v2, changed) = upsert(&mut h, NOW + 1, d.clone());
        assert!(changed, "{field}: a change");
        assert!(v2 > v1, "{field}: new version {v2} after {v1}");
        // And the edited definition, upserted again, is no change.
        assert_eq!(upsert(&mut h, NOW + 2, d), (v2, false), "{field}");
    }
}
