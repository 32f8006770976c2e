//! `chime preview`: a spec's next fires as a person reads them.

use crate::driver::{Clock, SystemClock};
use anyhow::bail;
use chime_core::{DstNote, DstPolicy, FoldPolicy, GapPolicy, Spec, SpecOptions, Timestamp};
use std::io::Write;

/// `chime preview`: prints the next `n` fires of `spec` with their civil
/// time, offset and DST notes.
pub fn preview(
    spec: &str,
    tz: Option<String>,
    n: usize,
    dst: &str,
    from: Option<&str>,
) -> anyhow::Result<()> {
    let opts = SpecOptions {
        tz,
        dst: parse_dst(dst)?,
        ..SpecOptions::default()
    };
    let spec = Spec::parse(spec, &opts).map_err(|e| anyhow::anyhow!("{e}"))?;
    let start = match from {
        Some(t) => parse_instant(t, &opts)?,
        None => SystemClock.now(),
    };
    // What `validate` and an upsert refuse, `preview` refuses too (an
    // `@at` in the past says so).
    spec.first_after(start)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let fires = spec.preview(start, n);
    for o in fires {
        let off = o.offset_seconds;
        let sign = if off < 0 { '-' } else { '+' };
        let (h, m) = (off.abs() / 3600, off.abs() / 60 % 60);
        let note = match o.note {
            None => "",
            Some(DstNote::ShiftedFromGap) => "  (shifted from DST gap)",
            Some(DstNote::FirstPass) => "  (repeated hour, first pass)",
            Some(DstNote::SecondPass) => "  (repeated hour, second pass)",
        };
        // Not `println!`: it panics when stdout is a closed pipe (`| head`).
        let line = writeln!(
            std::io::stdout(),
            "{}  {} {sign}{h:02}:{m:02} {}{note}",
            o.at,
            o.civil,
            spec.zone_name()
        );
        if line.is_err() {
            break;
        }
    }
    Ok(())
}

/// `auto`, or `gap=…`/`fold=…` pairs separated by commas.
fn parse_dst(text: &str) -> anyhow::Result<DstPolicy> {
    let mut p = DstPolicy::default();
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(p);
    }
    for part in text.split(',') {
        match part.trim().to_ascii_lowercase().as_str() {
            "gap=shift" => p.gap = Some(GapPolicy::Shift),
            "gap=skip" => p.gap = Some(GapPolicy::Skip),
            "fold=first" => p.fold = Some(FoldPolicy::First),
            "fold=last" => p.fold = Some(FoldPolicy::Last),
            "fold=both" => p.fold = Some(FoldPolicy::Both),
            "gap=auto" | "fold=auto" => {}
            other => bail!(
                "--dst: unknown {other:?} (expected auto, gap=shift|skip, fold=first|last|both)"
            ),
        }
    }
    Ok(p)
}

/// An RFC 3339 instant, or a civil date-time in `opts.tz`, read by the
/// core's own `@at` grammar (so `--from` accepts what a one-shot spec does).
fn parse_instant(text: &str, opts: &SpecOptions) -> anyhow::Result<Timestamp> {
    let at = Spec::parse(&format!("@at {text}"), opts)
        .map_err(|e| anyhow::anyhow!("--from {text:?}: {e}"))?;
    at.first_at_or_after(Timestamp::MIN)
        .ok_or_else(|| anyhow::anyhow!("--from {text:?}: not an instant"))
}
