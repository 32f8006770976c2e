//! The engine benchmarks' workloads, shared by `benches/engine.rs` and the
//! `fire_loop` example (a plain binary to run under `perf` and to compare
//! two builds by CPU time).
//!
//! Burst: every schedule fires every second of virtual time (60% `@every
//! 1s`, 20% `* * * * * *` in UTC, 10% in America/New_York, 10% in
//! Europe/London). Spread: cadences from one minute to one day at
//! pseudo-random offsets. All target one external queue `out` with
//! `overlap: allow`.

use chime_core::ScheduleDef;

/// 2026-01-01T00:00Z.
pub const START: i64 = 1_767_225_600_000;
/// Every fire's payload.
pub const PAYLOAD: &str = r#"{"n":1}"#;

/// Schedule `sched-{i:07}` of the burst mix.
pub fn burst_def(i: usize) -> ScheduleDef {
    burst_def_named(&format!("sched-{i:07}"), i)
}

/// Schedule `name` of the burst mix (spec by `i % 10`).
pub fn burst_def_named(name: &str, i: usize) -> ScheduleDef {
    let (spec, tz) = match i % 10 {
        0..=5 => ("@every 1s", None),
        6 | 7 => ("* * * * * *", None),
        8 => ("* * * * * *", Some("America/New_York")),
        _ => ("* * * * * *", Some("Europe/London")),
    };
    let tz = tz.map_or(String::new(), |z| format!(r#""tz":"{z}","#));
    let text = format!(
        r#"{{"name":"{name}","spec":"{spec}",{tz}"overlap":"allow","target":{{"queue":"out","payload":{PAYLOAD}}}}}"#
    );
    serde_json::from_str(&text).unwrap()
}

/// SplitMix64: a fixed pseudo-random function of `k` (no ambient randomness).
pub fn mix(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A realistic mix for the spread workload: cadences from one minute to
/// one day, half `@every` with a random offset, half cron (a fifth of
/// those zoned), each at a pseudo-random second.
pub fn spread_def(i: usize) -> ScheduleDef {
    const MINUTES: [u64; 10] = [1, 5, 10, 15, 30, 60, 120, 360, 720, 1440];
    let r = mix(i as u64);
    let minutes = MINUTES[(r % 10) as usize];
    let offset_s = (r >> 8) % (minutes * 60);
    let (sec, min) = (offset_s % 60, (offset_s / 60) % 60);
    let (spec, tz) = match (r >> 40) % 10 {
        0..=4 => (format!("@every {minutes}m +{offset_s}s"), None),
        k => {
            let spec = match minutes {
                m if m < 60 => format!("{sec} */{m} * * * *"),
                m if m < 1440 => format!("{sec} {min} */{} * * *", m / 60),
                _ => format!("{sec} {min} {} * * *", (offset_s / 3600) % 24),
            };
            let tz = match k {
                8 => Some("America/New_York"),
                9 => Some("Europe/London"),
                _ => None,
            };
            (spec, tz)
        }
    };
    let tz = tz.map_or(String::new(), |z| format!(r#""tz":"{z}","#));
    let text = format!(
        r#"{{"name":"spread-{i:07}","spec":"{spec}",{tz}"overlap":"allow","target":{{"queue":"out","payload":{PAYLOAD}}}}}"#
    );
    serde_json::from_str(&text).unwrap()
}
