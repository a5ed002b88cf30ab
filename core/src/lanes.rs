//! Packed lane vectors: the word-level storage behind [`Board`](crate::Board).
//!
//! A lane vector is a fixed array of small unsigned counters ("lanes") packed side by side in
//! machine words, so that adding one seed to a whole run of houses is one multiply-and-add per
//! word instead of one store per house. Two widths exist:
//!
//! ```text
//! Narrow: one u128, 16 lanes of 8 bits            (m <= 8 houses a side, <= 255 seeds on board)
//!
//!  bit 127                                                                             bit 0
//!  +--------+--------+--------+--   ...   --+--------+--------+--------+--------+
//!  | lane15 | lane14 | lane13 |             | lane 3 | lane 2 | lane 1 | lane 0 |
//!  +--------+--------+--------+--   ...   --+--------+--------+--------+--------+
//!
//! Wide: six u64 words, 24 lanes of 16 bits        (m <= 12 houses a side, <= 65535 seeds)
//!
//!  word 0 = lanes 3 2 1 0,  word 1 = lanes 7 6 5 4,  ...,  word 5 = lanes 23 22 21 20
//!  (lane 0 in the low 16 bits of word 0)
//! ```
//!
//! **Invariant** (the caller's, checked by [`Board`](crate::Board) constructors): the sum of all
//! lanes never exceeds [`Lanes::LANE_MAX`]. Since a sowing only moves seeds that are already on
//! the board, no lane can then overflow into its neighbour, and the horizontal sums below are
//! exact. Lanes at or above the board's `2m` are always zero.
//!
//! Stability: the bit layout is the key of the transposition table and of the endgame database
//! index; changing it changes both.

use std::fmt::Debug;
use std::hash::Hash;

/// Storage of up to [`Lanes::CAPACITY`] small counters with range operations done word-wise.
///
/// Ranges are half-open `[lo, hi)` lane intervals with `lo <= hi <= CAPACITY`.
pub trait Lanes: Copy + Eq + Ord + Hash + Debug + Default + Send + Sync + 'static {
    /// Number of lanes.
    const CAPACITY: usize;
    /// Largest value a lane (and the sum of all lanes) may hold.
    const LANE_MAX: u32;
    /// Short name used in diagnostics and benchmarks.
    const NAME: &'static str;

    /// The value of lane `i`.
    fn lane(self, i: usize) -> u32;
    /// Sets lane `i` to `v` (`v <= LANE_MAX`).
    fn set_lane(&mut self, i: usize, v: u32);
    /// Empties lane `i` and returns what it held.
    #[inline]
    fn take(&mut self, i: usize) -> u32 {
        let v = self.lane(i);
        self.set_lane(i, 0);
        v
    }
    /// [`Lanes::lane`] of a lane in the low half (`i < CAPACITY / 2`), which a lane type may
    /// read more cheaply (the narrow lanes: in their low word alone).
    #[inline]
    fn low_lane(self, i: usize) -> u32 {
        debug_assert!(i < Self::CAPACITY / 2);
        self.lane(i)
    }
    /// [`Lanes::take`] of a lane in the low half (`i < CAPACITY / 2`), as [`Lanes::low_lane`].
    #[inline]
    fn take_low_lane(&mut self, i: usize) -> u32 {
        debug_assert!(i < Self::CAPACITY / 2);
        self.take(i)
    }
    /// Adds `k` to every lane of `[lo, hi)`; the caller guarantees no lane passes `LANE_MAX`.
    fn add_range(&mut self, lo: usize, hi: usize, k: u32);
    /// Adds one to each of the `count` lanes from lane `start` on, wrapping from lane `n - 1`
    /// back to lane 0 (`start < n <= CAPACITY`, `count < n`: no lane gains twice); the caller
    /// guarantees no lane passes `LANE_MAX`.
    ///
    /// ```text
    ///  n = 6, start = 4, count = 4:   lane  0  1  2  3  4  5
    ///                                       +1 +1  .  . +1 +1
    /// ```
    #[inline]
    fn add_one_wrapping(&mut self, start: usize, count: usize, n: usize) {
        debug_assert!(start < n && n <= Self::CAPACITY && count < n);
        let end = start + count;
        if end <= n {
            self.add_range(start, end, 1);
        } else {
            self.add_range(start, n, 1);
            self.add_range(0, end - n, 1);
        }
    }
    /// Sum of the lanes of `[lo, hi)`.
    fn sum_range(self, lo: usize, hi: usize) -> u32;
    /// Sum of every lane.
    #[inline]
    fn sum_all(self) -> u32 {
        self.sum_range(0, Self::CAPACITY)
    }
    /// Bit `i - lo` of the result is set when lane `i` of `[lo, hi)` is non-zero.
    fn nonzero_mask(self, lo: usize, hi: usize) -> u32;
    /// Whether every lane is zero.
    #[inline(always)]
    fn is_zero(self) -> bool {
        self == Self::default()
    }
    /// The lanes `[0, m)` and the lanes `[m, 2m)` apart, each in place with the other's lanes
    /// zero (`1 <= m`, `2m <= CAPACITY`; lanes from `2m` on are zero).
    fn split_halves(self, m: usize) -> (Self, Self);
    /// Exchanges lanes `[0, m)` with lanes `[m, 2m)` (`1 <= m`, `2m <= CAPACITY`; lanes from
    /// `2m` on are zero).
    fn swap_halves(self, m: usize) -> Self;
    /// Lanes `0..16` as bytes, each clamped to 255 (the databases index boards whose houses
    /// fit a byte).
    #[inline]
    fn low_bytes(self) -> [u8; 16] {
        std::array::from_fn(|i| {
            if i < Self::CAPACITY {
                self.lane(i).min(255) as u8
            } else {
                0
            }
        })
    }
    /// A 64-bit digest of the lanes, for hashing into tables.
    fn digest(self) -> u64;
    /// A second 64-bit digest, mixed independently of [`Lanes::digest`]: a table that indexes
    /// with one and verifies with the other confuses two keys only if both collide.
    fn check_digest(self) -> u64;
}

/// 16 lanes of 8 bits in one `u128`; see the [module docs](self).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Narrow(pub u128);

/// 24 lanes of 16 bits in six `u64` words; see the [module docs](self).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Wide(pub [u64; WIDE_WORDS]);

const NARROW_LANE_BITS: usize = 8;
const NARROW_ONES: u128 = u128::MAX / 0xFF; // 0x0101..01
const NARROW_HIGH_BITS: u128 = NARROW_ONES << 7; // 0x8080..80

const WIDE_WORDS: usize = 6;
const WIDE_LANE_BITS: usize = 16;
const WIDE_LANES_PER_WORD: usize = 4;
const WIDE_ONES: u64 = u64::MAX / 0xFFFF; // 0x0001_0001_0001_0001

/// `NARROW_LOW[i]`: the bits of the narrow lanes `[0, i)`, all set (all 16 from `i = 16` on:
/// 32 rows, so that an index masked to 5 bits needs no bounds check).
const NARROW_LOW: [u128; 32] = {
    let mut low = [u128::MAX; 32];
    low[0] = 0;
    let mut i = 1;
    while i < 16 {
        low[i] = (low[i - 1] << NARROW_LANE_BITS) | 0xFF;
        i += 1;
    }
    low
};

/// `NARROW_WRAPPING[n - 1][start][count]`: a one in each of the `count` narrow lanes from lane
/// `start` on, wrapping from lane `n - 1` back to lane 0 (`start < n <= 16`, `count < n`; the
/// other entries are zero), for [`Lanes::add_one_wrapping`]. Every index fits 4 bits, so masked
/// it needs no bounds check; 4 KiB for one `n`, 64 KiB in all.
///
/// ```text
///  NARROW_WRAPPING[5][4][4] (n = 6): lanes 5 4 3 2 1 0 = 01 01 00 00 01 01 (hex bytes)
/// ```
static NARROW_WRAPPING: [[[u128; 16]; 16]; 16] = {
    let mut table = [[[0u128; 16]; 16]; 16];
    let mut n = 1;
    while n <= 16 {
        let mut start = 0;
        while start < n {
            let mut count = 1;
            while count < n {
                let lane = (start + count - 1) % n;
                table[n - 1][start][count] =
                    table[n - 1][start][count - 1] + (1u128 << (NARROW_LANE_BITS * lane));
                count += 1;
            }
            start += 1;
        }
        n += 1;
    }
    table
};

/// `NARROW_ALL_BUT[i]`: every bit but those of narrow lane `i`, for clearing it in one `and`.
const NARROW_ALL_BUT: [u128; 16] = {
    let mut all_but = [0u128; 16];
    let mut i = 0;
    while i < 16 {
        all_but[i] = !(0xFF << (NARROW_LANE_BITS * i));
        i += 1;
    }
    all_but
};

/// Bits of the narrow lanes `[0, m)`, all set, for a half `1 <= m <= 8`: in the low word, so
/// that the compiler knows the high word of what it masks is zero.
#[inline(always)]
fn narrow_low_half(m: usize) -> u128 {
    debug_assert!((1..=8).contains(&m));
    u128::from(u64::MAX >> ((64 - NARROW_LANE_BITS * m) & 63))
}

/// Bits of the lanes `[lo, hi)` of a narrow vector (`lo, hi <= 16`), all set (none when
/// `hi <= lo`): two reads of a table, where shifting a `u128` by a variable amount takes
/// branches.
#[inline(always)]
fn narrow_mask(lo: usize, hi: usize) -> u128 {
    debug_assert!(lo <= 16 && hi <= 16);
    NARROW_LOW[hi & 31] & !NARROW_LOW[lo & 31]
}

impl Lanes for Narrow {
    const CAPACITY: usize = 16;
    const LANE_MAX: u32 = 0xFF;
    const NAME: &'static str = "narrow";

    #[inline(always)]
    fn lane(self, i: usize) -> u32 {
        // One 64-bit half and a 64-bit shift: cheaper than shifting the u128.
        let half = if i < 8 {
            self.0 as u64
        } else {
            (self.0 >> 64) as u64
        };
        (half >> (NARROW_LANE_BITS * (i & 7))) as u32 & 0xFF
    }

    #[inline(always)]
    fn set_lane(&mut self, i: usize, v: u32) {
        let shift = NARROW_LANE_BITS * (i & 7);
        let (mut low, mut high) = (self.0 as u64, (self.0 >> 64) as u64);
        let half = if i < 8 { &mut low } else { &mut high };
        *half = (*half & !(0xFFu64 << shift)) | (u64::from(v) << shift);
        self.0 = u128::from(low) | u128::from(high) << 64;
    }

    #[inline(always)]
    fn take(&mut self, i: usize) -> u32 {
        let v = self.lane(i);
        self.0 &= NARROW_ALL_BUT[i & 15];
        v
    }

    #[inline(always)]
    fn low_lane(self, i: usize) -> u32 {
        debug_assert!(i < 8);
        ((self.0 as u64) >> (NARROW_LANE_BITS * (i & 7))) as u32 & 0xFF
    }

    #[inline(always)]
    fn take_low_lane(&mut self, i: usize) -> u32 {
        let v = self.low_lane(i);
        self.0 &= !u128::from(0xFFu64 << (NARROW_LANE_BITS * (i & 7)));
        v
    }

    #[inline(always)]
    fn add_range(&mut self, lo: usize, hi: usize, k: u32) {
        self.0 += (NARROW_ONES & narrow_mask(lo, hi)) * u128::from(k);
    }

    /// One addition of a run read from a table (`NARROW_WRAPPING`).
    #[inline(always)]
    fn add_one_wrapping(&mut self, start: usize, count: usize, n: usize) {
        debug_assert!(start < n && n <= 16 && count < n);
        self.0 += NARROW_WRAPPING[(n - 1) & 15][start & 15][count & 15];
    }

    #[inline(always)]
    fn sum_range(self, lo: usize, hi: usize) -> u32 {
        // With the total <= 255 no partial sum carries, so the top byte of the product is the sum.
        ((self.0 & narrow_mask(lo, hi)).wrapping_mul(NARROW_ONES) >> 120) as u32
    }

    #[inline(always)]
    fn sum_all(self) -> u32 {
        (self.0.wrapping_mul(NARROW_ONES) >> 120) as u32
    }

    #[inline(always)]
    fn nonzero_mask(self, lo: usize, hi: usize) -> u32 {
        let x = self.0 & narrow_mask(lo, hi);
        // High bit of each byte set iff the byte is non-zero.
        let flags = (((x & !NARROW_HIGH_BITS) + !NARROW_HIGH_BITS) | x) & NARROW_HIGH_BITS;
        // Gather the 16 flag bits: fold the two halves, then multiply-gather 8 bytes.
        let lo_half = (flags as u64) >> 7;
        let hi_half = ((flags >> 64) as u64) >> 7;
        const GATHER: u64 = 0x0102_0408_1020_4080;
        let gather = |w: u64| (w.wrapping_mul(GATHER) >> 56) as u32;
        ((gather(lo_half) | (gather(hi_half) << 8)) >> lo) & ((1u32 << (hi - lo)) - 1)
    }

    #[inline(always)]
    fn split_halves(self, m: usize) -> (Self, Self) {
        let low = self.0 & narrow_low_half(m);
        (Narrow(low), Narrow(self.0 ^ low))
    }

    #[inline(always)]
    fn swap_halves(self, m: usize) -> Self {
        let low = self.0 & narrow_low_half(m);
        let shift = NARROW_LANE_BITS * m;
        Narrow((self.0 >> shift) | (low << shift))
    }

    #[inline(always)]
    fn low_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    #[inline(always)]
    fn digest(self) -> u64 {
        mix64(self.0 as u64 ^ mix64((self.0 >> 64) as u64))
    }

    #[inline(always)]
    fn check_digest(self) -> u64 {
        mix64(((self.0 >> 64) as u64) ^ mix64(self.0 as u64 ^ CHECK_SEED))
    }
}

/// Per-word masks of the lanes `[lo, hi)` of a wide vector, each lane set to `pattern`.
#[inline]
fn wide_mask(lo: usize, hi: usize, pattern: u64) -> [u64; WIDE_WORDS] {
    let mut out = [0u64; WIDE_WORDS];
    if hi <= lo {
        return out;
    }
    for (w, word) in out.iter_mut().enumerate() {
        let first = w * WIDE_LANES_PER_WORD;
        let a = lo.max(first);
        let b = hi.min(first + WIDE_LANES_PER_WORD);
        if a < b {
            let bits = WIDE_LANE_BITS * (b - a);
            let run = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            *word = pattern & (run << (WIDE_LANE_BITS * (a - first)));
        }
    }
    out
}

impl Wide {
    /// The 384-bit value shifted left by `bits`.
    fn shl(self, bits: usize) -> Self {
        let (words, rest) = (bits / 64, bits % 64);
        Wide(std::array::from_fn(|i| {
            if i < words {
                return 0;
            }
            let src = i - words;
            let carry = if rest > 0 && src > 0 {
                self.0[src - 1] >> (64 - rest)
            } else {
                0
            };
            (self.0[src] << rest) | carry
        }))
    }

    /// The 384-bit value shifted right by `bits`.
    fn shr(self, bits: usize) -> Self {
        let (words, rest) = (bits / 64, bits % 64);
        Wide(std::array::from_fn(|i| {
            let src = i + words;
            if src >= WIDE_WORDS {
                return 0;
            }
            let carry = if rest > 0 && src + 1 < WIDE_WORDS {
                self.0[src + 1] << (64 - rest)
            } else {
                0
            };
            (self.0[src] >> rest) | carry
        }))
    }

    fn and(self, mask: [u64; WIDE_WORDS]) -> Self {
        Wide(std::array::from_fn(|i| self.0[i] & mask[i]))
    }
}

impl Lanes for Wide {
    const CAPACITY: usize = WIDE_WORDS * WIDE_LANES_PER_WORD;
    const LANE_MAX: u32 = 0xFFFF;
    const NAME: &'static str = "wide";

    #[inline]
    fn lane(self, i: usize) -> u32 {
        let shift = WIDE_LANE_BITS * (i % WIDE_LANES_PER_WORD);
        (self.0[i / WIDE_LANES_PER_WORD] >> shift) as u32 & 0xFFFF
    }

    #[inline]
    fn set_lane(&mut self, i: usize, v: u32) {
        let shift = WIDE_LANE_BITS * (i % WIDE_LANES_PER_WORD);
        let word = &mut self.0[i / WIDE_LANES_PER_WORD];
        *word = (*word & !(0xFFFFu64 << shift)) | (u64::from(v) << shift);
    }

    #[inline]
    fn add_range(&mut self, lo: usize, hi: usize, k: u32) {
        let mask = wide_mask(lo, hi, WIDE_ONES);
        for (word, m) in self.0.iter_mut().zip(mask) {
            *word += m * u64::from(k);
        }
    }

    #[inline]
    fn sum_range(self, lo: usize, hi: usize) -> u32 {
        // Each word's four lanes sum to at most 65535, so the top lane of the product is exact.
        let x = self.and(wide_mask(lo, hi, u64::MAX));
        x.0.iter()
            .map(|w| (w.wrapping_mul(WIDE_ONES) >> 48) as u32)
            .sum()
    }

    #[inline]
    fn nonzero_mask(self, lo: usize, hi: usize) -> u32 {
        (lo..hi)
            .filter(|&i| self.lane(i) != 0)
            .fold(0, |acc, i| acc | 1 << (i - lo))
    }

    #[inline]
    fn split_halves(self, m: usize) -> (Self, Self) {
        let low = self.and(wide_mask(0, m, u64::MAX));
        (low, Wide(std::array::from_fn(|i| self.0[i] ^ low.0[i])))
    }

    #[inline]
    fn swap_halves(self, m: usize) -> Self {
        let low = self.and(wide_mask(0, m, u64::MAX));
        let high = self.shr(WIDE_LANE_BITS * m);
        let moved = low.shl(WIDE_LANE_BITS * m);
        Wide(std::array::from_fn(|i| high.0[i] | moved.0[i]))
    }

    #[inline]
    fn digest(self) -> u64 {
        self.0.iter().fold(0u64, |acc, &w| mix64(acc ^ w))
    }

    #[inline]
    fn check_digest(self) -> u64 {
        self.0
            .iter()
            .rev()
            .fold(CHECK_SEED, |acc, &w| mix64(acc ^ w))
    }
}

/// Start value of [`Lanes::check_digest`], so that it differs from [`Lanes::digest`].
const CHECK_SEED: u64 = 0x6A09_E667_F3BC_C909;

/// A strong 64-bit finaliser (SplitMix64's), so that nearby boards spread over a table.
#[inline(always)]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_against_array<L: Lanes>(values: &[u32]) {
        let mut lanes = L::default();
        for (i, &v) in values.iter().enumerate() {
            lanes.set_lane(i, v);
        }
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(lanes.lane(i), v);
        }
        for lo in 0..=values.len() {
            for hi in lo..=values.len() {
                let slice = &values[lo..hi];
                assert_eq!(lanes.sum_range(lo, hi), slice.iter().sum::<u32>());
                let mask = slice
                    .iter()
                    .enumerate()
                    .fold(0u32, |acc, (i, &v)| acc | (u32::from(v != 0) << i));
                assert_eq!(lanes.nonzero_mask(lo, hi), mask, "{lo}..{hi}");
            }
        }
        for m in 1..=values.len() / 2 {
            let mut expected = L::default();
            for i in 0..m {
                expected.set_lane(i, values[m + i]);
                expected.set_lane(m + i, values[i]);
            }
            for (i, &v) in values.iter().enumerate().skip(2 * m) {
                if v != 0 {
                    return; // swap_halves requires zero lanes above 2m
                }
                expected.set_lane(i, 0);
            }
            assert_eq!(lanes.swap_halves(m), expected, "m = {m}");
            let (low, high) = lanes.split_halves(m);
            for (i, &v) in values.iter().enumerate().take(2 * m) {
                let (mine, other) = if i < m { (low, high) } else { (high, low) };
                assert_eq!((mine.lane(i), other.lane(i)), (v, 0), "m = {m}, lane {i}");
            }
            assert_eq!(low.is_zero(), values[..m].iter().all(|&v| v == 0));
        }
    }

    #[test]
    fn narrow_matches_plain_array() {
        check_against_array::<Narrow>(&[3, 0, 7, 1, 0, 0, 9, 2, 0, 4, 5, 0, 6, 1, 0, 8]);
        check_against_array::<Narrow>(&[0, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 55, 0, 0, 0]);
        check_against_array::<Narrow>(&[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn wide_matches_plain_array() {
        let mut values = [0u32; 24];
        for (i, v) in values.iter_mut().enumerate() {
            *v = if i % 3 == 0 {
                0
            } else {
                (i as u32 * 977) % 2500
            };
        }
        check_against_array::<Wide>(&values);
        check_against_array::<Wide>(&[
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 0, 0, 0, 0, 0, 0,
        ]);
    }

    #[test]
    fn narrow_wrapping_runs_match_the_ranges() {
        // The narrow table against the default (two ranges at most, as the wide lanes do it).
        for n in 1..=16 {
            for start in 0..n {
                for count in 0..n {
                    let mut narrow = Narrow::default();
                    narrow.add_one_wrapping(start, count, n);
                    let mut wide = Wide::default();
                    wide.add_one_wrapping(start, count, n);
                    for i in 0..16 {
                        let covered = (i + n - start) % n < count && i < n;
                        assert_eq!(
                            narrow.lane(i),
                            u32::from(covered),
                            "{n} {start} {count} {i}"
                        );
                        assert_eq!(wide.lane(i), u32::from(covered), "{n} {start} {count} {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn take_empties_one_lane() {
        let values = [3, 0, 7, 1, 0, 0, 9, 2, 0, 4, 5, 0, 6, 1, 0, 8];
        for i in 0..16 {
            let mut lanes = Narrow::default();
            for (j, &v) in values.iter().enumerate() {
                lanes.set_lane(j, v);
            }
            let mut low = lanes;
            assert_eq!(lanes.take(i), values[i]);
            if i < 8 {
                assert_eq!(low.low_lane(i), values[i]);
                assert_eq!(low.take_low_lane(i), values[i]);
                assert_eq!(low, lanes);
            }
            for (j, &v) in values.iter().enumerate() {
                assert_eq!(lanes.lane(j), if j == i { 0 } else { v });
            }
        }
    }

    #[test]
    fn add_range_adds_to_exactly_the_range() {
        let mut n = Narrow::default();
        n.add_range(3, 9, 5);
        let mut w = Wide::default();
        w.add_range(3, 21, 700);
        for i in 0..16 {
            assert_eq!(n.lane(i), if (3..9).contains(&i) { 5 } else { 0 });
        }
        for i in 0..24 {
            assert_eq!(w.lane(i), if (3..21).contains(&i) { 700 } else { 0 });
        }
    }
}
