//! The plainer rungs of the algorithm ladder, each exact, each without the shared table:
//! minimax, memoised minimax, alpha-beta and NegaScout. They exist to be measured against the
//! full solver (`scripts/ladder.sh`) and to check it on small variants.
//!
//! All work on f, the future store difference of a board for its side to move (see
//! [`super::negamax`]), and count one node per board searched ([`Count`], which also stops
//! them when asked: a value found after a stop means nothing).

use std::collections::HashMap;

use super::Algorithm;
use super::negamax::f_bounds;
use crate::board::Board;
use crate::lanes::Lanes;
use crate::rules::Rules;

/// The nodes a search of the ladder has counted, and the stop it heeds: asked every 4,096
/// nodes; once it says stop, every node returns at once (its value meaningless) so that the
/// search unwinds in moments.
pub struct Count<'a> {
    /// Boards searched.
    pub nodes: u64,
    stop: &'a dyn Fn() -> bool,
    stopped: bool,
}

impl<'a> Count<'a> {
    /// A count from zero that stops once `stop` says so.
    pub fn new(stop: &'a dyn Fn() -> bool) -> Count<'a> {
        Count {
            nodes: 0,
            stop,
            stopped: false,
        }
    }

    /// Whether the search was stopped: its value means nothing.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Counts a node; false once the search must stop.
    fn enter(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes.trailing_zeros() >= 12 && !self.stopped {
            self.stopped = (self.stop)();
        }
        !self.stopped
    }
}

/// f of `board` by `algorithm` (not [`Algorithm::Mtdf`], which needs a [`super::Solver`]).
pub fn solve<L: Lanes>(
    algorithm: Algorithm,
    board: Board<L>,
    rules: Rules,
    count: &mut Count<'_>,
) -> i32 {
    if board.is_finished() {
        return board.mover_seeds() as i32 - board.opponent_seeds() as i32;
    }
    let (lo, hi) = f_bounds(board.seeds(), rules);
    match algorithm {
        Algorithm::Minimax => minimax(board, rules, count),
        Algorithm::Memo => memo(board, rules, &mut HashMap::new(), count),
        Algorithm::AlphaBeta => alphabeta(board, rules, lo - 1, hi + 1, count),
        Algorithm::Scout | Algorithm::Mtdf => scout(board, rules, lo - 1, hi + 1, count),
    }
}

/// The children of a board: (child, gain for the mover, extra turn, game over).
fn children<L: Lanes>(
    board: Board<L>,
    rules: Rules,
) -> impl Iterator<Item = (Board<L>, i32, bool, bool)> {
    let mask = board.movable();
    (0..board.houses_per_side())
        .filter(move |h| mask >> h & 1 == 1)
        .map(move |h| {
            let (child, s) = board.sow(h, rules);
            let gain = s.gain();
            (child, gain, s.extra_turn, s.game_over)
        })
}

/// Plain minimax: the exact f, every line searched to the end.
pub fn minimax<L: Lanes>(board: Board<L>, rules: Rules, count: &mut Count<'_>) -> i32 {
    if !count.enter() {
        return 0;
    }
    children(board, rules)
        .map(|(child, gain, extra, over)| {
            if over {
                gain
            } else if extra {
                gain + minimax(child, rules, count)
            } else {
                gain - minimax(child, rules, count)
            }
        })
        .max()
        .expect("a board that is not finished has a move")
}

/// Minimax that remembers f of every board it has solved.
pub fn memo<L: Lanes>(
    board: Board<L>,
    rules: Rules,
    seen: &mut HashMap<L, i32>,
    count: &mut Count<'_>,
) -> i32 {
    if let Some(&f) = seen.get(&board.key()) {
        return f;
    }
    if !count.enter() {
        return 0;
    }
    let mut best = i32::MIN;
    for (child, gain, extra, over) in children(board, rules) {
        let v = if over {
            gain
        } else if extra {
            gain + memo(child, rules, seen, count)
        } else {
            gain - memo(child, rules, seen, count)
        };
        best = best.max(v);
    }
    seen.insert(board.key(), best);
    best
}

/// Fail-soft alpha-beta in house order, no table. Same contract as
/// [`super::negamax::search`]: `v <= alpha` is an upper bound, `v >= beta` a lower bound,
/// anything between is exact.
pub fn alphabeta<L: Lanes>(
    board: Board<L>,
    rules: Rules,
    mut alpha: i32,
    beta: i32,
    count: &mut Count<'_>,
) -> i32 {
    if !count.enter() {
        return 0;
    }
    let mut best = i32::MIN;
    for (child, gain, extra, over) in children(board, rules) {
        let v = if over {
            gain
        } else if extra {
            gain + alphabeta(child, rules, alpha - gain, beta - gain, count)
        } else {
            gain - alphabeta(child, rules, gain - beta, gain - alpha, count)
        };
        if v > best {
            best = v;
            alpha = alpha.max(v);
            if v >= beta {
                break;
            }
        }
    }
    best
}

/// NegaScout in house order, no table: the first move with the full window, the others with a
/// null window, re-searched when they land inside it. Contract as [`alphabeta`].
pub fn scout<L: Lanes>(
    board: Board<L>,
    rules: Rules,
    mut alpha: i32,
    beta: i32,
    count: &mut Count<'_>,
) -> i32 {
    if !count.enter() {
        return 0;
    }
    let mut best = i32::MIN;
    for (i, (child, gain, extra, over)) in children(board, rules).enumerate() {
        // The child's f searched with the window that makes (a, b) the window of this move.
        let value = |a: i32, b: i32, count: &mut Count<'_>| {
            if over {
                gain
            } else if extra {
                gain + scout(child, rules, a - gain, b - gain, count)
            } else {
                gain - scout(child, rules, gain - b, gain - a, count)
            }
        };
        let v = if i == 0 {
            value(alpha, beta, count)
        } else {
            let probe = value(alpha, alpha + 1, count);
            if probe > alpha && probe < beta {
                value(alpha, beta, count)
            } else {
                probe
            }
        };
        if v > best {
            best = v;
            alpha = alpha.max(v);
            if v >= beta {
                break;
            }
        }
    }
    best
}
