//! Prints the next fires of a few specs across the 2026 DST changes in
//! America/New_York, with the DST note for each — the quickest way to see
//! chime's spec engine at work:
//!
//! ```text
//! cargo run -p chime-core --example next_fires
//! ```

use chime_core::Timestamp;
use chime_core::{DstNote, Spec, SpecOptions, tzdb_version};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("tz database {}\n", tzdb_version());
    let cases = [
        // (spec, zone, from: a little before the transition)
        ("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z"),
        ("0,30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z"),
        ("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z"),
        (
            "0,20,40 1 * * *",
            "America/New_York",
            "2026-11-01T04:00:00Z",
        ),
        ("0 9 * * MON-FRI", "Europe/London", "2026-03-27T00:00:00Z"),
        ("0 0 L * *", "Australia/Lord_Howe", "2026-01-01T00:00:00Z"),
        ("@every 90m +15m", "UTC", "2026-03-08T00:00:00Z"),
    ];
    for (text, tz, from) in cases {
        let opts = SpecOptions {
            tz: Some(tz.to_owned()),
            ..SpecOptions::default()
        };
        let spec = Spec::parse(text, &opts)?;
        let from: jiff::Timestamp = from.parse()?;
        let from = Timestamp::from_millis(from.as_millisecond())?;
        println!("{text:<18} in {tz} after {from}");
        for occ in spec.preview(from, 6) {
            let note = match occ.note {
                Some(DstNote::ShiftedFromGap) => "  (shifted out of the spring-forward gap)",
                Some(DstNote::FirstPass) => "  (first pass of the repeated hour)",
                Some(DstNote::SecondPass) => "  (second pass of the repeated hour)",
                None => "",
            };
            let sign = if occ.offset_seconds < 0 { '-' } else { '+' };
            let off = occ.offset_seconds.unsigned_abs();
            println!(
                "  {}  {}{sign}{:02}:{:02}{note}",
                occ.at,
                occ.civil,
                off / 3600,
                off / 60 % 60
            );
        }
        println!();
    }
    Ok(())
}
