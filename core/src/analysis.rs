//! The exact answer for one position: its value under perfect play, the value of every legal
//! move, the best moves and a perfect line.
//!
//! Both the search ([`crate::search`]) and the databases ([`crate::db::Tablebase::analyze`])
//! give their answers in these types; they sit below both, so that neither depends on the
//! other for them.

use crate::notation::Turn;
use crate::position::Move;
use crate::rules::Side;

/// The exact value of one move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveValue {
    /// The house sown.
    pub mv: Move,
    /// The final store difference for the side that moves, after this move and perfect play.
    pub value: i32,
}

/// A solved position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Analysis {
    /// The side to move (`None` for a finished game: the value is then South's margin).
    pub to_move: Option<Side>,
    /// Final store difference for the side to move, stores included, under perfect play.
    pub value: i32,
    /// Every legal move with its value (house order).
    pub moves: Vec<MoveValue>,
    /// The moves whose value equals `value`.
    pub best: Vec<Move>,
    /// A perfect game to the end: turns, the first by the side to move (lowest optimal house
    /// at every step, so the line is the same for any thread count).
    pub pv: Vec<Turn>,
}

impl Analysis {
    /// The analysis of a position whose side to move is `to_move`, with store difference
    /// `stores` (for that side), f (the value less the stores) `f` and each legal move's f
    /// `values` (house order), and the perfect line `pv`: the best moves are those worth `f`.
    pub fn of_move_values(
        to_move: Side,
        stores: i32,
        f: i32,
        values: &[(Move, i32)],
        pv: Vec<Turn>,
    ) -> Analysis {
        Analysis {
            to_move: Some(to_move),
            value: stores + f,
            moves: values
                .iter()
                .map(|&(mv, v)| MoveValue {
                    mv,
                    value: stores + v,
                })
                .collect(),
            best: values
                .iter()
                .filter(|&&(_, v)| v == f)
                .map(|&(mv, _)| mv)
                .collect(),
            pv,
        }
    }

    /// The value of move `mv`, if it is one of the moves.
    pub fn value_of(&self, mv: Move) -> Option<i32> {
        self.moves.iter().find(|m| m.mv == mv).map(|m| m.value)
    }
}
