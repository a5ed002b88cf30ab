//! perft: the number of sowing sequences of a given length, the standard check of move generation.
//!
//! One ply is one sowing, whichever side makes it (an extra turn is a ply of its own):
//! `perft(p, 0) = 1`, `perft(p, d) = Σ perft(child, d - 1)` over the legal sowings of `p`, and a
//! finished game has no legal sowings, so `perft(finished, d) = 0` for `d > 0`.
//!
//! ```
//! use kalah_core::{perft, Position, Rules, Variant};
//!
//! let start = Position::<kalah_core::Narrow>::start(Variant::new(6, 4, Rules::Standard).unwrap()).unwrap();
//! assert_eq!(perft(&start, 1), 6);
//! // Five sowings pass the turn (North has 6 replies each); house 3 ends in South's store,
//! // and South sows again from one of its 5 other houses.
//! assert_eq!(perft(&start, 2), 5 * 6 + 5);
//! ```

use crate::board::Board;
use crate::lanes::Lanes;
use crate::position::{Move, Position};
use crate::rules::Rules;

/// The number of sowing sequences of length `depth` from `pos` (see the module docs).
pub fn perft<L: Lanes>(pos: &Position<L>, depth: u32) -> u64 {
    perft_board(pos.board(), pos.rules(), depth)
}

/// [`perft`] on a bare board (the stores do not change the count).
pub fn perft_board<L: Lanes>(board: Board<L>, rules: Rules, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if board.is_finished() {
        return 0;
    }
    let mut movable = board.movable();
    if depth == 1 {
        return u64::from(movable.count_ones());
    }
    let mut nodes = 0;
    while movable != 0 {
        let h = movable.trailing_zeros() as usize;
        movable &= movable - 1;
        let (child, _) = board.sow(h, rules);
        nodes += perft_board(child, rules, depth - 1);
    }
    nodes
}

/// perft split by first move: each legal move with the count below it (`depth >= 1`).
pub fn divide<L: Lanes>(pos: &Position<L>, depth: u32) -> Vec<(Move, u64)> {
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let (child, _) = pos.play_unchecked(mv);
            (mv, perft(&child, depth.saturating_sub(1)))
        })
        .collect()
}
