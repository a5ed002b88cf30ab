//! A deliberately plain implementation of the rules: one array of pits, seeds sown one by one.
//!
//! It shares nothing with [`crate::Board`] but the [`Setup`] type, and exists to check the packed
//! implementation (tests, golden perft files made by `scripts/golden-perft.sh`). Slow by design.
//!
//! ```text
//! pits: [ s_1 .. s_m | South store | n_1 .. n_m | North store ]   (absolute, South's view)
//!         0 .. m-1   |      m      | m+1 .. 2m  |    2m+1
//! ```

use crate::position::Setup;
use crate::rules::{Rules, Side};

/// A position of the reference implementation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RefPosition {
    /// Houses a side.
    pub m: usize,
    /// All pits, laid out as in the module docs.
    pub pits: Vec<u32>,
    /// Who moves next (meaningless once the game is over).
    pub to_move: Side,
    /// Capture rule.
    pub rules: Rules,
}

/// What a reference sowing did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RefEffect {
    /// The mover plays again.
    pub extra_turn: bool,
    /// Seeds moved by a capture (0 if none).
    pub captured: u32,
    /// The game ended with this sowing.
    pub game_over: bool,
}

impl RefPosition {
    /// From a setup assumed valid (row lengths equal to m, small numbers).
    pub fn from_setup(setup: &Setup, rules: Rules) -> RefPosition {
        let m = setup.houses;
        let mut pits = Vec::with_capacity(2 * m + 2);
        pits.extend(setup.south.iter().map(|&s| s as u32));
        pits.push(setup.stores[0] as u32);
        pits.extend(setup.north.iter().map(|&s| s as u32));
        pits.push(setup.stores[1] as u32);
        RefPosition {
            m,
            pits,
            to_move: setup.to_move.unwrap_or(Side::South),
            rules,
        }
    }

    /// Back to a setup (`to_move` is `None` once the game is over).
    pub fn to_setup(&self) -> Setup {
        let m = self.m;
        let row = |r: &[u32]| r.iter().map(|&s| u64::from(s)).collect();
        Setup {
            houses: m,
            stores: [u64::from(self.pits[m]), u64::from(self.pits[2 * m + 1])],
            south: row(&self.pits[..m]),
            north: row(&self.pits[m + 1..2 * m + 1]),
            to_move: (!self.is_over()).then_some(self.to_move),
        }
    }

    fn first_house(&self, side: Side) -> usize {
        match side {
            Side::South => 0,
            Side::North => self.m + 1,
        }
    }

    fn store_index(&self, side: Side) -> usize {
        self.first_house(side) + self.m
    }

    fn side_is_empty(&self, side: Side) -> bool {
        let first = self.first_house(side);
        self.pits[first..first + self.m].iter().all(|&s| s == 0)
    }

    /// Whether a side has no seeds left.
    pub fn is_over(&self) -> bool {
        self.side_is_empty(Side::South) || self.side_is_empty(Side::North)
    }

    /// Legal house numbers (1-based) for the side to move.
    pub fn moves(&self) -> Vec<usize> {
        if self.is_over() {
            return Vec::new();
        }
        let first = self.first_house(self.to_move);
        (1..=self.m)
            .filter(|h| self.pits[first + h - 1] > 0)
            .collect()
    }

    /// Sows house `house` (1-based, must be legal) and returns what happened.
    pub fn play(&mut self, house: usize) -> RefEffect {
        let me = self.to_move;
        let m = self.m;
        let own_store = self.store_index(me);
        let their_store = self.store_index(me.other());
        let mut pit = self.first_house(me) + house - 1;
        let mut hand = std::mem::take(&mut self.pits[pit]);
        assert!(hand > 0, "reference: house {house} is empty");
        while hand > 0 {
            pit = (pit + 1) % (2 * m + 2);
            if pit == their_store {
                continue;
            }
            self.pits[pit] += 1;
            hand -= 1;
        }
        let mut effect = RefEffect {
            extra_turn: pit == own_store,
            captured: 0,
            game_over: false,
        };
        let first = self.first_house(me);
        let own_house = pit >= first && pit < first + m;
        if own_house && self.pits[pit] == 1 {
            // South's pit i faces 2m - i; North's pit m+1+k faces m-1-k: in both cases 2m - pit.
            let opposite = 2 * m - pit;
            let taken = self.pits[opposite];
            if taken > 0 || self.rules == Rules::EmptyCapture {
                self.pits[pit] = 0;
                self.pits[opposite] = 0;
                self.pits[own_store] += taken + 1;
                effect.captured = taken + 1;
            }
        }
        if self.is_over() {
            for side in [Side::South, Side::North] {
                let first = self.first_house(side);
                let swept: u32 = self.pits[first..first + m].iter().sum();
                self.pits[first..first + m].fill(0);
                let store = self.store_index(side);
                self.pits[store] += swept;
            }
            effect.game_over = true;
            effect.extra_turn = false;
        }
        if !effect.extra_turn && !effect.game_over {
            self.to_move = me.other();
        }
        effect
    }

    /// perft by the same definition as [`crate::perft()`], counted one sowing at a time.
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        self.moves()
            .into_iter()
            .map(|h| {
                let mut child = self.clone();
                child.play(h);
                child.perft(depth - 1)
            })
            .sum()
    }
}
