//! Play: games under every play rule set, players from random to perfect, game records and
//! matches.
//!
//! - [`state`]: a position under `standard`, `empty-capture` or `awari-basic` rules.
//! - [`game`]: two seats, the pie rule, the actions so far.
//! - [`player`]: the [`Player`] trait; [`error`]: [`PlayError`], the error of every player.
//! - [`players`]: the players, made from spec strings; [`alphabeta`]: `minimax:D` and
//!   `alphabeta:D`.
//! - [`learner`]: the player that remembers its lost openings.
//! - [`record`]: plain-text game records.
//! - [`arena`]: matches between two players, in parallel.
//! - [`anytime`]: the time-limited engine for boards too big to solve.

pub mod alphabeta;
pub mod anytime;
pub mod arena;
pub mod error;
pub mod game;
pub mod learner;
pub mod player;
pub mod players;
pub mod record;
pub mod state;

pub use error::PlayError;
pub use game::{Action, Game, GameRules, IllegalAction};
pub use player::{Player, Thinking};
pub use players::{PlayerSpec, Resources};
pub use state::{PlayRules, PlayState, Sown};
