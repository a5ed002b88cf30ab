//! One answer to a position, from every source at hand, in one fixed order.
//!
//! Every front end (the command line's `query`, `analyze`, `solve`, `play`'s hints and perfect
//! player, `match`, `replay`, `serve` and the Python bindings) asks [`answer`] and shows what
//! it returns: an [`Answer`], the value or its bounds, each move's value or bounds, the perfect
//! line as far as it is known, where each came from and whether it is certified, the claims of
//! unchecked ledger facts, and what was not done and why. The front ends decide nothing of it.
//!
//! ```text
//!   the game is over ───────────────────► its outcome                       (End, certified)
//!   at least V?: the seeds settle it ───► what the seeds allow              (Seeds)
//!   the levels hold the board ──────────► every move's value               (Levels)
//!   the ledgers prove every move ───────► the book's answer                 (Ledger)
//!   the ledgers bound it ───────────────► the bounds of the value and of each move, from the
//!                                         ledgers, the levels below and the game's end
//!   ── what is asked ([`Want`]) is answered? done.
//!   no search given ────────────────────► NotDone::NoSearch
//!   more seeds than the budget's ───────► NotDone::Seeds
//!   the cost model past the budget's ───► NotDone::Cost (its one figure: nodes, seconds)
//!   a search ───────────────────────────► exact                             (Search)
//!            └─ the deadline, a cancel ─► NotDone::OutOfTime / Cancelled, the bounds above
//! ```
//!
//! **Certified** means proven again by another path: a bound that rests on ledger facts is
//! certified when every fact of the cheapest set it rests on has a check by another path
//! ([`crate::prove::certificate`]; the shipped ledgers carry their checks). The game's end
//! needs no proof (certified); the levels and a search are exact but rest on one computation
//! each (not certified).
//!
//! The library never prints: a search's steps go to the caller's [`Searcher`], which makes
//! the solver when it is first needed and draws the progress.
//!
//! ```
//! use kalah_core::answer::{Source, Sources, Want, look_up};
//! use kalah_core::book::{Book, game_of};
//! use kalah_core::{Narrow, Position, Rules, Variant};
//!
//! // Kalah(6,6) from the ledger kalah ships: +4, proven and certified, move 1 best.
//! let start = Position::<Narrow>::start(Variant::new(6, 6, Rules::Standard)?).unwrap();
//! let book = Book::open(true, Some(game_of(&start)), None)?;
//! let sources = Sources { levels: None, ledgers: Some(&book) };
//! let a = look_up(&start, &sources, Want::BestMoves)?;
//! assert_eq!((a.exact(), a.certified, a.source), (Some(4), true, Source::Ledger));
//! assert_eq!(a.best()[0].house(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::convert::Infallible;
use std::fmt;
use std::time::Duration;

use crate::clock::Instant;

use crate::analysis::{Analysis, MoveValue};
use crate::book::{Book, BookError, Claimed, Proven, after_move, value_range};
use crate::db::{DbError, Tablebase};
use crate::lanes::Lanes;
use crate::notation::Turn;
use crate::position::{Move, Position};
use crate::prove::fact::Bounds;
use crate::rules::Side;
use crate::search::{Algorithm, Progress, SolveError, Solver, SolverConfig};

/// What is asked of a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Its value alone.
    Value,
    /// Whether its value is at least this (stores included, for the side to move).
    AtLeast(i32),
    /// Its value and one optimal move (the lowest house proven optimal), and the value of
    /// `played` if given (a move to judge).
    Move {
        /// A move whose value is asked too.
        played: Option<Move>,
    },
    /// Its value, every optimal move and a perfect line (each other move only proven worse).
    BestMoves,
    /// Its value, every move's value and a perfect line.
    EveryMove,
}

impl Want {
    /// Whether the search it asks for values every move (the cost model's `every_move`).
    pub fn every_move(self) -> bool {
        self == Want::EveryMove
    }
}

/// How far a search may go.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    /// A search the cost model puts past this many seconds is not started (`None`: any).
    pub model_seconds: Option<f64>,
    /// A board with more seeds on it is not searched (`None`: any).
    pub max_seeds: Option<u32>,
    /// The search stops here (`None`: never), with [`NotDone::OutOfTime`].
    pub deadline: Option<Instant>,
}

/// What the cost model ([`crate::search::cost`]) puts a search at: its one figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Nodes.
    pub nodes: f64,
    /// Seconds on `threads` threads.
    pub seconds: f64,
    /// Threads.
    pub threads: usize,
    /// The top level of the endgame levels the search would probe, if any.
    pub levels_top: Option<u32>,
    /// Seeds on the board.
    pub seeds: u32,
    /// Whether it values every move (about three times the value's work).
    pub every_move: bool,
}

impl Cost {
    /// The model's figure for a search of `pos` (of every move's value with `every_move`)
    /// probing the levels `0..=levels_top`, on `threads` threads.
    pub fn of<L: Lanes>(
        pos: &Position<L>,
        every_move: bool,
        levels_top: Option<u32>,
        threads: usize,
    ) -> Cost {
        let seeds = pos.seeds_on_board();
        let nodes = crate::search::cost::estimated_nodes(
            pos.houses_per_side(),
            seeds,
            levels_top,
            pos.rules(),
            every_move,
        );
        Cost {
            nodes,
            seconds: crate::search::cost::estimated_seconds(nodes, threads),
            threads,
            levels_top,
            seeds,
            every_move,
        }
    }
}

/// What was not done, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NotDone {
    /// No search was given.
    NoSearch,
    /// The board has more seeds than the budget searches.
    Seeds {
        /// Seeds on the board.
        seeds: u32,
        /// The most the budget searches.
        limit: u32,
    },
    /// The cost model puts the search past the budget.
    Cost {
        /// The model's figure.
        cost: Cost,
        /// The budget's limit, in seconds.
        limit_seconds: f64,
    },
    /// The search reached the budget's deadline.
    OutOfTime,
    /// The search was cancelled ([`Solver::cancel`]).
    Cancelled,
}

/// Where a value (or its bounds) came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The end of the game: the rules alone.
    End,
    /// Nothing but the seeds on the board (every margin they allow).
    Seeds,
    /// The endgame levels.
    Levels,
    /// The ledgers' facts (the opening books and the campaigns), with the levels and the end
    /// of the game below them.
    Ledger,
    /// A search (probing the levels).
    Search,
}

impl Source {
    /// The name the JSON answers give it: `end`, `seeds`, `database`, `ledger`, `search`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::End => "end",
            Source::Seeds => "seeds",
            Source::Levels => "database",
            Source::Ledger => "ledger",
            Source::Search => "search",
        }
    }
}

/// What is known of one legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveAnswer {
    /// The house sown.
    pub mv: Move,
    /// Bounds on its value: the final margin of the side that makes it, stores included.
    pub bounds: Bounds,
    /// Where they came from.
    pub source: Source,
    /// Whether they are certified (see the module docs).
    pub certified: bool,
    /// Whether it earns an extra turn.
    pub extra_turn: bool,
}

impl MoveAnswer {
    /// Its exact value, if known.
    pub fn value(&self) -> Option<i32> {
        self.bounds.is_exact().then_some(self.bounds.lower)
    }
}

/// What a search cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Searched {
    /// Nodes searched.
    pub nodes: u64,
    /// Time it took (the solver's setup not included).
    pub elapsed: Duration,
}

/// The answer to a position (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The side to move (`None` once the game is over: the value is then South's margin).
    pub to_move: Option<Side>,
    /// Bounds on the value, stores included, for the side to move; exact when they meet.
    pub value: Bounds,
    /// Where they came from.
    pub source: Source,
    /// Whether they are certified.
    pub certified: bool,
    /// Each legal move, house order, with what is known of it (none once the game is over,
    /// and none where only a value was asked and searched).
    pub moves: Vec<MoveAnswer>,
    /// A perfect line from here (one turn an entry, lowest optimal house at each step), as
    /// far as it is known.
    pub pv: Vec<Turn>,
    /// Whether the perfect line reaches the end of the game.
    pub pv_complete: bool,
    /// What the ledgers proved of the value before any search, if more than the seeds allow.
    pub ledger_bounds: Option<Bounds>,
    /// What unchecked ledger facts claim of the value: never read as it.
    pub claims: Vec<Claimed>,
    /// What was not done, and why (`None`: everything asked was answered).
    pub not_done: Option<NotDone>,
    /// The search, if one ran.
    pub searched: Option<Searched>,
    /// Time the answer took.
    pub elapsed: Duration,
}

impl Answer {
    /// The exact value, if known.
    pub fn exact(&self) -> Option<i32> {
        self.value.is_exact().then_some(self.value.lower)
    }

    /// The moves proven optimal (the value exact, and each such move proven to reach it).
    pub fn best(&self) -> Vec<Move> {
        let Some(v) = self.exact() else {
            return Vec::new();
        };
        self.moves
            .iter()
            .filter(|m| m.bounds.lower >= v)
            .map(|m| m.mv)
            .collect()
    }

    /// The moves that may be optimal too (the value exact, their bounds reaching it).
    pub fn maybe_best(&self) -> Vec<Move> {
        let Some(v) = self.exact() else {
            return Vec::new();
        };
        self.moves
            .iter()
            .filter(|m| m.bounds.lower < v && m.bounds.upper >= v)
            .map(|m| m.mv)
            .collect()
    }

    /// What is known of move `mv`, if it is legal here.
    pub fn of_move(&self, mv: Move) -> Option<&MoveAnswer> {
        self.moves.iter().find(|m| m.mv == mv)
    }

    /// Whether every move's value is known (and the value).
    pub fn every_move_exact(&self) -> bool {
        self.exact().is_some() && self.moves.iter().all(|m| m.bounds.is_exact())
    }

    /// Whether this answers `want` in full.
    pub fn answers(&self, want: Want) -> bool {
        if self.to_move.is_none() {
            return self.exact().is_some();
        }
        match want {
            Want::Value => self.exact().is_some(),
            Want::AtLeast(v) => self.value.lower >= v || self.value.upper < v,
            Want::Move { played } => {
                !self.best().is_empty()
                    && played.is_none_or(|mv| self.of_move(mv).is_some_and(|m| m.bounds.is_exact()))
            }
            Want::BestMoves => {
                self.exact().is_some() && !self.moves.is_empty() && self.maybe_best().is_empty()
            }
            Want::EveryMove => !self.moves.is_empty() && self.every_move_exact(),
        }
    }

    /// The answer as an [`Analysis`] (the exact values only, moves in house order), when the
    /// value is exact.
    pub fn analysis(&self) -> Option<Analysis> {
        let value = self.exact()?;
        Some(Analysis {
            to_move: self.to_move,
            value,
            moves: self
                .moves
                .iter()
                .filter_map(|m| m.value().map(|value| MoveValue { mv: m.mv, value }))
                .collect(),
            best: self.best(),
            pv: self.pv.clone(),
        })
    }

    /// Whether a search's value lies outside what the ledgers proved: a ledger's fact is
    /// wrong (or the levels are).
    pub fn contradicts_ledgers(&self) -> bool {
        match (self.source, self.exact(), self.ledger_bounds) {
            (Source::Search, Some(v), Some(b)) => v < b.lower || v > b.upper,
            _ => false,
        }
    }

    /// The answer from an analysis of `source` (the levels', a search's, the book's), each
    /// move exact.
    fn of_analysis<L: Lanes>(
        pos: &Position<L>,
        a: &Analysis,
        source: Source,
        pv_complete: bool,
    ) -> Answer {
        Answer {
            to_move: a.to_move,
            value: Bounds::exact(a.value),
            source,
            certified: source == Source::End,
            moves: a
                .moves
                .iter()
                .map(|m| MoveAnswer {
                    mv: m.mv,
                    bounds: Bounds::exact(m.value),
                    source,
                    certified: false,
                    extra_turn: extra_turn(pos, m.mv),
                })
                .collect(),
            pv: a.pv.clone(),
            pv_complete,
            ledger_bounds: None,
            claims: Vec::new(),
            not_done: None,
            searched: None,
            elapsed: Duration::ZERO,
        }
    }
}

/// Whether move `mv` of `pos` earns an extra turn.
fn extra_turn<L: Lanes>(pos: &Position<L>, mv: Move) -> bool {
    pos.play_unchecked(mv).1.extra_turn
}

/// The sources at hand besides a search.
#[derive(Clone, Copy, Default)]
pub struct Sources<'a> {
    /// The endgame levels (those of another board size or rules are left alone).
    pub levels: Option<&'a Tablebase>,
    /// The opening books and ledgers, with their checks.
    pub ledgers: Option<&'a Book>,
}

/// The search of a front end: it makes the solver when first needed (building levels,
/// loading a table) and shows the search's progress as it likes.
pub trait Searcher {
    /// The front end's own failure (a solver that could not be made, say).
    type Error;

    /// The settings of the solver (its threads and algorithm, for the cost model).
    fn config(&self) -> SolverConfig;

    /// The top level of the endgame levels the solver probes, if any (for the cost model).
    fn levels_top(&self) -> Option<u32>;

    /// Runs `work` on the solver, made now if need be, passing it the callback for the
    /// search's steps. `known` is what the other sources said (for the front end to show
    /// before a long search).
    fn search(&mut self, known: &Answer, work: &mut SearchWork<'_>) -> Result<(), Self::Error>;
}

/// The work [`answer`] gives a [`Searcher`]: the searches it asks of the solver.
pub type SearchWork<'a> = dyn FnMut(&Solver, &mut dyn FnMut(&Progress)) + 'a;

/// A [`Searcher`] on a solver already made, its progress given to `progress` if any.
pub struct OnSolver<'a> {
    /// The solver.
    pub solver: &'a Solver,
    /// Where the search's steps go.
    pub progress: Option<&'a mut dyn FnMut(&Progress)>,
}

impl<'a> OnSolver<'a> {
    /// A searcher on `solver`, its progress shown nowhere.
    pub fn quiet(solver: &'a Solver) -> OnSolver<'a> {
        OnSolver {
            solver,
            progress: None,
        }
    }
}

impl Searcher for OnSolver<'_> {
    type Error = Infallible;

    fn config(&self) -> SolverConfig {
        *self.solver.config()
    }

    fn levels_top(&self) -> Option<u32> {
        self.solver.levels_top()
    }

    fn search(&mut self, _known: &Answer, work: &mut SearchWork<'_>) -> Result<(), Infallible> {
        match self.progress.as_mut() {
            Some(progress) => work(self.solver, *progress),
            None => work(self.solver, &mut |_| {}),
        }
        Ok(())
    }
}

/// Why no answer could be given.
#[derive(Debug)]
pub enum AnswerError<E = Infallible> {
    /// The levels could not be read (a damaged block: no value is guessed).
    Levels(DbError),
    /// The ledgers cannot be read together (two facts that contradict).
    Ledgers(BookError),
    /// The search failed (a damaged block, or the solver does not fit the position).
    Search(SolveError),
    /// The front end's [`Searcher`] failed.
    Searcher(E),
}

impl<E: fmt::Display> fmt::Display for AnswerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Levels(e) => write!(f, "cannot read the database: {e}"),
            AnswerError::Ledgers(e) => write!(f, "cannot answer from the opening books: {e}"),
            AnswerError::Search(e) => write!(f, "cannot solve: {e}"),
            AnswerError::Searcher(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for AnswerError<E> {}

impl<E> From<DbError> for AnswerError<E> {
    fn from(e: DbError) -> Self {
        AnswerError::Levels(e)
    }
}

impl<E> From<BookError> for AnswerError<E> {
    fn from(e: BookError) -> Self {
        match e {
            BookError::Database(e) => AnswerError::Levels(e),
            other => AnswerError::Ledgers(other),
        }
    }
}

/// [`answer`] from the levels and the ledgers alone: nothing is searched (what a search would
/// add is [`NotDone::NoSearch`]).
pub fn look_up<L: Lanes>(
    pos: &Position<L>,
    sources: &Sources<'_>,
    want: Want,
) -> Result<Answer, AnswerError> {
    answer::<L, OnSolver<'_>>(pos, sources, want, &Budget::default(), None)
}

/// The answer to `want` of `pos` from `sources` and then, if they do not answer it and the
/// budget allows, from `search` (see the module docs for the order).
pub fn answer<L: Lanes, S: Searcher + ?Sized>(
    pos: &Position<L>,
    sources: &Sources<'_>,
    want: Want,
    budget: &Budget,
    search: Option<&mut S>,
) -> Result<Answer, AnswerError<S::Error>> {
    let started = Instant::now();
    let mut known = known(pos, sources, want)?;
    if known.answers(want) {
        known.elapsed = started.elapsed();
        return Ok(known);
    }
    let Some(search) = search else {
        known.not_done = Some(NotDone::NoSearch);
        known.elapsed = started.elapsed();
        return Ok(known);
    };
    let seeds = pos.seeds_on_board();
    if let Some(limit) = budget.max_seeds.filter(|&limit| seeds > limit) {
        known.not_done = Some(NotDone::Seeds { seeds, limit });
        known.elapsed = started.elapsed();
        return Ok(known);
    }
    let config = search.config();
    if let Some(limit) = budget.model_seconds
        && config.algorithm == Algorithm::Mtdf
    {
        let cost = Cost::of(pos, want.every_move(), search.levels_top(), config.threads);
        if cost.seconds > limit {
            known.not_done = Some(NotDone::Cost {
                cost,
                limit_seconds: limit,
            });
            known.elapsed = started.elapsed();
            return Ok(known);
        }
    }
    let mut found: Option<Result<Found, SolveError>> = None;
    let mut work = |solver: &Solver, progress: &mut dyn FnMut(&Progress)| {
        solver.set_deadline(budget.deadline);
        let before = solver.nodes();
        let clock = Instant::now();
        let result = searched(pos, want, solver, progress);
        solver.set_deadline(None);
        found = Some(result.map(|kind| Found {
            kind,
            searched: Searched {
                nodes: solver.nodes() - before,
                elapsed: clock.elapsed(),
            },
        }));
    };
    search
        .search(&known, &mut work)
        .map_err(AnswerError::Searcher)?;
    match found {
        Some(Ok(found)) => {
            let mut out = merge(pos, known, found);
            out.elapsed = started.elapsed();
            Ok(out)
        }
        Some(Err(SolveError::OutOfTime)) => {
            known.not_done = Some(NotDone::OutOfTime);
            known.elapsed = started.elapsed();
            Ok(known)
        }
        Some(Err(SolveError::Cancelled)) | None => {
            known.not_done = Some(NotDone::Cancelled);
            known.elapsed = started.elapsed();
            Ok(known)
        }
        Some(Err(e)) => Err(AnswerError::Search(e)),
    }
}

/// What a search found.
struct Found {
    kind: FoundKind,
    searched: Searched,
}

enum FoundKind {
    /// The exact value (stores included).
    Value(i32),
    /// The bounds a null-window test proved.
    Bounds(Bounds),
    /// The value and the lowest optimal move, and the played move's value.
    Move(i32, Move, Option<(Move, i32)>),
    /// An analysis (every move's value, or the optimal moves only).
    Analysis(Analysis, bool),
}

/// The search `want` asks of `pos`.
fn searched<L: Lanes>(
    pos: &Position<L>,
    want: Want,
    solver: &Solver,
    progress: &mut dyn FnMut(&Progress),
) -> Result<FoundKind, SolveError> {
    let board = pos.board();
    let stores = pos.store_difference();
    Ok(match want {
        Want::Value => FoundKind::Value(stores + solver.exact(board, progress)?),
        Want::AtLeast(v) => {
            // The exact solve's first guess orders the moves of the one test.
            solver.guess(board)?;
            let f = solver
                .test(board, v - stores, None)?
                .expect("a test without a node limit finishes");
            let bound = f + stores;
            let range = value_range(pos);
            FoundKind::Bounds(if bound >= v {
                Bounds {
                    lower: bound,
                    upper: range.upper,
                }
            } else {
                Bounds {
                    lower: range.lower,
                    upper: bound,
                }
            })
        }
        Want::Move { played } => {
            let (value, best) = solver
                .best_move_with(pos, progress)?
                .expect("the game is not over");
            let other = match played.filter(|&mv| mv != best) {
                Some(mv) => Some((mv, move_value(pos, mv, solver)?)),
                None => None,
            };
            FoundKind::Move(value, best, other)
        }
        Want::BestMoves => FoundKind::Analysis(solver.analyze(pos, false, progress)?, false),
        Want::EveryMove => FoundKind::Analysis(solver.analyze(pos, true, progress)?, true),
    })
}

/// The exact value of move `mv` of `pos` for its mover (stores included), by `solver`.
fn move_value<L: Lanes>(pos: &Position<L>, mv: Move, solver: &Solver) -> Result<i32, SolveError> {
    let me = pos.to_move().expect("a position with a move to make");
    let (child, _) = pos.play_unchecked(mv);
    Ok(match child.to_move() {
        None => child.outcome().expect("a finished game").margin(me),
        Some(side) => {
            let v = child.store_difference() + solver.exact(child.board(), &mut |_| {})?;
            if side == me { v } else { -v }
        }
    })
}

/// `known` with what the search found.
fn merge<L: Lanes>(pos: &Position<L>, known: Answer, found: Found) -> Answer {
    let mut out = known;
    out.not_done = None;
    out.searched = Some(found.searched);
    out.certified = false;
    let exact = |mv: Move, value: i32| MoveAnswer {
        mv,
        bounds: Bounds::exact(value),
        source: Source::Search,
        certified: false,
        extra_turn: extra_turn(pos, mv),
    };
    let set = |moves: &mut Vec<MoveAnswer>, m: MoveAnswer| match moves
        .iter_mut()
        .find(|k| k.mv == m.mv)
    {
        Some(k) => *k = m,
        None => {
            moves.push(m);
            moves.sort_by_key(|k| k.mv.house());
        }
    };
    match found.kind {
        FoundKind::Value(v) => {
            out.value = Bounds::exact(v);
            out.source = Source::Search;
        }
        FoundKind::Bounds(b) => {
            out.value = b;
            out.source = Source::Search;
        }
        FoundKind::Move(v, best, other) => {
            out.value = Bounds::exact(v);
            out.source = Source::Search;
            set(&mut out.moves, exact(best, v));
            if let Some((mv, value)) = other {
                set(&mut out.moves, exact(mv, value));
            }
        }
        FoundKind::Analysis(a, every) => {
            let before = std::mem::take(&mut out.moves);
            let ledger = (out.ledger_bounds, std::mem::take(&mut out.claims));
            out = Answer::of_analysis(pos, &a, Source::Search, true);
            out.searched = Some(found.searched);
            (out.ledger_bounds, out.claims) = ledger;
            if !every {
                // The other moves are proven worse than the value (and keep what else was
                // known of them).
                for mv in pos.legal_moves() {
                    if out.of_move(mv).is_some() {
                        continue;
                    }
                    let known = before.iter().find(|m| m.mv == mv).map(|m| m.bounds);
                    let range = known.unwrap_or_else(|| after_move(pos, mv, value_range));
                    let upper = range.upper.min(a.value - 1);
                    let bounds = Bounds {
                        lower: range.lower.min(upper),
                        upper,
                    };
                    set(
                        &mut out.moves,
                        MoveAnswer {
                            bounds,
                            ..exact(mv, upper)
                        },
                    );
                }
            }
        }
    }
    out
}

/// Bounds with whether each of their sides is certified (a side that rests on no fact is:
/// there is nothing to prove again), and whether any fact is under them.
#[derive(Clone, Copy, Debug)]
struct Side2 {
    bounds: Bounds,
    lower: bool,
    upper: bool,
    facts: bool,
}

impl Side2 {
    fn of(p: Proven) -> Side2 {
        Side2 {
            bounds: p.bounds,
            lower: p.lower_certified,
            upper: p.upper_certified,
            facts: p.rests_on_facts,
        }
    }

    /// What the seeds allow of `pos`: nothing to prove.
    fn seeds<L: Lanes>(pos: &Position<L>) -> Side2 {
        Side2 {
            bounds: value_range(pos),
            lower: true,
            upper: true,
            facts: false,
        }
    }

    /// Certified: resting on facts, each side certified.
    fn is_certified(&self) -> bool {
        self.facts && self.lower && self.upper
    }
}

/// Everything but a search: the end of the game, the seeds (for `AtLeast`), the levels, the
/// ledgers.
fn known<L: Lanes, E>(
    pos: &Position<L>,
    sources: &Sources<'_>,
    want: Want,
) -> Result<Answer, AnswerError<E>> {
    let levels = sources
        .levels
        .filter(|db| db.houses() == pos.houses_per_side() && db.rules() == pos.rules());
    // The end of the game.
    if let Some(outcome) = pos.outcome() {
        return Ok(Answer {
            to_move: None,
            value: Bounds::exact(outcome.margin(Side::South)),
            source: Source::End,
            certified: true,
            moves: Vec::new(),
            pv: Vec::new(),
            pv_complete: true,
            ledger_bounds: None,
            claims: Vec::new(),
            not_done: None,
            searched: None,
            elapsed: Duration::ZERO,
        });
    }
    // Nothing known but what the seeds allow, of the value and of each move.
    let seeds_only = |value: Bounds| Answer {
        to_move: pos.to_move(),
        value,
        source: Source::Seeds,
        certified: false,
        moves: pos
            .legal_moves()
            .into_iter()
            .map(|mv| {
                let (child, sowing) = pos.play_unchecked(mv);
                MoveAnswer {
                    mv,
                    bounds: after_move(pos, mv, value_range),
                    source: if child.is_finished() {
                        Source::End
                    } else {
                        Source::Seeds
                    },
                    certified: child.is_finished(),
                    extra_turn: sowing.extra_turn,
                }
            })
            .collect(),
        pv: Vec::new(),
        pv_complete: false,
        ledger_bounds: None,
        claims: Vec::new(),
        not_done: None,
        searched: None,
        elapsed: Duration::ZERO,
    };
    // The seeds settle a question of at least V past every margin they allow.
    if let Want::AtLeast(v) = want {
        let range = value_range(pos);
        if range.lower >= v || range.upper < v {
            return Ok(seeds_only(range));
        }
    }
    // The levels.
    if let Some(db) = levels.filter(|db| pos.seeds_on_board() <= db.max_level()) {
        if let Some(a) = db.analyze(pos).map_err(AnswerError::Levels)? {
            return Ok(Answer::of_analysis(pos, &a, Source::Levels, true));
        }
    }
    let Some(book) = sources.ledgers else {
        return Ok(seeds_only(value_range(pos)));
    };
    let claims = book.claims(pos);
    let moves = ledger_moves(pos, book, levels)?;
    let own = book.proven(pos)?.map(Side2::of);
    let informed = own.is_some() || moves.iter().any(|(m, _)| m.source == Source::Ledger);
    if !informed {
        let mut out = seeds_only(value_range(pos));
        out.claims = claims;
        return Ok(out);
    }
    let value = combined(pos, own, &moves);
    if value.bounds.lower > value.bounds.upper {
        let listed: Vec<String> = moves
            .iter()
            .map(|(m, _)| format!("{}:[{:+}, {:+}]", m.mv, m.bounds.lower, m.bounds.upper))
            .collect();
        return Err(AnswerError::Ledgers(BookError::Inconsistent(format!(
            "the ledgers bound the value of {pos} ({} rules) by [{:+}, {:+}], but its moves give \
             {}: a ledger's fact or the levels are wrong",
            pos.rules(),
            own.map_or(i32::MIN, |o| o.bounds.lower),
            own.map_or(i32::MAX, |o| o.bounds.upper),
            listed.join(" ")
        ))));
    }
    let moves: Vec<MoveAnswer> = moves.into_iter().map(|(m, _)| m).collect();
    // The perfect line through the ledgers' boards and the levels, as far as they know it.
    let (pv, pv_complete) = match value.bounds.is_exact() {
        true => book.line(pos, levels)?,
        false => (Vec::new(), false),
    };
    Ok(Answer {
        to_move: pos.to_move(),
        value: value.bounds,
        source: Source::Ledger,
        certified: value.is_certified(),
        moves,
        pv,
        pv_complete,
        ledger_bounds: Some(value.bounds),
        claims,
        not_done: None,
        searched: None,
        elapsed: Duration::ZERO,
    })
}

/// Each legal move of `pos` from the end of the game, the levels, or the ledgers' facts (what
/// the seeds allow where none of them knows it), house order, with the certification of each
/// side of its bounds.
fn ledger_moves<L: Lanes>(
    pos: &Position<L>,
    book: &Book,
    levels: Option<&Tablebase>,
) -> Result<Vec<(MoveAnswer, Side2)>, BookError> {
    let mut moves = Vec::new();
    for mv in pos.legal_moves() {
        let (child, sowing) = pos.play_unchecked(mv);
        let (of_child, source) = if child.is_finished() {
            (Side2::seeds(&child), Source::End)
        } else if let Some(f) = match levels.filter(|db| child.seeds_on_board() <= db.max_level()) {
            Some(db) => db.probe_checked(child.board())?,
            None => None,
        } {
            // Exact, but one computation: not certified.
            let of_child = Side2 {
                bounds: Bounds::exact(child.store_difference() + f),
                lower: false,
                upper: false,
                facts: false,
            };
            (of_child, Source::Levels)
        } else {
            match book.proven(&child)? {
                Some(p) => (Side2::of(p), Source::Ledger),
                None => (Side2::seeds(&child), Source::Seeds),
            }
        };
        // The sides of the child's bounds swap when the turn passes.
        let same = child.to_move() == pos.to_move();
        let sides = Side2 {
            bounds: after_move(pos, mv, |_| of_child.bounds),
            lower: if same { of_child.lower } else { of_child.upper },
            upper: if same { of_child.upper } else { of_child.lower },
            facts: of_child.facts,
        };
        let certified = match source {
            Source::End => true,
            Source::Ledger => sides.is_certified(),
            _ => false,
        };
        let answer = MoveAnswer {
            mv,
            bounds: sides.bounds,
            source,
            certified,
            extra_turn: sowing.extra_turn,
        };
        moves.push((answer, sides));
    }
    Ok(moves)
}

/// The value's bounds from the ledgers' own (`own`) and from the moves' (the best of them),
/// within what the seeds allow, with whether each side is certified: a side is when the
/// tightest proof of it is.
fn combined<L: Lanes>(
    pos: &Position<L>,
    own: Option<Side2>,
    moves: &[(MoveAnswer, Side2)],
) -> Side2 {
    // By the moves: at least the best lower bound (proven by that move), at most the best
    // upper bound (proven by every move's).
    let by_moves = moves.iter().map(|&(_, sides)| sides).reduce(|a, m| Side2 {
        bounds: Bounds {
            lower: a.bounds.lower.max(m.bounds.lower),
            upper: a.bounds.upper.max(m.bounds.upper),
        },
        lower: match a.bounds.lower.cmp(&m.bounds.lower) {
            std::cmp::Ordering::Greater => a.lower,
            std::cmp::Ordering::Less => m.lower,
            std::cmp::Ordering::Equal => a.lower || m.lower,
        },
        upper: a.upper && m.upper,
        facts: a.facts || m.facts,
    });
    let mut out = Side2::seeds(pos);
    for candidate in [own, by_moves].into_iter().flatten() {
        let b = candidate.bounds;
        let mut used = false;
        if b.lower > out.bounds.lower {
            out.bounds.lower = b.lower;
            out.lower = candidate.lower;
            used = true;
        } else if b.lower == out.bounds.lower {
            out.lower |= candidate.lower;
        }
        if b.upper < out.bounds.upper {
            out.bounds.upper = b.upper;
            out.upper = candidate.upper;
            used = true;
        } else if b.upper == out.bounds.upper {
            out.upper |= candidate.upper;
        }
        out.facts |= used && candidate.facts;
    }
    out
}
