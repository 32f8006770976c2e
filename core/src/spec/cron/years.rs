//! The optional year field (7-field expressions): a bitset over 1970..=9999.

use std::fmt;

/// First year a year field may name.
pub(super) const FIRST: i32 = 1970;
/// Last year a year field may name (and the end of every search).
pub(super) const LAST: i32 = 9999;
const WORDS: usize = ((LAST - FIRST) as usize + 64) / 64;

/// A set of years in `FIRST..=LAST`, boxed so that expressions without a
/// year field stay small.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Years(Box<[u64; WORDS]>);

impl Years {
    /// The empty set.
    pub(super) fn new() -> Years {
        Years(Box::new([0; WORDS]))
    }

    /// Adds `lo, lo+step, … <= hi` (all within `FIRST..=LAST`).
    pub(super) fn insert_run(&mut self, lo: u32, hi: u32, step: u32) {
        debug_assert!(FIRST as u32 <= lo && hi <= LAST as u32 && step >= 1);
        let mut y = lo;
        while y <= hi {
            let i = (y - FIRST as u32) as usize;
            self.0[i / 64] |= 1 << (i % 64);
            y += step;
        }
    }

    /// Whether year `y` is in the set.
    #[inline]
    pub(super) fn contains(&self, y: i32) -> bool {
        (FIRST..=LAST).contains(&y) && {
            let i = (y - FIRST) as usize;
            self.0[i / 64] & (1 << (i % 64)) != 0
        }
    }

    /// The first year `>= y` in the set; at most `WORDS` words are read.
    pub(super) fn next_from(&self, y: i32) -> Option<i32> {
        let i = (y.max(FIRST) - FIRST) as usize;
        if y > LAST {
            return None;
        }
        let mut word = i / 64;
        let mut bits = self.0[word] & (u64::MAX << (i % 64));
        loop {
            if bits != 0 {
                return Some(FIRST + (word * 64) as i32 + bits.trailing_zeros() as i32);
            }
            word += 1;
            bits = *self.0.get(word)?;
        }
    }

    /// The years as inclusive runs, ascending.
    pub(super) fn runs(&self) -> impl Iterator<Item = (i32, i32)> + '_ {
        let mut next = FIRST;
        std::iter::from_fn(move || {
            let lo = self.next_from(next)?;
            let mut hi = lo;
            while hi < LAST && self.contains(hi + 1) {
                hi += 1;
            }
            next = hi + 1;
            Some((lo, hi))
        })
    }
}

impl fmt::Debug for Years {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.runs().map(|(lo, hi)| lo..=hi))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_from_and_runs() {
        let mut y = Years::new();
        y.insert_run(2030, 2040, 5);
        y.insert_run(9999, 9999, 1);
        assert_eq!(y.next_from(1800), Some(2030));
        assert_eq!(y.next_from(2031), Some(2035));
        assert_eq!(y.next_from(2041), Some(9999));
        assert_eq!(y.next_from(10_000), None);
        assert!(y.contains(2040) && !y.contains(2041));
        let runs: Vec<_> = y.runs().collect();
        assert_eq!(
            runs,
            [(2030, 2030), (2035, 2035), (2040, 2040), (9999, 9999)]
        );
        assert_eq!(
            format!("{y:?}"),
            "[2030..=2030, 2035..=2035, 2040..=2040, 9999..=9999]"
        );
        assert_eq!(Years::new().next_from(1970), None);
    }
}
