//! The independent boundary oracle (`chime_tests::oracle`) against the
//! worked examples of `docs/spec.md` and `docs/dst.md` (written down here
//! by hand, never computed by chime), and its fast enumeration against its
//! own brute-force scan.

use chime_core::{DstPolicy, FoldPolicy, GapPolicy};
use chime_tests::oracle::Oracle;
use chime_tests::specgen::{Rng, cron_spec};

fn secs(s: &str) -> i64 {
    s.parse::<jiff::Timestamp>().unwrap().as_second()
}

fn fmt(u: i64) -> String {
    jiff::Timestamp::from_second(u).unwrap().to_string()
}

fn policy(gap: Option<GapPolicy>, fold: Option<FoldPolicy>) -> DstPolicy {
    DstPolicy { gap, fold }
}

/// Occurrences in `[from, until)` as RFC 3339 strings, by both the fast
/// enumeration and the scan (which must agree).
fn fires(spec: &str, tz: &str, p: DstPolicy, from: &str, until: &str) -> Vec<String> {
    let o = Oracle::parse(spec, Some(tz), p, 100).unwrap();
    let (a, b) = (secs(from) - 1, secs(until) - 1);
    let fast: Vec<i64> = o
        .between(a * 1000, b * 1000)
        .into_iter()
        .map(|ms| ms / 1000)
        .collect();
    assert_eq!(fast, o.scan(a, b), "{spec} in {tz}: enumeration vs scan");
    fast.into_iter().map(fmt).collect()
}

const AUTO: DstPolicy = DstPolicy {
    gap: None,
    fold: None,
};

#[test]
fn new_york_worked_examples() {
    let ny = "America/New_York";
    let (d0, d1) = ("2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z");
    assert_eq!(
        fires("30 2 * * *", ny, AUTO, d0, d1),
        ["2026-03-08T07:00:00Z"]
    );
    assert_eq!(
        fires("0,30 2 * * *", ny, AUTO, d0, d1),
        Vec::<String>::new()
    );
    let shift = policy(Some(GapPolicy::Shift), None);
    assert_eq!(
        fires("0,30 2 * * *", ny, shift, d0, d1),
        ["2026-03-08T07:00:00Z"]
    );
    assert_eq!(
        fires(
            "*/30 * * * *",
            ny,
            AUTO,
            "2026-03-08T06:00:00Z",
            "2026-03-08T08:00:00Z"
        ),
        [
            "2026-03-08T06:00:00Z",
            "2026-03-08T06:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-08T07:30:00Z"
        ]
    );
    let (f0, f1) = ("2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z");
    assert_eq!(
        fires("30 1 * * *", ny, AUTO, f0, f1),
        ["2026-11-01T05:30:00Z"]
    );
    let last = policy(None, Some(FoldPolicy::Last));
    assert_eq!(
        fires("30 1 * * *", ny, last, f0, f1),
        ["2026-11-01T06:30:00Z"]
    );
    let both = policy(None, Some(FoldPolicy::Both));
    assert_eq!(
        fires("30 1 * * *", ny, both, f0, f1),
        ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"]
    );
    assert_eq!(fires("0,20,40 1 * * *", ny, AUTO, f0, f1).len(), 6);
    let first = policy(None, Some(FoldPolicy::First));
    assert_eq!(
        fires(
            "0 * * * *",
            ny,
            first,
            "2026-11-01T04:30:00Z",
            "2026-11-01T06:30:00Z"
        ),
        ["2026-11-01T05:00:00Z"]
    );
    assert_eq!(
        fires(
            "0 * * * *",
            ny,
            AUTO,
            "2026-11-01T04:30:00Z",
            "2026-11-01T06:30:00Z"
        ),
        ["2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z"]
    );
}

#[test]
fn other_zones() {
    // Lord Howe: 30-minute shift.
    let lh = "Australia/Lord_Howe";
    assert_eq!(
        fires(
            "15 2 * * *",
            lh,
            AUTO,
            "2026-10-03T12:00:00Z",
            "2026-10-03T20:00:00Z"
        ),
        ["2026-10-03T15:30:00Z"]
    );
    assert_eq!(
        fires(
            "45 1 * * *",
            lh,
            AUTO,
            "2026-04-04T12:00:00Z",
            "2026-04-04T20:00:00Z"
        ),
        ["2026-04-04T14:45:00Z"]
    );
    let last = policy(None, Some(FoldPolicy::Last));
    assert_eq!(
        fires(
            "45 1 * * *",
            lh,
            last,
            "2026-04-04T12:00:00Z",
            "2026-04-04T20:00:00Z"
        ),
        ["2026-04-04T15:15:00Z"]
    );
    // Apia skipped 2011-12-30.
    let apia = "Pacific/Apia";
    assert_eq!(
        fires(
            "0 9 * * *",
            apia,
            AUTO,
            "2011-12-29T20:00:00Z",
            "2011-12-30T18:00:00Z"
        ),
        ["2011-12-30T10:00:00Z"]
    );
    let skip = policy(Some(GapPolicy::Skip), None);
    assert_eq!(
        fires(
            "0 9 * * *",
            apia,
            skip,
            "2011-12-29T20:00:00Z",
            "2011-12-30T18:00:00Z"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        fires(
            "0 12 30 12 *",
            apia,
            AUTO,
            "2011-12-29T00:00:00Z",
            "2011-12-31T00:00:00Z"
        ),
        ["2011-12-30T10:00:00Z"]
    );
    let o = Oracle::parse("0 12 30 12 *", Some(apia), skip, 100).unwrap();
    assert_eq!(
        o.next_after(secs("2011-12-29T00:00:00Z") * 1000),
        Some(secs("2012-12-29T22:00:00Z") * 1000)
    );
    // Moscow 2014-10-26: +04 → +03 at 22:00Z, a fold 01:00–01:59.
    assert_eq!(
        fires(
            "30 1 * * *",
            "Europe/Moscow",
            AUTO,
            "2014-10-25T20:00:00Z",
            "2014-10-26T00:00:00Z"
        ),
        ["2014-10-25T21:30:00Z"]
    );
}

#[test]
fn grammar_examples() {
    let utc = |spec: &str, from: &str, n: usize| -> Vec<String> {
        let o = Oracle::parse(spec, None, AUTO, 100).unwrap();
        let mut t = secs(from) * 1000 - 1;
        let mut out = Vec::new();
        for _ in 0..n {
            let Some(b) = o.next_after(t) else { break };
            out.push(fmt(b / 1000));
            t = b;
        }
        out
    };
    // 2026-01-01 is a Thursday.
    let d = |s: &str| format!("2026-{s}T00:00:00Z");
    assert_eq!(
        utc("0 0 * * 5/2", "2026-01-01T00:00:00Z", 2),
        [d("01-02"), d("01-09")],
        "5/2 is Friday only"
    );
    assert_eq!(
        utc("0 0 * * 5-7/2", "2026-01-01T00:00:00Z", 2),
        [d("01-02"), d("01-04")]
    );
    assert_eq!(utc("0 0 * * 7/2", "2026-01-01T00:00:00Z", 1), [d("01-04")]);
    assert_eq!(
        utc("0 0 * * FRI-SUN", "2026-01-01T00:00:00Z", 3),
        [d("01-02"), d("01-03"), d("01-04")]
    );
    assert_eq!(
        utc("0 0 L-2 * *", "2026-01-01T00:00:00Z", 2),
        [d("01-29"), d("02-26")]
    );
    // 2026-08-01 is a Saturday: 1W is Monday the 3rd; 2026-05-31 a Sunday:
    // 31W is Friday the 29th.
    assert_eq!(utc("0 0 1W 8 *", "2026-01-01T00:00:00Z", 1), [d("08-03")]);
    assert_eq!(utc("0 0 31W 5 *", "2026-01-01T00:00:00Z", 1), [d("05-29")]);
    assert_eq!(
        utc("0 0 31W 4 *", "2026-01-01T00:00:00Z", 0),
        Vec::<String>::new()
    );
    assert!(
        Oracle::parse("0 0 31W 4 *", None, AUTO, 100)
            .unwrap()
            .next_after(0)
            .is_none()
    );
    assert_eq!(
        utc("0 18 LW * *", "2026-01-01T00:00:00Z", 2),
        ["2026-01-30T18:00:00Z", "2026-02-27T18:00:00Z"]
    );
    assert_eq!(
        utc("0 0 * * MON-FRI#2", "2026-01-01T00:00:00Z", 5),
        [d("01-08"), d("01-09"), d("01-12"), d("01-13"), d("01-14")]
    );
    assert_eq!(
        utc("0 0 * * 5L", "2026-01-01T00:00:00Z", 2),
        [d("01-30"), d("02-27")]
    );
    assert_eq!(
        utc("0 0 1-7 * +MON", "2026-01-01T00:00:00Z", 2),
        [d("01-05"), d("02-02")]
    );
    assert_eq!(
        utc("0 0 13 * +FRI", "2026-01-01T00:00:00Z", 1),
        [d("02-13")]
    );
    assert_eq!(
        utc("0 0 */2 * MON", "2026-01-01T00:00:00Z", 4),
        [d("01-01"), d("01-03"), d("01-05"), d("01-07")]
    );
    assert_eq!(
        utc("0 0 1,15 * MON", "2026-01-01T00:00:00Z", 3),
        [d("01-01"), d("01-05"), d("01-12")]
    );
    assert_eq!(
        utc("0 12 * * 5#3", "2026-01-01T00:00:00Z", 1),
        ["2026-01-16T12:00:00Z"]
    );
    assert_eq!(
        utc("0 0 12 25 12 ? 2030-2031", "2026-01-01T00:00:00Z", 3),
        ["2030-12-25T12:00:00Z", "2031-12-25T12:00:00Z"]
    );
    assert_eq!(
        utc("0 0 8-18/2 * * *", "2026-01-01T00:00:00Z", 7).len(),
        6 + 1,
        "8,10,…,18 then the next day's 8"
    );
    assert_eq!(
        utc("5/20 * * * *", "2026-01-01T00:00:00Z", 3),
        [
            "2026-01-01T00:05:00Z",
            "2026-01-01T00:25:00Z",
            "2026-01-01T00:45:00Z"
        ]
    );
    assert_eq!(
        utc("0 0 * * JAN-JUN/2 *", "2026-01-01T00:00:00Z", 0),
        Vec::<String>::new()
    );
    assert_eq!(utc("@weekly", "2026-01-01T00:00:00Z", 1), [d("01-04")]);
    assert_eq!(
        utc("@yearly", "2026-01-02T00:00:00Z", 1),
        ["2027-01-01T00:00:00Z"]
    );
    assert_eq!(
        utc(
            "CRON_TZ=America/New_York 30 2 * * *",
            "2026-03-08T00:00:00Z",
            1
        ),
        ["2026-03-08T07:00:00Z"]
    );
    assert!(utc("0 0 29 2 *", "2026-01-01T00:00:00Z", 1) == ["2028-02-29T00:00:00Z"]);
    for bad in [
        "* * * *",
        "*/0 * * * *",
        "*/61 * * * *",
        "0 22-2 * * *",
        "1,,2 * * * *",
        "@reboot",
        "0 0 * * *#1",
        "0 0 1 * L",
    ] {
        assert!(
            Oracle::parse(bad, None, AUTO, 100).is_err(),
            "{bad} accepted"
        );
    }
    // @every and @at from the text.
    let e = Oracle::parse("@every 1h +15m", None, AUTO, 100).unwrap();
    assert_eq!(e.next_after(0), Some(15 * 60_000));
    let at = Oracle::parse("@at 2026-03-08T02:30", Some("America/New_York"), AUTO, 100).unwrap();
    assert_eq!(at.next_after(0), Some(secs("2026-03-08T07:00:00Z") * 1000));
}

/// Random specs in DST zones, windows across transitions: the day-wise
/// enumeration equals the civil-second scan, and `next_after` chains equal
/// both.
#[test]
fn enumeration_equals_scan() {
    let zones = [
        "America/New_York",
        "Australia/Lord_Howe",
        "Pacific/Apia",
        "Africa/Casablanca",
        "America/Sao_Paulo",
        "Europe/Moscow",
    ];
    let policies = [
        AUTO,
        policy(Some(GapPolicy::Shift), Some(FoldPolicy::Both)),
        policy(Some(GapPolicy::Skip), Some(FoldPolicy::Last)),
    ];
    let mut rng = Rng::new(0x0AC1_E5E1_F000_0001);
    let (mut compared, mut nonempty) = (0, 0);
    for i in 0..300 {
        let g = cron_spec(&mut rng);
        let zone = zones[i % zones.len()];
        let p = policies[i % policies.len()];
        let o = Oracle::parse(&g.text, Some(zone), p, 100).unwrap();
        let (_, z, _) = o.cron().unwrap();
        let t0 = rng.range_i64(31_536_000, 2_145_916_800);
        let Some(tr) = z.transitions_after(t0).next() else {
            continue;
        };
        let window = if g.fields == 5 { 2 * 86_400 } else { 3 * 3600 };
        let lo = tr - rng.range_i64(0, window);
        let hi = lo + window;
        let scan = o.scan(lo, hi);
        let fast: Vec<i64> = o
            .between(lo * 1000, hi * 1000)
            .iter()
            .map(|ms| ms / 1000)
            .collect();
        assert_eq!(
            fast,
            scan,
            "{:?} in {zone} {p:?} over ({}, {}]",
            g.text,
            fmt(lo),
            fmt(hi)
        );
        let mut chain = Vec::new();
        let mut t = lo * 1000;
        while let Some(b) = o.next_after(t) {
            // (each call expands a day: keep the chain short)
            if b > hi * 1000 || chain.len() == 40 {
                break;
            }
            chain.push(b / 1000);
            t = b;
        }
        assert_eq!(
            chain,
            scan[..scan.len().min(40)],
            "{:?} in {zone}: next_after chain",
            g.text
        );
        compared += 1;
        nonempty += usize::from(!scan.is_empty());
    }
    println!("oracle self-check: {compared} windows, {nonempty} non-empty");
    assert!(compared > 240 && nonempty > 30, "{compared} / {nonempty}");
}
