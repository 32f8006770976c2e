//! America/New_York across the 2026 transitions, under every DST policy.
//!
//! Spring: 2026-03-08 02:00 EST → 03:00 EDT at 07:00Z (civil 02:00–02:59
//! does not exist). Fall: 2026-11-01 02:00 EDT → 01:00 EST at 06:00Z (civil
//! 01:00–01:59 happens twice: 05:00–05:59Z, then 06:00–06:59Z).

use chime_core::{DstNote, FoldPolicy, GapPolicy};
use chime_core::{Spec, SpecOptions, Timestamp};
use chime_tests::dst::{fires, ts};

const NY: &str = "America/New_York";

fn opts(gap: Option<GapPolicy>, fold: Option<FoldPolicy>) -> SpecOptions {
    chime_tests::dst::opts(NY, (gap, fold))
}

const SPRING: (&str, &str) = ("2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z");
const FALL: (&str, &str) = ("2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z");

#[test]
fn spring_fixed_time_auto_shifts_to_the_gap_end() {
    let got = fires("30 2 * * *", &opts(None, None), SPRING.0, SPRING.1);
    assert_eq!(
        got,
        [
            "2026-03-07T07:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z"
        ]
    );
    let shift = fires(
        "30 2 * * *",
        &opts(Some(GapPolicy::Shift), None),
        SPRING.0,
        SPRING.1,
    );
    assert_eq!(got, shift);
}

#[test]
fn spring_fixed_time_skip() {
    let got = fires(
        "30 2 * * *",
        &opts(Some(GapPolicy::Skip), None),
        SPRING.0,
        SPRING.1,
    );
    assert_eq!(got, ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z"]);
}

#[test]
fn spring_list_auto_skips_the_day() {
    let got = fires("0,30 2 * * *", &opts(None, None), SPRING.0, SPRING.1);
    assert_eq!(
        got,
        [
            "2026-03-07T07:00:00Z",
            "2026-03-07T07:30:00Z",
            "2026-03-09T06:00:00Z",
            "2026-03-09T06:30:00Z"
        ]
    );
}

#[test]
fn spring_list_shift_fires_once() {
    // 02:00 and 02:30 both shift to 07:00Z: one fire.
    let got = fires(
        "0,30 2 * * *",
        &opts(Some(GapPolicy::Shift), None),
        SPRING.0,
        SPRING.1,
    );
    assert_eq!(
        got,
        [
            "2026-03-07T07:00:00Z",
            "2026-03-07T07:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:00:00Z",
            "2026-03-09T06:30:00Z"
        ]
    );
}

#[test]
fn spring_wildcard_runs_on_elapsed_time() {
    let from = "2026-03-08T06:00:00Z";
    let until = "2026-03-08T08:00:00Z";
    let expected = [
        "2026-03-08T06:00:00Z", // 01:00 EST
        "2026-03-08T06:30:00Z", // 01:30 EST
        "2026-03-08T07:00:00Z", // 03:00 EDT
        "2026-03-08T07:30:00Z", // 03:30 EDT
    ];
    for o in [
        opts(None, None),
        opts(Some(GapPolicy::Skip), None),
        // Shifted gap times land on 07:00Z, which fires anyway: once.
        opts(Some(GapPolicy::Shift), None),
    ] {
        assert_eq!(fires("*/30 * * * *", &o, from, until), expected, "{o:?}");
    }
}

#[test]
fn fall_fixed_time_policies() {
    let first = [
        "2026-10-31T05:30:00Z",
        "2026-11-01T05:30:00Z",
        "2026-11-02T06:30:00Z",
    ];
    assert_eq!(
        fires("30 1 * * *", &opts(None, None), FALL.0, FALL.1),
        first
    );
    let o = opts(None, Some(FoldPolicy::First));
    assert_eq!(fires("30 1 * * *", &o, FALL.0, FALL.1), first);
    let o = opts(None, Some(FoldPolicy::Last));
    assert_eq!(
        fires("30 1 * * *", &o, FALL.0, FALL.1),
        [
            "2026-10-31T05:30:00Z",
            "2026-11-01T06:30:00Z",
            "2026-11-02T06:30:00Z"
        ]
    );
    let o = opts(None, Some(FoldPolicy::Both));
    assert_eq!(
        fires("30 1 * * *", &o, FALL.0, FALL.1),
        [
            "2026-10-31T05:30:00Z",
            "2026-11-01T05:30:00Z",
            "2026-11-01T06:30:00Z",
            "2026-11-02T06:30:00Z"
        ]
    );
}

#[test]
fn fall_list_policies() {
    let day = ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z");
    let both = [
        "2026-11-01T05:00:00Z",
        "2026-11-01T05:20:00Z",
        "2026-11-01T05:40:00Z",
        "2026-11-01T06:00:00Z",
        "2026-11-01T06:20:00Z",
        "2026-11-01T06:40:00Z",
    ];
    assert_eq!(
        fires("0,20,40 1 * * *", &opts(None, None), day.0, day.1),
        both
    );
    let o = opts(None, Some(FoldPolicy::Both));
    assert_eq!(fires("0,20,40 1 * * *", &o, day.0, day.1), both);
    let o = opts(None, Some(FoldPolicy::First));
    assert_eq!(fires("0,20,40 1 * * *", &o, day.0, day.1), both[..3]);
    let o = opts(None, Some(FoldPolicy::Last));
    assert_eq!(fires("0,20,40 1 * * *", &o, day.0, day.1), both[3..]);
}

#[test]
fn fall_wildcard_hourly() {
    let day = ("2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z");
    let all = [
        "2026-11-01T04:00:00Z", // 00:00 EDT
        "2026-11-01T05:00:00Z", // 01:00 EDT
        "2026-11-01T06:00:00Z", // 01:00 EST
        "2026-11-01T07:00:00Z", // 02:00 EST
    ];
    assert_eq!(fires("0 * * * *", &opts(None, None), day.0, day.1), all);
    let o = opts(None, Some(FoldPolicy::First));
    assert_eq!(
        fires("0 * * * *", &o, day.0, day.1),
        [all[0], all[1], all[3]]
    );
    let o = opts(None, Some(FoldPolicy::Last));
    assert_eq!(
        fires("0 * * * *", &o, day.0, day.1),
        [all[0], all[2], all[3]]
    );
}

#[test]
fn preview_notes() {
    let spec = Spec::parse("30 2 * * *", &opts(None, None)).unwrap();
    let p = spec.preview(ts("2026-03-07T12:00:00Z"), 2);
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].at, ts("2026-03-08T07:00:00Z"));
    assert_eq!(p[0].civil, "2026-03-08T03:00:00");
    assert_eq!(p[0].offset_seconds, -4 * 3600);
    assert_eq!(p[0].note, Some(DstNote::ShiftedFromGap));
    assert_eq!(p[1].civil, "2026-03-09T02:30:00");
    assert_eq!(p[1].note, None);

    let spec = Spec::parse("0,20,40 1 * * *", &opts(None, None)).unwrap();
    let p = spec.preview(ts("2026-11-01T00:00:00Z"), 7);
    let notes: Vec<_> = p
        .iter()
        .map(|o| (o.civil.as_str(), o.offset_seconds, o.note))
        .collect();
    assert_eq!(
        notes,
        [
            ("2026-11-01T01:00:00", -14_400, Some(DstNote::FirstPass)),
            ("2026-11-01T01:20:00", -14_400, Some(DstNote::FirstPass)),
            ("2026-11-01T01:40:00", -14_400, Some(DstNote::FirstPass)),
            ("2026-11-01T01:00:00", -18_000, Some(DstNote::SecondPass)),
            ("2026-11-01T01:20:00", -18_000, Some(DstNote::SecondPass)),
            ("2026-11-01T01:40:00", -18_000, Some(DstNote::SecondPass)),
            ("2026-11-02T01:00:00", -18_000, None),
        ]
    );
    let json = serde_json::to_string(&p[0]).unwrap();
    assert_eq!(
        json,
        r#"{"at":1793509200000,"civil":"2026-11-01T01:00:00","offsetSeconds":-14400,"note":"firstPass"}"#
    );
}

#[test]
fn fixed_time_detection_and_zone_name() {
    let spec = Spec::parse("30 2 * * *", &opts(None, None)).unwrap();
    assert!(spec.is_fixed_time());
    assert_eq!(spec.zone_name(), NY);
    let spec = Spec::parse("0,30 2 * * *", &opts(None, None)).unwrap();
    assert!(!spec.is_fixed_time());
}

#[test]
fn cron_tz_prefix_and_conflicts() {
    let utc = SpecOptions::default();
    let prefixed = fires(
        "CRON_TZ=America/New_York 30 2 * * *",
        &utc,
        SPRING.0,
        SPRING.1,
    );
    assert_eq!(
        prefixed,
        fires("30 2 * * *", &opts(None, None), SPRING.0, SPRING.1)
    );
    // The same zone on both sides is fine, whatever the case.
    let spec = Spec::parse("TZ=america/new_york 30 2 * * *", &opts(None, None)).unwrap();
    assert_eq!(spec.zone_name(), NY);
    let london = SpecOptions {
        tz: Some("Europe/London".into()),
        ..SpecOptions::default()
    };
    let e = Spec::parse("CRON_TZ=America/New_York 30 2 * * *", &london).unwrap_err();
    assert_eq!(e.code(), "invalid_spec");
    assert!(e.to_string().contains("conflicting time zones"), "{e}");
    let e = Spec::parse("CRON_TZ=America/Nowhere 30 2 * * *", &utc).unwrap_err();
    assert_eq!(e.code(), "invalid_time_zone");
    let bad = SpecOptions {
        tz: Some("Not/A_Zone".into()),
        ..SpecOptions::default()
    };
    assert_eq!(
        Spec::parse("30 2 * * *", &bad).unwrap_err().code(),
        "invalid_time_zone"
    );
}

#[test]
fn results_are_strictly_later_whole_seconds() {
    let spec = Spec::parse("30 2 * * *", &opts(None, None)).unwrap();
    let at = ts("2026-03-09T06:30:00Z");
    let just_before = Timestamp::from_millis(at.as_millis() - 1).unwrap();
    assert_eq!(spec.next_after(just_before), Some(at));
    assert_eq!(spec.next_after(at), Some(ts("2026-03-10T06:30:00Z")));
    // 6-field spec with seconds.
    let spec = Spec::parse("15 30 2 * * *", &opts(None, None)).unwrap();
    assert_eq!(
        spec.next_after(ts("2026-03-08T00:00:00Z")),
        Some(ts("2026-03-08T07:00:00Z"))
    );
}
