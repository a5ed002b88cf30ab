//! The agent for the Manchester "ManKalah" game engine: its protocol, the game it tracks, and
//! how it spends a game's time.
//!
//! # The game
//!
//! Kalah(7,7) under [`PlayRules::ManKalah`]: standard Kalah, except that South's first sowing
//! never earns an extra turn, and the pie rule: North may answer South's first move with `SWAP`
//! and take over South's side (the board stays as it is; the agent that swapped is South from
//! then on, and the other agent, now North, moves next).
//!
//! # The protocol
//!
//! One message a line, fields separated by `;`, no spaces, case sensitive, ended by `\n`.
//! From the engine:
//!
//! - `START;South` or `START;North`: the game starts and this is our side. South moves first,
//!   so after `START;South` we answer at once.
//! - `CHANGE;<move>;<board>;<turn>`: a move was made (ours or the opponent's) and this is the
//!   board after it. `<move>` is a house number `1..=7` counted from the side of whoever made
//!   the move (house 1 farthest from their store), or `SWAP` when the opponent swapped (we are
//!   never told of our own swap). `<board>` is 16 comma-separated numbers: North's houses 1 to
//!   7, North's store, South's houses 1 to 7, South's store. `<turn>` is `YOU` (we move next),
//!   `OPP` (the opponent moves next) or `END` (the game ended with this move).
//! - `END`: the game is over (also after an abnormal end, with no `CHANGE;...;END` before it).
//!   Nothing follows it.
//!
//! To the engine, only when the last message said it is our turn (`START;South`, or `YOU`):
//! `MOVE;<k>` (sow our house k, `1..=7` from our side) or `SWAP` (only as North, as the answer
//! to South's first move).
//!
//! # The agent
//!
//! [`Agent`] tracks the game by playing every move it is told of and checks each board the
//! engine sends against its own. On any difference it trusts the engine: it notes the
//! difference (see [`Agent::take_notes`]) and continues from the engine's board and turn. It
//! only ever answers with a move that is legal on that board.
//!
//! It thinks with the anytime [`Engine`] for as long as the [`TimePlan`] allots: a share of
//! the budget that is left above a reserve, never more than a cap on one reply (5 s by
//! default, so that no reply of a game under the defaults takes more than about that). It
//! answers at once when it has one legal move, and as soon as the position is solved exactly
//! (by the endgame databases or the exact solver), without waiting out its time. Under the pie
//! rule it compares the values of both choices:
//!
//! - as North after South's first move, with `v` the value of the position for the side to
//!   move (North): moving is worth `v` to us; swapping makes us South with the opponent to move
//!   in the same position, which is worth `-v` to us. It swaps when `-v > v`, that is `v < 0`.
//! - as South at the start, each first move leaves North a position of value `w` (for North);
//!   North will take the better of `w` (moving) and `-w` (swapping), so the move is worth
//!   `-|w|` to us: the agent picks the first move whose position is the closest to even.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::play::anytime::{Engine, EngineConfig, Thought};
use crate::play::{Action, Game, GameRules, PlayError, PlayRules, PlayState};
use crate::position::{Move, Setup};
use crate::rules::Side;
use crate::text::quote;

mod clock;

pub use clock::{DEFAULT_BUDGET, DEFAULT_MAX_MOVE_TIME, MAX_RESERVE, Task, TimePlan};

/// Houses a side in ManKalah.
pub const HOUSES: usize = 7;
/// Seeds a house at the start in ManKalah.
pub const SEEDS: u32 = 7;
/// Seeds in a game: 98.
pub const TOTAL_SEEDS: u32 = 2 * HOUSES as u32 * SEEDS;
/// The variant the engine plays: Kalah(7,7), ManKalah rules, pie rule.
pub const RULES: GameRules = GameRules {
    houses: HOUSES,
    seeds: SEEDS,
    rules: PlayRules::ManKalah,
    pie: true,
};
/// Time charged for each reply on top of the thinking measured (reading, writing, the pipe).
pub const REPLY_OVERHEAD: Duration = Duration::from_millis(10);
/// The longest line accepted from the engine, in bytes, line break excluded (a board line is
/// about 60). A longer line is refused as soon as it passes this, unread beyond it.
pub const MAX_LINE: usize = 4096;

/// A board as the engine sends it: absolute sides, each row house 1 first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct EngineBoard {
    /// North's houses 1..=7.
    pub north: [u32; HOUSES],
    /// North's store.
    pub north_store: u32,
    /// South's houses 1..=7.
    pub south: [u32; HOUSES],
    /// South's store.
    pub south_store: u32,
}

impl EngineBoard {
    /// The board of a play state (Kalah(7,7)).
    pub fn from_state(state: &PlayState) -> EngineBoard {
        let row = |side| {
            let mut houses = [0; HOUSES];
            houses.copy_from_slice(&state.houses(side)[..HOUSES]);
            houses
        };
        EngineBoard {
            north: row(Side::North),
            north_store: state.store(Side::North),
            south: row(Side::South),
            south_store: state.store(Side::South),
        }
    }

    /// The play state of this board with `to_move` to move (`None`: the game is over). It is
    /// never the start of a game unless it is the start position with South to move.
    pub fn to_state(&self, to_move: Option<Side>) -> PlayState {
        let row = |r: &[u32; HOUSES]| r.iter().map(|&s| u64::from(s)).collect();
        let setup = Setup {
            houses: HOUSES,
            stores: [u64::from(self.south_store), u64::from(self.north_store)],
            south: row(&self.south),
            north: row(&self.north),
            to_move,
        };
        PlayState::from_setup(&setup, PlayRules::ManKalah)
    }

    /// Seeds on the board and in the stores.
    pub fn seeds(&self) -> u64 {
        self.north
            .iter()
            .chain(&self.south)
            .chain([&self.north_store, &self.south_store])
            .map(|&s| u64::from(s))
            .sum()
    }

    /// Parses the board field of a `CHANGE` message (16 numbers, 98 seeds in all). The error
    /// shows the text quoted ([`crate::text::quote`]).
    pub fn parse(text: &str) -> Result<EngineBoard, String> {
        let expected = 2 * (HOUSES + 1);
        let found = text.split(',').count();
        if found != expected {
            return Err(format!(
                "the board {} has {found} numbers, expected {expected} (North's 7 houses and \
                 store, South's 7 houses and store)",
                quote(text)
            ));
        }
        let mut numbers = [0u32; 2 * (HOUSES + 1)];
        for (n, field) in numbers.iter_mut().zip(text.split(',')) {
            *n = parse_natural(field)
                .ok_or_else(|| format!("{} in the board is not a number of seeds", quote(field)))?;
        }
        let mut board = EngineBoard {
            north: [0; HOUSES],
            north_store: numbers[HOUSES],
            south: [0; HOUSES],
            south_store: numbers[2 * HOUSES + 1],
        };
        board.north.copy_from_slice(&numbers[..HOUSES]);
        board
            .south
            .copy_from_slice(&numbers[HOUSES + 1..2 * HOUSES + 1]);
        if board.seeds() != u64::from(TOTAL_SEEDS) {
            return Err(format!(
                "the board {} holds {} seeds, expected {TOTAL_SEEDS} (Kalah(7,7))",
                quote(text),
                board.seeds()
            ));
        }
        Ok(board)
    }
}

impl fmt::Display for EngineBoard {
    /// The protocol's form: `n_1,...,n_7,north_store,s_1,...,s_7,south_store`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let numbers = self
            .north
            .iter()
            .chain([&self.north_store])
            .chain(&self.south)
            .chain([&self.south_store]);
        for (i, n) in numbers.enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{n}")?;
        }
        Ok(())
    }
}

/// A natural number as the protocol writes it: ASCII digits only, at most 9 of them.
fn parse_natural(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Who moves after a `CHANGE`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Turn {
    /// We do (`YOU`).
    You,
    /// The opponent does (`OPP`).
    Opp,
    /// Nobody: the move ended the game (`END`).
    End,
}

/// One message from the engine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Message {
    /// `START;South|North`: the game starts; our side.
    Start(Side),
    /// `CHANGE;<move|SWAP>;<board>;<turn>`.
    Change {
        /// The move made (by whoever was to move), or the opponent's swap.
        action: Action,
        /// The board after it.
        board: EngineBoard,
        /// Who moves next.
        turn: Turn,
    },
    /// `END`: the game is over.
    End,
}

impl Message {
    /// Parses one line (without its `\n`), or says what is wrong with it (the line's text
    /// quoted, [`crate::text::quote`]).
    pub fn parse(line: &str) -> Result<Message, String> {
        let fields: Vec<&str> = line.split(';').collect();
        match fields[0] {
            "START" => match fields[1..] {
                ["South"] => Ok(Message::Start(Side::South)),
                ["North"] => Ok(Message::Start(Side::North)),
                [side] => Err(format!(
                    "START names the side {}, expected South or North",
                    quote(side)
                )),
                _ => Err("START takes one field, the side (START;South or START;North)".into()),
            },
            "CHANGE" => {
                let [mv, board, turn] = fields[1..] else {
                    return Err(format!(
                        "CHANGE takes three fields (CHANGE;<move>;<board>;<turn>), found {}",
                        fields.len() - 1
                    ));
                };
                let action = if mv == "SWAP" {
                    Action::Swap
                } else {
                    let house = parse_natural(mv)
                        .filter(|h| (1..=HOUSES as u32).contains(h))
                        .ok_or_else(|| {
                            format!(
                                "the move {} is neither a house 1 to {HOUSES} nor SWAP",
                                quote(mv)
                            )
                        })?;
                    Action::Sow(Move::new(house as usize).expect("a house 1 to 7"))
                };
                let board = EngineBoard::parse(board)?;
                let turn = match turn {
                    "YOU" => Turn::You,
                    "OPP" => Turn::Opp,
                    "END" => Turn::End,
                    _ => {
                        return Err(format!("the turn {} is not YOU, OPP or END", quote(turn)));
                    }
                };
                Ok(Message::Change {
                    action,
                    board,
                    turn,
                })
            }
            "END" if fields.len() == 1 => Ok(Message::End),
            "END" => Err("END takes no fields".into()),
            "" if line.is_empty() => Err("an empty line".into()),
            name => Err(format!(
                "unknown message {} (expected START, CHANGE or END)",
                quote(name)
            )),
        }
    }
}

/// Our answer to the engine.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Reply {
    /// `MOVE;k`: sow our house k.
    Move(Move),
    /// `SWAP`: take over South's side (pie rule).
    Swap,
}

impl fmt::Display for Reply {
    /// The protocol line, without its `\n`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Move(mv) => write!(f, "MOVE;{}", mv.house()),
            Reply::Swap => f.write_str("SWAP"),
        }
    }
}

/// A message the agent cannot make sense of: the line and what is wrong with it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ProtocolError {
    /// The line as the message shows it ([`crate::text::quote`]: quoted, escaped, cut).
    pub line: String,
    /// What is wrong.
    pub reason: String,
}

impl ProtocolError {
    fn new(line: &str, reason: impl Into<String>) -> ProtocolError {
        ProtocolError {
            line: quote(line),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad message from the engine {}: {}",
            self.line, self.reason
        )
    }
}

impl std::error::Error for ProtocolError {}

/// What to do after a message.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Next {
    /// It is our turn: call [`Agent::respond`] and send its reply.
    Respond,
    /// Wait for the next message.
    Wait,
    /// `END` came: the game is over, stop.
    Stop,
}

/// What the agent decided on its turn, and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decision {
    /// The reply to send.
    pub reply: Reply,
    /// The value behind it for us (the side that replies), if the engine was asked: the final
    /// store difference if `exact`, else the store difference `depth` sowings ahead. For South's
    /// first move, the value under the pie rule (`-|w|`).
    pub value: Option<i32>,
    /// Sowings searched (0 for an exact value or no search).
    pub depth: u32,
    /// The value is exact.
    pub exact: bool,
    /// Nodes searched.
    pub nodes: u64,
    /// The thinking time allotted.
    pub allotted: Duration,
    /// The time from the message to the decision; the budget is charged this plus
    /// [`REPLY_OVERHEAD`].
    pub spent: Duration,
}

/// Where the game is, as the messages tell it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Before `START`.
    AwaitStart,
    /// Between `START` and the end.
    Playing,
    /// After `CHANGE;...;END`, waiting for `END`.
    Finished,
    /// After `END`.
    Over,
}

/// The ManKalah agent: tracks the game from the engine's messages and decides its moves (see
/// the module docs). It never prints; differences from the engine's view come back through
/// [`Agent::take_notes`].
pub struct Agent {
    engine: Engine,
    plan: TimePlan,
    used: Duration,
    game: Game,
    phase: Phase,
    /// Our side now (it changes with a swap); `None` before `START`.
    side: Option<Side>,
    /// The side `START` gave us.
    start_side: Option<Side>,
    /// `CHANGE` messages so far.
    changes: u32,
    /// Our replies so far.
    replies: u32,
    /// A swap was made (by either agent).
    swapped: bool,
    /// Our last reply, until the engine reports it.
    pending: Option<Reply>,
    notes: Vec<String>,
}

impl Agent {
    /// An agent that spends its time by `plan`, thinking with an engine configured by
    /// `config` (databases for 7 houses, standard rules).
    pub fn new(plan: TimePlan, config: EngineConfig) -> Result<Agent, PlayError> {
        Ok(Agent {
            engine: Engine::new(HOUSES, PlayRules::ManKalah, config)?,
            plan,
            used: Duration::ZERO,
            game: Game::new(RULES),
            phase: Phase::AwaitStart,
            side: None,
            start_side: None,
            changes: 0,
            replies: 0,
            swapped: false,
            pending: None,
            notes: Vec::new(),
        })
    }

    /// Our side now (`None` before `START`).
    pub fn side(&self) -> Option<Side> {
        self.side
    }

    /// The game as the agent sees it (after a difference, from the engine's board).
    pub fn state(&self) -> &PlayState {
        self.game.state()
    }

    /// Whether a swap was made in this game (by either agent).
    pub fn swapped(&self) -> bool {
        self.swapped
    }

    /// Whether the game has ended (`CHANGE;...;END` or `END` came).
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Over)
    }

    /// Thinking time charged so far.
    pub fn time_used(&self) -> Duration {
        self.used
    }

    /// Thinking time left of the budget.
    pub fn time_left(&self) -> Duration {
        self.plan.budget.saturating_sub(self.used)
    }

    /// The time plan.
    pub fn plan(&self) -> TimePlan {
        self.plan
    }

    /// The notes made since the last call: each time the engine's view differed from ours
    /// (a board, a turn, a move we did not expect), one line saying how; the agent continued
    /// from the engine's view.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Takes one line from the engine (without its `\n`; a trailing `\r` is ignored) and says
    /// what to do next. An error for a line that is malformed or makes no sense where it comes.
    pub fn receive(&mut self, line: &str) -> Result<Next, ProtocolError> {
        let text = line.strip_suffix('\r').unwrap_or(line);
        let message = Message::parse(text).map_err(|reason| ProtocolError::new(text, reason))?;
        let error = |reason: &str| Err(ProtocolError::new(text, reason));
        match (self.phase, message) {
            (Phase::Over, _) => error("a message after END"),
            (_, Message::End) => {
                self.phase = Phase::Over;
                Ok(Next::Stop)
            }
            (Phase::AwaitStart, Message::Start(side)) => {
                self.side = Some(side);
                self.start_side = Some(side);
                self.phase = Phase::Playing;
                Ok(match side {
                    Side::South => Next::Respond,
                    Side::North => Next::Wait,
                })
            }
            (_, Message::Start(_)) => error("START again, in the middle of a game"),
            (Phase::AwaitStart, Message::Change { .. }) => error("CHANGE before START"),
            (Phase::Finished, Message::Change { .. }) => {
                error("CHANGE after the game ended (CHANGE;...;END came before)")
            }
            (
                Phase::Playing,
                Message::Change {
                    action,
                    board,
                    turn,
                },
            ) => self.change(text, action, board, turn),
        }
    }

    /// Plays a `CHANGE` into the tracked game, checks it against the engine's board and turn.
    fn change(
        &mut self,
        line: &str,
        action: Action,
        board: EngineBoard,
        turn: Turn,
    ) -> Result<Next, ProtocolError> {
        let me = self.side.expect("a side after START");
        let pending = self.pending.take();
        match action {
            Action::Swap => {
                // The opponent swapped: we were South and are North now.
                if me != Side::South || self.swapped || !self.after_first_move() {
                    self.notes.push(format!(
                        "the engine reports a swap by the opponent where none was possible \
                         (we are {me}, {} moves made); taking {}'s side",
                        self.game.actions().len(),
                        me.other()
                    ));
                }
                if self.game.can_swap() {
                    self.game.play(Action::Swap).expect("a swap is allowed");
                }
                self.swapped = true;
                self.side = Some(me.other());
                if let Some(reply) = pending {
                    self.notes.push(format!(
                        "the engine reports the opponent's swap after our reply {reply}"
                    ));
                }
            }
            Action::Sow(mv) => {
                let mover = self.game.state().to_move();
                if let (Some(mover), Some(reply)) = (mover, pending) {
                    if mover == me && reply != Reply::Move(mv) {
                        self.notes.push(format!(
                            "the engine reports our move as house {mv}, we sent {reply}"
                        ));
                    } else if mover != me {
                        self.notes.push(format!(
                            "the engine reports a move by the opponent after our reply {reply}"
                        ));
                    }
                } else if mover == Some(me) {
                    self.notes.push(format!(
                        "the engine reports a move of ours (house {mv}) that we did not send"
                    ));
                }
                match mover {
                    Some(_) if self.game.state().is_legal(mv) => {
                        self.game.play(Action::Sow(mv)).expect("a legal move");
                    }
                    Some(side) => self.notes.push(format!(
                        "the engine reports house {mv} for {side}, which is illegal here \
                         (houses {})",
                        list_houses(self.game.state().houses(side))
                    )),
                    None => self.notes.push(format!(
                        "the engine reports house {mv} after the game ended here"
                    )),
                }
            }
        }
        self.changes += 1;
        let me = self.side.expect("a side after START");
        let to_move = match turn {
            Turn::You => Some(me),
            Turn::Opp => Some(me.other()),
            Turn::End => None,
        };
        let ours = EngineBoard::from_state(self.game.state());
        let our_turn = self.game.state().to_move();
        if ours != board || our_turn != to_move {
            let who = |side: Option<Side>| {
                side.map_or("nobody (game over)".to_owned(), |s| s.to_string())
            };
            self.notes.push(format!(
                "the engine's view differs from ours after {}: board {board} with {} to \
                 move, ours {ours} with {} to move; continuing from the engine's",
                quote(line),
                who(to_move),
                who(our_turn)
            ));
            self.game = Game::from_state(RULES, board.to_state(to_move));
        }
        match turn {
            Turn::You => {
                if self.game.state().legal_moves().is_empty() {
                    return Err(ProtocolError::new(
                        line,
                        format!("it is our turn ({me}) but all our houses are empty"),
                    ));
                }
                Ok(Next::Respond)
            }
            Turn::Opp => Ok(Next::Wait),
            Turn::End => {
                self.phase = Phase::Finished;
                Ok(Next::Wait)
            }
        }
    }

    /// Whether exactly South's first move has been made (as far as the messages go: one
    /// `CHANGE` so far, and no swap).
    fn after_first_move(&self) -> bool {
        self.changes == 1 && !self.swapped
    }

    /// Whether our next reply may be `SWAP`: we started as North, and South's first move is
    /// the only move made.
    fn may_swap(&self) -> bool {
        self.start_side == Some(Side::North)
            && self.side == Some(Side::North)
            && self.after_first_move()
            && self.replies == 0
    }

    /// Decides our reply; call it when [`Agent::receive`] said [`Next::Respond`], with the time
    /// that message came (the thinking time runs from then). The reply is charged to the
    /// budget and, for a swap, played into the tracked game (the engine does not report our
    /// swap back); a move is played when the engine reports it.
    pub fn respond(&mut self, received: Instant) -> Result<Decision, String> {
        let state = *self.game.state();
        let me = self.side.ok_or("no START yet")?;
        if self.phase != Phase::Playing || state.to_move() != Some(me) {
            return Err("it is not our turn".into());
        }
        let legal = state.legal_moves();
        let may_swap = self.may_swap();
        let task = if may_swap {
            Task::PieAnswer
        } else if state.first_sowing_passes() && self.start_side == Some(Side::South) {
            Task::Opening
        } else {
            Task::Move
        };
        let allotted = self.plan.allot(
            self.time_left().saturating_sub(received.elapsed()),
            state.seeds_on_board(),
            task,
        );
        let deadline = received + allotted;
        let mut decision = Decision {
            reply: Reply::Move(legal[0]),
            value: None,
            depth: 0,
            exact: false,
            nodes: 0,
            allotted,
            spent: Duration::ZERO,
        };
        match task {
            Task::Move if legal.len() == 1 => {}
            Task::Move => {
                let thought = self.think(&state, deadline);
                decision.reply = Reply::Move(sown(&thought, legal[0]));
                decision.set(&thought, thought.value);
            }
            Task::PieAnswer => {
                // Moving is worth v to us; swapping leaves the opponent to move in the same
                // position as North, which is worth -v to us.
                let thought = self.think(&state, deadline);
                let (move_value, swap_value) = (thought.value, -thought.value);
                if swap_value > move_value {
                    decision.reply = Reply::Swap;
                    decision.set(&thought, swap_value);
                } else {
                    decision.reply = Reply::Move(sown(&thought, legal[0]));
                    decision.set(&thought, move_value);
                }
            }
            Task::Opening => {
                let (mv, value, depth, nodes) = self.opening(&state, deadline);
                decision.reply = Reply::Move(mv);
                decision.value = Some(value);
                decision.depth = depth;
                decision.nodes = nodes;
            }
        }
        if decision.reply == Reply::Swap {
            if self.game.can_swap() {
                self.game.play(Action::Swap).expect("a swap is allowed");
            }
            self.swapped = true;
            self.side = Some(me.other());
        } else {
            self.pending = Some(decision.reply);
        }
        self.replies += 1;
        decision.spent = received.elapsed();
        self.used += decision.spent + REPLY_OVERHEAD;
        Ok(decision)
    }

    /// The engine's best move in `state` (with no pie rule) by `deadline`.
    fn think(&mut self, state: &PlayState, deadline: Instant) -> Thought {
        let game = Game::from_state(RULES, *state);
        let stop = AtomicBool::new(false);
        let thought = self.engine.think(&game, deadline, &stop, &mut |_| {});
        if let Some(e) = self.engine.take_solve_error() {
            self.notes
                .push(format!("exact solve failed, searched instead: {e}"));
        }
        thought
    }

    /// South's first move under the pie rule: each first move leaves North a position of
    /// value `w`, worth `-|w|` to us (North moves or swaps, whichever is better for it). Every
    /// move is searched with an equal share of the time; the values are compared at the
    /// deepest iteration that all searches finished. Returns the move, its value for us, that
    /// depth and the nodes.
    fn opening(&mut self, state: &PlayState, deadline: Instant) -> (Move, i32, u32, u64) {
        let moves = state.legal_moves();
        let me = state.to_move().expect("South to move");
        // For each move: North's value if final (exact, or a search that ended before the
        // horizon), else North's value at each depth searched (depth 1 first).
        let mut probes: Vec<(Move, Option<i32>, Vec<i32>)> = Vec::new();
        let mut nodes = 0;
        for (i, &mv) in moves.iter().enumerate() {
            let mut after = *state;
            after.play(mv);
            if after.to_move().is_none() {
                probes.push((mv, Some(-after.store_difference(me)), Vec::new()));
                continue;
            }
            let now = Instant::now();
            let share = deadline.saturating_duration_since(now) / (moves.len() - i) as u32;
            let game = Game::from_state(RULES, after);
            let stop = AtomicBool::new(false);
            let mut by_depth: Vec<i32> = Vec::new();
            let mut exact = None;
            let last = self
                .engine
                .think(&game, now + share, &stop, &mut |t: &Thought| {
                    if t.exact {
                        exact = Some(t.value);
                    } else if t.depth as usize == by_depth.len() + 1 {
                        by_depth.push(t.value);
                    }
                });
            nodes += last.nodes;
            // Done before its time: every line ended before the horizon (or the deepest
            // iteration finished), so the last value holds at any depth.
            if exact.is_none() && (by_depth.is_empty() || Instant::now() < now + share) {
                exact = Some(last.value);
            }
            probes.push((mv, exact, by_depth));
        }
        let depth = probes
            .iter()
            .filter(|(_, exact, _)| exact.is_none())
            .map(|(_, _, by_depth)| by_depth.len())
            .min()
            .unwrap_or(0);
        let mut best: Option<(Move, i32)> = None;
        for (mv, exact, by_depth) in &probes {
            let w = match exact {
                Some(w) => *w,
                None => by_depth[depth.clamp(1, by_depth.len()) - 1],
            };
            let value = -w.abs();
            if best.is_none_or(|(_, b)| value > b) {
                best = Some((*mv, value));
            }
        }
        let (mv, value) = best.expect("a legal first move");
        (mv, value, depth as u32, nodes)
    }
}

impl Decision {
    fn set(&mut self, thought: &Thought, value: i32) {
        self.value = Some(value);
        self.depth = thought.depth;
        self.exact = thought.exact;
        self.nodes = thought.nodes;
    }
}

/// The house of a thought's action (the engine is asked with no pie rule, so it sows).
fn sown(thought: &Thought, fallback: Move) -> Move {
    match thought.action {
        Action::Sow(mv) => mv,
        Action::Swap => fallback,
    }
}

/// A row's seeds as `7 0 3 ...`.
fn list_houses(houses: &[u32]) -> String {
    houses
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}
