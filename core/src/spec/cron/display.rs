//! The normalized text of a [`CronSpec`]: always seconds first, numbers
//! instead of names, values merged into ranges and steps. Parsing the
//! output gives an equal spec.

use super::CronSpec;
use std::fmt::{self, Write};

impl fmt::Display for CronSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(32);
        values(&mut out, self.seconds, 0, 59, true);
        out.push(' ');
        values(&mut out, self.minutes, 0, 59, true);
        out.push(' ');
        values(&mut out, self.hours.into(), 0, 23, true);
        out.push(' ');
        self.dom_text(&mut out);
        out.push(' ');
        values(&mut out, self.months.into(), 1, 12, true);
        out.push(' ');
        self.dow_text(&mut out);
        if let Some(years) = &self.years {
            out.push(' ');
            for (i, (lo, hi)) in years.runs().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                match hi - lo {
                    0 => write!(out, "{sep}{lo}")?,
                    _ => write!(out, "{sep}{lo}-{hi}")?,
                }
            }
        }
        f.write_str(&out)
    }
}

impl CronSpec {
    fn dom_text(&self, out: &mut String) {
        let d = &self.days;
        if d.dom_star {
            out.push('*');
            return;
        }
        let start = out.len();
        let sep = |out: &mut String| {
            if out.len() > start {
                out.push(',');
            }
        };
        if d.dom != 0 {
            values(out, d.dom.into(), 1, 31, false);
        }
        for n in bits(d.dom_last.into()) {
            sep(out);
            match n {
                0 => out.push('L'),
                _ => {
                    let _ = write!(out, "L-{n}");
                }
            }
        }
        if d.dom_last_weekday {
            sep(out);
            out.push_str("LW");
        }
        for n in bits(d.dom_nearest.into()) {
            sep(out);
            let _ = write!(out, "{n}W");
        }
    }

    fn dow_text(&self, out: &mut String) {
        let d = &self.days;
        if d.and {
            out.push('+');
        }
        if d.dow_star {
            out.push('*');
            return;
        }
        let start = out.len();
        let sep = |out: &mut String| {
            if out.len() > start {
                out.push(',');
            }
        };
        if d.dow != 0 {
            values(out, d.dow.into(), 0, 6, false);
        }
        for (k, &set) in d.dow_nth.iter().enumerate() {
            for w in bits(set.into()) {
                sep(out);
                let _ = write!(out, "{w}#{}", k + 1);
            }
        }
        for w in bits(d.dow_last.into()) {
            sep(out);
            let _ = write!(out, "{w}L");
        }
    }
}

/// The set bits of `set`, ascending.
fn bits(mut set: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        let bit = (set != 0).then(|| set.trailing_zeros())?;
        set &= set - 1;
        Some(bit)
    })
}

/// Writes a value set as `*`, `*/s`, `a-b/s` or a list of values and ranges.
fn values(out: &mut String, set: u64, min: u32, max: u32, star: bool) {
    let all = (u64::MAX >> (63 - max)) & (u64::MAX << min);
    if star && set == all {
        out.push('*');
        return;
    }
    let count = set.count_ones();
    if count >= 3 {
        let lo = set.trailing_zeros();
        let hi = 63 - set.leading_zeros();
        let step = (set & (set - 1)).trailing_zeros() - lo;
        let progression = (lo..=hi)
            .step_by(step as usize)
            .fold(0u64, |acc, v| acc | 1 << v);
        if step > 1 && progression == set {
            let _ = if star && lo == min && hi + step > max {
                write!(out, "*/{step}")
            } else {
                write!(out, "{lo}-{hi}/{step}")
            };
            return;
        }
    }
    let mut rest = set;
    let mut first = true;
    while rest != 0 {
        let lo = rest.trailing_zeros();
        let run = (!(rest >> lo)).trailing_zeros();
        let hi = lo + run - 1;
        rest &= !((u64::MAX >> (63 - hi)) & (u64::MAX << lo));
        if !first {
            out.push(',');
        }
        first = false;
        let _ = if hi == lo {
            write!(out, "{lo}")
        } else {
            write!(out, "{lo}-{hi}")
        };
    }
}
