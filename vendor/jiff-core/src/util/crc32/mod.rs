use self::table::TABLE;

mod table;

/// Returns the "masked" CRC32 checksum of the slice using the Castagnoli
/// polynomial.
///
/// This "masked" checksum is the same one used by the Snappy frame format.
/// Masking is supposed to make the checksum robust with respect to data that
/// contains the checksum itself.
pub(crate) fn sum(buf: &[u8]) -> u32 {
    let sum = slice16(0, buf);
    (sum.wrapping_shr(15) | sum.wrapping_shl(17)).wrapping_add(0xA282EAD8)
}

/// Returns the CRC32 checksum of `buf` using the Castagnoli polynomial.
///
/// chime's copy: one byte per iteration with the 1 KiB table, instead of
/// upstream's 16 bytes per iteration with a 16 KiB table (kept as
/// `upstream_slice16` in the tests). Same checksum; the 16 KiB of table data did not
/// compress and was 5% of chime's gzipped `.wasm`, while TZif files are
/// checksummed once each, when a zone is first loaded.
fn slice16(prev: u32, buf: &[u8]) -> u32 {
    let mut crc: u32 = !prev;
    for &b in buf {
        crc = TABLE[usize::from((crc as u8) ^ b)] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod chime_tests {
    use super::table::{TABLE, TABLE16};

    /// Upstream's version, unchanged: returns the CRC32 checksum of `buf` using the Castagnoli polynomial.
    ///
    /// This computes the checksum by looking at 16 bytes from the given slice
    /// per iteration.
    fn upstream_slice16(prev: u32, mut buf: &[u8]) -> u32 {
        let mut crc: u32 = !prev;
        while buf.len() >= 16 {
            crc ^= u32::from_le_bytes(buf[..4].try_into().unwrap());
            crc = TABLE16[0][usize::from(buf[15])]
                ^ TABLE16[1][usize::from(buf[14])]
                ^ TABLE16[2][usize::from(buf[13])]
                ^ TABLE16[3][usize::from(buf[12])]
                ^ TABLE16[4][usize::from(buf[11])]
                ^ TABLE16[5][usize::from(buf[10])]
                ^ TABLE16[6][usize::from(buf[9])]
                ^ TABLE16[7][usize::from(buf[8])]
                ^ TABLE16[8][usize::from(buf[7])]
                ^ TABLE16[9][usize::from(buf[6])]
                ^ TABLE16[10][usize::from(buf[5])]
                ^ TABLE16[11][usize::from(buf[4])]
                ^ TABLE16[12][usize::from((crc >> 24) as u8)]
                ^ TABLE16[13][usize::from((crc >> 16) as u8)]
                ^ TABLE16[14][usize::from((crc >> 8) as u8)]
                ^ TABLE16[15][usize::from((crc) as u8)];
            buf = &buf[16..];
        }
        for &b in buf {
            crc = TABLE[usize::from((crc as u8) ^ b)] ^ (crc >> 8);
        }
        !crc
    }

    #[test]
    fn same_checksum_as_upstream() {
        // The CRC-32C check value.
        assert_eq!(super::slice16(0, b"123456789"), 0xE306_9283);
        let mut buf = alloc::vec::Vec::new();
        let mut x: u32 = 1;
        for len in 0..2_000 {
            assert_eq!(super::slice16(0, &buf), upstream_slice16(0, &buf), "{len}");
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            buf.push((x >> 16) as u8);
        }
    }
}
