//! An independent boundary oracle: which instants a spec selects, computed
//! from the spec text alone.
//!
//! Nothing here calls chime's spec code (`Spec`, `CronSpec`, its parser,
//! matchers, zone table or walk): the cron grammar of `docs/spec.md` is
//! parsed again, civil dates come from a calendar written here, and DST is
//! applied from `docs/dst.md` with jiff's own answer to "does this civil
//! time exist, once or twice?" (`TimeZone::to_ambiguous_timestamp`). Only
//! the policy enums (`GapPolicy`, `FoldPolicy`) are shared, as plain data.
//!
//! Two ways to enumerate a cron spec, checked against each other in
//! `tests/spec/oracle_self.rs`:
//!
//! - [`Oracle::scan`]: the brute force — walk every civil second (or every
//!   civil minute when the second field is one value) whose instant could
//!   fall in the window, test it against the parsed fields, and resolve it
//!   in the zone (unique, in a gap, in a fold) under the policy;
//! - [`Oracle::between`] / [`Oracle::next_after`]: the same rules, but only
//!   the civil days whose year, month and day match are expanded (hours ×
//!   minutes × seconds), so multi-year ranges stay cheap. The accounting
//!   grid of the checker uses this.
//!
//! Supported: everything in `docs/spec.md` — 5, 6 and 7 fields, `*`, `?`,
//! lists, ranges, `*/s`, `a-b/s`, `a/s` (the day-of-week open step ends at
//! 6; `7/s` is Sunday alone), month and weekday names, weekday 7 and a
//! closing `SUN` as Sunday, `L`, `L-n`, `LW`, `nW` in day-of-month, `nL`,
//! `n#k`, `n#L` (also on ranges) and the `+` (AND) prefix in day-of-week,
//! years 1970–9999, the macros, `CRON_TZ=`/`TZ=` prefixes; `@every` with
//! an offset; `@at` (RFC 3339 or civil in the zone). Error messages are
//! not reproduced: the oracle only needs to reject what is clearly invalid.

use chime_core::{DstPolicy, FoldPolicy, GapPolicy};
use jiff::tz::{AmbiguousOffset, TimeZone};
use std::cell::Cell;

/// The last second chime can represent (end of year 9999, UTC).
pub const LAST_SECS: i64 = 253_402_300_799;
const LAST_MS: i64 = LAST_SECS * 1000 + 999;
const DAY: i64 = 86_400;
/// An average Gregorian year in seconds (the horizon's unit).
const YEAR_SECS: i64 = 31_556_952;

// ---------------------------------------------------------------------
// Calendar (proleptic Gregorian; days since 1970-01-01).

/// Days since 1970-01-01 of a civil date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
fn weekday(day: i64) -> u32 {
    (day + 4).rem_euclid(7) as u32
}

// ---------------------------------------------------------------------
// Cron fields.

/// A parsed cron expression: plain value sets plus the day rules.
#[derive(Clone, Debug)]
pub struct Cron {
    secs: u64,
    mins: u64,
    hours: u64,
    /// Days 1..=31 (bit d).
    dom: u64,
    dom_last: bool,
    /// `L-n`: bit n.
    dom_last_minus: u64,
    dom_lw: bool,
    /// `nW`: bit n.
    dom_w: u64,
    dom_restricted: bool,
    months: u64,
    /// Weekdays 0..=6 (bit d).
    dow: u64,
    /// `#k`: weekday bits per k (index 1..=5).
    dow_nth: [u64; 6],
    /// `nL` / `n#L`: weekday bits.
    dow_last: u64,
    dow_restricted: bool,
    and: bool,
    /// Years 1970..=9999; `None` = every year.
    years: Option<Vec<bool>>,
    /// The zone named by a `CRON_TZ=`/`TZ=` prefix.
    prefix_zone: Option<String>,
}

#[derive(Clone, Copy)]
struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
    /// First value a name stands for (months: 1, weekdays: 0).
    name_base: u32,
}

const MONTH_NAMES: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const SECOND: Field = Field {
    name: "second",
    min: 0,
    max: 59,
    names: &[],
    name_base: 0,
};
const MINUTE: Field = Field {
    name: "minute",
    ..SECOND
};
const HOUR: Field = Field {
    name: "hour",
    max: 23,
    ..SECOND
};
const DOM: Field = Field {
    name: "day-of-month",
    min: 1,
    max: 31,
    ..SECOND
};
const MONTH: Field = Field {
    name: "month",
    min: 1,
    max: 12,
    names: &MONTH_NAMES,
    name_base: 1,
};
const DOW: Field = Field {
    name: "day-of-week",
    min: 0,
    max: 7,
    names: &DAY_NAMES,
    name_base: 0,
};
const YEAR: Field = Field {
    name: "year",
    min: 1970,
    max: 9999,
    names: &[],
    name_base: 0,
};

type Res<T> = Result<T, String>;

/// A number or a name; `closing` is true for the end of a range (a
/// weekday `SUN` there is 7).
fn value(f: Field, s: &str, closing: bool) -> Res<u32> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let v: u32 = s
            .parse()
            .map_err(|_| format!("{}: bad number {s:?}", f.name))?;
        if v < f.min || v > f.max {
            return Err(format!("{} {v} out of range", f.name));
        }
        return Ok(v);
    }
    if s.len() == 3
        && let Some(i) = f.names.iter().position(|n| n.eq_ignore_ascii_case(s))
    {
        let v = f.name_base + i as u32;
        return Ok(if closing && f.name == "day-of-week" && v == 0 {
            7
        } else {
            v
        });
    }
    Err(format!("{}: bad value {s:?}", f.name))
}

/// The values of one plain item (`*`, `n`, `a-b`, with an optional `/s`).
fn plain_item(f: Field, item: &str) -> Res<Vec<u32>> {
    let (base, step) = match item.split_once('/') {
        Some((b, s)) => {
            let span = if f.name == "year" {
                8030
            } else if f.name == "day-of-week" {
                7
            } else {
                f.max - f.min + 1
            };
            let s: u32 = s
                .parse()
                .map_err(|_| format!("{}: bad step {s:?}", f.name))?;
            if s == 0 || s > span {
                return Err(format!("{} step {s} is not allowed", f.name));
            }
            (b, Some(s))
        }
        None => (item, None),
    };
    let dow = f.name == "day-of-week";
    let top = if dow { 6 } else { f.max };
    let (lo, hi) = if base == "*" {
        (f.min, top)
    } else if let Some((a, b)) = base.split_once('-') {
        let (a, b) = (value(f, a, false)?, value(f, b, true)?);
        if a > b {
            return Err(format!("{} range {a}-{b} is reversed", f.name));
        }
        (a, b)
    } else {
        let a = value(f, base, false)?;
        match step {
            // `a/s` is `a-max/s`; in day-of-week `a-6/s`, and `7/s` is 7.
            Some(_) if dow && a == 7 => (7, 7),
            Some(_) => (a, top),
            None => (a, a),
        }
    };
    if base.is_empty() {
        return Err(format!("{}: empty item", f.name));
    }
    let step = step.unwrap_or(1);
    Ok((lo..=hi).step_by(step as usize).collect())
}

fn bits(vals: &[u32]) -> u64 {
    vals.iter().fold(0, |acc, &v| acc | 1u64 << v)
}

fn plain_field(f: Field, text: &str) -> Res<u64> {
    let mut out = 0;
    for item in text.split(',') {
        if item.is_empty() {
            return Err(format!("{}: empty list item", f.name));
        }
        out |= bits(&plain_item(f, item)?);
    }
    Ok(out)
}

fn is_wild(text: &str) -> bool {
    text == "*" || text == "?"
}

impl Cron {
    /// Parses a cron expression (with an optional zone prefix), or a macro.
    pub fn parse(text: &str) -> Res<Cron> {
        let mut text = text.trim();
        let mut prefix_zone = None;
        for key in ["CRON_TZ=", "TZ="] {
            if text.len() > key.len() && text[..key.len()].eq_ignore_ascii_case(key) {
                let rest = &text[key.len()..];
                let end = rest
                    .find(|c: char| c.is_ascii_whitespace())
                    .ok_or("a zone prefix needs an expression")?;
                prefix_zone = Some(rest[..end].to_string());
                text = rest[end..].trim_start();
                break;
            }
        }
        let lower = text.to_ascii_lowercase();
        let expanded = match lower.as_str() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            _ if text.starts_with('@') => return Err(format!("unknown macro {text:?}")),
            _ => text,
        };
        let fields: Vec<&str> = expanded.split_ascii_whitespace().collect();
        let (sec, rest) = match fields.len() {
            5 => ("0", &fields[..]),
            6 | 7 => (fields[0], &fields[1..]),
            n => return Err(format!("expected 5, 6 or 7 fields, found {n}")),
        };
        for (i, f) in fields.iter().enumerate() {
            let allowed_q = (fields.len() == 5 && (i == 2 || i == 4))
                || (fields.len() > 5 && (i == 3 || i == 5));
            if f.contains('?') && !(allowed_q && *f == "?") {
                return Err(format!("'?' misplaced in field {}", i + 1));
            }
        }
        let mut cron = Cron {
            secs: plain_field(SECOND, sec)?,
            mins: plain_field(MINUTE, rest[0])?,
            hours: plain_field(HOUR, rest[1])?,
            dom: 0,
            dom_last: false,
            dom_last_minus: 0,
            dom_lw: false,
            dom_w: 0,
            dom_restricted: !is_wild(rest[2]),
            months: plain_field(MONTH, rest[3])?,
            dow: 0,
            dow_nth: [0; 6],
            dow_last: 0,
            dow_restricted: false,
            and: false,
            years: None,
            prefix_zone,
        };
        cron.parse_dom(rest[2])?;
        cron.parse_dow(rest[4])?;
        if let Some(y) = rest.get(5) {
            let mut years = vec![false; 8030];
            for item in y.split(',') {
                if item.is_empty() {
                    return Err("year: empty list item".into());
                }
                for v in plain_item(YEAR, item)? {
                    years[(v - 1970) as usize] = true;
                }
            }
            cron.years = Some(years);
        }
        Ok(cron)
    }

    fn parse_dom(&mut self, text: &str) -> Res<()> {
        if is_wild(text) {
            self.dom = bits(&(1..=31).collect::<Vec<_>>());
            return Ok(());
        }
        for item in text.split(',') {
            let up = item.to_ascii_uppercase();
            if up == "L" {
                self.dom_last = true;
            } else if up == "LW" {
                self.dom_lw = true;
            } else if let Some(n) = up.strip_prefix("L-") {
                let n: u32 = n.parse().map_err(|_| format!("bad L-n {item:?}"))?;
                if !(1..=30).contains(&n) {
                    return Err(format!("L-{n} out of range"));
                }
                self.dom_last_minus |= 1 << n;
            } else if let Some(n) = up.strip_suffix('W') {
                let n = value(DOM, n, false)?;
                self.dom_w |= 1 << n;
            } else if item.is_empty() {
                return Err("day-of-month: empty list item".into());
            } else {
                self.dom |= bits(&plain_item(DOM, item)?);
            }
        }
        Ok(())
    }

    fn parse_dow(&mut self, text: &str) -> Res<()> {
        let (plus, body) = match text.strip_prefix('+') {
            Some(b) => (true, b),
            None => (false, text),
        };
        if body.contains('+') {
            return Err("'+' only as the first character of day-of-week".into());
        }
        self.and = plus;
        self.dow_restricted = !is_wild(body);
        let fold7 = |v: u64| (v | (v >> 7)) & 0x7f;
        if is_wild(body) {
            self.dow = 0x7f;
            return Ok(());
        }
        for item in body.split(',') {
            if item.is_empty() {
                return Err("day-of-week: empty list item".into());
            }
            let up = item.to_ascii_uppercase();
            if let Some((days, k)) = up.split_once('#') {
                if days.starts_with('*') || days.contains('/') {
                    return Err("'#' needs a weekday".into());
                }
                let set = fold7(bits(&plain_item(DOW, days)?));
                if k == "L" {
                    self.dow_last |= set;
                } else {
                    let k: usize = k.parse().map_err(|_| format!("bad #k {item:?}"))?;
                    if !(1..=5).contains(&k) {
                        return Err(format!("occurrence #{k} out of range 1-5"));
                    }
                    self.dow_nth[k] |= set;
                }
            } else if let Some(days) = up.strip_suffix('L') {
                if days.is_empty() || days.starts_with('*') || days.contains('/') {
                    return Err("'L' in day-of-week needs a weekday".into());
                }
                self.dow_last |= fold7(bits(&plain_item(DOW, days)?));
            } else {
                self.dow |= fold7(bits(&plain_item(DOW, item)?));
            }
        }
        Ok(())
    }

    /// Second, minute and hour each select exactly one value.
    pub fn is_fixed_time(&self) -> bool {
        self.secs.count_ones() == 1 && self.mins.count_ones() == 1 && self.hours.count_ones() == 1
    }

    fn year_ok(&self, y: i64) -> bool {
        match &self.years {
            None => (1970..=9999).contains(&y),
            Some(ys) => (1970..=9999).contains(&y) && ys[(y - 1970) as usize],
        }
    }

    fn dom_matches(&self, y: i64, m: u32, d: u32, day: i64) -> bool {
        let dim = days_in_month(y, m);
        if self.dom & (1 << d) != 0 || (self.dom_last && d == dim) {
            return true;
        }
        if d < dim && self.dom_last_minus & (1 << (dim - d)) != 0 {
            return true;
        }
        let wd = weekday(day);
        if self.dom_lw {
            let last_wd = weekday(day + i64::from(dim - d));
            let lw = match last_wd {
                6 => dim - 1,
                0 => dim - 2,
                _ => dim,
            };
            if d == lw {
                return true;
            }
        }
        if self.dom_w != 0 && (1..=5).contains(&wd) {
            // Which `nW` could land on weekday `d`: n = d, or n = d + 1
            // (a Saturday moved back), or n = d - 1 (a Sunday moved on),
            // or the month-edge cases n = 1 → 3 and n = dim → dim - 2.
            for n in [d, d + 1, d.wrapping_sub(1), 1, dim] {
                if n == 0 || n > dim || self.dom_w & (1 << n) == 0 {
                    continue;
                }
                let nwd = weekday(day - i64::from(d) + i64::from(n));
                let target = match nwd {
                    6 if n == 1 => 3,
                    6 => n - 1,
                    0 if n == dim => n - 2,
                    0 => n + 1,
                    _ => n,
                };
                if target == d {
                    return true;
                }
            }
        }
        false
    }

    fn dow_matches(&self, y: i64, m: u32, d: u32, day: i64) -> bool {
        let bit = 1u64 << weekday(day);
        if self.dow & bit != 0 {
            return true;
        }
        let k = ((d - 1) / 7 + 1) as usize;
        if self.dow_nth[k] & bit != 0 {
            return true;
        }
        self.dow_last & bit != 0 && d + 7 > days_in_month(y, m)
    }

    /// Whether the civil day `day` (days since 1970-01-01) matches the
    /// year, month, day-of-month and day-of-week fields.
    pub fn day_matches(&self, day: i64) -> bool {
        let (y, m, d) = civil_from_days(day);
        if !self.year_ok(y) || self.months & (1 << m) == 0 {
            return false;
        }
        let dom = || self.dom_matches(y, m, d, day);
        let dow = || self.dow_matches(y, m, d, day);
        match (self.dom_restricted, self.dow_restricted) {
            (true, true) if self.and => dom() && dow(),
            (true, true) => dom() || dow(),
            (true, false) => dom(),
            (false, true) => dow(),
            (false, false) => true,
        }
    }

    /// Whether the civil second `c` (seconds since 1970-01-01T00:00 civil)
    /// matches every field.
    pub fn matches_civil(&self, c: i64) -> bool {
        let tod = c.rem_euclid(DAY);
        self.secs & (1 << (tod % 60)) != 0
            && self.mins & (1 << (tod / 60 % 60)) != 0
            && self.hours & (1 << (tod / 3600)) != 0
            && self.day_matches(c.div_euclid(DAY))
    }

    /// The first day `>= day` whose year and month can match (at most
    /// `limit`).
    fn skip_to_candidate_month(&self, day: i64, limit: i64) -> i64 {
        let mut day = day;
        while day <= limit {
            let (y, m, _) = civil_from_days(day);
            if !self.year_ok(y) {
                day = days_from_civil(y + 1, 1, 1);
                if y >= 9999 {
                    return limit + 1;
                }
            } else if self.months & (1 << m) == 0 {
                day = if m == 12 {
                    days_from_civil(y + 1, 1, 1)
                } else {
                    days_from_civil(y, m + 1, 1)
                };
            } else {
                return day;
            }
        }
        day
    }

    fn set_values(bits: u64, max: i64) -> Vec<i64> {
        (0..=max).filter(|&v| bits & (1 << v) != 0).collect()
    }
}

// ---------------------------------------------------------------------
// Zones and DST.

/// How one civil time resolves in a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Civil {
    /// Exists once, at this instant (seconds).
    Unique(i64),
    /// In a gap; the transition (first instant after it) is `t`.
    Gap { t: i64 },
    /// Twice: first pass, second pass.
    Fold(i64, i64),
}

/// A zone with a cache of the last stretch of instants where its offset
/// is constant.
#[derive(Clone, Debug)]
pub struct Zone {
    tz: TimeZone,
    /// `[lo, hi)` in UTC seconds with one offset, where no civil time is
    /// ambiguous for a day on either side.
    quiet: Cell<(i64, i64, i64)>,
}

fn jts(secs: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(secs.clamp(-377_705_116_800, 253_402_207_200)).unwrap()
}

impl Zone {
    /// An IANA zone (jiff's bundled database); `None` = UTC.
    pub fn new(name: Option<&str>) -> Res<Zone> {
        let tz = match name {
            None => TimeZone::UTC,
            Some(n) if n.eq_ignore_ascii_case("UTC") => TimeZone::UTC,
            Some(n) => TimeZone::get(n).map_err(|e| format!("invalid_time_zone {n}: {e}"))?,
        };
        Ok(Zone {
            tz,
            quiet: Cell::new((0, 0, 0)),
        })
    }

    /// The zone's offset at `u` (seconds).
    pub fn offset(&self, u: i64) -> i64 {
        i64::from(self.tz.to_offset(jts(u)).seconds())
    }

    /// Instants `> u` where the offset changes, in order.
    pub fn transitions_after(&self, u: i64) -> impl Iterator<Item = i64> + '_ {
        let mut before = self.offset(u);
        self.tz.following(jts(u)).filter_map(move |tr| {
            let after = i64::from(tr.offset().seconds());
            let changed = after != before;
            before = after;
            changed.then(|| tr.timestamp().as_second())
        })
    }

    /// The smallest and largest offset in force anywhere in `[lo, hi]`.
    pub fn offset_range(&self, lo: i64, hi: i64) -> (i64, i64) {
        let first = self.offset(lo);
        let (mut min, mut max) = (first, first);
        for t in self.transitions_after(lo) {
            if t > hi {
                break;
            }
            let o = self.offset(t);
            min = min.min(o);
            max = max.max(o);
        }
        (min, max)
    }

    /// A stretch of constant offset around `u`: `(lo, hi, offset)`.
    fn stretch(&self, u: i64) -> (i64, i64, i64) {
        let off = self.offset(u);
        let prev = self
            .tz
            .preceding(jts(u + 1))
            .map(|tr| tr.timestamp().as_second())
            .find(|&t| t <= u)
            .unwrap_or(i64::MIN / 4);
        let next = self
            .tz
            .following(jts(u))
            .map(|tr| tr.timestamp().as_second())
            .find(|&t| t > u)
            .unwrap_or(i64::MAX / 4);
        (prev, next, off)
    }

    /// The offset of every civil time of civil day `day` when the whole
    /// day (± a day) lies in one stretch, else `None`.
    fn quiet_offset(&self, day: i64) -> Option<i64> {
        let (c0, c1) = (day * DAY, (day + 1) * DAY);
        let fits = |(lo, hi, off): (i64, i64, i64)| c0 - off - DAY >= lo && c1 - off + DAY <= hi;
        let q = self.quiet.get();
        if fits(q) {
            return Some(q.2);
        }
        let guess = self.offset(c0);
        let q = self.stretch(c0 - guess);
        self.quiet.set(q);
        fits(q).then_some(q.2)
    }

    /// How civil second `c` resolves, by jiff's own civil → instant rule.
    pub fn resolve(&self, c: i64) -> Civil {
        let day = c.div_euclid(DAY);
        let tod = c.rem_euclid(DAY);
        let (y, m, d) = civil_from_days(day);
        let Ok(dt) = jiff::civil::DateTime::new(
            y as i16,
            m as i8,
            d as i8,
            (tod / 3600) as i8,
            (tod / 60 % 60) as i8,
            (tod % 60) as i8,
            0,
        ) else {
            return Civil::Unique(c);
        };
        match self.tz.to_ambiguous_timestamp(dt).offset() {
            AmbiguousOffset::Unambiguous { offset } => {
                Civil::Unique(c - i64::from(offset.seconds()))
            }
            AmbiguousOffset::Fold { before, after } => Civil::Fold(
                c - i64::from(before.seconds()),
                c - i64::from(after.seconds()),
            ),
            AmbiguousOffset::Gap { before, after } => {
                let (before, after) = (i64::from(before.seconds()), i64::from(after.seconds()));
                // T + before <= c < T + after: T in (c - after, c - before].
                // The first instant there whose offset is no longer `before`.
                let (mut lo, mut hi) = (c - after + 1, c - before);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if self.offset(mid) == before {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                Civil::Gap { t: lo }
            }
        }
    }
}

/// Gap and fold policy after `auto` is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Gap side.
    pub gap: GapPolicy,
    /// Fold side.
    pub fold: FoldPolicy,
}

impl Policy {
    /// `auto` per side: fixed-time → shift + first, else skip + both.
    pub fn resolve(p: DstPolicy, fixed: bool) -> Policy {
        Policy {
            gap: p.gap.unwrap_or(if fixed {
                GapPolicy::Shift
            } else {
                GapPolicy::Skip
            }),
            fold: p.fold.unwrap_or(if fixed {
                FoldPolicy::First
            } else {
                FoldPolicy::Both
            }),
        }
    }

    fn apply(self, r: Civil, out: &mut impl FnMut(i64)) {
        match r {
            Civil::Unique(u) => out(u),
            Civil::Gap { t } => {
                if self.gap == GapPolicy::Shift {
                    out(t);
                }
            }
            Civil::Fold(a, b) => {
                if self.fold != FoldPolicy::Last {
                    out(a);
                }
                if self.fold != FoldPolicy::First {
                    out(b);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Specs.

/// What a spec is.
#[derive(Clone, Debug)]
pub enum Kind {
    /// A cron expression in a zone under a resolved policy.
    Cron {
        /// The fields.
        cron: Box<Cron>,
        /// The zone.
        zone: Zone,
        /// The policy in force.
        policy: Policy,
    },
    /// `@every`: `offset + k · interval` ms.
    Every {
        /// Interval (ms).
        interval: i64,
        /// Phase (ms, `0..interval`).
        offset: i64,
    },
    /// `@at`: one instant (ms).
    At(i64),
}

/// A parsed spec: see the module docs.
#[derive(Clone, Debug)]
pub struct Oracle {
    /// The spec.
    pub kind: Kind,
    horizon_years: u32,
}

/// A Go-style duration (`1h30m`, `250ms`, `1d`) in ms.
pub fn duration_ms(s: &str) -> Res<i64> {
    let mut total: i64 = 0;
    let mut rest = s;
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return Err(format!("bad duration {s:?}"));
        }
        let v: i64 = rest[..n]
            .parse()
            .map_err(|_| format!("bad duration {s:?}"))?;
        rest = &rest[n..];
        let (unit, len) = if rest.starts_with("ms") {
            (1, 2)
        } else {
            match rest.as_bytes().first() {
                Some(b'd') => (86_400_000, 1),
                Some(b'h') => (3_600_000, 1),
                Some(b'm') => (60_000, 1),
                Some(b's') => (1_000, 1),
                _ => return Err(format!("bad unit in {s:?}")),
            }
        };
        rest = &rest[len..];
        total = v
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or("duration overflow")?;
    }
    Ok(total)
}

fn strip_keyword<'a>(text: &'a str, kw: &str) -> Option<&'a str> {
    let head = text.get(..kw.len())?;
    let rest = &text[kw.len()..];
    (head.eq_ignore_ascii_case(kw) && rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

impl Oracle {
    /// Parses `text` with the schedule's `tz` (or none) and DST policy.
    pub fn parse(text: &str, tz: Option<&str>, dst: DstPolicy, horizon_years: u32) -> Res<Oracle> {
        let t = text.trim();
        let kind = if let Some(rest) = strip_keyword(t, "@every") {
            let (iv, off) = match rest.split_once('+') {
                Some((a, b)) => (duration_ms(a.trim())?, duration_ms(b.trim())?),
                None => (duration_ms(rest)?, 0),
            };
            if iv <= 0 || off >= iv {
                return Err(format!("bad @every {text:?}"));
            }
            Kind::Every {
                interval: iv,
                offset: off,
            }
        } else if let Some(rest) = strip_keyword(t, "@at") {
            Kind::At(Self::parse_at(rest, tz, dst)?)
        } else {
            let cron = Cron::parse(t)?;
            let zone_name = match (&cron.prefix_zone, tz) {
                (Some(p), Some(z)) if !p.eq_ignore_ascii_case(z) => {
                    // Equal when they name the same canonical zone.
                    let (a, b) = (TimeZone::get(p), TimeZone::get(z));
                    match (a, b) {
                        (Ok(a), Ok(b)) if a.iana_name() == b.iana_name() => Some(z.to_string()),
                        _ => return Err("conflicting time zones".into()),
                    }
                }
                (Some(p), _) => Some(p.clone()),
                (None, z) => z.map(str::to_string),
            };
            let zone = Zone::new(zone_name.as_deref())?;
            let policy = Policy::resolve(dst, cron.is_fixed_time());
            Kind::Cron {
                cron: Box::new(cron),
                zone,
                policy,
            }
        };
        Ok(Oracle {
            kind,
            horizon_years,
        })
    }

    fn parse_at(rest: &str, tz: Option<&str>, dst: DstPolicy) -> Res<i64> {
        if let Ok(ts) = rest.parse::<jiff::Timestamp>() {
            return Ok(ts.as_millisecond());
        }
        // An instant after jiff's last one (late on 9999-12-30) but within
        // chime's range: jiff's written pieces, the offset applied here.
        use jiff::fmt::temporal::{Pieces, PiecesOffset};
        if let Ok(p) = Pieces::parse(rest)
            && let (Some(time), Some(offset)) = (p.time(), p.offset())
        {
            let offset = match offset {
                PiecesOffset::Zulu => 0,
                PiecesOffset::Numeric(n) => n.offset().seconds(),
                _ => return Err(format!("bad @at {rest:?}: offset")),
            };
            let d = p.date();
            let local = days_from_civil(i64::from(d.year()), d.month() as u32, d.day() as u32)
                * DAY
                + i64::from(time.hour()) * 3600
                + i64::from(time.minute()) * 60
                + i64::from(time.second());
            let ms = i64::from(time.subsec_nanosecond()) / 1_000_000;
            return Ok((local - i64::from(offset)) * 1000 + ms);
        }
        let dt: jiff::civil::DateTime = match rest.parse() {
            Ok(dt) => dt,
            Err(_) => rest
                .parse::<jiff::civil::Date>()
                .map_err(|e| format!("bad @at {rest:?}: {e}"))?
                .to_datetime(jiff::civil::Time::midnight()),
        };
        let zone = Zone::new(tz)?;
        let ms = i64::from(dt.subsec_nanosecond()) / 1_000_000;
        let c = days_from_civil(i64::from(dt.year()), dt.month() as u32, dt.day() as u32) * DAY
            + i64::from(dt.hour()) * 3600
            + i64::from(dt.minute()) * 60
            + i64::from(dt.second());
        let secs = match zone.resolve(c) {
            Civil::Unique(u) => u,
            Civil::Gap { t } => {
                if dst.gap == Some(GapPolicy::Skip) {
                    return Err("@at time does not exist (gap: skip)".into());
                }
                // Shifted to the first instant after the gap.
                return Ok(t * 1000);
            }
            Civil::Fold(a, b) => {
                if dst.fold == Some(FoldPolicy::Last) {
                    b
                } else {
                    a
                }
            }
        };
        Ok(secs * 1000 + ms)
    }

    /// Whether the spec is a fixed-time cron spec (second, minute and hour
    /// each select one value), by the oracle's own parse.
    pub fn is_fixed_time(&self) -> bool {
        matches!(&self.kind, Kind::Cron { cron, .. } if cron.is_fixed_time())
    }

    /// The cron fields, zone and resolved policy, if a cron spec.
    pub fn cron(&self) -> Option<(&Cron, &Zone, Policy)> {
        match &self.kind {
            Kind::Cron { cron, zone, policy } => Some((cron, zone, *policy)),
            _ => None,
        }
    }

    /// Every boundary in `(lo, hi]` (ms), ascending.
    pub fn between(&self, lo: i64, hi: i64) -> Vec<i64> {
        let mut out = Vec::new();
        self.each_between(lo, hi, |b| out.push(b));
        out
    }

    /// Number of boundaries in `(lo, hi]` (ms).
    pub fn count_between(&self, lo: i64, hi: i64) -> u64 {
        match self.kind {
            Kind::Every { interval, offset } => {
                let hi = hi.min(LAST_MS);
                if hi <= lo {
                    return 0;
                }
                let below = |x: i64| (x - offset).div_euclid(interval);
                (below(hi) - below(lo)) as u64
            }
            _ => {
                let mut n = 0;
                self.each_between(lo, hi, |_| n += 1);
                n
            }
        }
    }

    /// Calls `f` on every boundary in `(lo, hi]` (ms), ascending.
    pub fn each_between(&self, lo: i64, hi: i64, mut f: impl FnMut(i64)) {
        let hi = hi.min(LAST_MS);
        if hi <= lo {
            return;
        }
        match &self.kind {
            Kind::Every { interval, offset } => {
                let mut b = offset + ((lo - offset).div_euclid(*interval) + 1) * interval;
                while b <= hi {
                    f(b);
                    b += interval;
                }
            }
            Kind::At(at) => {
                if lo < *at && *at <= hi {
                    f(*at);
                }
            }
            Kind::Cron { cron, zone, policy } => {
                let (lo_s, hi_s) = (lo.div_euclid(1000), hi.div_euclid(1000));
                cron_between(cron, zone, *policy, lo_s, hi_s, &mut |s| f(s * 1000));
            }
        }
    }

    /// The first boundary strictly after `t` (ms), within the horizon
    /// (`horizon_years` average years after `t`, and year 9999).
    pub fn next_after(&self, t: i64) -> Option<i64> {
        match &self.kind {
            Kind::Every { interval, offset } => {
                let b = offset + ((t - offset).div_euclid(*interval) + 1) * interval;
                (b <= LAST_MS).then_some(b)
            }
            Kind::At(at) => (*at > t).then_some(*at),
            Kind::Cron { cron, zone, policy } => {
                let from = t.div_euclid(1000) + 1;
                let last = from
                    .saturating_add(i64::from(self.horizon_years) * YEAR_SECS)
                    .min(LAST_SECS);
                let mut lo = from - 1;
                let mut chunk = 3600;
                while lo < last {
                    let hi = lo.saturating_add(chunk).min(last);
                    let mut found = None;
                    cron_between(cron, zone, *policy, lo, hi, &mut |s| {
                        found = found.or(Some(s));
                    });
                    if let Some(s) = found {
                        return Some(s * 1000);
                    }
                    lo = hi;
                    chunk = (chunk * 2).min(64 * DAY);
                }
                None
            }
        }
    }

    /// The brute force: every civil second (or minute, when the second
    /// field is one value) whose instant may lie in `(lo, hi]` (seconds),
    /// tested field by field and resolved in the zone. For `@every` and
    /// `@at`, [`Oracle::between`]. Ascending, in seconds.
    pub fn scan(&self, lo: i64, hi: i64) -> Vec<i64> {
        let Some((cron, zone, policy)) = self.cron() else {
            return self
                .between(lo * 1000, hi * 1000)
                .into_iter()
                .map(|ms| ms.div_euclid(1000))
                .collect();
        };
        // Offsets in force over the window (and a day around it).
        let (min_off, max_off) = zone.offset_range(lo - DAY, hi + DAY);
        let (c_lo, c_hi) = (lo + 1 + min_off, hi + max_off);
        let (first, step) = if cron.secs.count_ones() == 1 {
            let s0 = i64::from(cron.secs.trailing_zeros());
            (c_lo.div_euclid(60) * 60 + s0, 60)
        } else {
            (c_lo, 1)
        };
        let mut out = Vec::new();
        let mut c = first;
        while c <= c_hi {
            if c >= c_lo && cron.matches_civil(c) {
                policy.apply(zone.resolve(c), &mut |u| {
                    if lo < u && u <= hi {
                        out.push(u);
                    }
                });
            }
            c += step;
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Boundaries of a cron spec in `(lo, hi]` (seconds), ascending, by
/// expanding matching civil days in chunks of at most 32 days. Only the
/// civil times that can resolve into a chunk are expanded: those between
/// the chunk's ends plus the smallest and the largest offset in force
/// around it (a gap time resolves to its transition `T` and lies within
/// `[T + before, T + after)`, so it is covered too).
fn cron_between(
    cron: &Cron,
    zone: &Zone,
    policy: Policy,
    lo: i64,
    hi: i64,
    f: &mut impl FnMut(i64),
) {
    let hours = Cron::set_values(cron.hours, 23);
    let mins = Cron::set_values(cron.mins, 59);
    let secs = Cron::set_values(cron.secs, 59);
    let mut buf = Vec::new();
    let mut a = lo;
    while a < hi {
        let b = a.saturating_add(32 * DAY).min(hi);
        let (min_off, max_off) = zone.offset_range(a - DAY, b + DAY);
        let (c_lo, c_hi) = (a + 1 + min_off, b + max_off);
        buf.clear();
        let d1 = c_hi.div_euclid(DAY);
        let mut day = cron.skip_to_candidate_month(c_lo.div_euclid(DAY), d1);
        while day <= d1 {
            if cron.day_matches(day) {
                let quiet = zone.quiet_offset(day);
                for &h in &hours {
                    let ch = day * DAY + h * 3600;
                    if ch + 3599 < c_lo || ch > c_hi {
                        continue;
                    }
                    for &m in &mins {
                        let cm = ch + m * 60;
                        if cm + 59 < c_lo || cm > c_hi {
                            continue;
                        }
                        for &s in &secs {
                            let c = cm + s;
                            if c < c_lo || c > c_hi {
                                continue;
                            }
                            let mut push = |u: i64| {
                                if a < u && u <= b {
                                    buf.push(u);
                                }
                            };
                            match quiet {
                                Some(off) => push(c - off),
                                None => policy.apply(zone.resolve(c), &mut push),
                            }
                        }
                    }
                }
            }
            day = cron.skip_to_candidate_month(day + 1, d1);
        }
        buf.sort_unstable();
        buf.dedup();
        for &u in &buf {
            f(u);
        }
        a = b;
    }
}
