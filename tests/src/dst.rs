//! Helpers for the DST scenario files (`spec_dst_*`): policies by name,
//! and the occurrences of a spec in a window as RFC 3339 strings.

use chime_core::{DstNote, DstPolicy, FoldPolicy, GapPolicy};
use chime_core::{Spec, SpecOptions, Timestamp};

/// A DST policy as `(gap, fold)`; `None` = auto.
pub type Policy = (Option<GapPolicy>, Option<FoldPolicy>);

/// Both sides auto.
pub const AUTO: Policy = (None, None);
/// `gap: shift`.
pub const SHIFT: Policy = (Some(GapPolicy::Shift), None);
/// `gap: skip`.
pub const SKIP: Policy = (Some(GapPolicy::Skip), None);
/// `fold: first`.
pub const FIRST: Policy = (None, Some(FoldPolicy::First));
/// `fold: last`.
pub const LAST: Policy = (None, Some(FoldPolicy::Last));
/// `fold: both`.
pub const BOTH: Policy = (None, Some(FoldPolicy::Both));

/// An RFC 3339 instant.
pub fn ts(s: &str) -> Timestamp {
    let j: jiff::Timestamp = s.parse().unwrap();
    Timestamp::from_millis(j.as_millisecond()).unwrap()
}

/// Options for `zone` under `p`.
pub fn opts(zone: &str, p: Policy) -> SpecOptions {
    SpecOptions {
        tz: Some(zone.to_string()),
        dst: DstPolicy {
            gap: p.0,
            fold: p.1,
        },
        ..SpecOptions::default()
    }
}

/// Occurrences in `[from, until)` as RFC 3339 UTC strings without millis
/// (at most 101, so a runaway spec cannot hang a test).
pub fn fires(spec: &str, o: &SpecOptions, from: &str, until: &str) -> Vec<String> {
    let spec = Spec::parse(spec, o).unwrap();
    let until = ts(until);
    let mut t = Timestamp::from_millis(ts(from).as_millis() - 1).unwrap();
    let mut out = Vec::new();
    while let Some(next) = spec.next_after(t) {
        if next >= until || out.len() > 100 {
            break;
        }
        out.push(next.to_string().replace(".000Z", "Z"));
        t = next;
    }
    out
}

/// The first `n` previewed occurrences after `from`: civil time, offset, note.
pub fn notes(
    zone: &str,
    spec: &str,
    p: Policy,
    from: &str,
    n: usize,
) -> Vec<(String, i32, Option<DstNote>)> {
    Spec::parse(spec, &opts(zone, p))
        .unwrap()
        .preview(ts(from), n)
        .into_iter()
        .map(|o| (o.civil, o.offset_seconds, o.note))
        .collect()
}
