//! Perfect indexing of the boards of one level (one number of seeds on the board).
//!
//! A board of level `k` is a pair (mover's side `M`, opponent's side `O`) of compositions of
//! `a` and `b = k - a` seeds into `m` houses. Boards with an empty side are not stored: the game
//! is over on them and f is known by rule (the side with seeds sweeps them: f = a - b). So a
//! level is the concatenation of one table per `a` in `1..k`, each a row-major matrix with one
//! row per mover's side and one column per opponent's side:
//!
//! ```text
//!  level k:  | table a=1 | table a=2 | ... | table a=k-1 |
//!            ^ offset(k, a)
//!
//!  table a (b = k - a):  N(a) rows x N(b) columns, one byte each
//!
//!                rank(O) ->
//!     rank(M)  [ f(M0,O0)  f(M0,O1) ... ]
//!        |     [ f(M1,O0)  ...          ]
//!        v
//!
//!  index(M, O) = offset(k, a) + rank(M) * N(b) + rank(O)
//! ```
//!
//! where `N(s) = C(s + m - 1, m - 1)` counts the ways to put `s` seeds in `m` houses, and
//! `rank` is the colex rank of the composition read as a combination of bar positions: for
//! houses `s_1 .. s_m` (sowing order), bar `j` (1 <= j < m) sits at
//! `p_j = s_1 + ... + s_j + j - 1` and `rank = sum_j C(p_j, j)`, a bijection onto `0..N(s)`.
//!
//! The level's length has a closed form (Vandermonde's identity, minus the two empty sides):
//! `level_len(k) = C(k + 2m - 1, 2m - 1) - 2 C(k + m - 1, m - 1)` for `k >= 1`, and 0 for
//! `k = 0`.

use crate::board::Board;
use crate::lanes::Lanes;

/// Most houses a side the databases index (boards must fit the 8-bit lanes).
pub const MAX_DB_HOUSES: usize = 8;
/// Highest level the databases index.
pub const MAX_LEVEL: u32 = 64;

/// Pascal's triangle, large enough for every rank of every supported layout.
#[derive(Clone, Debug)]
struct Binomials {
    /// `rows[n][r] = C(n, r)` for `r <= MAX_R`.
    rows: Vec<[u64; MAX_R + 1]>,
}

const MAX_R: usize = 2 * MAX_DB_HOUSES;

impl Binomials {
    fn new(max_n: usize) -> Binomials {
        let mut rows = vec![[0u64; MAX_R + 1]; max_n + 1];
        for n in 0..=max_n {
            rows[n][0] = 1;
            for r in 1..=MAX_R.min(n) {
                rows[n][r] = rows[n - 1][r - 1] + if r < n { rows[n - 1][r] } else { 0 };
            }
        }
        Binomials { rows }
    }

    #[inline(always)]
    fn get(&self, n: usize, r: usize) -> u64 {
        self.rows[n][r]
    }
}

/// The index of every level `0..=max_level` of one house count (see the module docs).
#[derive(Clone, Debug)]
pub struct Layout {
    m: usize,
    max_level: u32,
    binomials: Binomials,
    /// `sides[s] = N(s)`.
    sides: Vec<u64>,
    /// `offsets[k][a]` for `a` in `0..=k` (`offsets[k][k]` is the level's length).
    offsets: Vec<Vec<u64>>,
    /// `bars[j][p] = C(p + j, j + 1)`: bar `j + 1`'s term of a rank, by the seeds `p` in the
    /// houses before it (at most [`MAX_LEVEL`]), in fixed rows that need no bounds checks.
    bars: Box<[[u64; BAR_ROW]; MAX_DB_HOUSES]>,
    /// `flat[k * FLAT_ROW + a] = [offsets[k][a], N(k - a)]`: the two numbers
    /// an index needs of its level, in one place.
    flat: Box<[[u64; 2]]>,
}

/// Length of a row of [`Layout::bars`]: a power of two above [`MAX_LEVEL`], so that masking
/// an index keeps it in the row.
const BAR_ROW: usize = 128;
/// Length of a row of [`Layout::flat`].
const FLAT_ROW: usize = MAX_LEVEL as usize + 1;

impl Layout {
    /// [`Layout::new`], or the error that says what databases index.
    pub fn checked(m: usize, max_level: u32) -> Result<Layout, crate::db::DbError> {
        Layout::new(m, max_level).ok_or_else(|| {
            crate::db::DbError::Unsupported(format!(
                "databases index 1 to {MAX_DB_HOUSES} houses a side and levels up to {MAX_LEVEL}"
            ))
        })
    }

    /// The layout of levels `0..=max_level` with `m` houses a side; `None` outside
    /// `1..=MAX_DB_HOUSES` houses or above [`MAX_LEVEL`].
    pub fn new(m: usize, max_level: u32) -> Option<Layout> {
        if !(1..=MAX_DB_HOUSES).contains(&m) || max_level > MAX_LEVEL {
            return None;
        }
        let binomials = Binomials::new(max_level as usize + 2 * m);
        let sides: Vec<u64> = (0..=max_level as usize)
            .map(|s| binomials.get(s + m - 1, m - 1))
            .collect();
        let offsets: Vec<Vec<u64>> = (0..=max_level as usize)
            .map(|k| {
                let mut row = vec![0u64; k + 1];
                let mut acc = 0;
                for a in 1..=k {
                    row[a] = acc;
                    if a < k {
                        acc += sides[a] * sides[k - a];
                    }
                }
                if k > 0 {
                    row[k] = acc;
                }
                row
            })
            .collect();
        let mut bars = Box::new([[0u64; BAR_ROW]; MAX_DB_HOUSES]);
        for (j, row) in bars.iter_mut().enumerate().take(m - 1) {
            for (p, bar) in row.iter_mut().enumerate().take(max_level as usize + 1) {
                *bar = binomials.get(p + j, j + 1);
            }
        }
        let mut flat = vec![[0u64; 2]; FLAT_ROW * FLAT_ROW].into_boxed_slice();
        for (k, row) in offsets.iter().enumerate() {
            for (a, &offset) in row.iter().enumerate() {
                flat[k * FLAT_ROW + a] = [offset, sides[k - a]];
            }
        }
        Some(Layout {
            m,
            max_level,
            binomials,
            sides,
            offsets,
            bars,
            flat,
        })
    }

    /// Houses a side.
    pub fn houses(&self) -> usize {
        self.m
    }

    /// Highest level indexed.
    pub fn max_level(&self) -> u32 {
        self.max_level
    }

    /// `N(s)`: the ways to put `s` seeds in one side's `m` houses.
    #[inline(always)]
    pub fn side_count(&self, s: u32) -> u64 {
        self.sides[s as usize]
    }

    /// Entries of level `k` (boards with `k` seeds and seeds on both sides), in closed form.
    pub fn level_len(&self, k: u32) -> u64 {
        level_len(self.m, k)
    }

    /// Where table `a` of level `k` starts (`1 <= a < k`).
    #[inline(always)]
    pub fn offset(&self, k: u32, a: u32) -> u64 {
        self.offsets[k as usize][a as usize]
    }

    /// The entry of the board with mover's side of rank `rm` holding `a` seeds and opponent's
    /// side of rank `ro` holding `b` seeds (both non-zero, `a + b <= max_level`).
    #[inline(always)]
    pub fn entry(&self, a: u32, rm: u64, b: u32, ro: u64) -> u64 {
        self.offset(a + b, a) + rm * self.side_count(b) + ro
    }

    /// The colex rank of one side's houses (house 1 first), with `m` houses.
    #[inline(always)]
    pub fn rank_side(&self, houses: impl IntoIterator<Item = u32>) -> u64 {
        let mut rank = 0;
        let mut prefix = 0usize;
        for (j, s) in houses.into_iter().enumerate().take(self.m - 1) {
            prefix += s as usize;
            // Bar j + 1 sits at prefix + j.
            rank += self.binomials.get(prefix + j, j + 1);
        }
        rank
    }

    /// The houses (house 1 first) of the side with `s` seeds and rank `rank` (< N(s)).
    pub fn unrank_side(&self, s: u32, mut rank: u64) -> Vec<u32> {
        let m = self.m;
        // Bars from the last: the largest p with C(p, j) <= rank.
        let mut bars = vec![0usize; m];
        let mut hi = s as usize + m - 1;
        for j in (1..m).rev() {
            let mut p = hi - 1;
            while self.binomials.get(p, j) > rank {
                p -= 1;
            }
            rank -= self.binomials.get(p, j);
            bars[j] = p;
            hi = p;
        }
        debug_assert_eq!(rank, 0);
        // prefix_j = p_j - (j - 1); house i = prefix_{i+1} - prefix_i.
        let mut houses = Vec::with_capacity(m);
        let mut previous = 0usize;
        for (j, &bar) in bars.iter().enumerate().skip(1) {
            let prefix = bar + 1 - j;
            houses.push((prefix - previous) as u32);
            previous = prefix;
        }
        houses.push(s - previous as u32);
        houses
    }

    /// Level and entry of `board`; `None` if a side is empty (the game is over: f is known by
    /// rule), the house count differs, or the level is above `max_level`.
    #[inline]
    pub fn index<L: Lanes>(&self, board: Board<L>) -> Option<(u32, u64)> {
        let m = self.m;
        if board.houses_per_side() != m {
            return None;
        }
        let bytes = board.house_bytes();
        // Both ranks at once: the running seeds of each side, and bar j + 1's terms.
        let (mut a, mut b) = (0usize, 0usize);
        let (mut rm, mut ro) = (0u64, 0u64);
        for j in 0..m - 1 {
            a += usize::from(bytes[j]);
            b += usize::from(bytes[m + j]);
            // Past the top level the ranks mean nothing, and are not used.
            let row = &self.bars[j];
            rm += row[a & (BAR_ROW - 1)];
            ro += row[b & (BAR_ROW - 1)];
        }
        a += usize::from(bytes[m - 1]);
        b += usize::from(bytes[2 * m - 1]);
        if a == 0 || b == 0 || a + b > self.max_level as usize {
            return None;
        }
        let [offset, columns] = self.flat[(a + b) * FLAT_ROW + a];
        Some(((a + b) as u32, offset + rm * columns + ro))
    }

    /// The board at `entry` of level `k` (inverse of [`Layout::index`]).
    pub fn board(&self, k: u32, entry: u64) -> Option<Board> {
        if k > self.max_level || entry >= self.level_len(k) {
            return None;
        }
        let row = &self.offsets[k as usize];
        // The last table starting at or before `entry`.
        let a = (1..k).rev().find(|&a| row[a as usize] <= entry)?;
        let b = k - a;
        let within = entry - row[a as usize];
        let (rm, ro) = (within / self.side_count(b), within % self.side_count(b));
        Board::from_houses(&self.unrank_side(a, rm), &self.unrank_side(b, ro))
    }
}

/// Entries of level `k` with `m` houses a side: `C(k + 2m - 1, 2m - 1) - 2 C(k + m - 1, m - 1)`
/// (boards with seeds on both sides), 0 for `k = 0`.
pub fn level_len(m: usize, k: u32) -> u64 {
    if k == 0 {
        return 0;
    }
    let k = u128::from(k);
    let m = m as u128;
    let choose =
        |n: u128, r: u128| -> u128 { (0..r).fold(1u128, |acc, i| acc * (n - i) / (i + 1)) };
    (choose(k + 2 * m - 1, 2 * m - 1) - 2 * choose(k + m - 1, m - 1)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_matches_the_tables() {
        for m in 1..=MAX_DB_HOUSES {
            let layout = Layout::new(m, 20).unwrap();
            for k in 0..=20 {
                let tables: u64 = (1..k)
                    .map(|a| layout.side_count(a) * layout.side_count(k - a))
                    .sum();
                assert_eq!(layout.level_len(k), tables, "m={m} k={k}");
            }
        }
        // The 6-house levels up to 24: C(36, 12) boards, less those with an empty side
        // (2 C(30, 6), the empty board counted twice).
        let total: u64 = (0..=24).map(|k| level_len(6, k)).sum();
        assert_eq!(total, 1_251_677_700 - 2 * 593_775 + 1);
    }

    #[test]
    fn every_entry_round_trips_on_small_levels() {
        for (m, max) in [(1, 12), (2, 10), (3, 9), (4, 7), (6, 5), (8, 4)] {
            let layout = Layout::new(m, max).unwrap();
            for k in 0..=max {
                for entry in 0..layout.level_len(k) {
                    let board = layout.board(k, entry).unwrap();
                    assert_eq!(board.seeds(), k);
                    assert_eq!(layout.index(board), Some((k, entry)), "m={m} k={k}");
                }
                assert!(layout.board(k, layout.level_len(k)).is_none());
            }
        }
    }

    #[test]
    fn side_ranks_are_a_bijection() {
        let layout = Layout::new(5, 12).unwrap();
        for s in 0..=12 {
            let n = layout.side_count(s);
            for rank in 0..n {
                let houses = layout.unrank_side(s, rank);
                assert_eq!(houses.iter().sum::<u32>(), s);
                assert_eq!(layout.rank_side(houses.iter().copied()), rank);
            }
        }
    }

    #[test]
    fn boards_with_an_empty_side_have_no_entry() {
        let layout = Layout::new(3, 10).unwrap();
        let board = Board::<crate::Narrow>::from_houses(&[0, 0, 0], &[1, 2, 3]).unwrap();
        assert_eq!(layout.index(board), None);
        assert_eq!(layout.index(board.flipped()), None);
    }
}
