//! Raw [`Setup`]s, validated [`Position`]s, moves and game flow.
//!
//! Text parses into a `Setup` (see [`crate::notation`]); only [`Position::from_setup`] makes a
//! `Position`, and a refusal names every defect it found.

use std::fmt;

use crate::board::{Board, Sowing};
use crate::lanes::{Lanes, Narrow, Wide};
use crate::rules::{MAX_HOUSES, MAX_SEEDS, MIN_HOUSES, Rules, Side, Variant};

/// A position as written, not yet checked: what the KGP board literal says, plus who is to move.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Setup {
    /// Houses a side (m).
    pub houses: usize,
    /// Seeds in South's and North's stores.
    pub stores: [u64; 2],
    /// South's houses, house 1 first.
    pub south: Vec<u64>,
    /// North's houses, house 1 first (North's house 1 faces South's house m).
    pub north: Vec<u64>,
    /// The side to move if stated; `None` means South (or nobody, if the game is over).
    pub to_move: Option<Side>,
}

/// One reason why a [`Setup`] is not a valid [`Position`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Defect {
    /// m is outside the supported range.
    HousesOutOfRange(usize),
    /// A row does not hold m houses.
    RowLength {
        /// Whose row.
        side: Side,
        /// Its length.
        found: usize,
        /// m.
        expected: usize,
    },
    /// More seeds than the crate can count.
    TooManySeeds(u64),
    /// The position does not fit the requested packing (only when one is forced).
    DoesNotFit(&'static str),
    /// A side to move was given, but a side has no seeds: the game is over.
    SideToMoveInFinishedGame(Side),
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Defect::HousesOutOfRange(m) => write!(
                f,
                "{m} houses a side is out of range (supported: {MIN_HOUSES} to {MAX_HOUSES})"
            ),
            Defect::RowLength {
                side,
                found,
                expected,
            } => write!(f, "{side}'s row has {found} houses, expected {expected}"),
            Defect::TooManySeeds(total) => write!(
                f,
                "{total} seeds in all is more than the supported {MAX_SEEDS}"
            ),
            Defect::DoesNotFit(packing) => {
                write!(f, "the position does not fit the {packing} board packing")
            }
            Defect::SideToMoveInFinishedGame(side) => write!(
                f,
                "{side} is given to move, but the game is over (a side has no seeds)"
            ),
        }
    }
}

/// Every defect that kept a [`Setup`] from being a [`Position`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SetupError {
    /// The defects found, at least one.
    pub defects: Vec<Defect>,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.defects.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SetupError {}

/// A house number, 1..=m, counted from the mover's side (house m is next to the mover's store).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Move(u8);

impl Move {
    /// House `number` (1-based). `None` outside 1..=MAX_HOUSES.
    pub fn new(number: usize) -> Option<Move> {
        (1..=MAX_HOUSES)
            .contains(&number)
            .then_some(Move(number as u8))
    }

    /// The house number, 1-based.
    pub fn house(self) -> usize {
        usize::from(self.0)
    }

    /// The lane index on the mover's side, 0-based.
    #[inline]
    pub fn index(self) -> usize {
        usize::from(self.0) - 1
    }
}

/// Why a move cannot be played.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum IllegalMove {
    /// The game is over.
    GameOver,
    /// The house number is above m.
    NoSuchHouse {
        /// The house asked for.
        house: usize,
        /// m.
        houses: usize,
    },
    /// The house holds no seeds.
    EmptyHouse(usize),
    /// A turn went on after a sowing that did not earn an extra turn.
    TurnAlreadyOver(usize),
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IllegalMove::GameOver => write!(f, "the game is over"),
            IllegalMove::NoSuchHouse { house, houses } => {
                write!(f, "there is no house {house} (houses are 1 to {houses})")
            }
            IllegalMove::EmptyHouse(h) => write!(f, "house {h} is empty"),
            IllegalMove::TurnAlreadyOver(h) => write!(
                f,
                "house {h} follows a sowing that did not earn an extra turn"
            ),
        }
    }
}

impl std::error::Error for IllegalMove {}

/// The end of a game: the final stores.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Outcome {
    /// Final stores, South then North.
    pub stores: [u32; 2],
}

impl Outcome {
    /// The winner, or `None` for a draw.
    pub fn winner(self) -> Option<Side> {
        match self.stores[0].cmp(&self.stores[1]) {
            std::cmp::Ordering::Greater => Some(Side::South),
            std::cmp::Ordering::Less => Some(Side::North),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// Final store difference, `side` minus the other.
    pub fn margin(self, side: Side) -> i32 {
        let s = self.stores[side.index()] as i32;
        let o = self.stores[side.other().index()] as i32;
        s - o
    }
}

/// A valid position: houses (packed, from the side to move's view), stores, side to move, rules.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position<L: Lanes = Narrow> {
    board: Board<L>,
    stores: [u32; 2],
    /// The side whose view `board` is in: the side to move unless the game is over.
    side: Side,
    rules: Rules,
}

impl<L: Lanes> Position<L> {
    /// The start position of `variant`, or `None` if it does not fit the packing `L`.
    pub fn start(variant: Variant) -> Option<Self> {
        Board::start(variant.houses(), variant.seeds()).map(|board| Position {
            board,
            stores: [0, 0],
            side: Side::South,
            rules: variant.rules(),
        })
    }

    /// Validates `setup` under `rules`, naming every defect on refusal.
    pub fn from_setup(setup: &Setup, rules: Rules) -> Result<Self, SetupError> {
        let mut defects = check_setup(setup);
        if defects.is_empty() {
            let (mover, opponent) = match setup.to_move.unwrap_or(Side::South) {
                Side::South => (&setup.south, &setup.north),
                Side::North => (&setup.north, &setup.south),
            };
            let to_u32 = |row: &Vec<u64>| row.iter().map(|&s| s as u32).collect::<Vec<_>>();
            match Board::from_houses(&to_u32(mover), &to_u32(opponent)) {
                Some(board) => {
                    return Ok(Position {
                        board,
                        stores: setup.stores.map(|s| s as u32),
                        side: setup.to_move.unwrap_or(Side::South),
                        rules,
                    });
                }
                None => defects.push(Defect::DoesNotFit(L::NAME)),
            }
        }
        Err(SetupError { defects })
    }

    /// The raw setup this position was made from (`to_move` is `None` when the game is over).
    pub fn to_setup(&self) -> Setup {
        let row = |side: Side| self.houses(side).into_iter().map(u64::from).collect();
        Setup {
            houses: self.houses_per_side(),
            stores: self.stores.map(u64::from),
            south: row(Side::South),
            north: row(Side::North),
            to_move: self.to_move(),
        }
    }

    /// The packed board, from the side to move's view.
    #[inline]
    pub fn board(&self) -> Board<L> {
        self.board
    }

    /// The capture rule.
    #[inline]
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Houses a side.
    #[inline]
    pub fn houses_per_side(&self) -> usize {
        self.board.houses_per_side()
    }

    /// `side`'s houses in its sowing order, house 1 first.
    pub fn houses(&self, side: Side) -> Vec<u32> {
        let m = self.houses_per_side();
        if side == self.side {
            (0..m).map(|i| self.board.mover_house(i)).collect()
        } else {
            (0..m).map(|i| self.board.opponent_house(i)).collect()
        }
    }

    /// Seeds in `side`'s store.
    #[inline]
    pub fn store(&self, side: Side) -> u32 {
        self.stores[side.index()]
    }

    /// Seeds on the board.
    #[inline]
    pub fn seeds_on_board(&self) -> u32 {
        self.board.seeds()
    }

    /// Whether the game is over (a side has no seeds in its houses).
    #[inline]
    pub fn is_finished(&self) -> bool {
        self.board.is_finished()
    }

    /// The side to move, or `None` once the game is over.
    #[inline]
    pub fn to_move(&self) -> Option<Side> {
        (!self.is_finished()).then_some(self.side)
    }

    /// The legal moves, house 1 first; none once the game is over.
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.is_finished() {
            return Vec::new();
        }
        let mask = self.board.movable();
        (0..self.houses_per_side())
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| Move(i as u8 + 1))
            .collect()
    }

    /// Plays one sowing, checking that it is legal.
    pub fn play(&self, mv: Move) -> Result<(Self, Sowing), IllegalMove> {
        if self.is_finished() {
            return Err(IllegalMove::GameOver);
        }
        if mv.house() > self.houses_per_side() {
            return Err(IllegalMove::NoSuchHouse {
                house: mv.house(),
                houses: self.houses_per_side(),
            });
        }
        if self.board.mover_house(mv.index()) == 0 {
            return Err(IllegalMove::EmptyHouse(mv.house()));
        }
        Ok(self.play_unchecked(mv))
    }

    /// Plays one sowing. Precondition: `mv` is legal (see [`Position::play`]).
    #[inline]
    pub fn play_unchecked(&self, mv: Move) -> (Self, Sowing) {
        let (board, sowing) = self.board.sow(mv.index(), self.rules);
        let mut stores = self.stores;
        stores[self.side.index()] += sowing.mover_gain;
        stores[self.side.other().index()] += sowing.opponent_gain;
        let side = if sowing.passes_turn() {
            self.side.other()
        } else {
            self.side
        };
        let next = Position {
            board,
            stores,
            side,
            rules: self.rules,
        };
        (next, sowing)
    }

    /// Plays a whole turn: every sowing but the last must earn an extra turn.
    pub fn play_turn(&self, turn: &[Move]) -> Result<Self, IllegalMove> {
        let mut pos = *self;
        let mut turn_over = false;
        for &mv in turn {
            if turn_over {
                return Err(IllegalMove::TurnAlreadyOver(mv.house()));
            }
            let (next, sowing) = pos.play(mv)?;
            turn_over = !sowing.extra_turn;
            pos = next;
        }
        Ok(pos)
    }

    /// The final stores once the game is over (seeds left in houses go to their owner's store).
    pub fn outcome(&self) -> Option<Outcome> {
        self.is_finished().then(|| {
            let sum = |side| self.houses(side).iter().sum::<u32>();
            Outcome {
                stores: [
                    self.stores[0] + sum(Side::South),
                    self.stores[1] + sum(Side::North),
                ],
            }
        })
    }

    /// Store difference, the side whose view the board is in (the side to move) minus the other.
    pub fn store_difference(&self) -> i32 {
        self.stores[self.side.index()] as i32 - self.stores[self.side.other().index()] as i32
    }
}

impl<L: Lanes> fmt::Display for Position<L> {
    /// The KGP board literal, followed by ` north` when North is to move.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_setup().fmt(f)
    }
}

/// The defects of `setup` that do not depend on the packing.
fn check_setup(setup: &Setup) -> Vec<Defect> {
    let mut defects = Vec::new();
    let m = setup.houses;
    if !(MIN_HOUSES..=MAX_HOUSES).contains(&m) {
        defects.push(Defect::HousesOutOfRange(m));
    }
    for (side, row) in [(Side::South, &setup.south), (Side::North, &setup.north)] {
        if row.len() != m {
            defects.push(Defect::RowLength {
                side,
                found: row.len(),
                expected: m,
            });
        }
    }
    let total = setup
        .stores
        .iter()
        .chain(&setup.south)
        .chain(&setup.north)
        .fold(0u64, |acc, &s| acc.saturating_add(s));
    if total > u64::from(MAX_SEEDS) {
        defects.push(Defect::TooManySeeds(total));
    }
    if let Some(side) = setup.to_move {
        let empty = |row: &Vec<u64>| row.iter().all(|&s| s == 0);
        if empty(&setup.south) || empty(&setup.north) {
            defects.push(Defect::SideToMoveInFinishedGame(side));
        }
    }
    defects
}

/// A position in whichever packing fits it: [`Narrow`] when it can, [`Wide`] otherwise.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AnyPosition {
    /// Up to 8 houses a side and 255 seeds on the board.
    Narrow(Position<Narrow>),
    /// Everything else the crate supports.
    Wide(Position<Wide>),
}

/// Runs `$body` with `$p` bound to the position inside an [`AnyPosition`], whatever its packing.
#[macro_export]
macro_rules! with_position {
    ($any:expr, $p:ident => $body:expr) => {
        match $any {
            $crate::AnyPosition::Narrow($p) => $body,
            $crate::AnyPosition::Wide($p) => $body,
        }
    };
}

impl AnyPosition {
    /// The start of `variant`.
    pub fn start(variant: Variant) -> AnyPosition {
        match Position::<Narrow>::start(variant) {
            Some(p) => AnyPosition::Narrow(p),
            None => AnyPosition::Wide(
                Position::<Wide>::start(variant).expect("every Variant fits the wide packing"),
            ),
        }
    }

    /// Validates `setup` under `rules` in the narrowest packing that holds it.
    pub fn from_setup(setup: &Setup, rules: Rules) -> Result<AnyPosition, SetupError> {
        match Position::<Narrow>::from_setup(setup, rules) {
            Ok(p) => Ok(AnyPosition::Narrow(p)),
            Err(_) => Position::<Wide>::from_setup(setup, rules).map(AnyPosition::Wide),
        }
    }
}

impl fmt::Display for AnyPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        with_position!(self, p => p.fmt(f))
    }
}
