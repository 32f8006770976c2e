//! Reading TZif files (RFC 8536, version 2 or later): what chime uses of
//! them, the 64-bit transitions, their offsets and the POSIX TZ footer.
//!
//! Shared by `build.rs`, which packs the bundled database with it, and by
//! [`super::tzdb::TzDatabase::from_tzif`], which reads another release at
//! run time (tests, `chime tzdb diff`); so it uses nothing of the crate,
//! and refuses malformed bytes with a message instead of panicking.

/// What chime reads of a TZif file (RFC 8536, version 2 or later).
pub(crate) struct Tzif {
    /// `(UTC second, offset from then on)`, ascending.
    pub(crate) transitions: Vec<(i64, i32)>,
    /// Offset of local time type 0 (in force before the first transition).
    pub(crate) first_offset: i32,
    pub(crate) footer: String,
}

impl Tzif {
    pub(crate) fn parse(data: &[u8]) -> Result<Tzif, String> {
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

    /// What chime keeps of the file: the offset at 1969-12-31T23:59:59Z,
    /// the offset changes from 1970 on (`(UTC second, new offset)`), and
    /// the UTC second of the last transition, after which the footer's
    /// rule applies (`i64::MIN` if there is none; it may keep the offset).
    pub(crate) fn since_1970(&self) -> (i32, Vec<(i64, i32)>, i64) {
        let initial = self.offset_before(0);
        let mut offset = initial;
        let mut changes = Vec::new();
        for &(at, off) in self.transitions.iter().filter(|&&(at, _)| at >= 0) {
            if off != offset {
                changes.push((at, off));
                offset = off;
            }
        }
        let rule_from = self.transitions.last().map_or(i64::MIN, |t| t.0);
        (initial, changes, rule_from)
    }

    /// The offset in force just before UTC second `t` (1970 here): that of
    /// the last transition before it, or local time type 0 before the first
    /// (RFC 8536 §3.2; for files without transitions, their one type).
    pub(crate) fn offset_before(&self, t: i64) -> i32 {
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
