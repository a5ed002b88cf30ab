//! Play: games under every play rule set, players from random to perfect, game records and
//! matches.
//!
//! - [`state`]: a position under `standard`, `empty-capture` or `awari-basic` rules.
//! - [`game`]: two seats, the pie rule, the actions so far.
//! - [`players`]: the [`Player`] trait and the engines, made from spec strings.
//! - [`learner`]: the player that remembers its lost openings.
//! - [`record`]: plain-text game records.
//! - [`arena`]: matches between two players, in parallel.
//! - [`anytime`]: the time-limited engine for boards too big to solve.

pub mod anytime;
pub mod arena;
pub mod game;
pub mod learner;
pub mod players;
pub mod record;
pub mod state;

pub use game::{Action, Game, GameRules, IllegalAction};
pub use players::{PlayError, Player, PlayerSpec, Resources, Thinking};
pub use state::{PlayRules, PlayState, Sown};
