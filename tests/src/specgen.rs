//! A seeded generator of random-but-valid cron specs for the differential
//! and property tests.
//!
//! The specs stay inside the grammar that both chime and the `croner` crate
//! (4.x) accept with the same meaning: 5, 6 or 7 fields; `*`, `?`, lists,
//! ranges, `*/s` and `a-b/s` steps; month and weekday names; `L`, `LW` and
//! `nW` in day-of-month; `nL` and `n#k` in day-of-week; the `+` (AND)
//! modifier. Left out on purpose (see `docs/differential.md`): `a/s` (croner
//! rejects it unless "sloppy ranges" are on), `L-n` (croner has no such
//! rule), `L` and `LW` in the same field (croner then honours only `LW`),
//! `L` alone in day-of-week, and macros (trivial).

/// A small deterministic PRNG (SplitMix64): same seed, same sequence, on
/// every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(u64::from(hi - lo + 1)) as u32
    }

    /// Uniform in `lo..hi` for `i64`.
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64) as i64
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A generated spec and what the tests need to know about its shape.
#[derive(Clone, Debug)]
pub struct GenSpec {
    /// The cron text, e.g. `0 */15 9-17 * * MON-FRI`.
    pub text: String,
    /// 5, 6 or 7.
    pub fields: usize,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// A step for a field with values `min..=max`, biased to common ones.
fn step(rng: &mut Rng, min: u32, max: u32) -> u32 {
    let span = max - min + 1;
    let common = [2u32, 3, 4, 5, 6, 10, 12, 15, 20, 30];
    let fitting: Vec<u32> = common.iter().copied().filter(|&s| s < span).collect();
    if !fitting.is_empty() && rng.percent(80) {
        *rng.pick(&fitting)
    } else {
        rng.range(2, span.max(2))
    }
}

/// One list item of a plain field: `n`, `a-b`, `*/s` or `a-b/s`.
fn plain_item(rng: &mut Rng, min: u32, max: u32, names: Option<&[&str]>) -> String {
    let name = |rng: &mut Rng, v: u32| -> String {
        match names {
            Some(names) if rng.percent(40) => names[(v - min) as usize % names.len()].to_string(),
            _ => v.to_string(),
        }
    };
    match rng.below(10) {
        0..=4 => {
            let v = rng.range(min, max);
            name(rng, v)
        }
        5..=6 => {
            let a = rng.range(min, max);
            let b = rng.range(a, max);
            format!("{}-{}", name(rng, a), name(rng, b))
        }
        7..=8 => format!("*/{}", step(rng, min, max)),
        _ => {
            let a = rng.range(min, max);
            let b = rng.range(a, max);
            format!("{a}-{b}/{}", step(rng, min, max))
        }
    }
}

/// A plain field: `*` with probability `star`%, else a list of 1-3 items.
fn plain_field(rng: &mut Rng, min: u32, max: u32, star: u64, names: Option<&[&str]>) -> String {
    if rng.percent(star) {
        return "*".to_string();
    }
    let n = *rng.pick(&[1, 1, 1, 2, 2, 3]);
    let items: Vec<String> = (0..n).map(|_| plain_item(rng, min, max, names)).collect();
    items.join(",")
}

fn dom_field(rng: &mut Rng) -> String {
    match rng.below(100) {
        0..=49 => "*".to_string(),
        50..=54 => "?".to_string(),
        55..=61 => "L".to_string(),
        62..=65 => "LW".to_string(),
        66..=71 => format!("{}W", rng.range(1, 31)),
        72..=75 => {
            // A list mixing plain days with one special rule.
            let special = if rng.percent(50) {
                "L".to_string()
            } else {
                format!("{}W", rng.range(1, 31))
            };
            format!("{},{special}", rng.range(1, 28))
        }
        76..=85 => {
            let hi = if rng.percent(80) { 28 } else { 31 };
            rng.range(1, hi).to_string()
        }
        _ => plain_field(rng, 1, 31, 0, None),
    }
}

fn dow_item(rng: &mut Rng) -> String {
    let day = |rng: &mut Rng| -> String {
        let v = rng.range(0, 7);
        if rng.percent(40) {
            WEEKDAYS[v as usize % 7].to_string()
        } else {
            v.to_string()
        }
    };
    match rng.below(10) {
        0..=3 => day(rng),
        4..=5 => {
            let a = rng.range(0, 6);
            let b = rng.range(a, 7);
            if a >= 1 && rng.percent(40) {
                // Names; a Sunday closing a range is 7 (`FRI-SUN`). Not
                // `SUN-…`: croner rewrites `-SUN` before `SUN`, so
                // `SUN-SUN` would become `0-7` there.
                format!("{}-{}", WEEKDAYS[a as usize], WEEKDAYS[b as usize % 7])
            } else {
                format!("{a}-{b}")
            }
        }
        6 => format!("*/{}", rng.range(2, 4)),
        7..=8 => format!("{}#{}", day(rng), rng.range(1, 5)),
        _ => format!("{}L", day(rng)),
    }
}

fn dow_field(rng: &mut Rng, dom_restricted: bool) -> String {
    match rng.below(100) {
        0..=49 => "*".to_string(),
        50..=54 => "?".to_string(),
        _ => {
            let n = *rng.pick(&[1, 1, 2, 3]);
            let items: Vec<String> = (0..n).map(|_| dow_item(rng)).collect();
            let plus = if dom_restricted && rng.percent(30) {
                "+"
            } else {
                ""
            };
            format!("{plus}{}", items.join(","))
        }
    }
}

fn year_field(rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=3 => "*".to_string(),
        4..=5 => rng.range(1971, 2045).to_string(),
        6..=7 => {
            let a = rng.range(1971, 2040);
            format!("{a}-{}", rng.range(a, 2045))
        }
        _ => format!("{},{}", rng.range(1971, 2010), rng.range(2010, 2045)),
    }
}

/// A random cron spec in the grammar both chime and croner accept.
pub fn cron_spec(rng: &mut Rng) -> GenSpec {
    let fields = match rng.below(10) {
        0..=5 => 5,
        6..=8 => 6,
        _ => 7,
    };
    let mut parts = Vec::with_capacity(fields);
    if fields >= 6 {
        parts.push(if rng.percent(40) {
            "0".to_string()
        } else {
            plain_field(rng, 0, 59, 10, None)
        });
    }
    parts.push(plain_field(rng, 0, 59, 15, None));
    parts.push(plain_field(rng, 0, 23, 25, None));
    let dom = dom_field(rng);
    let dom_restricted = dom != "*" && dom != "?";
    parts.push(dom);
    parts.push(plain_field(rng, 1, 12, 65, Some(&MONTHS)));
    parts.push(dow_field(rng, dom_restricted));
    if fields == 7 {
        parts.push(year_field(rng));
    }
    GenSpec {
        text: parts.join(" "),
        fields,
    }
}

/// A random spec in chime's whole grammar: [`cron_spec`] plus, now and
/// then, what croner reads differently or rejects (so the differential
/// test leaves it out): `a/s` open steps (in day-of-week they end at 6),
/// `L-n` and `L` with `LW` in day-of-month, and macros. For the property
/// tests against the independent oracle.
pub fn cron_spec_full(rng: &mut Rng) -> GenSpec {
    if rng.percent(3) {
        let m = *rng.pick(&[
            "@yearly",
            "@annually",
            "@monthly",
            "@weekly",
            "@daily",
            "@midnight",
            "@hourly",
        ]);
        return GenSpec {
            text: m.to_string(),
            fields: 5,
        };
    }
    let g = cron_spec(rng);
    let mut parts: Vec<String> = g.text.split(' ').map(str::to_string).collect();
    let off = usize::from(g.fields >= 6);
    if rng.percent(15) {
        // an open step in the minute (or second) field
        let i = if off == 1 && rng.percent(50) { 0 } else { off };
        parts[i] = format!("{}/{}", rng.range(0, 59), rng.range(1, 30));
    }
    if rng.percent(10) {
        parts[off + 1] = format!("{}/{}", rng.range(0, 23), rng.range(1, 12));
    }
    if rng.percent(12) {
        parts[off + 2] = match rng.below(3) {
            0 => format!("L-{}", rng.range(1, 30)),
            1 => "L,LW".to_string(),
            _ => format!("{},L-{}", rng.range(1, 28), rng.range(1, 5)),
        };
    }
    if rng.percent(12) {
        let plus = if parts[off + 2] != "*" && parts[off + 2] != "?" && rng.percent(30) {
            "+"
        } else {
            ""
        };
        let start = *rng.pick(&["0", "1", "3", "5", "6", "7", "MON", "FRI", "SUN"]);
        parts[off + 4] = format!("{plus}{start}/{}", rng.range(1, 7));
    }
    GenSpec {
        text: parts.join(" "),
        fields: g.fields,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        let a: Vec<String> = (0..5).map(|i| cron_spec(&mut Rng::new(i)).text).collect();
        let b: Vec<String> = (0..5).map(|i| cron_spec(&mut Rng::new(i)).text).collect();
        assert_eq!(a, b);
    }
}
