//! A game between two seats: the state, the pie rule, the actions so far.
//!
//! The two players are the *seats*: seat 0 starts as South, seat 1 as North. Under the pie rule
//! (`pie`), North may answer South's first turn with [`Action::Swap`]: the seats exchange sides
//! (seat 1 now owns South's houses, with the first turn made) and seat 0, now North, moves.

use std::fmt;
use std::str::FromStr;

use crate::play::state::{PlayRules, PlayState, Sown};
use crate::position::Move;
use crate::rules::{MAX_HOUSES, Side};
use crate::text::quote;

/// One action: a sowing, or the pie rule's swap.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Action {
    /// Sow this house (1..m from the mover's view).
    Sow(Move),
    /// Take over South's position after South's first turn (pie rule).
    Swap,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Sow(mv) => mv.fmt(f),
            Action::Swap => f.write_str("swap"),
        }
    }
}

impl FromStr for Action {
    type Err = String;

    /// A house number or `swap` (any case), white space around it ignored; the error shows
    /// the text quoted ([`crate::text::quote`]).
    fn from_str(s: &str) -> Result<Action, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("swap") {
            return Ok(Action::Swap);
        }
        s.parse::<Move>().map(Action::Sow).map_err(|_| {
            format!(
                "{} is neither a house number (1 to {MAX_HOUSES}) nor 'swap'",
                quote(s)
            )
        })
    }
}

/// Why an action was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IllegalAction(pub String);

impl fmt::Display for IllegalAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IllegalAction {}

/// The variant a game is played under.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct GameRules {
    /// Houses a side.
    pub houses: usize,
    /// Seeds a house at the start.
    pub seeds: u32,
    /// Rule set.
    pub rules: PlayRules,
    /// The pie rule.
    pub pie: bool,
}

impl fmt::Display for GameRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Kalah({},{}), {} rules",
            self.houses, self.seeds, self.rules
        )?;
        if self.pie {
            f.write_str(", pie rule")?;
        }
        Ok(())
    }
}

impl GameRules {
    /// Seeds in the whole game (on the board at the start).
    pub fn seeds_in_play(self) -> u32 {
        (2 * self.houses as u32).saturating_mul(self.seeds)
    }
}

/// A game in progress (or over).
#[derive(Clone, Debug)]
pub struct Game {
    rules: GameRules,
    state: PlayState,
    /// Every action so far, with the side that made it.
    actions: Vec<(Side, Action)>,
    swapped: bool,
}

impl Game {
    /// A new game.
    pub fn new(rules: GameRules) -> Game {
        Game {
            rules,
            state: PlayState::start(rules.houses, rules.seeds, rules.rules),
            actions: Vec::new(),
            swapped: false,
        }
    }

    /// A game that starts from `state` (a position met elsewhere, e.g. sent by a game server),
    /// with no actions behind it: the pie rule's swap is never offered in it.
    pub fn from_state(rules: GameRules, state: PlayState) -> Game {
        Game {
            rules: GameRules {
                pie: false,
                ..rules
            },
            state,
            actions: Vec::new(),
            swapped: false,
        }
    }

    /// The variant.
    pub fn rules(&self) -> GameRules {
        self.rules
    }

    /// The position.
    pub fn state(&self) -> &PlayState {
        &self.state
    }

    /// Every action so far with the side that made it.
    pub fn actions(&self) -> &[(Side, Action)] {
        &self.actions
    }

    /// Whether the seats swapped sides (pie rule).
    pub fn swapped(&self) -> bool {
        self.swapped
    }

    /// The seat (0: started as South, 1: started as North) that plays `side`.
    pub fn seat(&self, side: Side) -> usize {
        usize::from((side == Side::North) != self.swapped)
    }

    /// The side seat `seat` plays now.
    pub fn side_of(&self, seat: usize) -> Side {
        if (seat == 1) != self.swapped {
            Side::North
        } else {
            Side::South
        }
    }

    /// Whether the side to move may swap now: pie rule, North to move, and only South's first
    /// turn made.
    pub fn can_swap(&self) -> bool {
        self.rules.pie
            && !self.swapped
            && self.state.to_move() == Some(Side::North)
            && !self.actions.is_empty()
            && self.actions.iter().all(|&(side, _)| side == Side::South)
    }

    /// Every action the side to move may take.
    pub fn legal_actions(&self) -> Vec<Action> {
        let mut actions: Vec<Action> = self
            .state
            .legal_moves()
            .into_iter()
            .map(Action::Sow)
            .collect();
        if self.can_swap() {
            actions.push(Action::Swap);
        }
        actions
    }

    /// Plays `action` for the side to move.
    pub fn play(&mut self, action: Action) -> Result<Option<Sown>, IllegalAction> {
        let Some(side) = self.state.to_move() else {
            return Err(IllegalAction("the game is over".into()));
        };
        let sown = match action {
            Action::Swap if self.can_swap() => {
                self.swapped = true;
                None
            }
            Action::Swap => {
                return Err(IllegalAction(
                    "swap is only allowed under the pie rule, as North's answer to South's \
                     first turn"
                        .into(),
                ));
            }
            Action::Sow(mv) if self.state.is_legal(mv) => Some(self.state.play(mv)),
            Action::Sow(mv) => {
                return Err(IllegalAction(if mv.house() > self.rules.houses {
                    format!("house {mv} does not exist (1 to {})", self.rules.houses)
                } else {
                    format!("house {mv} is empty")
                }));
            }
        };
        self.actions.push((side, action));
        Ok(sown)
    }

    /// The game with only its first `len` actions.
    pub fn truncated(&self, len: usize) -> Game {
        let mut game = Game::new(self.rules);
        for &(_, action) in &self.actions[..len.min(self.actions.len())] {
            game.play(action).expect("a replayed action is legal");
        }
        game
    }

    /// Final margin of seat `seat` (its store minus the other's, where it sits at the end).
    pub fn margin(&self, seat: usize) -> i32 {
        self.state.store_difference(self.side_of(seat))
    }
}
