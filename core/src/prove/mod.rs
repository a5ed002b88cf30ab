//! Proofs too big for one run: a manager that splits the value of a position into tests of
//! positions below it, and keeps every answer as a fact in a ledger.
//!
//! A **campaign** proves the exact value of a root (by default the start of a variant). Its
//! state is the ledger alone ([`ledger`]): facts (bounds on the value of one position, and
//! their cost; [`fact`]) that hold whatever the order they were found in, the machine, or the
//! worker. From the ledger the manager grows the proof tree ([`tree`]): the root split into its
//! moves, and every position whose test ran out of its node budget split in turn. Each step:
//!
//! 1. read the ledgers again (other workers may have added facts);
//! 2. work out the bounds of every node by minimax over the facts, leaves first;
//! 3. pick the focus and the test it needs: the root, "f >= beta" with beta from the bounds
//!    and the last guess, as MTD(f) picks it; then with `all_moves` first each move that may
//!    or may not be best, tested against the root's value, and then each move not yet exact,
//!    by MTD(f) again;
//! 4. pick the most-proving open leaf of that test ([`tree`]: proof-number search) among those
//!    of this worker's share ([`Share`]);
//! 5. test it: a null-window search ([`Solver::test`]) within the node budget, or a lookup when
//!    the endgame levels hold it;
//! 6. append the fact (bounds, or "over budget", which splits the leaf) and sync it before the
//!    next step.
//!
//! A worker killed at any moment loses at most its test in flight; the same command resumes
//! from the ledger, on this machine or another with the same levels (the levels only make the
//! tests cheaper: facts found with other levels, or none, hold all the same).
//!
//! Every type here is generic over the lanes of its boards ([`crate::lanes`]): [`Narrow`] by
//! default, for boards of up to 8 houses a side and 255 seeds; [`Wide`] for the boards of 9 to
//! 12 houses, which have no levels. A ledger's text is the same in both: the lanes are only how
//! a reader holds its positions, and [`merge`] reads in wide lanes, which hold them all.

pub mod certificate;
pub mod fact;
pub mod key;
pub mod ledger;
pub mod shipped;
pub mod tree;

use crate::clock::Instant;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::board::Board;
use crate::db::{DbError, Tablebase};
use crate::lanes::{Lanes, Narrow, Wide};
use crate::position::{Move, Position};
use crate::search::harvest::{Found, Harvest};
use crate::search::{self, SolveError, Solver};
use fact::{Bounds, Fact};
use ledger::{Ledger, LedgerError, LedgerWriter, Origin};
use tree::{INFINITE, Tree, TreeError};

/// The most positions a proof tree may hold.
pub const MAX_TREE: usize = 4_000_000;
/// The open leaves a step looks at to find one of its worker's share.
const FRONTIER: usize = 4096;

/// A test spends at most this share of its budget (1/8) on ordering its moves first (see
/// `Campaign::test_leaf`), and never more than the exact solve's own deepening.
const GUESS_SHARE: u64 = 8;

/// Why a campaign cannot go on.
#[derive(Debug)]
pub enum ProveError {
    /// The ledger cannot be read or written, or contradicts itself.
    Ledger(LedgerError),
    /// The tree cannot be grown from the ledger.
    Tree(TreeError),
    /// A test failed (a damaged database block, a cancel).
    Solve(SolveError),
    /// The root cannot be proven (the game is over there, or it is outside what the campaign
    /// handles).
    Root(String),
}

impl fmt::Display for ProveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProveError::Ledger(e) => e.fmt(f),
            ProveError::Tree(e) => e.fmt(f),
            ProveError::Solve(e) => e.fmt(f),
            ProveError::Root(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ProveError {}

impl From<LedgerError> for ProveError {
    fn from(e: LedgerError) -> ProveError {
        ProveError::Ledger(e)
    }
}

impl From<TreeError> for ProveError {
    fn from(e: TreeError) -> ProveError {
        ProveError::Tree(e)
    }
}

impl From<SolveError> for ProveError {
    fn from(e: SolveError) -> ProveError {
        ProveError::Solve(e)
    }
}

impl From<DbError> for ProveError {
    fn from(e: DbError) -> ProveError {
        ProveError::Solve(SolveError::Database(e))
    }
}

/// A worker's share of the open leaves: those whose board digests to `index` modulo `count`.
/// Workers with the same `count` and different indices never test the same leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// This worker, from 0.
    pub index: u32,
    /// Workers in all (at least 1).
    pub count: u32,
}

impl Share {
    /// Every leaf: one worker.
    pub const ALL: Share = Share { index: 0, count: 1 };

    /// Whether `board` is this worker's.
    pub fn owns<L: Lanes>(self, board: Board<L>) -> bool {
        self.count <= 1 || board.key().digest() % u64::from(self.count) == u64::from(self.index)
    }
}

/// How a campaign works.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Nodes a test may search before its leaf is split instead.
    pub budget: u64,
    /// This worker's share of the leaves.
    pub share: Share,
    /// After the root, decide which of its moves are best, then prove the value of each of its
    /// moves too.
    pub all_moves: bool,
    /// A test that runs out of its budget keeps, as facts, the largest subtrees it finished
    /// within this many plies of its position (0: none; see [`crate::search::harvest`]) ...
    pub harvest_plies: u32,
    /// ... at most this many of them a test, ...
    pub harvest_facts: usize,
    /// ... each of at least this share of the budget (the budget divided by it).
    pub harvest_share: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            budget: 100_000_000,
            share: Share::ALL,
            all_moves: false,
            harvest_plies: 16,
            harvest_facts: 32,
            harvest_share: 1024,
        }
    }
}

/// What one step of a campaign did.
#[derive(Clone, Debug)]
pub enum Step<L: Lanes = Narrow> {
    /// A leaf was tested and its fact written ...
    Tested {
        /// ... this one (boxed: a fact is large beside the other steps), ...
        fact: Box<Fact<L>>,
        /// ... with the subtrees it finished before it ran out of its budget, if it did; ...
        harvested: Vec<Fact<L>>,
        /// ... and the root's bounds since (stores included, for its side to move).
        root: Bounds,
    },
    /// Every open leaf of the test in hand belongs to other workers: wait for their facts.
    Idle,
    /// The root (and with `all_moves`, each of its moves) has its exact value.
    Done,
}

/// Where a campaign stands, from its ledger alone.
#[derive(Clone, Debug)]
pub struct Status<L: Lanes = Narrow> {
    /// The root.
    pub root: Position<L>,
    /// Bounds on the root's value (stores included, for its side to move).
    pub value: Bounds,
    /// Each first move and the bounds of its value, for the root's side to move.
    pub moves: Vec<(Move, Bounds)>,
    /// Facts in the ledger (lines), and of those the tests that ran over budget.
    pub facts: usize,
    /// Tests that ran out of their budget (positions split).
    pub over_budget: usize,
    /// Facts kept from tests that ran out of their budget (subtrees those tests finished).
    pub harvested: usize,
    /// Search nodes of every fact.
    pub nodes: u64,
    /// CPU seconds of every fact.
    pub cpu_s: f64,
    /// Positions in the proof tree.
    pub tree: usize,
    /// The test of the root in hand ("value >= beta", stores included), if the value is open.
    pub beta: Option<i32>,
    /// Open leaves of that test, and its proof and disproof numbers (the fewest leaf answers
    /// that could decide it either way, if no leaf is split again).
    pub open_leaves: usize,
    /// Proof number of the root's test.
    pub proof: u64,
    /// Disproof number of the root's test.
    pub disproof: u64,
    /// Files whose last line is torn, with its bytes.
    pub torn: Vec<(PathBuf, u64)>,
    /// The last searches of the ledgers (at most [`RECENT`], in the order read; lookups in the
    /// levels left out) ...
    pub recent: usize,
    /// ... and how many of them ran out of their budget: when nearly all do, the tree grows
    /// by its splits faster than answers close it.
    pub recent_over: usize,
}

/// The searches [`Status::recent`] looks back on.
pub const RECENT: usize = 100;

impl<L: Lanes> Status<L> {
    /// Once the value is exact: the first moves proven best (their value is the root's), and
    /// those that may or may not be (the rest are proven worse).
    pub fn best_moves(&self) -> Option<(Vec<Move>, Vec<Move>)> {
        if !self.value.is_exact() {
            return None;
        }
        let v = self.value.lower;
        let best = self.moves.iter().filter(|(_, b)| b.lower >= v);
        let open = self
            .moves
            .iter()
            .filter(|(_, b)| b.lower < v && b.upper >= v);
        Some((
            best.map(|&(mv, _)| mv).collect(),
            open.map(|&(mv, _)| mv).collect(),
        ))
    }

    /// Where the campaign of `root` stands by `ledger` (tested against `guess`, stores
    /// included, if given; else against the lower bound plus 2).
    pub fn of(
        root: Position<L>,
        ledger: &Ledger<L>,
        guess: Option<i32>,
    ) -> Result<Status<L>, ProveError> {
        check_root(&root)?;
        let mut tree = Tree::grow(root, ledger, MAX_TREE)?;
        let stores = root.store_difference();
        let b = tree.root().bounds;
        let beta = (!b.is_exact()).then(|| next_beta(b, guess.map_or(b.lower, |g| g - stores)));
        let (mut open_leaves, mut proof, mut disproof) = (0, 0, 0);
        if let Some(beta) = beta {
            tree.set_test(0, beta);
            open_leaves = tree.frontier(0, usize::MAX).len();
            proof = tree.root().proof;
            disproof = tree.root().disproof;
        }
        let shift = |b: Bounds| Bounds {
            lower: b.lower + stores,
            upper: b.upper + stores,
        };
        let moves = tree
            .root()
            .moves
            .iter()
            .map(|e| (e.mv, shift(tree.edge_bounds(e))))
            .collect();
        let facts = ledger.facts();
        let searches: Vec<&Fact<L>> = facts
            .iter()
            .map(|(f, _)| f)
            .filter(|f| f.budget.is_some() && f.within.is_none())
            .collect();
        let recent = &searches[searches.len().saturating_sub(RECENT)..];
        Ok(Status {
            root,
            value: shift(b),
            moves,
            facts: facts.len(),
            over_budget: facts.iter().filter(|(f, _)| f.over_budget).count(),
            harvested: facts.iter().filter(|(f, _)| f.within.is_some()).count(),
            nodes: fact::sum_nodes(facts.iter().map(|(f, _)| f.nodes)),
            cpu_s: facts.iter().map(|(f, _)| f.cpu_s).sum(),
            tree: tree.nodes().len(),
            beta: beta.map(|b| b + stores),
            open_leaves,
            proof,
            disproof,
            torn: ledger
                .torn()
                .into_iter()
                .map(|(p, n)| (p.to_path_buf(), n))
                .collect(),
            recent: recent.len(),
            recent_over: recent.iter().filter(|f| f.over_budget).count(),
        })
    }
}

/// The first `limit` open leaves of the next test of `root`'s campaign by `ledger`, in the
/// order a campaign takes them (depth first, each split position's moves in the search's
/// order with an empty table), each with its test "f >= t" as the pair (leaf, t). The next
/// test is [`Status::of`]'s: the root's against `guess` (stores included; the lower bound plus
/// 2 if none) while its value is open, then with `all_moves` each first move's as
/// `--all-moves` takes them. Empty once there is nothing left to test. A fixed sample of the
/// work ahead, for measuring what the campaign's settings (levels, budget) buy.
pub fn next_leaves<L: Lanes>(
    root: Position<L>,
    ledger: &Ledger<L>,
    guess: Option<i32>,
    all_moves: bool,
    limit: usize,
) -> Result<Vec<(Position<L>, i32)>, ProveError> {
    check_root(&root)?;
    let mut tree = Tree::grow(root, ledger, MAX_TREE)?;
    let Some((focus, decide)) = focus(&tree, all_moves) else {
        return Ok(Vec::new());
    };
    let node = &tree.nodes()[focus];
    // The guess is the root's; a first move's own test starts from its lower bound.
    let guess = guess.filter(|_| focus == 0);
    let beta = decide.unwrap_or_else(|| {
        let g = guess.map_or(node.bounds.lower, |g| g - root.store_difference());
        next_beta(node.bounds, g)
    });
    tree.set_test(focus, beta);
    let leaves = tree.frontier_ordered(focus, limit, &mut |node| {
        search::negamax::move_order(node.board(), node.position.rules(), None)
    });
    Ok(leaves
        .into_iter()
        .map(|i| {
            let leaf = &tree.nodes()[i];
            (leaf.position, leaf.threshold)
        })
        .collect())
}

/// The next test of a node with bounds `b` (not exact), given the guess `g` of its f: as
/// MTD(f) picks it, "f >= beta" with beta on f's parity, above the lower bound and at most the
/// upper one.
fn next_beta(b: Bounds, g: i32) -> i32 {
    if g <= b.lower {
        b.lower + 2
    } else if g > b.upper {
        b.upper
    } else if (g - b.lower) % 2 != 0 {
        g + 1
    } else {
        g
    }
}

/// The node the next test is for, and its test ("f >= beta") when the focus fixes it rather
/// than MTD(f): the root until its value is exact; then, with `all_moves`, each first move of
/// which it is not yet known whether it is best, tested against the root's value (that decides
/// the best moves, which is what a table of values needs, before any move's exact value);
/// then each first move whose value is not exact, by MTD(f). None when all that is done.
fn focus<L: Lanes>(tree: &Tree<L>, all_moves: bool) -> Option<(usize, Option<i32>)> {
    let root = tree.root();
    if !root.bounds.is_exact() {
        return Some((0, None));
    }
    if !all_moves {
        return None;
    }
    let v = root.bounds.lower;
    let undecided = root.moves.iter().find_map(|e| {
        let b = tree.edge_bounds(e);
        let c = e.child?;
        // The child's test of "the move is worth >= v", put on the child's parity as MTD(f)
        // puts its tests (it lies within the child's bounds, since the move is undecided).
        (b.lower < v && b.upper >= v).then(|| {
            let beta = next_beta(tree.nodes()[c].bounds, tree::child_threshold(e, v));
            (c, Some(beta))
        })
    });
    undecided.or_else(|| {
        root.moves
            .iter()
            .filter_map(|e| e.child)
            .find(|&c| !tree.nodes()[c].bounds.is_exact())
            .map(|c| (c, None))
    })
}

pub(crate) fn check_root<L: Lanes>(root: &Position<L>) -> Result<(), ProveError> {
    if root.is_finished() {
        return Err(ProveError::Root(format!(
            "the game is over at {root}: its value needs no proof"
        )));
    }
    Ok(())
}

/// A focus's guess and its last test.
#[derive(Clone, Copy, Debug)]
struct Guess {
    g: i32,
    beta: Option<i32>,
}

/// A campaign in progress: one worker's view of the ledger, its solver and its own file.
pub struct Campaign<'a, L: Lanes = Narrow> {
    root: Position<L>,
    solver: &'a Solver,
    db: Option<&'a Tablebase>,
    ledger: Ledger<L>,
    writer: LedgerWriter,
    config: Config,
    /// Guesses of f by focus board.
    guesses: HashMap<Board<L>, Guess>,
    /// What a test finished, for a test that runs out of its budget.
    harvest: Harvest,
    /// The moves the last test's search stopped in, if it ran out of its budget, with the
    /// position of that test: the next test takes one up.
    in_flight: HashMap<Board<L>, String>,
}

impl<'a, L: Lanes> Campaign<'a, L> {
    /// A campaign of `root` that appends to `own` and reads `others` too; `solver` (with `db`
    /// as its databases, if any) runs the tests; `guess`, if given, is the first guess of the
    /// root's value (stores included).
    pub fn open(
        root: Position<L>,
        own: &Path,
        others: &[PathBuf],
        solver: &'a Solver,
        db: Option<&'a Tablebase>,
        config: Config,
        guess: Option<i32>,
    ) -> Result<Campaign<'a, L>, ProveError> {
        check_root(&root)?;
        if !(1..=fact::MAX_NODES).contains(&config.budget) {
            // Its facts could not be read back.
            return Err(ProveError::Root(format!(
                "a budget of {} nodes: a campaign's is 1 to {}",
                config.budget,
                fact::MAX_NODES
            )));
        }
        let writer = LedgerWriter::open(own)?;
        let mut ledger = Ledger::new();
        ledger.add_file(own)?;
        for other in others {
            ledger.add_file(other)?;
        }
        let mut guesses = HashMap::new();
        if let Some(g) = guess {
            guesses.insert(
                root.board(),
                Guess {
                    g: g - root.store_difference(),
                    beta: None,
                },
            );
        }
        let min_nodes = config.budget / config.harvest_share.max(1);
        Ok(Campaign {
            root,
            solver,
            db,
            ledger,
            writer,
            config,
            guesses,
            harvest: Harvest::new(config.harvest_plies, min_nodes.max(1)),
            in_flight: HashMap::new(),
        })
    }

    /// The root.
    pub fn root(&self) -> Position<L> {
        self.root
    }

    /// The facts read so far.
    pub fn ledger(&self) -> &Ledger<L> {
        &self.ledger
    }

    /// Where the campaign stands.
    pub fn status(&self) -> Result<Status<L>, ProveError> {
        let g = self.guesses.get(&self.root.board()).map(|g| g.g);
        Status::of(
            self.root,
            &self.ledger,
            g.map(|g| g + self.root.store_difference()),
        )
    }

    /// One step (see the module docs): reads the ledgers again, tests one leaf and appends its
    /// fact; [`Step::Idle`] when the leaves of the test in hand are all other workers'.
    pub fn step(&mut self) -> Result<Step<L>, ProveError> {
        // Every node this step searches (the guess, the test) is the cost of its fact.
        let nodes = self.solver.nodes();
        let cpu = crate::cpu_time();
        let started = Instant::now();
        self.writer.follow()?;
        self.ledger.refresh()?;
        let mut tree = Tree::grow(self.root, &self.ledger, MAX_TREE)?;
        let Some((focus, decide)) = focus(&tree, self.config.all_moves) else {
            return Ok(Step::Done);
        };
        let node = &tree.nodes()[focus];
        let (board, bounds) = (node.board(), node.bounds);
        let (g, beta) = match decide {
            // Its test is fixed; MTD(f) goes on from it once it is answered.
            Some(beta) => (beta, beta),
            None => {
                let guess = match self.guesses.get(&board) {
                    Some(&guess) => guess,
                    None => Guess {
                        g: self.solver.guess(board)?,
                        beta: None,
                    },
                };
                // MTD(f): a decided test moves the guess to the bound it found.
                let g = match guess.beta {
                    Some(beta) if bounds.lower >= beta => bounds.lower,
                    Some(beta) if bounds.upper < beta => bounds.upper,
                    _ => guess.g,
                };
                (g, next_beta(bounds, g))
            }
        };
        self.guesses.insert(
            board,
            Guess {
                g,
                beta: Some(beta),
            },
        );
        tree.set_test(focus, beta);
        let share = self.config.share;
        // The leaves in the order a search of the focus would reach them: the moves of each
        // split position as the search orders them, the one the last test was in first.
        let in_flight = &self.in_flight;
        let solver = self.solver;
        let Some(leaf) = tree
            .frontier_ordered(focus, FRONTIER, &mut |node| {
                let mut order: Vec<usize> = solver.move_order(node.board());
                order.sort_by_key(|&h| {
                    let (next, _) = node.board().sow(h, node.position.rules());
                    !in_flight.contains_key(&next)
                });
                order
            })
            .into_iter()
            .find(|&i| share.owns(tree.nodes()[i].board()))
        else {
            return Ok(Step::Idle);
        };
        let leaf = &tree.nodes()[leaf];
        let (mut fact, harvested) = self.test(leaf.position, leaf.threshold)?;
        // The fact counts the step's nodes and time, less what the subtrees it kept count.
        let kept: u64 = harvested.iter().map(|f| f.nodes).sum();
        let cpu_s = match (cpu, crate::cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a).as_secs_f64(),
            _ => started.elapsed().as_secs_f64(),
        };
        let spent = self.solver.nodes() - nodes;
        fact.nodes = spent.saturating_sub(kept);
        fact.cpu_s = cpu_s * fact.nodes as f64 / spent.max(1) as f64;
        let mut harvested = harvested;
        for f in &mut harvested {
            f.cpu_s = cpu_s * f.nodes as f64 / spent.max(1) as f64;
        }
        // The subtrees first: a stop between the writes leaves the test to do again, never
        // a split without what it found.
        let mut facts = harvested.clone();
        facts.push(fact.clone());
        self.writer.append_all(&facts)?;
        self.ledger.refresh()?;
        tree.bound(&self.ledger)?;
        let stores = self.root.store_difference();
        let b = tree.root().bounds;
        let root = Bounds {
            lower: b.lower + stores,
            upper: b.upper + stores,
        };
        Ok(Step::Tested {
            fact: Box::new(fact),
            harvested,
            root,
        })
    }

    /// Tests "f >= t" at `position` within the budget, or looks it up, as a fact (its cost
    /// still to be set); with the facts harvested from the test if it ran out of its budget.
    /// Takes up the last test again if that one ran out of its budget in `position`.
    fn test(
        &mut self,
        position: Position<L>,
        t: i32,
    ) -> Result<(Fact<L>, Vec<Fact<L>>), ProveError> {
        let board = position.board();
        let rules = position.rules();
        let widest = Bounds::widest(board.seeds(), rules);
        let continues = self.in_flight.remove(&board);
        self.in_flight.clear();
        let in_db = self.db.filter(|db| board.seeds() <= db.max_level());
        let (bounds, over_budget) = match in_db {
            Some(db) => {
                let f = db.probe_checked(board)?.ok_or_else(|| {
                    ProveError::Root("the database is for another board size".into())
                })?;
                (Bounds::exact(f), false)
            }
            None => match self.test_leaf(board, t)? {
                Some(v) if v >= t => (
                    Bounds {
                        lower: v,
                        upper: widest.upper,
                    },
                    false,
                ),
                Some(v) => (
                    Bounds {
                        lower: widest.lower,
                        upper: v,
                    },
                    false,
                ),
                None => (widest, true),
            },
        };
        let mut fact = self.fact(position, bounds, 0, 0.0);
        fact.budget = in_db.is_none().then_some(self.config.budget);
        fact.over_budget = over_budget;
        fact.continues = continues;
        let mut harvested = Vec::new();
        if over_budget {
            harvested = self.reap(position);
            for f in &mut harvested {
                f.budget = Some(self.config.budget);
                f.within = Some(position.to_string());
            }
        }
        Ok((fact, harvested))
    }

    /// A null-window test of "f >= t" within the budget, harvesting what it finishes (when
    /// the campaign harvests). The leaf's moves are ordered first as the exact solve orders
    /// its own (the iterative deepening of [`Solver::guess`], within a [`GUESS_SHARE`]th of
    /// the budget): a test searched without it took 6 to 11 times the nodes of the same test
    /// with it on Kalah(6,6) (docs/journal/performance.md, "A campaign's tests ordered first").
    fn test_leaf(&self, board: Board<L>, t: i32) -> Result<Option<i32>, SolveError> {
        let before = self.solver.nodes();
        self.solver
            .guess_within(board, self.config.budget / GUESS_SHARE)?;
        let budget = self
            .config
            .budget
            .saturating_sub(self.solver.nodes() - before)
            .max(1);
        if self.config.harvest_plies == 0 {
            return self.solver.test(board, t, Some(budget));
        }
        self.solver.test_harvesting(board, t, budget, &self.harvest)
    }

    /// A fact of this campaign: `bounds` on f of `position`'s board, found in `nodes` nodes
    /// and `cpu_s` seconds (no budget: the caller sets it).
    fn fact(&self, position: Position<L>, bounds: Bounds, nodes: u64, cpu_s: f64) -> Fact<L> {
        let stores = position.store_difference();
        Fact {
            position,
            lower: bounds.lower + stores,
            upper: bounds.upper + stores,
            nodes,
            cpu_s,
            top: self.db.map(Tablebase::max_level),
            kalah: env!("CARGO_PKG_VERSION").to_owned(),
            root: Some(self.root.to_string()),
            budget: None,
            over_budget: false,
            within: None,
            continues: None,
            threads: u32::try_from(self.solver.config().threads).ok(),
        }
    }

    /// What the last test (of `position`, which ran out of its budget) finished: the largest
    /// subtrees below it that its search completed, reached through the positions it stopped
    /// in (see [`crate::search::harvest`]), as facts: at most [`Config::harvest_facts`], the
    /// largest, and none the ledger already holds. The moves its search stopped in are kept
    /// in [`Campaign::in_flight`], for the next test to take up.
    fn reap(&mut self, position: Position<L>) -> Vec<Fact<L>> {
        let rules = position.rules();
        let mut found: Vec<(Position<L>, Bounds, u64)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![(position, 0u32)];
        while let Some((p, ply)) = stack.pop() {
            for mv in p.legal_moves() {
                let (next, sowing) = p.play_unchecked(mv);
                if sowing.game_over {
                    continue;
                }
                let board = next.board();
                let houses = board.house_key();
                if !seen.insert(houses) {
                    continue;
                }
                match self.harvest.get(&houses) {
                    Some(Found::Done {
                        lower,
                        upper,
                        nodes,
                    }) => {
                        let b = Bounds { lower, upper }.fitted(board.seeds(), rules);
                        let widest = Bounds::widest(board.seeds(), rules);
                        let known = self.ledger.known(rules, board).map(|k| k.bounds);
                        let new = known.is_none_or(|k| b.lower > k.lower || b.upper < k.upper);
                        if b.lower <= b.upper && b != widest && new {
                            found.push((next, b, nodes));
                        }
                    }
                    Some(Found::Unfinished) => {
                        if ply == 0 {
                            self.in_flight.insert(board, position.to_string());
                        }
                        if ply + 1 < self.config.harvest_plies {
                            stack.push((next, ply + 1));
                        }
                    }
                    None => {}
                }
            }
        }
        found.sort_by_key(|&(_, _, nodes)| std::cmp::Reverse(nodes));
        found.truncate(self.config.harvest_facts);
        found
            .into_iter()
            .map(|(p, b, nodes)| self.fact(p, b, nodes, 0.0))
            .collect()
    }
}

/// What [`recheck`] found of a fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recheck {
    /// Its bounds hold.
    Holds,
    /// Its bounds do not hold: why, for people.
    Wrong(String),
    /// It says nothing to check (the widest bounds).
    Empty,
}

/// Proves `fact`'s bounds again with `solver` (set up by the caller for another path: other
/// levels, none, or another algorithm): one null-window test a bound that says more than the
/// seeds, or an exact solve when `solver` is not MTD(f).
pub fn recheck<L: Lanes>(fact: &Fact<L>, solver: &Solver) -> Result<Recheck, ProveError> {
    if !fact.is_informative() {
        return Ok(Recheck::Empty);
    }
    let board = fact.board();
    let rules = fact.position.rules();
    let stores = fact.position.store_difference();
    let claimed = fact.f_bounds();
    let widest = Bounds::widest(board.seeds(), rules);
    let wrong = |found: String| {
        Recheck::Wrong(format!(
            "the fact says the value of {} is in [{}, {}], but {found}",
            fact.position, fact.lower, fact.upper
        ))
    };
    if solver.config().algorithm != crate::search::Algorithm::Mtdf {
        let f = solver.exact(board, &mut |_| {})?;
        return Ok(if claimed.lower <= f && f <= claimed.upper {
            Recheck::Holds
        } else {
            wrong(format!("it is {}", stores + f))
        });
    }
    // The moves ordered first, as the exact solve and a campaign's tests order them.
    solver.guess(board)?;
    if claimed.lower > widest.lower {
        let v = solver
            .test(board, claimed.lower, None)?
            .expect("no node limit");
        if v < claimed.lower {
            return Ok(wrong(format!("it is at most {}", stores + v)));
        }
    }
    if claimed.upper < widest.upper {
        let v = solver
            .test(board, claimed.upper + 1, None)?
            .expect("no node limit");
        if v > claimed.upper {
            return Ok(wrong(format!("it is at least {}", stores + v)));
        }
    }
    Ok(Recheck::Holds)
}

/// What [`merge`] did.
#[derive(Clone, Debug, Default)]
pub struct Merged {
    /// Lines appended to the output.
    pub added: usize,
    /// Lines already there (the same text), not added again.
    pub already: usize,
}

/// Appends to `into` every fact of `inputs` that it does not hold yet (the same line), after
/// checking all of them, and those already in `into`, against each other: a conflict writes
/// nothing. `into` is held with the writer's lock while this runs.
pub fn merge(inputs: &[PathBuf], into: &Path) -> Result<Merged, ProveError> {
    let existed = std::fs::symlink_metadata(into).is_ok();
    let result = merge_into(inputs, into);
    // A failed merge leaves no file it made (one it made is still empty: the facts are
    // appended only once all of them have been read and checked).
    if result.is_err() && !existed && std::fs::metadata(into).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(into);
    }
    result
}

fn merge_into(inputs: &[PathBuf], into: &Path) -> Result<Merged, ProveError> {
    let mut writer = LedgerWriter::open(into)?;
    // Wide lanes hold the positions of every board size a ledger may hold.
    let mut all = Ledger::<Wide>::new();
    all.add_file(into)?;
    for input in inputs {
        all.add_file(input)?;
    }
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut merged = Merged::default();
    for (fact, origin) in all.facts() {
        let line = fact.to_line();
        let is_into = origin.file == into;
        if !seen.insert(line) {
            if !is_into {
                merged.already += 1;
            }
            continue;
        }
        if !is_into {
            writer.append(fact)?;
            merged.added += 1;
        }
    }
    Ok(merged)
}

/// The first fact (with where it was read) that names the root most facts of `ledger` name,
/// if any: its `root` is that root, under its rules.
pub fn root_of<L: Lanes>(ledger: &Ledger<L>) -> Option<&(Fact<L>, Origin)> {
    let mut count: HashMap<&str, (usize, &(Fact<L>, Origin))> = HashMap::new();
    for entry in ledger.facts() {
        if let Some(root) = &entry.0.root {
            count.entry(root).or_insert((0, entry)).0 += 1;
        }
    }
    count
        .into_iter()
        .max_by_key(|(root, (n, _))| (*n, std::cmp::Reverse(*root)))
        .map(|(_, (_, entry))| entry)
}

/// Whether proof or disproof numbers say "never".
pub fn is_infinite(n: u64) -> bool {
    n >= INFINITE
}
