//! Unit tests of one schedule's state: jitter, and the footprint.

use super::*;
use crate::spec::SpecOptions;

#[test]
fn jitter_stays_before_the_next_boundary() {
    let spec = Spec::parse("@every 2s", &SpecOptions::default()).unwrap();
    for b in (0..200).map(|k| Timestamp::from_millis(k * 2000).unwrap()) {
        let due = due_of(&spec, "x", 10_000, 7, b);
        assert!(due >= b && due.as_millis() < b.as_millis() + 2000);
        assert_eq!(due, due_of(&spec, "x", 10_000, 7, b), "deterministic");
    }
    let t = Timestamp::from_millis(4000).unwrap();
    assert_eq!(due_of(&spec, "x", 0, 7, t), t);
}

/// The per-schedule footprint is a stated target (≤ 300 B beyond the
/// payload): keep the boxed struct from growing unnoticed.
#[test]
fn schedule_stays_small() {
    let sizes = [
        ("Schedule", std::mem::size_of::<Schedule>()),
        ("Extras", std::mem::size_of::<Extras>()),
        ("Spec", std::mem::size_of::<Spec>()),
        ("Grid", std::mem::size_of::<Grid>()),
    ];
    println!("{sizes:?}");
    assert!(sizes[0].1 <= 152, "{sizes:?}");
}
