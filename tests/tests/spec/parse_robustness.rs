//! Fuzz-style robustness of the spec parser: arbitrary text built from the
//! grammar's own alphabet (and a little outside it) never panics; it is
//! either rejected with a typed error whose message starts with its code, or
//! accepted and then answers `next_after` and `preview` without panicking,
//! strictly later than the start.

use chime_core::{DstPolicy, FoldPolicy, GapPolicy};
use chime_core::{Spec, SpecOptions, Timestamp};
use proptest::prelude::*;

/// Fragments that appear in real specs, so random joins often parse.
const PIECES: &[&str] = &[
    "*",
    "?",
    "/",
    ",",
    "-",
    " ",
    "L",
    "W",
    "#",
    "+",
    "0",
    "1",
    "2",
    "5",
    "7",
    "12",
    "15",
    "29",
    "30",
    "31",
    "59",
    "60",
    "99",
    "1970",
    "2030",
    "9999",
    "MON",
    "fri",
    "JAN",
    "dec",
    "LW",
    "L-3",
    "5L",
    "2#3",
    "15W",
    "@every",
    "@at",
    "@daily",
    "@hourly",
    "@yearly",
    "CRON_TZ=",
    "TZ=",
    "America/New_York",
    "UTC",
    "Mars/Base",
    "1h",
    "30m",
    "90s",
    "250ms",
    "1d",
    "+15m",
    "2026-03-08T02:30:00",
    "2026-11-01T01:30:00Z",
    "é",
    "\t",
    "\u{0}",
    "-1",
    "999999999999999999999",
];

/// Items that fit each cron position (sec, min, hour, dom, mon, dow, year).
const FIELDS: [&[&str]; 7] = [
    &["*", "*/5", "0", "30", "0-59/10", "15,45"],
    &["*", "*/15", "0", "30", "5-10", "0,30"],
    &["*", "9-17", "0", "*/6", "2", "1,13"],
    &[
        "*", "?", "1", "15", "L", "LW", "15W", "L-2", "1-10", "31", "29",
    ],
    &["*", "1", "JAN", "jun-aug", "*/3", "2", "11"],
    &[
        "*", "?", "MON-FRI", "5L", "5#3", "+FRI", "0", "7", "sat,sun",
    ],
    &["*", "2026-2100", "2030", "1970-2100/7"],
];

/// Items that are wrong somewhere or everywhere.
const WRONG: &[&str] = &[
    "L", "W", "60", "32", "13", "8", "5#6", "*/0", "1-", ",", "FOO", "??",
];

/// A whitespace-separated spec: random pieces, or 5 to 7 cron fields that
/// are mostly right for their position (so a good share parses), with an
/// optional prefix; or `@every`/`@at` forms.
fn text() -> impl Strategy<Value = String> {
    let loose =
        prop::collection::vec(prop::sample::select(PIECES), 0..14).prop_map(|parts| parts.concat());
    let picks = prop::collection::vec((0usize..64, 0usize..64, 0u8..20), 7);
    let cron = (
        prop::sample::select(vec!["", "", "CRON_TZ=Europe/London ", "TZ=Mars/Base "]),
        5usize..=7,
        picks,
    )
        .prop_map(|(prefix, n, picks)| {
            // 5 fields skip the seconds position; 6 and 7 include it.
            let positions: Vec<usize> = if n == 5 {
                (1..6).collect()
            } else {
                (0..n).collect()
            };
            let fields: Vec<&str> = positions
                .iter()
                .zip(&picks)
                .map(|(&pos, &(a, b, wrong))| {
                    if wrong == 0 {
                        WRONG[b % WRONG.len()]
                    } else {
                        FIELDS[pos][a % FIELDS[pos].len()]
                    }
                })
                .collect();
            format!("{prefix}{}", fields.join(" "))
        });
    let every = (
        prop::sample::select(vec![
            "250ms", "1s", "90s", "1h30m", "1d", "0s", "5x", "1h1h",
        ]),
        prop::sample::select(vec!["", " +15m", " +2d", " -1s"]),
    )
        .prop_map(|(d, off)| format!("@every {d}{off}"));
    let at = prop::sample::select(vec![
        "2026-03-08T02:30:00",
        "2026-11-01T01:30:00",
        "2030-01-01T00:00:00Z",
        "2026-11-01T01:30:00-04:00",
        "1960-01-01T00:00:00Z",
        "2026-02-30T00:00:00",
    ])
    .prop_map(|t| format!("@at {t}"));
    prop_oneof![2 => loose, 6 => cron, 1 => every, 1 => at]
}

fn zone() -> impl Strategy<Value = Option<String>> {
    prop::sample::select(vec![
        None,
        Some("UTC".to_owned()),
        Some("America/New_York".to_owned()),
        Some("Australia/Lord_Howe".to_owned()),
        Some("Pacific/Apia".to_owned()),
        Some("Nowhere/Special".to_owned()),
    ])
}

fn policy() -> impl Strategy<Value = DstPolicy> {
    let gap = prop::option::of(prop::sample::select(vec![
        GapPolicy::Shift,
        GapPolicy::Skip,
    ]));
    let fold = prop::option::of(prop::sample::select(vec![
        FoldPolicy::First,
        FoldPolicy::Last,
        FoldPolicy::Both,
    ]));
    (gap, fold).prop_map(|(gap, fold)| DstPolicy { gap, fold })
}

const CODES: &[&str] = &[
    "invalid_spec",
    "invalid_duration",
    "invalid_time_zone",
    "interval_too_short",
    "spec_never_fires",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4096,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn parse_never_panics(
        text in text(),
        tz in zone(),
        dst in policy(),
        start_ms in 0i64..=Timestamp::MAX.as_millis(),
    ) {
        let opts = SpecOptions { tz, dst, ..SpecOptions::default() };
        match Spec::parse(&text, &opts) {
            Err(e) => {
                prop_assert!(CODES.contains(&e.code()), "unexpected code {}", e.code());
                prop_assert!(e.to_string().starts_with(e.code()), "{e}");
            }
            Ok(spec) => {
                let start = Timestamp::from_millis(start_ms).unwrap();
                if let Some(next) = spec.next_after(start) {
                    prop_assert!(next > start, "{text:?}: {next} <= {start}");
                }
                for occ in spec.preview(start, 3) {
                    prop_assert!(occ.at > start);
                }
            }
        }
    }
}
