//! The bit-packed board: the houses of both sides, seen from the side to move.
//!
//! ```text
//!  lanes (see crate::lanes), Kalah(m, n), side to move = "mover":
//!
//!    lane:  0   1  ...  m-1 | m   m+1 ... 2m-1 | 2m ... (unused, always 0)
//!   house:  1   2  ...   m  | 1    2  ...   m  |
//!           mover's houses  | opponent's houses|
//!
//!  sowing cycle from the mover's view (2m+1 pits; the opponent's store is skipped):
//!
//!    cycle position: 0 .. m-1 |      m       | m+1 .. 2m
//!    pit:            lanes 0..m-1 | mover's store | lanes m..2m-1
//! ```
//!
//! Mover's house `i` (lane `i`) faces opponent lane `2m-1-i`. The stores are not in the board:
//! seeds in stores never return, so the board alone (the *key*) decides the future store
//! difference of any position, and the transposition table and the databases key on it.
//!
//! A sowing of `s` seeds from lane `h` is a few lane operations, the same for every lane type
//! ([`Board::sow`] states the rules once, over [`Lanes`]): empty lane `h`; add `s / (2m+1)`
//! whole laps to all `2m` lanes at once; add one seed to the lanes that the remainder covers
//! (a run from lane `h + 1` on, wrapping after lane `2m-1`, the store skipped; narrow lanes read
//! it from a table). The last seed's pit is `(h + s) mod (2m+1)`. When the turn passes the two
//! halves swap, so the board is always seen from the side to move.

use crate::lanes::{Lanes, Narrow};
use crate::rules::Rules;

/// The houses of a board one byte each ([`Board::house_key`]).
pub type HouseKey = [u8; 24];

/// Houses of both sides from the mover's view, packed in lanes of `L` (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Board<L: Lanes = Narrow> {
    houses: L,
    m: u8,
}

/// What one sowing did, from the view of the side that sowed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Sowing {
    /// Seeds that went into the mover's store: sown, captured, and swept at the game's end.
    pub mover_gain: u32,
    /// Seeds that went into the opponent's store (only the end-of-game sweep does this).
    pub opponent_gain: u32,
    /// Seeds taken by a capture (the last seed plus the opposite house), 0 if none.
    pub captured: u32,
    /// The last seed fell into the mover's store and the game goes on: the mover moves again.
    pub extra_turn: bool,
    /// A side ran out of seeds: the board has been swept into the stores and the game is over.
    pub game_over: bool,
}

impl Sowing {
    /// The mover's store gain minus the opponent's on this sowing (its own value for the mover,
    /// before anything that follows).
    #[inline]
    pub fn gain(&self) -> i32 {
        self.mover_gain as i32 - self.opponent_gain as i32
    }

    /// The value of this sowing for the mover (stores from here on) when f of the board it
    /// leads to is `child_f` (ignored when the game is over): the gain, then the child's value,
    /// the mover's own after an extra turn, the opponent's negated otherwise.
    #[inline]
    pub fn value_with(&self, child_f: i32) -> i32 {
        if self.game_over {
            self.gain()
        } else if self.extra_turn {
            self.gain() + child_f
        } else {
            self.gain() - child_f
        }
    }

    /// Whether the other side moves next.
    #[inline]
    pub fn passes_turn(&self) -> bool {
        !self.extra_turn && !self.game_over
    }
}

impl<L: Lanes> Board<L> {
    /// A board from the mover's and the opponent's houses, each listed in its owner's sowing
    /// order (house 1 first). `None` if the sides differ in length, hold no house or more than
    /// `L` can pack, or the seeds exceed `L::LANE_MAX`.
    pub fn from_houses(mover: &[u32], opponent: &[u32]) -> Option<Self> {
        let m = mover.len();
        if m == 0 || opponent.len() != m || 2 * m > L::CAPACITY {
            return None;
        }
        let total = mover
            .iter()
            .chain(opponent)
            .try_fold(0u32, |acc, &s| acc.checked_add(s))?;
        if total > L::LANE_MAX {
            return None;
        }
        let mut houses = L::default();
        for (i, &s) in mover.iter().chain(opponent).enumerate() {
            houses.set_lane(i, s);
        }
        Some(Board { houses, m: m as u8 })
    }

    /// The start of Kalah(m, n), if it fits `L`.
    pub fn start(m: usize, n: u32) -> Option<Self> {
        let side = vec![n; m];
        Self::from_houses(&side, &side)
    }

    /// Houses a side.
    #[inline(always)]
    pub fn houses_per_side(self) -> usize {
        usize::from(self.m)
    }

    /// Seeds in the mover's house `i` (0-based: house `i + 1`).
    #[inline(always)]
    pub fn mover_house(self, i: usize) -> u32 {
        self.houses.lane(i)
    }

    /// Seeds in the opponent's house `i` (0-based: house `i + 1` from the opponent's view).
    #[inline(always)]
    pub fn opponent_house(self, i: usize) -> u32 {
        self.houses.lane(self.houses_per_side() + i)
    }

    /// Every house as a byte (clamped to 255), the mover's `0..m` then the opponent's
    /// `m..2m`: a cheap read of all of them at once, for indexing.
    #[inline(always)]
    pub fn house_bytes(self) -> [u8; 16] {
        self.houses.low_bytes()
    }

    /// The houses one byte each, as [`Board::house_bytes`] but for up to 12 houses a side
    /// (zero past `2m`): the name of a board in a [`crate::search::harvest::Harvest`]. Exact
    /// while every house holds at most 255 seeds.
    pub fn house_key(self) -> HouseKey {
        let mut key = [0u8; 24];
        if L::CAPACITY <= 16 {
            key[..16].copy_from_slice(&self.houses.low_bytes());
        } else {
            for (i, k) in key.iter_mut().enumerate().take(2 * self.houses_per_side()) {
                *k = self.houses.lane(i).min(255) as u8;
            }
        }
        key
    }

    /// Seeds on the mover's side.
    #[inline(always)]
    pub fn mover_seeds(self) -> u32 {
        self.houses.sum_range(0, self.houses_per_side())
    }

    /// Seeds on the opponent's side.
    #[inline(always)]
    pub fn opponent_seeds(self) -> u32 {
        let m = self.houses_per_side();
        self.houses.sum_range(m, 2 * m)
    }

    /// Seeds on the board (the *level* of the position).
    #[inline(always)]
    pub fn seeds(self) -> u32 {
        // The lanes past the 2m houses are always empty.
        debug_assert_eq!(
            self.houses.sum_all(),
            self.houses.sum_range(0, 2 * self.houses_per_side())
        );
        self.houses.sum_all()
    }

    /// The house-only key, normalised to the side to move, stores excluded.
    #[inline(always)]
    pub fn key(self) -> L {
        self.houses
    }

    /// Whether the game is over: a side has no seeds left.
    #[inline(always)]
    pub fn is_finished(self) -> bool {
        let (mine, theirs) = self.houses.split_halves(self.houses_per_side());
        mine.is_zero() || theirs.is_zero()
    }

    /// Bit `i` set when the mover's house `i + 1` is non-empty (a legal move unless the game is
    /// finished, in which case there are no legal moves: see [`Board::is_finished`]).
    #[inline(always)]
    pub fn movable(self) -> u32 {
        self.houses.nonzero_mask(0, self.houses_per_side())
    }

    /// The same board seen from the other side.
    #[inline(always)]
    pub fn flipped(self) -> Self {
        Board {
            houses: self.houses.swap_halves(self.houses_per_side()),
            m: self.m,
        }
    }

    /// Sows the mover's house `h` (0-based) under `rules` and returns the board seen from the
    /// side that moves next (the same side after an extra turn or at the game's end, the
    /// opponent otherwise) and what the sowing did.
    ///
    /// The rules of a sowing (RULES.md) are stated here only, once for every lane type,
    /// over the lanes' operations: lift the house, sow the laps and the rest, capture, end the
    /// game when a side is empty, turn the board.
    ///
    /// Precondition: `h < m`, the house is non-empty and the game is not finished. Breaking it
    /// is a logic error (checked in debug builds); [`crate::Position::play`] checks it.
    #[inline(always)]
    pub fn sow(self, h: usize, rules: Rules) -> (Self, Sowing) {
        let m = self.houses_per_side();
        let lanes = 2 * m;
        let cycle = lanes + 1;
        debug_assert!(h < m && self.mover_house(h) > 0 && !self.is_finished());
        let mut houses = self.houses;
        let seeds = houses.take_low_lane(h) as usize;

        // Most sowings are shorter than a lap: spare them the division.
        let (laps, rem) = if seeds < cycle {
            (0, seeds)
        } else {
            (seeds / cycle, seeds % cycle)
        };
        if laps > 0 {
            houses.add_range(0, lanes, laps as u32);
        }
        // The rest covers the cycle positions h+1 ..= h+rem: the store (position m) if it
        // reaches it, and the lanes from h+1 on, wrapping after the opponent's last house.
        let end = h + rem;
        let store_hit = end >= m;
        houses.add_one_wrapping(h + 1, rem - usize::from(store_hit), lanes);
        let last = if end >= cycle { end - cycle } else { end };
        let mut sowing = Sowing {
            mover_gain: laps as u32 + u32::from(store_hit),
            extra_turn: last == m,
            ..Sowing::default()
        };

        // Capture: the last seed fell into an empty house of the mover's (it holds 1 now).
        if last < m && houses.low_lane(last) == 1 {
            let opposite = lanes - 1 - last;
            if houses.lane(opposite) > 0 || rules == Rules::EmptyCapture {
                let taken = houses.take_low_lane(last) + houses.take(opposite);
                sowing.captured = taken;
                sowing.mover_gain += taken;
            }
        }

        // Game end: a side has no seeds; each side's seeds go to its owner's store.
        let (mine, theirs) = houses.split_halves(m);
        if mine.is_zero() || theirs.is_zero() {
            sowing.mover_gain += mine.sum_all();
            sowing.opponent_gain = theirs.sum_all();
            sowing.game_over = true;
            sowing.extra_turn = false;
            let board = Board {
                houses: L::default(),
                m: self.m,
            };
            return (board, sowing);
        }

        let board = Board { houses, m: self.m };
        let next = if sowing.extra_turn {
            board
        } else {
            board.flipped()
        };
        (next, sowing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Wide;

    #[test]
    fn the_house_key_names_every_house_of_up_to_12_a_side() {
        // Boards that differ in one house only, the last of the opponent's too (lane 23 of
        // 12 houses a side, past the 16 that house_bytes holds), have other keys; a narrow
        // board's key is its house bytes.
        for m in [2usize, 8, 9, 12] {
            let mover: Vec<u32> = (0..m as u32).map(|i| i % 4).collect();
            let opponent: Vec<u32> = (0..m as u32).map(|i| (i + 1) % 3).collect();
            let base = Board::<Wide>::from_houses(&mover, &opponent).unwrap();
            for i in 0..2 * m {
                let (mut a, mut b) = (mover.clone(), opponent.clone());
                if i < m {
                    a[i] += 200;
                } else {
                    b[i - m] += 200;
                }
                let other = Board::<Wide>::from_houses(&a, &b).unwrap();
                assert_ne!(base.house_key(), other.house_key(), "{m} houses, house {i}");
            }
            if m <= 8 {
                let narrow = Board::<Narrow>::from_houses(&mover, &opponent).unwrap();
                assert_eq!(narrow.house_key(), base.house_key());
                assert_eq!(narrow.house_key()[..16], narrow.house_bytes());
            }
        }
    }

    #[test]
    fn narrow_and_wide_sow_alike() {
        // Random boards of 1 to 8 houses a side, from sparse to several laps a house, every
        // move under both rules: the same board and the same sowing on both lane types (the
        // narrow lanes sow the rest of a lap from a table, the wide ones range by range).
        let mut rng = crate::rng::Rng::new(7);
        let mut sown = 0;
        for round in 0..20_000 {
            let m = 1 + round % 8;
            let most: u64 = [2, 4, 8, 20, 40][round % 5];
            let mut houses: Vec<u32> = (0..2 * m).map(|_| rng.below(most) as u32).collect();
            while houses.iter().sum::<u32>() > 255 {
                let i = rng.below(2 * m as u64) as usize;
                houses[i] /= 2;
            }
            let narrow = Board::<Narrow>::from_houses(&houses[..m], &houses[m..]).unwrap();
            let wide = Board::<Wide>::from_houses(&houses[..m], &houses[m..]).unwrap();
            if narrow.is_finished() {
                continue;
            }
            for h in (0..m).filter(|&h| narrow.mover_house(h) > 0) {
                for rules in [Rules::Standard, Rules::EmptyCapture] {
                    let (a, sa) = narrow.sow(h, rules);
                    let (b, sb) = wide.sow(h, rules);
                    assert_eq!(sa, sb, "{narrow:?} house {h} {rules:?}");
                    for i in 0..m {
                        assert_eq!(a.mover_house(i), b.mover_house(i), "{narrow:?} house {h}");
                        assert_eq!(a.opponent_house(i), b.opponent_house(i), "{narrow:?}");
                    }
                    sown += 1;
                }
            }
        }
        assert!(sown > 100_000, "{sown}");
    }

    #[test]
    fn full_lap_lands_in_the_emptied_house_and_captures() {
        // Kalah(6): 13 seeds from house 1 go once round and end in house 1 itself.
        let board =
            Board::<Narrow>::from_houses(&[13, 1, 0, 0, 0, 0], &[0, 0, 0, 0, 0, 2]).unwrap();
        let (next, sowing) = board.sow(0, Rules::Standard);
        // House 1 faces the opponent's house 6, which held 2 and gained 1.
        assert_eq!(sowing.captured, 1 + 3);
        assert_eq!(sowing.mover_gain, 1 + 4);
        assert!(!sowing.extra_turn && !sowing.game_over);
        // Seen from the opponent now: their houses got one seed each (house 6 was captured).
        assert_eq!(
            (0..6).map(|i| next.mover_house(i)).collect::<Vec<_>>(),
            [1, 1, 1, 1, 1, 0]
        );
        assert_eq!(
            (0..6).map(|i| next.opponent_house(i)).collect::<Vec<_>>(),
            [0, 2, 1, 1, 1, 1]
        );
    }
}
