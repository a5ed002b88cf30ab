//! The [`Player`] trait: asked for one action at a time, and what a player reports while it
//! thinks ([`Thinking`]). The players themselves are in [`crate::play::players`] (made from
//! spec strings), [`crate::play::learner`] and [`crate::play::alphabeta`].

use crate::play::anytime::Thought;
use crate::play::error::PlayError;
use crate::play::game::{Action, Game};

/// What a player reports while it chooses (see [`Player::choose_watched`]), for a user to
/// watch it think.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Thinking {
    /// The anytime engine's best action so far ([`Thought`]).
    Searched(Thought),
    /// The exact solver narrowed the value of the position: `lower <= value <= upper`, for the
    /// side to move, stores included.
    Solving {
        /// The depth of the solver's iteration (`None`: to the end of the game). The bounds of
        /// a depth-limited iteration are on the depth-limited value.
        depth: Option<u8>,
        /// The value is at least this ...
        lower: i32,
        /// ... and at most this.
        upper: i32,
        /// Nodes the solver has searched so far.
        nodes: u64,
    },
}

/// A player: asked for one action at a time (again after each extra turn).
pub trait Player: Send {
    /// The spec it was made from, e.g. `alphabeta:6`.
    fn name(&self) -> String;

    /// The action for the side to move in `game` (the game is not over).
    fn choose(&mut self, game: &Game) -> Result<Action, PlayError>;

    /// [`Player::choose`], telling `watch` what the player thinks as it goes: the players that
    /// may think long (`engine:TIME`, `perfect`) report; the others say nothing.
    fn choose_watched(
        &mut self,
        game: &Game,
        watch: &mut dyn FnMut(&Thinking),
    ) -> Result<Action, PlayError> {
        let _ = watch;
        self.choose(game)
    }

    /// The game it played from seat `seat` is over.
    fn game_over(&mut self, _game: &Game, _seat: usize) -> Result<(), PlayError> {
        Ok(())
    }

    /// Nodes searched so far, for engines that search.
    fn nodes(&self) -> Option<u64> {
        None
    }

    /// A handle on the node count that another thread may read while this player chooses,
    /// for engines whose steps of [`Thinking`] may be far apart (the exact solver's tests).
    fn node_counter(&self) -> Option<crate::search::NodeCounter> {
        None
    }
}
