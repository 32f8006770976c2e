//! `@every` grids, `@at` one-shots, durations and the bundled tz database.

use chime_core::testing::{MAX_PREVIEW, parse_duration_ms};
use chime_core::{DstPolicy, FoldPolicy, GapPolicy};
use chime_core::{Spec, SpecOptions, Timestamp};

fn ts(s: &str) -> Timestamp {
    let j: jiff::Timestamp = s.parse().unwrap();
    Timestamp::from_millis(j.as_millisecond()).unwrap()
}

fn next(spec: &str, o: &SpecOptions, after: &str) -> Option<String> {
    Spec::parse(spec, o)
        .unwrap()
        .next_after(ts(after))
        .map(|t| t.to_string())
}

fn in_zone(tz: &str) -> SpecOptions {
    SpecOptions {
        tz: Some(tz.to_string()),
        ..SpecOptions::default()
    }
}

#[test]
fn tzdb_version_is_bundled() {
    let v = chime_core::tzdb_version();
    assert!(v.len() >= 5 && v.starts_with("20"), "{v}");
}

#[test]
fn durations() {
    assert_eq!(parse_duration_ms("90s"), Ok(90_000));
    assert_eq!(parse_duration_ms("1h30m"), Ok(5_400_000));
    assert_eq!(parse_duration_ms("250ms"), Ok(250));
    assert_eq!(parse_duration_ms("1d"), Ok(86_400_000));
    assert_eq!(parse_duration_ms("1d2h"), Ok(93_600_000));
    for bad in [
        "1.5h",
        "10us",
        "-1s",
        "1h30",
        "",
        "1m1h",
        "99999999999999999999s",
    ] {
        let e = parse_duration_ms(bad).unwrap_err();
        assert_eq!(e.code(), "invalid_duration", "{bad}");
        assert!(e.to_string().contains("offset"), "{e}");
    }
}

#[test]
fn every_is_epoch_aligned_and_zone_independent() {
    let utc = SpecOptions::default();
    let after = "2026-03-08T06:59:59.500Z";
    let expected = Some("2026-03-08T07:00:00.000Z".to_string());
    assert_eq!(next("@every 1h", &utc, after), expected);
    // The zone does not matter: absolute time.
    assert_eq!(
        next("@every 1h", &in_zone("America/New_York"), after),
        expected
    );
    assert_eq!(
        next("@every 1h +15m", &utc, "2026-03-08T07:00:00Z").as_deref(),
        Some("2026-03-08T07:15:00.000Z")
    );
    assert_eq!(
        next("@EVERY 90s", &utc, "1970-01-01T00:00:00Z").as_deref(),
        Some("1970-01-01T00:01:30.000Z")
    );
    // 7 days from the epoch: Thursdays at 00:00Z.
    assert_eq!(
        next("@every 7d", &utc, "2026-03-08T00:00:00Z").as_deref(),
        Some("2026-03-12T00:00:00.000Z")
    );
    let spec = Spec::parse("@every 90s", &utc).unwrap();
    assert_eq!(spec.zone_name(), "UTC");
    assert!(!spec.is_fixed_time());
    assert_eq!(spec.next_after(Timestamp::MAX), None);
}

#[test]
fn every_rejections() {
    let utc = SpecOptions::default();
    let code = |s: &str, o: &SpecOptions| Spec::parse(s, o).unwrap_err().code();
    assert_eq!(code("@every 500ms", &utc), "interval_too_short");
    assert_eq!(code("@every 0s", &utc), "interval_too_short");
    let fast = SpecOptions {
        min_interval_ms: 100,
        ..SpecOptions::default()
    };
    assert!(Spec::parse("@every 250ms", &fast).is_ok());
    assert_eq!(code("@every 1h +1h", &utc), "invalid_spec");
    assert_eq!(code("@every 1h 15m", &utc), "invalid_spec");
    assert_eq!(code("@every 1.5h", &utc), "invalid_duration");
    assert_eq!(code("@every", &utc), "invalid_spec");
}

#[test]
fn every_preview() {
    let spec = Spec::parse(
        "@every 250ms",
        &SpecOptions {
            min_interval_ms: 1,
            ..SpecOptions::default()
        },
    )
    .unwrap();
    let p = spec.preview(ts("2026-01-01T00:00:00Z"), 4);
    let civil: Vec<_> = p.iter().map(|o| o.civil.as_str()).collect();
    assert_eq!(
        civil,
        [
            "2026-01-01T00:00:00.250",
            "2026-01-01T00:00:00.500",
            "2026-01-01T00:00:00.750",
            "2026-01-01T00:00:01"
        ]
    );
    assert!(p.iter().all(|o| o.offset_seconds == 0 && o.note.is_none()));
    // Preview is capped.
    let spec = Spec::parse("@every 1s", &SpecOptions::default()).unwrap();
    assert_eq!(
        spec.preview(ts("2026-01-01T00:00:00Z"), usize::MAX).len(),
        MAX_PREVIEW
    );
}

#[test]
fn at_rfc3339() {
    let o = in_zone("America/New_York");
    let spec = Spec::parse("@at 2026-12-01T09:00:00Z", &o).unwrap();
    assert_eq!(
        spec.next_after(ts("2026-01-01T00:00:00Z")),
        Some(ts("2026-12-01T09:00:00Z"))
    );
    assert_eq!(spec.next_after(ts("2026-12-01T09:00:00Z")), None);
    let p = spec.preview(ts("2026-01-01T00:00:00Z"), 5);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].civil, "2026-12-01T04:00:00");
    assert_eq!(p[0].offset_seconds, -5 * 3600);
    let spec = Spec::parse("@at 2026-12-01T09:00:00+01:00", &SpecOptions::default()).unwrap();
    assert_eq!(
        spec.next_after(Timestamp::MIN),
        Some(ts("2026-12-01T08:00:00Z"))
    );
}

#[test]
fn at_civil_in_zone() {
    let utc = SpecOptions::default();
    assert_eq!(
        next("@at 2026-12-01T09:00", &utc, "2026-01-01T00:00:00Z").as_deref(),
        Some("2026-12-01T09:00:00.000Z")
    );
    let ny = in_zone("America/New_York");
    assert_eq!(
        next("@at 2026-12-01 09:00:00", &ny, "2026-01-01T00:00:00Z").as_deref(),
        Some("2026-12-01T14:00:00.000Z")
    );
    let spec = Spec::parse("@at 2026-12-01 09:00:00", &ny).unwrap();
    assert_eq!(spec.zone_name(), "America/New_York");
}

#[test]
fn at_civil_dst_policy() {
    let with = |gap, fold| SpecOptions {
        tz: Some("America/New_York".into()),
        dst: DstPolicy { gap, fold },
        ..SpecOptions::default()
    };
    let from = "2026-01-01T00:00:00Z";
    // Gap: shift to the first instant after it, or reject under skip.
    assert_eq!(
        next("@at 2026-03-08T02:30", &with(None, None), from).as_deref(),
        Some("2026-03-08T07:00:00.000Z")
    );
    assert_eq!(
        next(
            "@at 2026-03-08T02:30",
            &with(Some(GapPolicy::Shift), None),
            from
        )
        .as_deref(),
        Some("2026-03-08T07:00:00.000Z")
    );
    let e = Spec::parse("@at 2026-03-08T02:30", &with(Some(GapPolicy::Skip), None)).unwrap_err();
    assert_eq!(e.code(), "invalid_spec");
    // Fold: first pass unless `last`.
    let fold = |f| next("@at 2026-11-01T01:30", &with(None, f), from);
    assert_eq!(fold(None).as_deref(), Some("2026-11-01T05:30:00.000Z"));
    assert_eq!(
        fold(Some(FoldPolicy::First)).as_deref(),
        Some("2026-11-01T05:30:00.000Z")
    );
    assert_eq!(
        fold(Some(FoldPolicy::Both)).as_deref(),
        Some("2026-11-01T05:30:00.000Z")
    );
    assert_eq!(
        fold(Some(FoldPolicy::Last)).as_deref(),
        Some("2026-11-01T06:30:00.000Z")
    );
}

#[test]
fn at_rejections() {
    let utc = SpecOptions::default();
    for bad in [
        "@at",
        "@at next tuesday",
        "@at 2026-02-30T09:00",
        "@at 1969-07-20T20:17:00Z",
        "@at 2026-12-01T09:00:00.000001Z",
    ] {
        assert_eq!(
            Spec::parse(bad, &utc).unwrap_err().code(),
            "invalid_spec",
            "{bad}"
        );
    }
    let e = Spec::parse("@at 2026-12-01T09:00", &in_zone("Atlantis/Capital")).unwrap_err();
    assert_eq!(e.code(), "invalid_time_zone");
}
