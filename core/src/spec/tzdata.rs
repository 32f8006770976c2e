//! The bundled tz database in the compact form `build.rs` packs it into:
//! per zone the offset at the end of 1969, the offset changes from 1970 on
//! and the POSIX TZ rule after them (see `build.rs` for the byte format).
//!
//! Read on the first use of each zone (a linear scan of a few hundred
//! names; [`super::zone::ZoneTable`] caches the result).

use super::posix::PosixTz;

static DATA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tzdata.bin"));

/// The IANA release the data comes from, e.g. `2025b`.
pub(crate) static VERSION: &str = include!(concat!(env!("OUT_DIR"), "/tzdata_version.rs"));

/// One zone as chime uses it.
#[derive(Clone, Debug)]
pub(crate) struct ZoneData {
    /// The name as the database spells it (`america/new_york` →
    /// `America/New_York`; links keep their own name, e.g. `US/Eastern`).
    pub name: String,
    /// Offset (seconds east of UTC) in force at 1969-12-31T23:59:59Z.
    pub initial_offset: i32,
    /// `(UTC second, offset from then on)` from 1970 on, ascending; each
    /// changes the offset.
    pub transitions: Vec<(i64, i32)>,
    /// The rule for the times after `rule_from` (`None`: the last offset
    /// stays).
    pub rule: Option<PosixTz>,
    /// The database's last explicit transition, which may not change the
    /// offset (`i64::MIN` if there is none).
    pub rule_from: i64,
}

/// The zone called `name` (ASCII case ignored), if the database has it.
pub(crate) fn lookup(name: &str) -> Option<ZoneData> {
    let mut r = Reader { at: 0 };
    let names = r.uvar();
    let mut found = None;
    for _ in 0..names {
        let len = r.uvar() as usize;
        let spelled = r.bytes(len);
        let index = r.uvar();
        if found.is_none() && spelled.eq_ignore_ascii_case(name.as_bytes()) {
            let spelled = std::str::from_utf8(spelled).expect("zone names are ASCII");
            found = Some((spelled, index));
        }
    }
    let (name, index) = found?;
    let _zones = r.uvar();
    for _ in 0..index {
        let len = r.uvar() as usize;
        r.bytes(len);
    }
    r.uvar(); // this entry's length
    let initial_offset = r.ivar();
    let count = r.uvar();
    let mut at = 0i64;
    let transitions = (0..count)
        .map(|_| {
            at += r.uvar() as i64;
            (at, r.ivar())
        })
        .collect();
    let rule_from = r.ivar();
    let len = r.uvar() as usize;
    let footer = std::str::from_utf8(r.bytes(len)).expect("TZ strings are ASCII");
    Some(ZoneData {
        name: name.to_string(),
        initial_offset,
        transitions,
        rule: PosixTz::parse(footer),
        rule_from,
    })
}

impl ZoneData {
    /// The zone called `name` from the bytes of its TZif file (another
    /// release than the bundled one), or why they are not TZif.
    pub(crate) fn from_tzif(name: &str, bytes: &[u8]) -> Result<ZoneData, String> {
        let tzif = super::tzif::Tzif::parse(bytes)?;
        let (initial_offset, transitions, rule_from) = tzif.since_1970();
        let rule = match tzif.footer.as_str() {
            "" => None,
            text => Some(PosixTz::parse(text).ok_or_else(|| format!("bad TZ rule {text:?}"))?),
        };
        Ok(ZoneData {
            name: name.to_string(),
            initial_offset,
            transitions,
            rule,
            rule_from,
        })
    }
}

/// Reads the packed data, which `build.rs` wrote and so is well-formed.
struct Reader {
    at: usize,
}

impl Reader {
    fn bytes(&mut self, len: usize) -> &'static [u8] {
        let bytes = &DATA[self.at..self.at + len];
        self.at += len;
        bytes
    }

    fn uvar(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let byte = DATA[self.at];
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }

    fn ivar<T: TryFrom<i64>>(&mut self) -> T {
        let v = self.uvar();
        let v = (v >> 1) as i64 ^ -((v & 1) as i64);
        T::try_from(v).ok().expect("values fit their type")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_zones_ignoring_case() {
        let ny = lookup("america/new_york").unwrap();
        assert_eq!(ny.name, "America/New_York");
        assert_eq!(ny.initial_offset, -18_000);
        assert!(ny.rule.unwrap().dst.is_some());
        assert_eq!(lookup("US/Eastern").unwrap().name, "US/Eastern");
        assert!(lookup("America/NewYork").is_none());
        assert!(lookup("").is_none());
        let kolkata = lookup("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.initial_offset, 19_800);
        assert!(kolkata.transitions.is_empty());
        assert_eq!(kolkata.rule.unwrap().std_offset, 19_800);
    }
}
