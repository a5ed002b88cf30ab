//! `minimax:D` and `alphabeta:D`: depth-limited search on the store difference, the players
//! for weak and middling opponents (and the learner's base).

use crate::play::error::PlayError;
use crate::play::game::{Action, Game};
use crate::play::player::Player;
use crate::play::state::PlayState;
use crate::position::Move;
use crate::rules::Side;

/// `minimax:D` and `alphabeta:D`: depth-limited search on the store difference.
pub struct Searcher {
    depth: u32,
    pruning: bool,
    nodes: u64,
}

impl Searcher {
    /// A depth-`depth` searcher, with alpha-beta pruning or plain minimax.
    pub fn new(depth: u32, pruning: bool) -> Searcher {
        Searcher {
            depth,
            pruning,
            nodes: 0,
        }
    }

    /// The depth-limited value of `state` for the side to move (its store difference after
    /// `depth` sowings, or at the end of the game) and the first best move.
    pub fn search(&mut self, state: &PlayState) -> (i32, Option<Move>) {
        let mut best: Option<(i32, Move)> = None;
        for mv in state.legal_moves() {
            let alpha = best.map_or(i32::MIN + 1, |(v, _)| v);
            let v = self.move_value(state, mv, self.depth - 1, alpha, i32::MAX);
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, mv));
            }
        }
        match best {
            Some((v, mv)) => (v, Some(mv)),
            None => (state.store_difference(Side::South), None),
        }
    }

    /// The value for the mover of sowing `mv` on `state`, then `depth` more sowings.
    fn move_value(
        &mut self,
        state: &PlayState,
        mv: Move,
        depth: u32,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        let me = state.to_move().expect("a move to make");
        let mut next = *state;
        next.play(mv);
        match next.to_move() {
            Some(side) if side == me => self.negamax(&next, depth, alpha, beta),
            Some(_) => -self.negamax(&next, depth, -beta, -alpha),
            None => next.store_difference(me),
        }
    }

    /// Negamax value of `state` for its side to move, `depth` sowings deep: exact within
    /// (alpha, beta) with pruning, a bound outside it (fail-soft); exact always without.
    fn negamax(&mut self, state: &PlayState, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        let Some(me) = state.to_move() else {
            unreachable!("finished games are valued by the caller")
        };
        if depth == 0 {
            return state.store_difference(me);
        }
        let mut best = i32::MIN;
        for mv in state.legal_moves() {
            let v = self.move_value(state, mv, depth - 1, alpha, beta);
            best = best.max(v);
            if self.pruning {
                alpha = alpha.max(v);
                if alpha >= beta {
                    break;
                }
            }
        }
        best
    }
}

impl Player for Searcher {
    fn name(&self) -> String {
        let kind = if self.pruning { "alphabeta" } else { "minimax" };
        format!("{kind}:{}", self.depth)
    }

    fn choose(&mut self, game: &Game) -> Result<Action, PlayError> {
        let state = game.state();
        let (value, mv) = self.search(state);
        // Pie rule: own South's side instead if the position is bad for the side to move.
        if game.can_swap() && value < 0 {
            return Ok(Action::Swap);
        }
        Ok(Action::Sow(mv.expect("the game is not over")))
    }

    fn nodes(&self) -> Option<u64> {
        Some(self.nodes)
    }
}
