//! Spec engine benchmarks: parse time and next-occurrence time for chime,
//! side by side with the `croner` (4.x), `cron` (0.17) and `saffron` (0.1)
//! crates on every spec each supports. Results and the command line are in
//! `BENCHMARKS.md`.
//!
//! Next-occurrence is measured from a start that advances through a
//! precomputed array of 1,024 instants (2026-01-01 plus multiples of
//! 7,919 s, about three months in all), so no call is constant-folded and
//! zoned specs cross the 2026-03-08 spring-forward transition.

use chime_core::Timestamp;
use chime_core::{Spec, SpecOptions};
use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::str::FromStr;

const NY: &str = "America/New_York";
const STARTS: usize = 1024;
/// 2026-01-01T00:00:00Z.
const BASE_SECS: i64 = 1_767_225_600;

/// One benchmarked spec, as each library writes it (`None`: unsupported).
struct Case {
    label: &'static str,
    chime: &'static str,
    croner: Option<&'static str>,
    /// `cron` needs seconds first and numbers weekdays 1-7 from Sunday, so
    /// weekdays are written as names.
    cron: Option<&'static str>,
    /// `saffron` is 5-field, UTC only; weekdays 1-7 from Sunday.
    saffron: Option<&'static str>,
    /// Also measured in America/New_York.
    zoned: bool,
}

const CASES: [Case; 8] = [
    Case {
        label: "every_5_min",
        chime: "*/5 * * * *",
        croner: Some("*/5 * * * *"),
        cron: Some("0 */5 * * * *"),
        saffron: Some("*/5 * * * *"),
        zoned: true,
    },
    Case {
        label: "weekdays_9am",
        chime: "0 9 * * 1-5",
        croner: Some("0 9 * * 1-5"),
        cron: Some("0 0 9 * * MON-FRI"),
        saffron: Some("0 9 * * MON-FRI"),
        zoned: true,
    },
    Case {
        label: "last_day",
        chime: "0 0 L * *",
        croner: Some("0 0 L * *"),
        cron: None, // no `L`
        saffron: Some("0 0 L * *"),
        zoned: true,
    },
    Case {
        label: "third_friday",
        chime: "0 12 * * 5#3",
        croner: Some("0 12 * * 5#3"),
        cron: None, // no `#`
        saffron: Some("0 12 * * FRI#3"),
        zoned: true,
    },
    Case {
        label: "feb_29",
        chime: "0 0 29 2 *",
        croner: Some("0 0 29 2 *"),
        cron: Some("0 0 0 29 2 *"),
        saffron: Some("0 0 29 2 *"),
        zoned: true,
    },
    Case {
        label: "daily_0230",
        chime: "30 2 * * *",
        croner: Some("30 2 * * *"),
        cron: Some("0 30 2 * * *"),
        saffron: Some("30 2 * * *"),
        zoned: true,
    },
    Case {
        label: "every_10_s",
        chime: "*/10 * * * * *",
        croner: Some("*/10 * * * * *"),
        cron: Some("*/10 * * * * *"),
        saffron: None, // no seconds field
        zoned: true,
    },
    Case {
        label: "every_90s",
        chime: "@every 90s",
        croner: None,
        cron: None,
        saffron: None,
        zoned: false, // `@every` is zone-independent
    },
];

fn starts_secs() -> Vec<i64> {
    (0..STARTS as i64).map(|i| BASE_SECS + i * 7_919).collect()
}

fn chime_spec(text: &str, tz: Option<&str>) -> Spec {
    let opts = SpecOptions {
        tz: tz.map(str::to_string),
        ..SpecOptions::default()
    };
    Spec::parse(text, &opts).expect("chime parses every benchmarked spec")
}

fn parse_benches(c: &mut Criterion) {
    for case in &CASES {
        let mut g = c.benchmark_group(format!("parse/{}", case.label));
        let opts = SpecOptions::default();
        g.bench_function("chime", |b| {
            b.iter(|| Spec::parse(black_box(case.chime), &opts).unwrap())
        });
        if let Some(text) = case.croner {
            g.bench_function("croner", |b| {
                b.iter(|| croner::Cron::from_str(black_box(text)).unwrap())
            });
        }
        if let Some(text) = case.cron {
            g.bench_function("cron", |b| {
                b.iter(|| cron::Schedule::from_str(black_box(text)).unwrap())
            });
        }
        if let Some(text) = case.saffron {
            g.bench_function("saffron", |b| {
                b.iter(|| black_box(text).parse::<saffron::Cron>().unwrap())
            });
        }
        g.finish();
    }
}

fn next_utc_benches(c: &mut Criterion) {
    let secs = starts_secs();
    let utc: Vec<DateTime<Utc>> = secs
        .iter()
        .map(|&s| Utc.timestamp_opt(s, 0).unwrap())
        .collect();
    for case in &CASES {
        let mut g = c.benchmark_group(format!("next_utc/{}", case.label));
        next_common(&mut g, case, None, &utc);
        if let Some(text) = case.saffron {
            let cron: saffron::Cron = text.parse().unwrap();
            let mut i = 0usize;
            g.bench_function("saffron", |b| {
                b.iter(|| {
                    i = (i + 1) % STARTS;
                    cron.next_after(black_box(utc[i]))
                })
            });
        }
        g.finish();
    }
}

fn next_zoned_benches(c: &mut Criterion) {
    let tz: Tz = NY.parse().unwrap();
    let ny: Vec<DateTime<Tz>> = starts_secs()
        .iter()
        .map(|&s| tz.timestamp_opt(s, 0).unwrap())
        .collect();
    for case in CASES.iter().filter(|case| case.zoned) {
        let mut g = c.benchmark_group(format!("next_ny/{}", case.label));
        next_common(&mut g, case, Some(NY), &ny);
        g.finish();
    }
}

/// Next occurrence with chime (in `zone`), croner and cron (from the same
/// instants as chrono `DateTime`s in that zone) for one case.
fn next_common<Z: TimeZone>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    case: &Case,
    zone: Option<&str>,
    starts: &[DateTime<Z>],
) {
    let chime_starts: Vec<Timestamp> = starts
        .iter()
        .map(|t| Timestamp::from_secs(t.timestamp()).unwrap())
        .collect();
    let spec = chime_spec(case.chime, zone);
    let mut i = 0usize;
    g.bench_function("chime", |b| {
        b.iter(|| {
            i = (i + 1) % STARTS;
            spec.next_after(black_box(chime_starts[i]))
        })
    });
    if let Some(text) = case.croner {
        let cron = croner::Cron::from_str(text).unwrap();
        g.bench_function("croner", |b| {
            b.iter(|| {
                i = (i + 1) % STARTS;
                cron.find_next_occurrence(black_box(&starts[i]), false).ok()
            })
        });
    }
    if let Some(text) = case.cron {
        let schedule = cron::Schedule::from_str(text).unwrap();
        g.bench_function("cron", |b| {
            b.iter(|| {
                i = (i + 1) % STARTS;
                schedule.after(black_box(&starts[i])).next()
            })
        });
    }
}

/// Ten years of seconds (2026-01-01 plus the start offset), in ms.
const TEN_YEARS_MS: i64 = 3_652 * 86_400_000;

/// `Spec::count_between` and `Spec::nth_from` over long ranges: what
/// catch-up pays to count a backlog after a clock jump. Starts advance
/// through the same array as next-occurrence (so ranges cross DST
/// transitions at different points).
fn count_benches(c: &mut Criterion) {
    let starts: Vec<Timestamp> = starts_secs()
        .iter()
        .map(|&s| Timestamp::from_secs(s).unwrap())
        .collect();
    let cases = [
        ("every_second_10y", "* * * * * *", TEN_YEARS_MS),
        ("daily_0230_10y", "30 2 * * *", TEN_YEARS_MS),
        ("every_second_1970_9999", "* * * * * *", i64::MAX),
    ];
    for (label, text, span_ms) in cases {
        let mut g = c.benchmark_group(format!("count/{label}"));
        for (zone_label, zone) in [("utc", None), ("ny", Some(NY))] {
            let spec = chime_spec(text, zone);
            let mut i = 0usize;
            g.bench_function(zone_label, |b| {
                b.iter(|| {
                    i = (i + 1) % STARTS;
                    let (from, until) = if span_ms == i64::MAX {
                        (Timestamp::MIN, Timestamp::MAX)
                    } else {
                        (starts[i], starts[i].saturating_add_ms(span_ms))
                    };
                    spec.count_between(black_box(from), black_box(until))
                })
            });
        }
        g.finish();
    }
    let mut g = c.benchmark_group("nth/every_second_10y");
    for (zone_label, zone) in [("utc", None), ("ny", Some(NY))] {
        let spec = chime_spec("* * * * * *", zone);
        let mut i = 0usize;
        g.bench_function(zone_label, |b| {
            b.iter(|| {
                i = (i + 1) % STARTS;
                spec.nth_from(black_box(starts[i]), black_box(315_000_000))
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    parse_benches,
    next_utc_benches,
    next_zoned_benches,
    count_benches
);
criterion_main!(benches);
