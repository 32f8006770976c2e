//! Oracles and cross-checks: a naive matcher written from the definitions,
//! and brute-force scans that `next_civil` must agree with.

use super::CronSpec;
use super::days::Days;
use crate::time::calendar::{Civil, days_from_civil, days_in_month, weekday_from_days};

/// The definition of each day rule, one day at a time (test oracle).
pub(super) fn naive_day(days: &Days, y: i32, m: u32, d: u32) -> bool {
    let len = days_in_month(y, m);
    let wd = |d: u32| weekday_from_days(days_from_civil(y, m, d));
    let weekday = |d: u32| (1..=5).contains(&wd(d));
    let mut dom = days.dom & (1 << d) != 0;
    for n in 0..31 {
        dom |= days.dom_last & (1 << n) != 0 && n < len && d == len - n;
    }
    if days.dom_last_weekday {
        let last = (1..=len).rev().find(|&x| weekday(x)).unwrap();
        dom |= d == last;
    }
    for n in 1..=len {
        if days.dom_nearest & (1 << n) != 0 {
            // Nearest weekday to n within the month, the earlier one on ties.
            let target = (0..3)
                .flat_map(|k| [n as i32 - k, n as i32 + k])
                .filter(|&x| x >= 1 && x <= len as i32)
                .find(|&x| weekday(x as u32))
                .unwrap() as u32;
            dom |= d == target;
        }
    }
    let w = wd(d);
    let mut dow = days.dow & (1 << w) != 0;
    dow |= days.dow_nth[(d as usize - 1) / 7] & (1 << w) != 0;
    dow |= days.dow_last & (1 << w) != 0 && d + 7 > len;
    match (days.dom_star, days.dow_star) {
        (true, true) => true,
        (false, true) => dom,
        (true, false) => dow,
        _ if days.and => dom && dow,
        _ => dom || dow,
    }
}

/// The definition of a match, field by field (test oracle).
fn naive_matches(spec: &CronSpec, t: i64) -> bool {
    let c = Civil::from_local_secs(t);
    spec.years.as_ref().is_none_or(|y| y.contains(c.year))
        && spec.months >> c.month & 1 == 1
        && naive_day(&spec.days, c.year, c.month, c.day)
        && spec.hours >> c.hour & 1 == 1
        && spec.minutes >> c.minute & 1 == 1
        && spec.seconds >> c.second & 1 == 1
}

/// First match in `[from, limit)` by scanning minute by minute (or second
/// by second when the seconds field is not just `0`).
fn naive_next(spec: &CronSpec, from: i64, limit: i64) -> Option<i64> {
    let step = if spec.seconds == 1 { 60 } else { 1 };
    let mut t = from + (step - from.rem_euclid(step)) % step;
    // Day verdicts are cached so the scan stays cheap.
    let mut day_cache: Option<(i64, bool)> = None;
    while t < limit {
        let day = t.div_euclid(86_400);
        let ok_day = match day_cache {
            Some((d, ok)) if d == day => ok,
            _ => {
                let ok = naive_matches(spec, day * 86_400 + first_time(spec));
                day_cache = Some((day, ok));
                ok
            }
        };
        if ok_day && naive_matches(spec, t) {
            return Some(t);
        }
        t += if ok_day {
            step
        } else {
            86_400 - t.rem_euclid(86_400)
        };
    }
    None
}

/// Second of day of the first matching time (used to test a day alone).
fn first_time(spec: &CronSpec) -> i64 {
    i64::from(
        spec.hours.trailing_zeros() * 3600
            + spec.minutes.trailing_zeros() * 60
            + spec.seconds.trailing_zeros(),
    )
}

fn at(y: i32, m: u32, d: u32, h: u32, mi: u32, s: u32) -> i64 {
    Civil {
        year: y,
        month: m,
        day: d,
        hour: h,
        minute: mi,
        second: s,
    }
    .to_local_secs()
}

fn spec(text: &str) -> CronSpec {
    CronSpec::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .cron
}

/// Deterministic pseudo-random numbers (SplitMix64).
fn rng(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const MINUTE_SPECS: &[&str] = &[
    "* * * * *",
    "*/5 * * * *",
    "0 9 * * 1-5",
    "0 0 L * *",
    "0 0 29 2 *",
    "0 12 * * 5#3",
    "30 2 * * *",
    "15,45 */3 1,15 * MON",
    "0 0 1-7 * +MON",
    "0 8 L-2 * *",
    "0 8 LW * *",
    "0 8 1W,15W * *",
    "0 8 31W * *",
    "0 17 * * 5L",
    "0 17 * * FRI#L,MON#1",
    "59 23 31 12 *",
    "0 0 */2 * SUN",
    "0 0 ? JAN-MAR,OCT ?",
    "0 6 13 * +FRI",
    "5-10/2 22-23/1 * * *",
    "0 0 L * 0",
    "0 12 * JUN-AUG SAT,SUN",
    "@weekly",
    "@monthly",
    "@hourly",
    "0 0 29 2 1",
    "0 0 0 1 1 * 2027-2029/2",
];

const SECOND_SPECS: &[&str] = &[
    "* * * * * *",
    "*/7 * * * * *",
    "30 */5 * * * *",
    "0,59 59 23 * * *",
    "10-20/5 0 0 L * ?",
    "*/20 30 2 * * 1-5",
    "0 0 0 1 1 ? 2026,2028",
];

#[test]
fn next_civil_agrees_with_a_minute_scan() {
    let mut seed = 7;
    for text in MINUTE_SPECS {
        let spec = spec(text);
        let mut starts = vec![
            at(2026, 1, 1, 0, 0, 0),
            at(2026, 2, 28, 23, 59, 30),
            at(2028, 2, 29, 12, 0, 0),
            at(2026, 12, 31, 23, 59, 59),
        ];
        for _ in 0..6 {
            let span = (at(2030, 1, 1, 0, 0, 0) - at(2025, 1, 1, 0, 0, 0)) as u64;
            starts.push(at(2025, 1, 1, 0, 0, 0) + (rng(&mut seed) % span) as i64);
        }
        agrees_with_scan(text, &spec, &starts, 45 * 86_400);
    }
}

/// `next_civil` from each start equals the naive scan over `window` seconds.
fn agrees_with_scan(text: &str, spec: &CronSpec, starts: &[i64], window: i64) {
    for &from in starts {
        let limit = from + window;
        assert_eq!(
            spec.next_civil(from, limit),
            naive_next(spec, from, limit),
            "{text} from {}",
            Civil::from_local_secs(from)
        );
    }
}

#[test]
fn next_civil_agrees_with_a_second_scan() {
    let mut seed = 11;
    for text in SECOND_SPECS {
        let spec = spec(text);
        let mut starts = vec![at(2026, 1, 31, 23, 59, 59), at(2026, 3, 1, 0, 0, 0)];
        for _ in 0..4 {
            let span = (at(2029, 1, 1, 0, 0, 0) - at(2026, 1, 1, 0, 0, 0)) as u64;
            starts.push(at(2026, 1, 1, 0, 0, 0) + (rng(&mut seed) % span) as i64);
        }
        agrees_with_scan(text, &spec, &starts, 3 * 86_400);
    }
}

#[test]
fn chained_occurrences_match_and_skip_nothing() {
    // Walk many occurrences; each must match, and the naive scan between
    // two consecutive ones must find nothing in between.
    for text in [
        "0 0 L * *",
        "0 12 * * 5#3",
        "0 9 * * 1-5",
        "0 0 LW * *",
        "0 0 15W * *",
    ] {
        let spec = spec(text);
        let mut t = at(2025, 6, 15, 10, 0, 0);
        for _ in 0..60 {
            let next = spec.next_civil(t, t + 400 * 86_400).unwrap();
            assert!(
                spec.matches_civil(next) && naive_matches(&spec, next),
                "{text}"
            );
            assert_eq!(naive_next(&spec, t, next + 1), Some(next), "{text}");
            t = next + 1;
        }
    }
}

#[test]
fn matches_civil_agrees_with_the_definition() {
    let mut seed = 3;
    for text in MINUTE_SPECS.iter().chain(SECOND_SPECS) {
        let spec = spec(text);
        for _ in 0..2000 {
            let t = at(2020, 1, 1, 0, 0, 0) + (rng(&mut seed) % (20 * 366 * 86_400)) as i64;
            // Land on matching days and times often enough to matter.
            let t = if rng(&mut seed).is_multiple_of(2) {
                t - t.rem_euclid(86_400) + first_time(&spec)
            } else {
                t
            };
            assert_eq!(
                spec.matches_civil(t),
                naive_matches(&spec, t),
                "{text} at {t}"
            );
        }
    }
}

#[test]
fn limits_and_bounds() {
    let s = spec("0 0 29 2 *");
    let from = at(2025, 3, 1, 0, 0, 0);
    assert_eq!(s.next_civil(from, from), None);
    assert_eq!(s.next_civil(from, at(2028, 2, 29, 0, 0, 0)), None);
    assert_eq!(
        s.next_civil(from, at(2028, 2, 29, 0, 0, 1)),
        Some(at(2028, 2, 29, 0, 0, 0))
    );
    // Never fires: returns None quickly at the limit, and at year 9999.
    let never = spec("0 0 30 2 *");
    assert_eq!(never.next_civil(from, i64::MAX), None);
    let last = spec("59 59 23 31 12 * 9999");
    assert_eq!(
        last.next_civil(i64::MIN, i64::MAX),
        Some(at(9999, 12, 31, 23, 59, 59))
    );
    assert_eq!(
        last.next_civil(at(9999, 12, 31, 23, 59, 59) + 1, i64::MAX),
        None
    );
    assert!(!last.matches_civil(i64::MAX) && !last.matches_civil(i64::MIN));
    // Years before 1970 match when no year field restricts them.
    let daily = spec("@daily");
    assert_eq!(daily.next_civil(-1, i64::MAX), Some(0));
    // A year field skips straight to its years.
    let y = spec("0 0 0 1 1 * 2031-2032");
    assert_eq!(y.next_civil(from, i64::MAX), Some(at(2031, 1, 1, 0, 0, 0)));
    assert_eq!(
        y.next_civil(at(2031, 1, 1, 0, 0, 1), i64::MAX),
        Some(at(2032, 1, 1, 0, 0, 0))
    );
    assert_eq!(y.next_civil(at(2032, 1, 1, 0, 0, 1), i64::MAX), None);
}

#[test]
fn fixed_time() {
    assert!(spec("30 2 * * *").is_fixed_time());
    assert!(spec("@daily").is_fixed_time());
    assert!(spec("0 30 2 * * 1-5").is_fixed_time());
    assert!(!spec("0,30 2 * * *").is_fixed_time());
    assert!(!spec("* 2 * * *").is_fixed_time());
    assert!(!spec("*/10 30 2 * * *").is_fixed_time());
    assert!(!spec("@hourly").is_fixed_time());
}

#[test]
fn display_normalizes_and_round_trips() {
    let cases = [
        ("*/15 9-17 * * MON-FRI", "0 */15 9-17 * * 1-5"),
        ("@weekly", "0 0 0 * * 0"),
        ("0 0 L,L-3,LW,15W * 5#3,FRIL", "0 0 0 L,L-3,LW,15W * 5#3,5L"),
        ("0 0 1 * +MON", "0 0 0 1 * +1"),
        ("0 0 ? * 7", "0 0 0 * * 0"),
        (
            "0 1,2,3,10 * 1-31 JAN,FEB * 2030-2035,2040",
            "0 1-3,10 * 1-31 1-2 * 2030-2035,2040",
        ),
        ("5/20 * */2 * *", "0 5-45/20 * 1-31/2 * *"),
        ("0 0 * * 0-7", "0 0 0 * * 0-6"),
    ];
    for (text, normal) in cases {
        let s = spec(text);
        assert_eq!(s.to_string(), normal, "{text}");
        assert_eq!(spec(normal), s, "{normal} round trip");
    }
}

#[test]
fn star_means_exactly_star() {
    // `*/1` restricts the field (croner's rule): with a restricted
    // day-of-week the two combine with OR, so every day matches.
    let s = spec("0 0 */1 * MON");
    let tue = at(2026, 3, 3, 0, 0, 0);
    assert!(s.matches_civil(tue));
    // `*` and `?` leave it unrestricted: only Mondays.
    assert!(!spec("0 0 * * MON").matches_civil(tue));
    assert!(!spec("0 0 ? * MON").matches_civil(tue));
}

/// Pieces the differential generator joins into random expressions: valid
/// and invalid items, modifiers, names in any case, odd whitespace and
/// non-ASCII characters, prefixes and macros.
const PIECES: &[&str] = &[
    "*",
    "?",
    "0",
    "1",
    "5",
    "7",
    "9",
    "12",
    "15",
    "23",
    "29",
    "30",
    "31",
    "32",
    "59",
    "60",
    "1970",
    "2026",
    "9999",
    "10000",
    "007",
    "99999999999999999999999",
    "-",
    "/",
    ",",
    "#",
    "L",
    "l",
    "W",
    "w",
    "LW",
    "lw",
    "L-",
    "L-3",
    "l-30",
    "L-31",
    "+",
    "jan",
    "FEB",
    "Dec",
    "FOO",
    "mon",
    "FRI",
    "sun",
    "SAT",
    "x",
    "é",
    "＊",
    "@",
    "@daily",
    "@DAILY",
    "@foo",
    "@every",
    "*/",
    "/0",
    "/5",
    "/61",
    "1-5",
    "5-1",
    "FRI-SUN",
    "#3",
    "#L",
    "#6",
    "#0",
    "#x",
    " ",
    " ",
    "  ",
    "\t",
    "\u{b}",
    "\u{3000}",
    "\n",
    "CRON_TZ=",
    "TZ=",
    "tz=Europe/Paris",
    "CRON_TZ=UTC ",
];

/// The parser's behaviour on 100,000 generated expressions (well-formed
/// fields per kind, prefixes, odd whitespace, broken items) is pinned by a
/// digest of every result: the normalized form and zone of each accepted
/// spec, the code and full message of each rejected one. It was recorded
/// when the parser was rewritten for speed, after checking that the old and
/// the new parser produced byte-identical results on 300,000 expressions.
/// A deliberate change re-records it: `CRON_DUMP=path` writes the lines, to
/// diff against a dump from the previous build.
#[test]
fn parse_results_match_the_recorded_digest() {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut seed = 42u64;
    let mut texts: Vec<String> = MINUTE_SPECS
        .iter()
        .chain(SECOND_SPECS)
        .map(|s| s.to_string())
        .collect();
    // Mostly well-formed fields, so later fields are reached too.
    const ITEMS: &[&str] = &[
        "*",
        "?",
        "0",
        "1",
        "2",
        "5",
        "6",
        "7",
        "9",
        "12",
        "13",
        "15",
        "23",
        "28",
        "29",
        "30",
        "31",
        "32",
        "59",
        "60",
        "1-5",
        "5-1",
        "0-6",
        "1-7",
        "9-17",
        "jan",
        "Mar",
        "DEC",
        "mon",
        "FRI",
        "sun",
        "SAT",
        "MON-FRI",
        "FRI-SUN",
        "jan-mar",
        "L",
        "l",
        "LW",
        "lw",
        "L-2",
        "l-30",
        "L-31",
        "L-0",
        "L-x",
        "15W",
        "1w",
        "31W",
        "W",
        "xW",
        "5L",
        "FRI#3",
        "5#3",
        "0#L",
        "7#5",
        "1#6",
        "1#0",
        "1#",
        "#2",
        "*#2",
        "L#2",
        "1970",
        "2026",
        "2027-2029",
        "9999",
        "10000",
        "*/5",
        "*/0",
        "*/61",
        "5/15",
        "1-5/2",
        "0/",
        "2026/2",
        "007",
        "é",
        "＊",
        "+",
        "+MON",
        "+1-5",
        "?",
        "x",
        "-",
        "/",
        "",
    ];
    const VALID: [&[&str]; 7] = [
        &[
            "*", "0", "5", "30", "59", "*/5", "1-5", "10-20/5", "5/15", "007",
        ],
        &["*", "0", "5", "30", "59", "*/5", "1-5", "10-20/5", "5/15"],
        &["*", "0", "9", "23", "9-17", "*/3", "22-23/1"],
        &[
            "*", "?", "1", "15", "31", "L", "lw", "L-2", "15W", "1-7", "*/2", "29",
        ],
        &["*", "1", "2", "12", "jan", "Mar-jun", "*/3", "OCT"],
        &[
            "*", "?", "1-5", "MON", "fri-sun", "5L", "FRI#3", "+MON", "0", "7", "sun#l", "*/2",
        ],
        &["*", "2026", "2027-2029", "2026/2", "9999"],
    ];
    for _ in 0..100_000 {
        let mut text = String::new();
        if rng(&mut seed).is_multiple_of(8) {
            text.push_str(
                ["CRON_TZ=UTC ", "TZ=utc\t", "cron_tz= ", "TZ=Europe/Paris "]
                    [rng(&mut seed) as usize % 4],
            );
        }
        let structured = !rng(&mut seed).is_multiple_of(4);
        let fields = if structured {
            5 + rng(&mut seed) % 3
        } else {
            rng(&mut seed) % 9
        };
        for f in 0..fields {
            if f > 0 {
                text.push_str([" ", " ", " ", "\t", "  ", "\u{3000}"][rng(&mut seed) as usize % 6]);
            }
            if structured {
                // Field kinds by position (6 and 7 fields start with seconds).
                let kind = if fields == 5 { f + 1 } else { f };
                let items = 1 + rng(&mut seed) % 3;
                for i in 0..items {
                    if i > 0 {
                        text.push(',');
                    }
                    let r = rng(&mut seed) as usize;
                    let pool = if r.is_multiple_of(5) {
                        ITEMS
                    } else {
                        VALID[kind as usize]
                    };
                    text.push_str(pool[(r >> 8) % pool.len()]);
                }
                continue;
            }
            let parts = 1 + rng(&mut seed) % 4;
            for _ in 0..parts {
                let p = if rng(&mut seed).is_multiple_of(3) {
                    PIECES[rng(&mut seed) as usize % PIECES.len()]
                } else {
                    ["*", "1", "5", "0", "12", ",", "-", "/", "*/", "L", "W", "#"]
                        [rng(&mut seed) as usize % 12]
                };
                text.push_str(p);
            }
        }
        texts.push(text);
    }
    let opts = crate::spec::SpecOptions::default();
    let mut accepted = 0;
    for text in &texts {
        let spec = match crate::spec::Spec::parse(text, &opts) {
            Ok(s) => format!("ok {}", s.zone_name()),
            Err(e) => format!("{} {e}", e.code()),
        };
        let cron = match CronSpec::parse(text) {
            Ok(p) => {
                accepted += 1;
                format!("{} tz={:?}", p.cron, p.tz)
            }
            Err(e) => e.to_string(),
        };
        writeln!(out, "{text:?} => {cron} | {spec}").unwrap();
    }
    if let Ok(path) = std::env::var("CRON_DUMP") {
        std::fs::write(path, &out).unwrap();
    }
    assert!(
        accepted > 2_000,
        "the generator reaches valid specs: {accepted}"
    );
    assert_eq!(
        crate::det::hash_str(&out),
        RECORDED_DIGEST,
        "cron parse results changed (see the doc comment to re-record)"
    );
}

/// Digest of the results of [`parse_results_match_the_recorded_digest`].
const RECORDED_DIGEST: u64 = 16_229_988_274_312_061_589;
