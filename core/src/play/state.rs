//! The state of a game under any play rule set, on plain pits.
//!
//! ```text
//! pits: [ s_1 .. s_m | South store | n_1 .. n_m | North store ]   (absolute, South's view)
//!         0 .. m-1   |      m      | m+1 .. 2m  |    2m+1
//! ```
//!
//! Play needs every rule set of RULES.md, not speed: `standard` and `empty-capture` Kalah and
//! the 1973 BASIC `awari-basic` (both homes sown, at most one extra move a turn, captures on
//! either side, leftovers count for nobody). The packed [`crate::Board`] knows only Kalah; under
//! Kalah rules this state is checked against it move for move (tests/play.rs), and converts to a
//! [`crate::Position`] for the solver.

use std::fmt;
use std::str::FromStr;

use crate::position::{Move, Setup};
use crate::rules::{MAX_HOUSES, Rules, Side};

/// A rule set for play.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PlayRules {
    /// Kalah with the given capture rule.
    Kalah(Rules),
    /// The 1973 BASIC "Awari" (see RULES.md).
    AwariBasic,
    /// The Manchester "ManKalah" engine's rules: `standard` Kalah, except that South's very
    /// first sowing never earns an extra turn (its pie rule is [`crate::play::GameRules::pie`]).
    ManKalah,
}

impl PlayRules {
    /// Every play rule set, as named on the command line.
    pub const ALL: [PlayRules; 4] = [
        PlayRules::Kalah(Rules::Standard),
        PlayRules::Kalah(Rules::EmptyCapture),
        PlayRules::AwariBasic,
        PlayRules::ManKalah,
    ];

    /// The command-line name: `standard`, `empty-capture`, `awari-basic` or `mankalah`.
    pub fn as_str(self) -> &'static str {
        match self {
            PlayRules::Kalah(r) => r.as_str(),
            PlayRules::AwariBasic => "awari-basic",
            PlayRules::ManKalah => "mankalah",
        }
    }

    /// The Kalah capture rule the solver uses for these rules' positions, if any. Under
    /// `mankalah` that is `standard`, which holds for every position but the start (see
    /// [`PlayState::first_sowing_passes`]).
    pub fn kalah(self) -> Option<Rules> {
        match self {
            PlayRules::Kalah(r) => Some(r),
            PlayRules::ManKalah => Some(Rules::Standard),
            PlayRules::AwariBasic => None,
        }
    }
}

impl fmt::Display for PlayRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PlayRules {
    type Err = String;

    fn from_str(s: &str) -> Result<PlayRules, String> {
        PlayRules::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown rules {} (expected standard, empty-capture, awari-basic or \
                     mankalah)",
                    crate::text::quote(s)
                )
            })
    }
}

const PITS: usize = 2 * MAX_HOUSES + 2;

/// A position under play rules (see the module docs for the layout).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PlayState {
    m: usize,
    pits: [u32; PITS],
    to_move: Side,
    over: bool,
    /// awari-basic: the side to move is making its turn's extra move (it earns no other).
    extra_move: bool,
    /// No sowing has been made yet (mankalah: the first one earns no extra turn).
    fresh: bool,
    rules: PlayRules,
}

/// What one sowing did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Sown {
    /// The same side moves again.
    pub extra_turn: bool,
    /// Seeds taken by a capture (the last seed and the opposite house), 0 if none.
    pub captured: u32,
    /// The game ended.
    pub game_over: bool,
}

impl PlayState {
    /// The start of a game: `m` houses a side (1 to 12), `n` seeds in each, South to move.
    pub fn start(m: usize, n: u32, rules: PlayRules) -> PlayState {
        assert!((1..=MAX_HOUSES).contains(&m), "1 to {MAX_HOUSES} houses");
        let mut pits = [0; PITS];
        pits[..m].fill(n);
        pits[m + 1..2 * m + 1].fill(n);
        PlayState {
            m,
            pits,
            to_move: Side::South,
            over: false,
            extra_move: false,
            fresh: true,
            rules,
        }
    }

    /// A state from a setup (valid for Kalah: at most 12 houses, numbers that fit).
    pub fn from_setup(setup: &Setup, rules: PlayRules) -> PlayState {
        let m = setup.houses;
        let mut state = PlayState::start(m, 0, rules);
        for i in 0..m {
            state.pits[i] = setup.south[i] as u32;
            state.pits[m + 1 + i] = setup.north[i] as u32;
        }
        state.pits[m] = setup.stores[0] as u32;
        state.pits[2 * m + 1] = setup.stores[1] as u32;
        state.to_move = setup.to_move.unwrap_or(Side::South);
        // A position given by its pits is not the start of a game, unless it is the start.
        state.fresh = state.to_move == Side::South
            && state.store(Side::South) == 0
            && state.store(Side::North) == 0
            && state.houses(Side::South) == state.houses(Side::North)
            && state.houses(Side::South).windows(2).all(|w| w[0] == w[1]);
        state.over = state.side_empty(Side::South) || state.side_empty(Side::North);
        state
    }

    /// As a setup (`to_move` is `None` once the game is over).
    pub fn to_setup(&self) -> Setup {
        let m = self.m;
        let row = |r: &[u32]| r.iter().map(|&s| u64::from(s)).collect();
        Setup {
            houses: m,
            stores: [
                u64::from(self.store(Side::South)),
                u64::from(self.store(Side::North)),
            ],
            south: row(&self.pits[..m]),
            north: row(&self.pits[m + 1..2 * m + 1]),
            to_move: self.to_move(),
        }
    }

    /// The board drawn as [`crate::render()`] draws a position (the drawing is the same under
    /// every rule set).
    pub fn render(&self) -> String {
        let pos = crate::position::AnyPosition::from_setup(&self.to_setup(), Rules::Standard)
            .expect("a play state is a valid setup");
        let drawing = crate::with_position!(pos, p => crate::render::render(&p));
        if !(self.over && self.rules == PlayRules::AwariBasic) {
            return drawing;
        }
        // The drawing's status line tells a Kalah ending (the board swept into the stores);
        // under awari-basic the seeds left count for nobody.
        let board = drawing.trim_end().rsplit_once('\n').map_or("", |(b, _)| b);
        format!(
            "{board}\ngame over: {} ({} seeds left on the board count for nobody)\n",
            self.result().expect("the game is over"),
            self.seeds_on_board()
        )
    }

    /// The result once the game is over: `South 30, North 18: South wins by 12`.
    pub fn result(&self) -> Option<String> {
        if !self.over {
            return None;
        }
        let (s, n) = (self.store(Side::South), self.store(Side::North));
        let verdict = match s.cmp(&n) {
            std::cmp::Ordering::Greater => format!("South wins by {}", s - n),
            std::cmp::Ordering::Less => format!("North wins by {}", n - s),
            std::cmp::Ordering::Equal => "draw".to_owned(),
        };
        Some(format!("South {s}, North {n}: {verdict}"))
    }

    /// A 64-bit hash of what decides the future store difference: the houses seen from the
    /// side to move, and the flags of the turn (stores excluded, as in [`crate::Board::key`]).
    pub fn key(&self) -> u64 {
        let me = self.to_move;
        let mut h = crate::lanes::mix64(
            u64::from(self.extra_move) | u64::from(self.fresh) << 1 | (self.m as u64) << 2,
        );
        for &seeds in self.houses(me).iter().chain(self.houses(me.other())) {
            h = crate::lanes::mix64(h ^ u64::from(seeds));
        }
        h
    }

    /// Houses a side.
    pub fn houses_per_side(&self) -> usize {
        self.m
    }

    /// The rule set.
    pub fn rules(&self) -> PlayRules {
        self.rules
    }

    /// Who moves next; `None` once the game is over.
    pub fn to_move(&self) -> Option<Side> {
        (!self.over).then_some(self.to_move)
    }

    /// Whether the next sowing passes the turn even if it ends in the store (`mankalah`:
    /// South's first sowing). The solver does not know this rule: callers value such a
    /// position by its moves.
    pub fn first_sowing_passes(&self) -> bool {
        self.rules == PlayRules::ManKalah && self.fresh && !self.over
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Seeds in `side`'s store.
    pub fn store(&self, side: Side) -> u32 {
        self.pits[self.store_index(side)]
    }

    /// Seeds in `side`'s houses, house 1 first.
    pub fn houses(&self, side: Side) -> &[u32] {
        let first = self.first_house(side);
        &self.pits[first..first + self.m]
    }

    /// Seeds left on the board.
    pub fn seeds_on_board(&self) -> u32 {
        self.houses(Side::South)
            .iter()
            .chain(self.houses(Side::North))
            .sum()
    }

    /// `side`'s store minus the other's.
    pub fn store_difference(&self, side: Side) -> i32 {
        self.store(side) as i32 - self.store(side.other()) as i32
    }

    /// The legal moves of the side to move (none once the game is over).
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.over {
            return Vec::new();
        }
        let houses = self.houses(self.to_move);
        (0..self.m)
            .filter(|&i| houses[i] > 0)
            .map(|i| Move::new(i + 1).expect("a house number"))
            .collect()
    }

    /// Whether `mv` is legal now.
    pub fn is_legal(&self, mv: Move) -> bool {
        !self.over && mv.house() <= self.m && self.houses(self.to_move)[mv.index()] > 0
    }

    fn first_house(&self, side: Side) -> usize {
        match side {
            Side::South => 0,
            Side::North => self.m + 1,
        }
    }

    fn store_index(&self, side: Side) -> usize {
        match side {
            Side::South => self.m,
            Side::North => 2 * self.m + 1,
        }
    }

    fn side_empty(&self, side: Side) -> bool {
        self.houses(side).iter().all(|&s| s == 0)
    }

    /// Sows `mv` for the side to move. Precondition: [`PlayState::is_legal`].
    pub fn play(&mut self, mv: Move) -> Sown {
        debug_assert!(self.is_legal(mv));
        let m = self.m;
        let me = self.to_move;
        let own_store = self.store_index(me);
        let their_store = self.store_index(me.other());
        let awari = self.rules == PlayRules::AwariBasic;
        let mut pit = self.first_house(me) + mv.index();
        let mut hand = std::mem::take(&mut self.pits[pit]);
        while hand > 0 {
            pit = (pit + 1) % (2 * m + 2);
            // Kalah skips the opponent's store; awari-basic sows both homes.
            if pit == their_store && !awari {
                continue;
            }
            self.pits[pit] += 1;
            hand -= 1;
        }
        let mut sown = Sown {
            extra_turn: pit == own_store
                && !(awari && self.extra_move)
                && !self.first_sowing_passes(),
            ..Sown::default()
        };
        self.fresh = false;
        let is_house = pit != own_store && pit != their_store;
        let own_house = pit >= self.first_house(me) && pit < self.first_house(me) + m;
        if is_house && self.pits[pit] == 1 && (own_house || awari) {
            // South's pit i faces 2m - i; North's pit m+1+k faces m-1-k: 2m - pit in both cases.
            let opposite = 2 * m - pit;
            let taken = self.pits[opposite];
            if taken > 0 || self.rules == PlayRules::Kalah(Rules::EmptyCapture) {
                self.pits[pit] = 0;
                self.pits[opposite] = 0;
                self.pits[own_store] += taken + 1;
                sown.captured = taken + 1;
            }
        }
        if self.side_empty(Side::South) || self.side_empty(Side::North) {
            if !awari {
                for side in [Side::South, Side::North] {
                    let first = self.first_house(side);
                    let swept: u32 = self.pits[first..first + m].iter().sum();
                    self.pits[first..first + m].fill(0);
                    let store = self.store_index(side);
                    self.pits[store] += swept;
                }
            }
            // awari-basic: the seeds left on the board count for nobody.
            self.over = true;
            sown.game_over = true;
            sown.extra_turn = false;
        }
        if sown.extra_turn {
            self.extra_move = awari;
        } else {
            self.extra_move = false;
            if !sown.game_over {
                self.to_move = me.other();
            }
        }
        sown
    }
}
