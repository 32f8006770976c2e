//! Offset changes that are not seasonal DST.
//!
//! - Europe/Moscow 2014-10-26: permanent +04 → +03 at 2014-10-25T22:00Z;
//!   civil 01:00–01:59 happens twice (21:00–21:59Z, then 22:00–22:59Z).
//! - Pacific/Apia 2011-12-30: the whole day was skipped when Samoa crossed
//!   the date line, -10 → +14 at 2011-12-30T10:00Z (civil 2011-12-30T00:00
//!   to 2011-12-31T00:00 does not exist).

use chime_core::DstNote;
use chime_core::{Spec, SpecOptions};
use chime_tests::dst::{self, AUTO, BOTH, FIRST, LAST, Policy, SHIFT, SKIP, ts};

fn fires(zone: &str, spec: &str, p: Policy, from: &str, until: &str) -> Vec<String> {
    dst::fires(spec, &dst::opts(zone, p), from, until)
}

const MSK: &str = "Europe/Moscow";
const MSK_DAY: (&str, &str) = ("2014-10-25T12:00:00Z", "2014-10-26T12:00:00Z");

#[test]
fn moscow_fold_fixed_time() {
    let f = |p| fires(MSK, "30 1 * * *", p, MSK_DAY.0, MSK_DAY.1);
    assert_eq!(f(AUTO), ["2014-10-25T21:30:00Z"]);
    assert_eq!(f(FIRST), ["2014-10-25T21:30:00Z"]);
    assert_eq!(f(LAST), ["2014-10-25T22:30:00Z"]);
    assert_eq!(f(BOTH), ["2014-10-25T21:30:00Z", "2014-10-25T22:30:00Z"]);
}

#[test]
fn moscow_fold_list() {
    let f = |p| fires(MSK, "0,30 1 * * *", p, MSK_DAY.0, MSK_DAY.1);
    let all = [
        "2014-10-25T21:00:00Z",
        "2014-10-25T21:30:00Z",
        "2014-10-25T22:00:00Z",
        "2014-10-25T22:30:00Z",
    ];
    assert_eq!(f(AUTO), all);
    assert_eq!(f(BOTH), all);
    assert_eq!(f(FIRST), all[..2]);
    assert_eq!(f(LAST), all[2..]);
}

#[test]
fn moscow_offset_after_the_change() {
    // A day later the zone is +03 for good: 09:00 local is 06:00Z.
    let got = fires(
        MSK,
        "0 9 * * *",
        AUTO,
        "2014-10-25T00:00:00Z",
        "2014-10-28T00:00:00Z",
    );
    assert_eq!(
        got,
        [
            "2014-10-25T05:00:00Z",
            "2014-10-26T06:00:00Z",
            "2014-10-27T06:00:00Z"
        ]
    );
}

const APIA: &str = "Pacific/Apia";
const APIA_DAYS: (&str, &str) = ("2011-12-29T00:00:00Z", "2012-01-01T00:00:00Z");

#[test]
fn apia_skipped_day_fixed_time() {
    // 09:00 on the 29th (-10) = 19:00Z; the 30th has no 09:00 and shifts to
    // the first instant after the gap (2011-12-31T00:00 +14 = 10:00Z on the
    // 30th); 09:00 on the 31st (+14) = 19:00Z on the 30th.
    let shifted = [
        "2011-12-29T19:00:00Z",
        "2011-12-30T10:00:00Z",
        "2011-12-30T19:00:00Z",
        "2011-12-31T19:00:00Z",
    ];
    assert_eq!(
        fires(APIA, "0 9 * * *", AUTO, APIA_DAYS.0, APIA_DAYS.1),
        shifted
    );
    assert_eq!(
        fires(APIA, "0 9 * * *", SHIFT, APIA_DAYS.0, APIA_DAYS.1),
        shifted
    );
    let skipped = [shifted[0], shifted[2], shifted[3]];
    assert_eq!(
        fires(APIA, "0 9 * * *", SKIP, APIA_DAYS.0, APIA_DAYS.1),
        skipped
    );
}

#[test]
fn apia_skipped_day_lists_and_dates() {
    // A list on the skipped day: every gap time shifts to one instant.
    let got = fires(
        APIA,
        "0 9,17 * * *",
        SHIFT,
        APIA_DAYS.0,
        "2011-12-31T00:00:00Z",
    );
    assert_eq!(
        got,
        [
            "2011-12-29T03:00:00Z", // 17:00 on the 28th (-10)
            "2011-12-29T19:00:00Z",
            "2011-12-30T03:00:00Z",
            "2011-12-30T10:00:00Z",
            "2011-12-30T19:00:00Z"
        ]
    );
    // A yearly date that did not exist in 2011.
    let f = |p| {
        fires(
            APIA,
            "0 12 30 12 *",
            p,
            "2011-01-01T00:00:00Z",
            "2013-01-01T00:00:00Z",
        )
    };
    assert_eq!(f(AUTO), ["2011-12-30T10:00:00Z", "2012-12-29T22:00:00Z"]);
    assert_eq!(f(SKIP), ["2012-12-29T22:00:00Z"]);
    let o = SpecOptions {
        tz: Some(APIA.to_string()),
        ..SpecOptions::default()
    };
    let p = Spec::parse("0 12 30 12 *", &o)
        .unwrap()
        .preview(ts("2011-12-01T00:00:00Z"), 1);
    assert_eq!(p[0].civil, "2011-12-31T00:00:00");
    assert_eq!(p[0].offset_seconds, 14 * 3600);
    assert_eq!(p[0].note, Some(DstNote::ShiftedFromGap));
}
