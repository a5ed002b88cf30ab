//! The sowings of a replayed game and their values: what `kalah replay` finds (in
//! [`super::replay`]) and what it prints and draws (there and in [`super::replay_plot`]).
//!
//! ```text
//!  Ply              one action of the game and the position before it
//!  ├ state, side, seat, action
//!  └ valuation      None (not valued) or Some(Valuation):
//!      value          the sowing's value for the mover
//!      best           the position's value for the mover (best_move: its lowest best house)
//!      source         "database" | "ledger" | "search" | "estimate" (only this is not exact)
//! ```

use kalah::play::{Action, PlayState};
use kalah::{Move, Side};

/// The exact value of one sowing.
pub(super) struct Valuation {
    /// The sowing's value for the mover.
    pub(super) value: i32,
    /// The position's value for the mover (its best sowing's).
    pub(super) best: i32,
    /// The lowest best house.
    pub(super) best_move: Move,
    /// `"database"`, `"ledger"` (the opening books), `"search"` (all exact) or `"estimate"`
    /// (a search a few sowings deep, `ESTIMATE_DEPTH` in [`super::replay`]: not exact).
    pub(super) source: &'static str,
}

/// One action of the game, with the position before it.
pub(super) struct Ply {
    pub(super) state: PlayState,
    pub(super) side: Side,
    pub(super) seat: usize,
    pub(super) action: Action,
    pub(super) valuation: Option<Valuation>,
}
