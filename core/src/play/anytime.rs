//! The anytime engine: the best move found so far, whenever it is asked.
//!
//! For boards too big to solve: iterative deepening alpha-beta on the store difference (extra
//! turns included, so depth counts sowings), on [`PlayState`], so it plays every play rule set
//! and board size. Each finished iteration reports its move and value; an iteration cut short
//! by the deadline or the stop flag is dropped, except that its first move (the previous best,
//! searched first) still confirms the previous choice. The first report, a legal move, comes at
//! once (depth 1). A transposition table, kept from move to move, holds each searched node's
//! bounds (relative to the store difference, so positions that differ only in their stores
//! share them) and best move, which is tried first.
//!
//! With endgame databases (Kalah rules matching theirs), every node of the search with at most
//! their top level of seeds on the board is valued from them: its store difference plus the
//! database's value of its houses, the exact final store difference. Such a node is a leaf
//! whatever the depth left. A node whose every line ended in a finished game or a database
//! value is *proven*: its table slot holds at any depth, and an iteration whose lines all end
//! so is complete (its value is the exact value; the thinking stops). A damaged database block
//! is never a value: the node is searched instead, and the engine goes on without the databases
//! (see [`Engine::take_solve_error`]).
//!
//! Once the position is within reach of the exact solver (Kalah rules; at most the databases'
//! top level of seeds on the board, or at most [`EngineConfig::exact_seeds`]), the engine
//! solves it and reports an exact result: the lowest optimal house and the exact value.
//!
//! Under the pie rule, asked as North after South's first turn, it swaps when its search says
//! the position is lost for the side to move.

use crate::clock::Instant;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::board::Board;
use crate::db::Tablebase;
use crate::db::tablebase::{Fault, Probe};
use crate::lanes::{Narrow, Wide};
use crate::play::error::PlayError;
use crate::play::game::{Action, Game};
use crate::play::state::{PlayRules, PlayState};
use crate::position::{AnyPosition, Move};
use crate::search::{Solver, SolverConfig};
use crate::with_position;

/// One result of the engine's thinking.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Thought {
    /// The action it would play now.
    pub action: Action,
    /// Its value for the side to move: the final store difference (stores included) if
    /// `exact`, else the store difference `depth` sowings ahead.
    pub value: i32,
    /// Sowings searched (0 for an exact result).
    pub depth: u32,
    /// The value is exact: the position was solved.
    pub exact: bool,
    /// Nodes searched so far for this position.
    pub nodes: u64,
}

/// How the engine may use its resources.
#[derive(Clone, Default)]
pub struct EngineConfig {
    /// Endgame databases (matching houses and rules), if any.
    pub db: Option<Arc<Tablebase>>,
    /// Positions with at most this many seeds on the board are solved exactly (Kalah rules).
    pub exact_seeds: u32,
    /// Solver threads.
    pub threads: usize,
    /// Solver table size in MiB.
    pub tt_mib: usize,
}

impl EngineConfig {
    /// Solving thresholds that finish in well under a second here: more seeds for fewer houses.
    pub fn default_exact_seeds(houses: usize) -> u32 {
        match houses {
            0..=6 => 30,
            7..=8 => 24,
            _ => 18,
        }
    }
}

/// The deepest iteration.
const MAX_DEPTH: u32 = 64;
/// Nodes between two looks at the clock.
const CLOCK_EVERY: u64 = 1 << 10;

/// The anytime engine for one game's rules (see the module docs).
pub struct Engine {
    rules: PlayRules,
    config: EngineConfig,
    solver: Option<Solver>,
    nodes: u64,
    /// Nodes valued from the databases.
    db_hits: u64,
    table: Table,
    /// The last solve that failed, and why (see [`Engine::take_solve_error`]).
    solve_error: Option<String>,
}

/// One slot of the engine's table.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    /// Bounds on the value minus the store difference of the side to move.
    lower: i16,
    upper: i16,
    /// Sowings searched below the node, or [`PROVEN`].
    depth: u8,
    /// Best move's house (1-based; 0: none).
    best: u8,
}

/// The depth of a slot whose search met no horizon (every line ended in a finished game or a
/// database value): its bounds hold at any depth.
const PROVEN: u8 = u8::MAX;
/// The deepest depth a slot records otherwise.
const DEEPEST_SLOT: u32 = PROVEN as u32 - 1;

/// The engine's transposition table: one slot per key, always replaced.
struct Table {
    slots: Vec<Slot>,
}

impl Table {
    fn new(mib: usize) -> Table {
        let count = (mib.max(1) << 20) / std::mem::size_of::<Slot>();
        Table {
            slots: vec![Slot::default(); count.next_power_of_two() / 2],
        }
    }

    fn index(&self, key: u64) -> usize {
        (key as usize) & (self.slots.len() - 1)
    }

    fn probe(&self, key: u64) -> Option<Slot> {
        let slot = self.slots[self.index(key)];
        (slot.key == key && slot.depth > 0).then_some(slot)
    }

    fn store(&mut self, slot: Slot) {
        let i = self.index(slot.key);
        self.slots[i] = slot;
    }
}

/// The search was stopped: its result is void.
struct Stopped;

impl Engine {
    /// An engine for `houses` houses a side under `rules`.
    pub fn new(houses: usize, rules: PlayRules, config: EngineConfig) -> Result<Engine, PlayError> {
        let solver = match rules.kalah() {
            Some(kalah) => {
                let solver_config = SolverConfig {
                    threads: config.threads.max(1),
                    tt_mib: config.tt_mib.max(16),
                    ..SolverConfig::default()
                };
                let error = |e: crate::SolveError| PlayError::Solver(e.to_string());
                let mut solver = Solver::new(houses, kalah, solver_config).map_err(error)?;
                if let Some(db) = &config.db {
                    solver = solver.with_tablebase(db.clone()).map_err(error)?;
                }
                Some(solver)
            }
            None => None,
        };
        Ok(Engine {
            rules,
            table: Table::new(config.tt_mib.max(16)),
            config,
            solver,
            nodes: 0,
            db_hits: 0,
            solve_error: None,
        })
    }

    /// Why the last exact solve or database probe failed, if one did since the last call: a
    /// damaged database block. The engine then searched instead (its answer is not marked
    /// exact) and goes on without the databases, solving exactly only what it can without them.
    pub fn take_solve_error(&mut self) -> Option<String> {
        self.solve_error.take()
    }

    /// Nodes of the search valued from the databases, in all.
    pub fn db_hits(&self) -> u64 {
        self.db_hits
    }

    /// The databases, if the search may probe them: they match the houses and the Kalah rules.
    fn probing_db(&self, houses: usize) -> Option<Arc<Tablebase>> {
        let db = self.config.db.as_ref()?;
        (self.rules.kalah() == Some(db.rules()) && db.houses() == houses).then(|| db.clone())
    }

    /// Records why the databases failed and goes on without them.
    fn drop_databases(&mut self, why: String, houses: usize) {
        self.solve_error = Some(why);
        if self.config.db.take().is_some() {
            if let (Some(solver), Some(rules)) = (&self.solver, self.rules.kalah()) {
                let config = *solver.config();
                self.solver = Solver::new(houses, rules, config).ok();
            }
        }
    }

    /// Nodes searched in all.
    pub fn nodes(&self) -> u64 {
        self.nodes + self.solver.as_ref().map_or(0, Solver::nodes)
    }

    /// Whether `state` is solved exactly rather than searched.
    fn solvable(&self, state: &PlayState) -> bool {
        let seeds = state.seeds_on_board();
        self.solver.is_some()
            && !state.first_sowing_passes()
            && (seeds <= self.config.exact_seeds
                || self
                    .config
                    .db
                    .as_ref()
                    .is_some_and(|db| seeds <= db.max_level()))
    }

    /// Thinks about the position of `game` (not over) until `deadline` or `stop`, reporting
    /// every new best result to `report`, and returns the last one. The first report comes at
    /// once; an exact result ends the thinking early.
    pub fn think(
        &mut self,
        game: &Game,
        deadline: Instant,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Thought),
    ) -> Thought {
        let state = *game.state();
        assert!(state.to_move().is_some(), "the game is not over");
        debug_assert_eq!(state.rules(), self.rules);
        let start_nodes = self.nodes();
        let mut best: Option<Thought> = None;
        let mut order: Vec<Move> = state.legal_moves();
        for depth in 1..=MAX_DEPTH {
            let out = self.iteration(&state, depth, &order, deadline, stop);
            let Ok((value, mv, complete)) = out else {
                break;
            };
            let action = if game.can_swap() && value < 0 {
                Action::Swap
            } else {
                Action::Sow(mv)
            };
            let thought = Thought {
                action,
                value,
                depth,
                exact: false,
                nodes: self.nodes() - start_nodes,
            };
            report(&thought);
            best = Some(thought);
            // The best move first in the next iteration.
            order.retain(|&m| m != mv);
            order.insert(0, mv);
            let out_of_time = Instant::now() >= deadline || stop.load(Ordering::Relaxed);
            // A complete iteration within the solver's reach is solved too (quickly: its
            // lines are short), for the exact result's lowest optimal house.
            if ((depth == 2 && !out_of_time) || complete) && self.solvable(&state) {
                if let Some(thought) = self.solve(game, &state, start_nodes) {
                    report(&thought);
                    return thought;
                }
            }
            if complete || out_of_time {
                break;
            }
        }
        best.expect("depth 1 always finishes")
    }

    /// Solves `state` exactly.
    fn solve(&mut self, game: &Game, state: &PlayState, start_nodes: u64) -> Option<Thought> {
        let solver = self.solver.as_ref()?;
        let rules = self.rules.kalah()?;
        let pos = AnyPosition::from_setup(&state.to_setup(), rules).ok()?;
        let (value, mv) = match with_position!(pos, p => solver.best_move(&p)) {
            Ok(best) => best?,
            Err(e) => {
                self.drop_databases(e.to_string(), state.houses_per_side());
                return None;
            }
        };
        let action = if game.can_swap() && value < 0 {
            Action::Swap
        } else {
            Action::Sow(mv)
        };
        Some(Thought {
            action,
            value,
            depth: 0,
            exact: true,
            nodes: self.nodes() - start_nodes,
        })
    }

    /// One iteration `depth` sowings deep: (value, best move, whether every line ended before
    /// the horizon). Depth 1 is never stopped.
    fn iteration(
        &mut self,
        state: &PlayState,
        depth: u32,
        order: &[Move],
        deadline: Instant,
        stop: &AtomicBool,
    ) -> Result<(i32, Move, bool), Stopped> {
        let me = state.to_move().expect("a move to make");
        let houses = state.houses_per_side();
        let tablebase = self.probing_db(houses);
        let slices = match tablebase.as_deref().map(Tablebase::slices).transpose() {
            Ok(slices) => slices,
            Err(e) => {
                self.drop_databases(e.to_string(), houses);
                None
            }
        };
        let mut search = Search {
            deadline,
            stop,
            nodes: 0,
            may_stop: depth > 1,
            horizon_reached: false,
            table: &mut self.table,
            db: slices.as_ref(),
            db_hits: 0,
            fault: None,
        };
        let mut best: Option<(i32, Move)> = None;
        let mut stopped = false;
        for &mv in order {
            let alpha = best.map_or(-i32::MAX, |(v, _)| v);
            let mut next = *state;
            next.play(mv);
            let v = match next.to_move() {
                None => Ok(next.store_difference(me)),
                Some(side) if side == me => search.negamax(&next, depth - 1, alpha, i32::MAX),
                Some(_) => search
                    .negamax(&next, depth - 1, -i32::MAX, -alpha)
                    .map(|v| -v),
            };
            let Ok(v) = v else {
                stopped = true;
                break;
            };
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, mv));
            }
        }
        let (horizon_reached, fault) = (search.horizon_reached, search.fault);
        self.nodes += search.nodes;
        self.db_hits += search.db_hits;
        if let (Some(fault), Some(slices)) = (fault, &slices) {
            let why = slices.error(fault).to_string();
            self.drop_databases(why, houses);
        }
        if stopped {
            return Err(Stopped);
        }
        let (value, mv) = best.expect("a legal move");
        Ok((value, mv, !horizon_reached))
    }
}

struct Search<'a> {
    deadline: Instant,
    stop: &'a AtomicBool,
    nodes: u64,
    may_stop: bool,
    /// Some line met the horizon (a depth-limited value, not the exact one).
    horizon_reached: bool,
    table: &'a mut Table,
    /// The databases, while none of their blocks has failed.
    db: Option<&'a Probe<'a>>,
    /// Nodes valued from the databases.
    db_hits: u64,
    /// The first database block that failed its check.
    fault: Option<Fault>,
}

impl Search<'_> {
    /// f of `state` (the future store difference of the side to move `me`) from the
    /// databases, if they cover it: at most their top level of seeds, and not a `mankalah`
    /// first sowing (which the databases do not know). A failed block is recorded, ends the
    /// probing, and gives `None`.
    fn db_f(&mut self, state: &PlayState, me: crate::rules::Side) -> Option<i32> {
        let db = self.db?;
        if state.seeds_on_board() > db.max_level() || state.first_sowing_passes() {
            return None;
        }
        let (mover, opponent) = (state.houses(me), state.houses(me.other()));
        let f = match Board::<Narrow>::from_houses(mover, opponent) {
            Some(board) => db.f(board),
            None => db.f(Board::<Wide>::from_houses(mover, opponent)?),
        };
        match f {
            Ok(f) => {
                self.db_hits += u64::from(f.is_some());
                f
            }
            Err(fault) => {
                self.fault = Some(fault);
                self.db = None;
                None
            }
        }
    }

    /// Fail-soft negamax on the store difference of the side to move, `depth` sowings deep:
    /// the value if it lies within (alpha, beta), else a bound on the same side of the window
    /// (at most alpha: an upper bound; at least beta: a lower bound). A node the databases
    /// cover is valued exactly, at any depth. `horizon_reached` is set if some line of the
    /// search met the horizon (or a table slot that did); if not, the result is a bound on (or
    /// is) the exact value.
    fn negamax(
        &mut self,
        state: &PlayState,
        depth: u32,
        mut alpha: i32,
        beta: i32,
    ) -> Result<i32, Stopped> {
        self.nodes += 1;
        if self.may_stop
            && self.nodes % CLOCK_EVERY == 0
            && (self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline)
        {
            return Err(Stopped);
        }
        let me = state
            .to_move()
            .expect("finished games are valued by the caller");
        let stores = state.store_difference(me);
        if let Some(f) = self.db_f(state, me) {
            return Ok(stores + f);
        }
        if depth == 0 {
            self.horizon_reached = true;
            return Ok(stores);
        }
        let key = state.key();
        let mut table_move = 0;
        if let Some(slot) = self.table.probe(key) {
            table_move = slot.best;
            if slot.depth == PROVEN || u32::from(slot.depth) >= depth {
                let (lower, upper) = (
                    stores + i32::from(slot.lower),
                    stores + i32::from(slot.upper),
                );
                let cut = if lower >= beta || lower == upper {
                    Some(lower)
                } else if upper <= alpha {
                    Some(upper)
                } else {
                    None
                };
                if let Some(v) = cut {
                    // The stored search may have met the horizon: so may this one.
                    self.horizon_reached |= slot.depth != PROVEN;
                    return Ok(v);
                }
            }
        }
        // Sow every move; the table's move first, then extra turns, then the seeds banked.
        let mut children: Vec<(i32, u8, PlayState)> = state
            .legal_moves()
            .into_iter()
            .map(|mv| {
                let mut next = *state;
                let sown = next.play(mv);
                let banked = next.store_difference(me) - stores;
                let house = mv.house() as u8;
                let order = if house == table_move {
                    1 << 20
                } else {
                    i32::from(sown.extra_turn) * 1000 + banked
                };
                (order, house, next)
            })
            .collect();
        children.sort_by_key(|&(order, _, _)| std::cmp::Reverse(order));
        let alpha_in = alpha;
        let mut best = -i32::MAX;
        let mut best_move = 0;
        // Whether this node's own lines meet the horizon, apart from its siblings'.
        let outer_horizon = std::mem::take(&mut self.horizon_reached);
        for (_, house, next) in children {
            let v = match next.to_move() {
                None => next.store_difference(me),
                Some(side) if side == me => self.negamax(&next, depth - 1, alpha, beta)?,
                Some(_) => -self.negamax(&next, depth - 1, -beta, -alpha)?,
            };
            if v > best {
                best = v;
                best_move = house;
            }
            alpha = alpha.max(v);
            if alpha >= beta {
                break;
            }
        }
        let proven = !self.horizon_reached;
        self.horizon_reached |= outer_horizon;
        let relative = (best - stores).clamp(-i32::from(i16::MAX), i32::from(i16::MAX)) as i16;
        let (lower, upper) = if best >= beta {
            (relative, i16::MAX)
        } else if best <= alpha_in {
            (-i16::MAX, relative)
        } else {
            (relative, relative)
        };
        self.table.store(Slot {
            key,
            lower,
            upper,
            depth: if proven {
                PROVEN
            } else {
                depth.min(DEEPEST_SLOT) as u8
            },
            best: best_move,
        });
        Ok(best)
    }
}
