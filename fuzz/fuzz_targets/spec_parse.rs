//! `Spec::parse` on arbitrary text, then `next_after`, `first_at_or_after`,
//! `count_between`, `nth_from` and `preview` checked against one short
//! `next_after` walk.
//!
//! Input layout (so corpus files stay readable): byte 0 picks the zone,
//! byte 1 the DST policy and `@every` minimum, bytes 2..5 the start instant,
//! the rest (UTF-8) is the spec text.
#![no_main]

use chime_core::{Spec, SpecOptions, Timestamp};
use libfuzzer_sys::fuzz_target;

const ZONES: &[Option<&str>] = &[
    None,
    Some("UTC"),
    Some("America/New_York"),
    Some("Europe/London"),
    Some("Australia/Lord_Howe"),
    Some("Africa/Casablanca"),
    Some("Pacific/Chatham"),
    Some("Europe/Dublin"),
    Some("Pacific/Apia"),
    Some("America/Sao_Paulo"),
    Some("Asia/Kolkata"),
    Some("Antarctica/Troll"),
    Some("Etc/GMT-14"),
    Some("No/Such_Zone"),
];

const GAPS: &[&str] = &["", r#""gap":"shift""#, r#""gap":"skip""#];
const FOLDS: &[&str] = &[
    "",
    r#""fold":"first""#,
    r#""fold":"last""#,
    r#""fold":"both""#,
];

/// Starts near interesting instants: the epoch, DST days of 2026 in the
/// zones above, Apia's skipped day, the end of year 9999.
const BASES: &[i64] = &[
    0,
    1_767_225_600_000,   // 2026-01-01T00:00Z
    1_772_935_200_000,   // 2026-03-08T02:00Z (US spring forward day)
    1_774_746_000_000,   // 2026-03-29T01:00Z (EU spring forward)
    1_792_630_800_000,   // 2026-10-25T01:00Z (EU fall back)
    1_793_512_800_000,   // 2026-11-01T06:00Z (US fall back)
    1_325_203_200_000,   // 2011-12-30T00:00Z (Apia skips 30 Dec)
    1_775_271_600_000,   // 2026-04-04T03:00Z (Lord Howe half-hour fold)
    253_402_300_799_999, // 9999-12-31T23:59:59.999Z
    253_370_764_800_000, // 9999-01-01T00:00Z
];

fn options(b0: u8, b1: u8) -> SpecOptions {
    let gap = GAPS[(b1 % 3) as usize];
    let fold = FOLDS[((b1 / 3) % 4) as usize];
    let sep = if gap.is_empty() || fold.is_empty() {
        ""
    } else {
        ","
    };
    let json = format!("{{{gap}{sep}{fold}}}");
    SpecOptions {
        tz: ZONES[(b0 as usize) % ZONES.len()].map(str::to_owned),
        dst: serde_json::from_str(&json).expect("dst policy json"),
        min_interval_ms: if b1 & 0x80 != 0 { 1 } else { 1000 },
        ..SpecOptions::default()
    }
}

fn start(b2: u8, b3: u8, b4: u8) -> Timestamp {
    let base = BASES[(b2 as usize) % BASES.len()];
    // -128..127 steps of 17 minutes 3.5 s (odd, so it lands off the grid)
    let step = i64::from(i16::from_le_bytes([b3, b4])) * 1_023_500 / 256;
    Timestamp::MIN.saturating_add_ms(base.saturating_add(step))
}

const WALK: usize = 12;

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 || data.len() > 512 {
        return;
    }
    let Ok(text) = std::str::from_utf8(&data[5..]) else {
        return;
    };
    let opts = options(data[0], data[1]);
    let from = start(data[2], data[3], data[4]);
    let spec = match Spec::parse(text, &opts) {
        Ok(s) => s,
        Err(e) => {
            // Typed errors only: a stable code and a message.
            assert!(!e.code().is_empty());
            let _ = e.to_string();
            return;
        }
    };
    let _ = (spec.every_ms(), spec.is_fixed_time(), spec.zone_name());

    // The reference: first_at_or_after(from), then next_after, WALK steps.
    let first = spec.first_at_or_after(from);
    if let Some(before) = from
        .as_millis()
        .checked_sub(1)
        .and_then(|m| Timestamp::from_millis(m).ok())
    {
        assert_eq!(
            first,
            spec.next_after(before),
            "first_at_or_after(t) != next_after(t - 1ms)"
        );
    }
    let mut walk = Vec::with_capacity(WALK);
    let mut cur = first;
    while let Some(b) = cur {
        assert!(b >= from, "boundary {b:?} before from {from:?}");
        if let Some(&last) = walk.last() {
            assert!(
                b > last,
                "next_after not strictly increasing: {last:?} then {b:?}"
            );
        }
        walk.push(b);
        if walk.len() == WALK {
            break;
        }
        cur = spec.next_after(b);
    }
    let ended = walk.len() < WALK; // the iteration itself ended

    // nth_from agrees with the walk.
    for (n, &b) in walk.iter().enumerate() {
        assert_eq!(
            spec.nth_from(from, n as u64),
            Some(b),
            "nth_from({from:?}, {n})"
        );
    }
    if ended {
        assert_eq!(
            spec.nth_from(from, walk.len() as u64),
            None,
            "nth_from past the end"
        );
    }

    // count_between agrees with the walk, for ends at, just before and
    // between walk boundaries (and before `from`).
    if let Ok(before_from) = Timestamp::from_millis(from.as_millis() - 1) {
        assert_eq!(
            spec.count_between(from, before_from),
            0,
            "count over an empty range"
        );
    }
    assert_eq!(
        spec.count_between(from, from),
        u64::from(walk.first() == Some(&from))
    );
    for (i, &b) in walk.iter().enumerate() {
        assert_eq!(
            spec.count_between(from, b),
            i as u64 + 1,
            "count_between({from:?}, {b:?})"
        );
        if let Ok(just_before) = Timestamp::from_millis(b.as_millis() - 1) {
            if just_before >= from {
                assert_eq!(
                    spec.count_between(from, just_before),
                    i as u64,
                    "count_between({from:?}, {just_before:?})"
                );
            }
        }
    }
    if ended {
        assert_eq!(
            spec.count_between(from, Timestamp::MAX),
            walk.len() as u64,
            "count to the end of time"
        );
    }

    // preview: the same instants, strictly after `from`.
    let preview = spec.preview(from, 6);
    let after: Vec<Timestamp> = walk.iter().copied().filter(|&b| b > from).take(6).collect();
    let got: Vec<Timestamp> = preview.iter().map(|o| o.at).collect();
    if after.len() == 6 || ended {
        assert_eq!(got, after, "preview differs from the next_after walk");
    }
});
