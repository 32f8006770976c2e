//! Differential test: chime's cron next-occurrence against the `croner`
//! crate (4.x, chrono + chrono-tz) over seeded random specs, zones and
//! start times.
//!
//! Every disagreement must fall into a named policy class, each checked by
//! its own condition (see `docs/differential.md`); the test fails on any
//! unclassified one and prints the counts per class. Fixed-time-ness comes
//! from the spec text (the independent oracle's parse), and a disagreement
//! is the tz databases' only if their offsets differ at a result instant
//! and the oracle, on chime's database, gives chime's answer.

use chime_core::Timestamp;
use chime_core::{DstPolicy, Spec, SpecOptions};
use chime_tests::oracle::Oracle;
use chime_tests::specgen::{GenSpec, Rng, cron_spec};
use chrono::{Offset, TimeZone};
use croner::{Cron, JobType};
use std::collections::BTreeMap;
use std::str::FromStr;

/// Cases run (each compares the next [`OCCURRENCES`] occurrences).
const CASES: usize = 15_000;
const OCCURRENCES: usize = 5;
const SEED: u64 = 0x00C4_1E5D_1FF0_0001;

/// The zones of the brief, plus some with unusual transitions: midnight
/// (Havana, Santiago), two-hour DST (Troll), negative DST (Dublin),
/// Ramadan-dependent DST (Casablanca), odd offsets (St Johns, Kathmandu).
const ZONES: [&str; 15] = [
    "UTC",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Pacific/Apia",
    "America/Sao_Paulo",
    "Europe/Moscow",
    "America/Havana",
    "America/Santiago",
    "Antarctica/Troll",
    "Europe/Dublin",
    "Africa/Casablanca",
    "America/St_Johns",
    "Asia/Kathmandu",
];

/// 1971-01-01T00:00:00Z and 2038-01-01T00:00:00Z.
const START_LO: i64 = 31_536_000;
const START_HI: i64 = 2_145_916_800;
const HOUR: i64 = 3600;
const DAY: i64 = 86_400;
/// chime's default horizon, in seconds (100 average Gregorian years).
const HORIZON_SECS: i64 = 100 * 31_556_952;

/// A policy class: why chime and croner may legitimately differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// The two tz databases (chrono-tz's vs jiff's bundled one) give the
    /// zone different offsets at chime's or croner's result instant.
    TzdbVersion,
    /// croner gives up on a spring-forward gap longer than its 2-hour
    /// search limit (Pacific/Apia skipping 2011-12-30) and ends the
    /// sequence; chime shifts or skips per policy.
    CronerLongGap,
    /// One side found nothing within chime's 100-year horizon.
    BeyondHorizon,
    /// The engines disagree on whether the spec is "fixed-time" (croner
    /// counts a step or wildcard that selects one value as an interval),
    /// and the result lies at a DST transition, where that decides the
    /// gap/fold behaviour.
    FixedTimeDefinition,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::TzdbVersion => "tzdb_version",
            Class::CronerLongGap => "croner_long_gap",
            Class::BeyondHorizon => "beyond_horizon",
            Class::FixedTimeDefinition => "fixed_time_definition",
        }
    }
}

/// One random case.
struct Case {
    spec: GenSpec,
    zone: &'static str,
    start: i64,
}

/// A zone in both libraries.
struct Zone {
    jiff: jiff::tz::TimeZone,
    chrono: chrono_tz::Tz,
    /// jiff's transitions 1971..2038 with (instant, offset before, after).
    transitions: Vec<(i64, i32, i32)>,
}

impl Zone {
    fn new(name: &str) -> Zone {
        let jiff = jiff::tz::TimeZone::get(name).unwrap();
        let chrono: chrono_tz::Tz = name.parse().unwrap();
        let lo = jiff::Timestamp::from_second(START_LO - 400 * DAY).unwrap();
        let mut transitions = Vec::new();
        let mut before = jiff.to_offset(lo).seconds();
        for tr in jiff.following(lo) {
            let at = tr.timestamp().as_second();
            if at > START_HI + 20 * 366 * DAY {
                break;
            }
            let after = tr.offset().seconds();
            if after != before {
                transitions.push((at, before, after));
            }
            before = after;
        }
        Zone {
            jiff,
            chrono,
            transitions,
        }
    }

    fn jiff_offset(&self, secs: i64) -> i32 {
        self.jiff
            .to_offset(jiff::Timestamp::from_second(secs).unwrap())
            .seconds()
    }

    fn chrono_offset(&self, secs: i64) -> i32 {
        let utc = chrono::DateTime::from_timestamp(secs, 0)
            .unwrap()
            .naive_utc();
        self.chrono
            .offset_from_utc_datetime(&utc)
            .fix()
            .local_minus_utc()
    }

    /// Transitions whose affected wall-clock span (the gap or fold, plus
    /// one hour of slack) contains `at`.
    fn transitions_near(&self, at: i64) -> impl Iterator<Item = &(i64, i32, i32)> {
        self.transitions.iter().filter(move |tr| {
            let span = i64::from((tr.2 - tr.1).abs()) + HOUR;
            (at - tr.0).abs() <= span
        })
    }
}

fn chime_occurrences(spec: &Spec, start: i64) -> Vec<i64> {
    let mut t = Timestamp::from_secs(start).unwrap();
    let mut out = Vec::with_capacity(OCCURRENCES);
    for _ in 0..OCCURRENCES {
        match spec.next_after(t) {
            Some(next) => {
                out.push(next.as_secs());
                t = next;
            }
            None => break,
        }
    }
    out
}

fn croner_occurrences(cron: &Cron, zone: &Zone, start: i64) -> Vec<i64> {
    let from = zone.chrono.timestamp_opt(start, 0).unwrap();
    cron.iter_after(from)
        .take(OCCURRENCES)
        .map(|dt| dt.timestamp())
        .collect()
}

/// Why the `k`-th occurrences differ, if a documented policy explains it.
/// `fixed` is whether the spec is fixed-time by the documented definition
/// (second, minute and hour each select one value), read from the spec
/// text by the independent oracle's parser — never chime's own
/// `is_fixed_time()`. The tz-database class is tried last and only when
/// the databases disagree where it matters (see [`tz_explains`]).
fn classify(
    case: &Case,
    zone: &Zone,
    fixed: bool,
    croner_fixed: bool,
    prev: i64,
    a: Option<i64>,
    b: Option<i64>,
) -> Option<Class> {
    let policy = match (a, b) {
        (Some(a), None) => {
            let long_gap = zone
                .transitions
                .iter()
                .any(|tr| tr.2 - tr.1 > 2 * 3600 && tr.0 > prev && tr.0 <= a + DAY);
            if long_gap {
                Some(Class::CronerLongGap)
            } else {
                (a - case.start > HORIZON_SECS - 2 * DAY).then_some(Class::BeyondHorizon)
            }
        }
        (None, Some(b)) => {
            (b - case.start > HORIZON_SECS - 2 * DAY).then_some(Class::BeyondHorizon)
        }
        (Some(a), Some(b)) => {
            let first = a.min(b);
            let at_transition = zone.transitions_near(first).next().is_some();
            (at_transition && fixed != croner_fixed).then_some(Class::FixedTimeDefinition)
        }
        (None, None) => None,
    };
    policy.or_else(|| {
        (tz_explains(zone, a, b) && oracle_agrees(case, prev, a)).then_some(Class::TzdbVersion)
    })
}

/// Whether the independent oracle, reading the same (jiff-bundled) tz
/// database as chime, gives chime's answer `a` after `prev`: a difference
/// is the database's only if chime follows its own database correctly.
fn oracle_agrees(case: &Case, prev: i64, a: Option<i64>) -> bool {
    let o = Oracle::parse(&case.spec.text, Some(case.zone), DstPolicy::default(), 100)
        .unwrap_or_else(|e| panic!("the oracle rejects {:?}: {e}", case.spec.text));
    o.next_after(prev * 1000) == a.map(|a| a * 1000)
}

/// Whether the two tz databases explain chime's `a` against croner's `b`:
/// they give the zone different offsets at one of the two result instants
/// (so the wall-clock time one engine matched is not the same wall-clock
/// time for the other — typically both results are the same wall-clock
/// time, each under its own database's offset). Offsets that differ only
/// somewhere else (another day, another month) explain nothing.
fn tz_explains(zone: &Zone, a: Option<i64>, b: Option<i64>) -> bool {
    let differs = |t: i64| zone.jiff_offset(t) != zone.chrono_offset(t);
    a.is_some_and(differs) || b.is_some_and(differs)
}

/// Whether `a` (chime) and `b` (croner) are the same wall-clock time, each
/// under its own database's offset (reported, not a condition by itself).
fn same_wall_clock(zone: &Zone, a: i64, b: i64) -> bool {
    a + i64::from(zone.jiff_offset(a)) == b + i64::from(zone.chrono_offset(b))
}

fn gen_case(rng: &mut Rng, zones: &BTreeMap<&'static str, Zone>) -> Case {
    let spec = cron_spec(rng);
    let zone = *rng.pick(&ZONES);
    let transitions = &zones[zone].transitions;
    let in_range: Vec<i64> = transitions
        .iter()
        .map(|tr| tr.0)
        .filter(|&t| t > START_LO + 3 * DAY && t < START_HI)
        .collect();
    // Half the starts lie shortly before a transition (within two hours,
    // or within three days), so DST behaviour is exercised even by dense
    // specs; the rest are uniform over 1971..2038.
    let start = if !in_range.is_empty() && rng.percent(50) {
        let before = if rng.percent(50) { 2 * HOUR } else { 3 * DAY };
        rng.pick(&in_range) - rng.range_i64(0, before)
    } else {
        rng.range_i64(START_LO, START_HI)
    };
    Case { spec, zone, start }
}

#[test]
fn chime_agrees_with_croner_up_to_documented_policy() {
    let zones: BTreeMap<&'static str, Zone> = ZONES.iter().map(|&z| (z, Zone::new(z))).collect();
    let mut rng = Rng::new(SEED);
    let mut counts: BTreeMap<Class, usize> = BTreeMap::new();
    let mut examples: BTreeMap<Class, Vec<String>> = BTreeMap::new();
    let mut by_zone: BTreeMap<(Class, &str), usize> = BTreeMap::new();
    let mut years: BTreeMap<Class, (i16, i16)> = BTreeMap::new();
    let mut unclassified = Vec::new();
    let (mut cases, mut agreed, mut compared, mut near_transition) = (0usize, 0, 0, 0);
    let mut tzdb_same_wall = 0usize;
    for _ in 0..CASES {
        let case = gen_case(&mut rng, &zones);
        let zone = &zones[case.zone];
        let opts = SpecOptions {
            tz: Some(case.zone.to_string()),
            ..SpecOptions::default()
        };
        let spec = Spec::parse(&case.spec.text, &opts)
            .unwrap_or_else(|e| panic!("chime rejects {:?}: {e}", case.spec.text));
        let cron = Cron::from_str(&case.spec.text)
            .unwrap_or_else(|e| panic!("croner rejects {:?}: {e:?}", case.spec.text));
        let ours = chime_occurrences(&spec, case.start);
        let theirs = croner_occurrences(&cron, zone, case.start);
        cases += 1;
        compared += ours.len().max(theirs.len());
        near_transition += ours
            .iter()
            .chain(&theirs)
            .filter(|&&t| zone.transitions_near(t).next().is_some())
            .count();
        let Some(k) = (0..OCCURRENCES).find(|&k| ours.get(k) != theirs.get(k)) else {
            agreed += 1;
            continue;
        };
        let prev = if k == 0 { case.start } else { ours[k - 1] };
        let (a, b) = (ours.get(k).copied(), theirs.get(k).copied());
        let croner_fixed = cron.determine_job_type() == JobType::FixedTime;
        let fixed = fixed_from_text(&case.spec.text);
        let detail = format!(
            "{:?} in {} after {} (#{k}): chime {} croner {} (fixed: by the text {fixed}, \
             croner {croner_fixed})",
            case.spec.text,
            case.zone,
            fmt_secs(prev),
            a.map_or("none".into(), fmt_secs),
            b.map_or("none".into(), fmt_secs),
        );
        match classify(&case, zone, fixed, croner_fixed, prev, a, b) {
            Some(class) => {
                if class == Class::TzdbVersion
                    && let (Some(a), Some(b)) = (a, b)
                    && same_wall_clock(zone, a, b)
                {
                    tzdb_same_wall += 1;
                }
                *counts.entry(class).or_default() += 1;
                *by_zone.entry((class, case.zone)).or_default() += 1;
                let year = year_of(a.or(b).unwrap_or(prev));
                let span = years.entry(class).or_insert((year, year));
                *span = (span.0.min(year), span.1.max(year));
                let list = examples.entry(class).or_default();
                if list.len() < 3 {
                    list.push(detail);
                }
            }
            None => unclassified.push(detail),
        }
    }
    println!(
        "differential vs croner: {cases} cases, {compared} occurrences compared \
         ({near_transition} results within a gap/fold span + 1 h), {agreed} cases agree"
    );
    for (class, n) in &counts {
        let zones: Vec<String> = by_zone
            .iter()
            .filter(|((c, _), _)| c == class)
            .map(|((_, z), n)| format!("{z} {n}"))
            .collect();
        let (y0, y1) = years[class];
        println!(
            "  {:<24} {n} ({}; years {y0}..={y1})",
            class.name(),
            zones.join(", ")
        );
        for ex in &examples[class] {
            println!("      e.g. {ex}");
        }
    }
    println!("  {:<24} {}", "unclassified", unclassified.len());
    println!(
        "  (tzdb_version cases whose two results are the same wall-clock time: {tzdb_same_wall})"
    );
    println!(
        "  tzdb: chime (jiff bundled) {}, croner (chrono-tz) {}",
        chime_core::tzdb_version(),
        chrono_tz::IANA_TZDB_VERSION
    );
    for ex in unclassified.iter().take(40) {
        println!("      {ex}");
    }
    assert!(cases >= 10_000, "only {cases} cases");
    assert!(
        unclassified.is_empty(),
        "{} unclassified disagreements with croner, first: {:?}",
        unclassified.len(),
        unclassified.first()
    );
}

/// Fixed-time by the documented definition, from the spec text alone:
/// the independent oracle's parse of the second, minute and hour fields
/// each selects exactly one value (`30 0-1/2 * * *` is fixed-time).
fn fixed_from_text(text: &str) -> bool {
    Oracle::parse(text, None, DstPolicy::default(), 100)
        .unwrap_or_else(|e| panic!("the oracle rejects {text:?}: {e}"))
        .is_fixed_time()
}

fn year_of(secs: i64) -> i16 {
    jiff::tz::TimeZone::UTC
        .to_datetime(jiff::Timestamp::from_second(secs).unwrap())
        .year()
}

fn fmt_secs(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).unwrap().to_string()
}

/// The DESIGN's measured croner behaviour (America/New_York), checked on
/// both engines, and one hand-made case per non-tzdb class, checked to be
/// classified as intended.
#[test]
fn design_examples_and_class_probes() {
    let ny = Zone::new("America/New_York");
    let run = |text: &str, zone: &Zone, tz: &str, start: &str| -> (Vec<i64>, Vec<i64>) {
        let start = jiff::Timestamp::from_str(start).unwrap().as_second();
        let opts = SpecOptions {
            tz: Some(tz.to_string()),
            ..SpecOptions::default()
        };
        let spec = Spec::parse(text, &opts).unwrap();
        let cron = Cron::from_str(text).unwrap();
        (
            chime_occurrences(&spec, start),
            croner_occurrences(&cron, zone, start),
        )
    };
    let secs = |s: &str| jiff::Timestamp::from_str(s).unwrap().as_second();
    // `30 2 * * *` on 2026-03-08 fires at 07:00Z (shifted out of the gap).
    let (ours, theirs) = run(
        "30 2 * * *",
        &ny,
        "America/New_York",
        "2026-03-08T00:00:00Z",
    );
    assert_eq!(ours[0], secs("2026-03-08T07:00:00Z"));
    assert_eq!(ours, theirs);
    // `0,30 2 * * *` does not fire that day.
    let (ours, theirs) = run(
        "0,30 2 * * *",
        &ny,
        "America/New_York",
        "2026-03-08T00:00:00Z",
    );
    assert_eq!(ours[0], secs("2026-03-09T06:00:00Z"));
    assert_eq!(ours, theirs);
    // `30 1 * * *` on 2026-11-01 fires once (05:30Z).
    let (ours, theirs) = run(
        "30 1 * * *",
        &ny,
        "America/New_York",
        "2026-11-01T00:00:00Z",
    );
    assert_eq!(
        &ours[..2],
        &[secs("2026-11-01T05:30:00Z"), secs("2026-11-02T06:30:00Z")]
    );
    assert_eq!(ours, theirs);
    // `0,20,40 1 * * *` fires six times (05:00-05:40Z and 06:00-06:40Z).
    let (ours, theirs) = run(
        "0,20,40 1 * * *",
        &ny,
        "America/New_York",
        "2026-11-01T04:00:00Z",
    );
    let want = ["05:00", "05:20", "05:40", "06:00", "06:20"];
    let want: Vec<i64> = want
        .iter()
        .map(|hm| secs(&format!("2026-11-01T{hm}:00Z")))
        .collect();
    assert_eq!(ours, want);
    assert_eq!(ours, theirs);

    // Probes: each disagreement lands in its class.
    let probe = |text: &str, tz: &str, start: &str| -> Option<Class> {
        let zone = Zone::new(tz);
        let (ours, theirs) = run(text, &zone, tz, start);
        let k = (0..OCCURRENCES).find(|&k| ours.get(k) != theirs.get(k))?;
        let case = Case {
            spec: GenSpec {
                text: text.to_string(),
                fields: 5,
            },
            zone: Box::leak(tz.to_string().into_boxed_str()),
            start: secs(start),
        };
        let croner_fixed = Cron::from_str(text).unwrap().determine_job_type() == JobType::FixedTime;
        let prev = if k == 0 { case.start } else { ours[k - 1] };
        classify(
            &case,
            &zone,
            fixed_from_text(text),
            croner_fixed,
            prev,
            ours.get(k).copied(),
            theirs.get(k).copied(),
        )
    };
    // Apia skipped 2011-12-30: chime shifts 09:00 to the transition,
    // croner's 2-hour gap search gives up.
    assert_eq!(
        probe("0 9 * * *", "Pacific/Apia", "2011-12-29T12:00:00Z"),
        Some(Class::CronerLongGap)
    );
    // Casablanca in 2032: tzdb 2026f and 2025b predict Ramadan differently.
    assert_eq!(
        probe(
            "34-50/13 10,6 * * *",
            "Africa/Casablanca",
            "2032-08-02T00:04:25Z"
        ),
        Some(Class::TzdbVersion)
    );
    // Hour `0-1/2` selects only 0: fixed-time for chime (shift out of São
    // Paulo's midnight gap on 2018-11-04), an interval for croner (skip).
    assert_eq!(
        probe(
            "30 0-1/2 * * *",
            "America/Sao_Paulo",
            "2018-11-03T12:00:00Z"
        ),
        Some(Class::FixedTimeDefinition)
    );
}
