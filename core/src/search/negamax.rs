//! The exact search: fail-soft negamax alpha-beta on f, the future store difference of a board.
//!
//! f(board) is the final store difference the side to move will add from here on (its future
//! store gains minus the opponent's) under perfect play; the value of a position is its store
//! difference plus f of its board. With k seeds on the board f lies in [-k, k] and has k's
//! parity; under `empty-capture` f >= 2 - k (sowing the mover's rightmost non-empty house either
//! reaches the store or ends in an empty own house and captures).
//!
//! A sowing that earns an extra turn adds the child's f (same side, no negation); one that
//! passes the turn subtracts it; one that ends the game adds nothing more.

use crate::clock::Instant;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::board::Board;
use crate::db::tablebase::{Fault, Probe};
use crate::lanes::Lanes;
use crate::rules::Rules;
use crate::search::harvest::Harvest;
use crate::search::tt::{self, EXACT_DEPTH, Entry, Hashed, TranspositionTable};

/// Most houses a side the search handles (the move list is a fixed array).
const MAX_MOVES: usize = crate::rules::MAX_HOUSES;
/// Nodes a thread counts locally before adding them to the shared counter.
const NODE_FLUSH: u64 = 1 << 12;

/// Tuning of the search, fixed for one solve (see [`crate::search::SolverConfig`]).
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// Split the remaining moves of a node across threads above this many plies from the root.
    pub parallel_plies: u32,
    /// ... and only with at least this many seeds on the board.
    pub parallel_min_seeds: u32,
    /// Enhanced transposition cut-off at nodes with at least this many seeds on the board ...
    pub etc_min_seeds: u32,
    /// ... and, with databases, at least this many seeds above their top level (see
    /// [`Tuning::with_databases`]). Just above the databases a node's moves into them are
    /// valued at once, and probing the table for the others costs more time than the cut-offs
    /// it finds save.
    pub etc_db_gap: u32,
    /// Store results in the table only at nodes with at least this many seeds.
    pub tt_min_seeds: u32,
    /// Iterative deepening: plies added per iteration before the exact search (0: none).
    pub deepening_step: u8,
    /// The deepest depth-limited iteration; the next one searches to the end. 15 by default:
    /// before the trials near the root, a pass to 18 left a move order that made the exact
    /// search of Kalah(8,2) 50 times larger and of Kalah(9,2) hundreds of times (with them, 6
    /// and 3 times), and 15 took 4-12% fewer nodes on the search benchmark
    /// (docs/performance.md).
    pub deepening_max: u8,
    /// Nodes the depth-limited iterations may take in all: past them the iteration under way
    /// stops and the exact search starts from the last value found. On a small root they cost
    /// next to nothing and stop at `deepening_max`; on the start of Kalah(6,6) the depth-18
    /// iteration alone ran past 4 G nodes before any exact search, for a guess the exact
    /// search's first tests would make as well.
    pub deepening_nodes: u64,
    /// Trials: at the nodes of an exact search fewer than this many plies below its root,
    /// the moves are tried in turn within a node budget that grows each round (see
    /// [`search`]); 0: none. Only on boards of at least `trial_min_houses` houses a side, where
    /// they were measured to pay (on narrower ones they cost more nodes than they saved).
    pub trial_plies: u32,
    /// ... on boards of at least this many houses a side.
    pub trial_min_houses: usize,
    /// The budget of a move's first trial, in nodes (counted a few thousand at a time) ...
    pub trial_nodes: u64,
    /// ... multiplied by this each round.
    pub trial_growth: u64,
}

impl Tuning {
    /// The tuning of a search that probes databases up to `db_top` seeds, if any:
    /// `etc_min_seeds` raised to `db_top + etc_db_gap`, once for the whole search.
    pub fn with_databases(self, db_top: Option<u32>) -> Tuning {
        Tuning {
            etc_min_seeds: db_top.map_or(self.etc_min_seeds, |top| {
                self.etc_min_seeds.max(top + self.etc_db_gap)
            }),
            ..self
        }
    }
}

/// A cancellation flag with its ancestors: a search stops when any of them is set.
pub struct Abort<'a> {
    flag: AtomicBool,
    parent: Option<&'a Abort<'a>>,
    /// A node budget: the nodes charged to this flag so far and the most it allows (past
    /// them the flag is set). `u64::MAX`: none.
    used: AtomicU64,
    limit: u64,
}

impl<'a> Abort<'a> {
    /// A flag with no parent.
    pub fn root() -> Abort<'static> {
        Abort {
            flag: AtomicBool::new(false),
            parent: None,
            used: AtomicU64::new(0),
            limit: u64::MAX,
        }
    }

    fn child(&'a self) -> Abort<'a> {
        self.child_within(u64::MAX)
    }

    /// A child flag that also sets itself once `limit` nodes are charged to it.
    fn child_within(&'a self, limit: u64) -> Abort<'a> {
        Abort {
            flag: AtomicBool::new(false),
            parent: Some(self),
            used: AtomicU64::new(0),
            limit,
        }
    }

    /// Charges `nodes` searched under this flag to it and its ancestors' budgets.
    fn charge(&self, nodes: u64) {
        let mut at = Some(self);
        while let Some(a) = at {
            if a.limit != u64::MAX && a.used.fetch_add(nodes, Ordering::Relaxed) + nodes >= a.limit
            {
                a.set();
            }
            at = a.parent;
        }
    }

    /// Whether this flag itself (not an ancestor) is set.
    fn own_is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Whether this flag or an ancestor is set.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed) || self.parent.is_some_and(Abort::is_set)
    }

    /// Asks every search under this flag to stop.
    pub fn set(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Asks every search under this flag's root to stop: the whole search.
    pub fn set_root(&self) {
        match self.parent {
            Some(parent) => parent.set_root(),
            None => self.set(),
        }
    }
}

/// Everything a search thread shares with the others.
pub struct Shared<'a> {
    /// The table.
    pub tt: &'a TranspositionTable,
    /// Capture rule.
    pub rules: Rules,
    /// Tuning, already fitted to the databases ([`Tuning::with_databases`]).
    pub tuning: Tuning,
    /// Nodes searched by all threads (flushed every few thousand nodes).
    pub nodes: &'a AtomicU64,
    /// Endgame databases: boards with at most their top level of seeds are looked up.
    pub db: Option<&'a Probe<'a>>,
    /// The first probe of the databases that failed (a damaged block): the search then stops
    /// at once, its result means nothing, and the caller reports this.
    pub fault: &'a OnceLock<Fault>,
    /// When the search must stop, if ever: past it the whole search stops (`abort`'s root is
    /// set, as for a fault) and its result means nothing.
    pub deadline: Option<Instant>,
    /// The value of `nodes` at which the search must stop (`u64::MAX`: never); checked, like
    /// the deadline, every few thousand nodes.
    pub node_limit: u64,
    /// Set from outside (another thread) to stop the search as the deadline does.
    pub cancel: &'a AtomicBool,
    /// Where the nodes near the root record what they finished, if anywhere (a campaign's
    /// test, which keeps what it proved when it runs out of its budget).
    pub harvest: Option<&'a Harvest>,
}

impl Shared<'_> {
    /// Records, if the search harvests ([`Shared::harvest`]), that the node `ply` plies below
    /// the root stopped below it.
    #[cold]
    #[inline(never)]
    fn unfinished<L: Lanes>(&self, board: Board<L>, ply: u32) {
        if let Some(h) = self.harvest.filter(|h| h.covers(ply)) {
            h.unfinished(board);
        }
    }

    /// f of `board` from the databases, or `None` after recording the fault and stopping the
    /// whole search (`abort`'s root is set: nothing computed from here on is stored).
    #[inline(always)]
    fn db_f<L: Lanes>(&self, db: &Probe<'_>, abort: &Abort<'_>, board: Board<L>) -> Option<i32> {
        match db.f(board) {
            Ok(f) => Some(f.expect("the solver's houses are the database's")),
            Err(fault) => self.fail(fault, abort),
        }
    }

    /// Whether the deadline has passed, the node limit is reached or the search was
    /// cancelled; if so, stops the whole search (sets `abort`'s root).
    #[inline]
    fn stop_if_late(&self, abort: &Abort<'_>) -> bool {
        let late = self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.nodes.load(Ordering::Relaxed) >= self.node_limit
            || self.cancel.load(Ordering::Relaxed);
        if late {
            abort.set_root();
        }
        late
    }

    /// Records `fault` and stops the whole search.
    #[cold]
    #[inline(never)]
    fn fail(&self, fault: Fault, abort: &Abort<'_>) -> Option<i32> {
        let _ = self.fault.set(fault);
        abort.set_root();
        None
    }
}

/// A thread's local counters.
#[derive(Default)]
pub struct Local {
    /// Nodes not yet added to the shared counter.
    nodes: u64,
    /// Nodes of the subtrees this thread's searches entered, never reset (the work of a
    /// subtree is a difference): those it searched, and those of the tasks it handed to other
    /// threads once they are done.
    searched: u64,
}

impl Local {
    /// Adds the nodes not yet flushed to the shared counter.
    pub fn flush(&mut self, shared: &Shared<'_>) {
        let total = shared.nodes.fetch_add(self.nodes, Ordering::Relaxed) + self.nodes;
        shared.tt.grow(total);
        self.nodes = 0;
    }
}

/// The lowest and highest f a board with `seeds` seeds (and a move to make) can have.
#[inline(always)]
pub fn f_bounds(seeds: u32, rules: Rules) -> (i32, i32) {
    let k = seeds as i32;
    let lower = match rules {
        Rules::Standard => -k,
        Rules::EmptyCapture => 2 - k,
    };
    (lower, k)
}

/// One move of a node, sown ahead of the search for ordering.
#[derive(Clone, Copy)]
struct Child<L: Lanes> {
    board: Board<L>,
    /// Mover's store gain minus the opponent's on this sowing.
    gain: i32,
    extra_turn: bool,
    game_over: bool,
    house: u8,
    order: u32,
    /// The child's level and entry in the databases, if it is in them.
    at: Option<(u32, u64)>,
}

impl<L: Lanes> Child<L> {
    /// The move's value for the mover, given the child's f (ignored when the game ended).
    #[inline(always)]
    fn value(&self, child_f: i32) -> i32 {
        if self.game_over {
            self.gain
        } else if self.extra_turn {
            self.gain + child_f
        } else {
            self.gain - child_f
        }
    }

    /// The window for the child that makes `(alpha, beta)` the window of this move's value.
    #[inline(always)]
    fn window(&self, alpha: i32, beta: i32) -> (i32, i32) {
        if self.extra_turn {
            (alpha - self.gain, beta - self.gain)
        } else {
            (self.gain - beta, self.gain - alpha)
        }
    }
}

/// The estimate of f at the horizon of a depth-limited search: 0 (the store difference stands),
/// on the parity of the seeds so that every value a search returns keeps that parity.
#[inline(always)]
fn horizon(seeds: u32) -> i32 {
    (seeds % 2) as i32
}

/// Fail-soft negamax with the table, `depth` plies deep ([`EXACT_DEPTH`]: to the end of the
/// game, the exact solve; otherwise boards at the horizon count f as 0 and the result is the
/// depth-limited value, used by iterative deepening for move ordering and a first guess).
///
/// Precondition: the game is not over on `board` (both sides have seeds).
///
/// Returns `(v, resolved)`. Contract, for `V` the value searched (f itself when `resolved` is
/// [`EXACT_DEPTH`], else the value of the search `resolved` plies deep):
/// - `v <= alpha`: V <= v (an upper bound; the node failed low);
/// - `v >= beta`: V >= v (a lower bound; the node failed high);
/// - otherwise `v == V`.
///
/// `resolved >= depth`: a line that ended within the horizon makes its subtree exact even in a
/// shallow search. If `abort` is set during the search the result means nothing and nothing was
/// stored; the caller must check `abort` before using it. A failed probe of the databases sets
/// the root of `abort` (after recording the fault in `shared`), so no value read from a damaged
/// block is ever used or stored.
///
/// Trials ([`Tuning::trial_plies`]): at an exact node near the root, instead of searching the
/// moves one after another to the end, each is tried within a node budget; the moves that ran
/// out are tried again within a budget [`Tuning::trial_growth`] times larger, round after
/// round, until one refutes the node or every move has failed low. Of several moves that
/// refute a node, one whose proof is cheap is then found first, whatever the table's move order
/// says: on the wide boards the order a shallow pass leaves may choose a refutation whose proof
/// is hundreds of times larger (docs/performance.md). The contract is the same.
#[allow(clippy::too_many_arguments)]
pub fn search<L: Lanes>(
    shared: &Shared<'_>,
    local: &mut Local,
    abort: &Abort<'_>,
    board: Board<L>,
    mut alpha: i32,
    beta: i32,
    depth: u8,
    ply: u32,
) -> (i32, u8) {
    local.nodes += 1;
    local.searched += 1;
    if local.nodes >= NODE_FLUSH {
        abort.charge(local.nodes);
        local.flush(shared);
        if abort.is_set() {
            return (0, 0);
        }
        if shared.stop_if_late(abort) {
            return (0, 0);
        }
    }
    let seeds = board.seeds();
    let (mut lower, mut upper) = f_bounds(seeds, shared.rules);
    if lower >= beta {
        return (lower, EXACT_DEPTH);
    }
    if upper <= alpha {
        return (upper, EXACT_DEPTH);
    }
    if let Some(db) = shared.db {
        if seeds <= db.max_level() {
            return match shared.db_f(db, abort, board) {
                Some(f) => (f, EXACT_DEPTH),
                None => (0, 0),
            };
        }
    }
    if depth == 0 {
        return (horizon(seeds).clamp(lower, upper), 0);
    }
    let use_table = seeds >= shared.tuning.tt_min_seeds && seeds <= tt::MAX_SEEDS;
    // Hashed once for the probe and the store.
    let hashed = use_table.then(|| Hashed::of(board.key()));
    let mut tt_move = None;
    if let Some(e) = hashed.and_then(|h| shared.tt.probe_hashed(h)) {
        tt_move = e.best;
        if e.depth >= depth {
            if e.lower >= beta || e.lower == e.upper {
                return (e.lower, e.depth);
            }
            if e.upper <= alpha {
                return (e.upper, e.depth);
            }
        }
        // Only exact bounds may narrow `lower` and `upper`: they are stored with this node's
        // result, which may turn out exact even when the table's entry was not.
        if e.depth == EXACT_DEPTH {
            lower = lower.max(e.lower);
            upper = upper.min(e.upper);
        }
    }
    let child_depth = if depth == EXACT_DEPTH {
        EXACT_DEPTH
    } else {
        depth - 1
    };
    // The depth to which the result holds: the shallowest child's, plus one.
    let mut resolved = EXACT_DEPTH;
    let alpha_in = alpha;

    // Sow every move; a game-ending one is valued at once.
    let mut children = [Child {
        board,
        gain: 0,
        extra_turn: false,
        game_over: false,
        house: 0,
        order: 0,
        at: None,
    }; MAX_MOVES];
    let mut count = 0;
    // From the house nearest the store down: the move read first after the sort is most often
    // one of the higher houses, and its entry, asked for as it is sown, then has the other
    // sowings' time to arrive (the first entry read refutes 73% of the nodes with moves into
    // the databases). The same tree as from house 0 up; 4-6% more nodes a second on the
    // subtree benchmark (docs/performance.md).
    let mut movable = board.movable();
    while movable != 0 {
        let h = (31 - movable.leading_zeros()) as usize;
        movable &= !(1 << h);
        let (next, s) = board.sow(h, shared.rules);
        let mut at = None;
        if !s.game_over {
            // A child in the databases is read from them, never from the table.
            match shared.db {
                Some(db) if next.seeds() <= db.max_level() => {
                    at = db.locate(next);
                    if let Some((k, entry)) = at {
                        db.prefetch_at(k, entry);
                    }
                }
                _ if use_table => shared.tt.prefetch(next.key()),
                _ => {}
            }
        }
        let gain = s.gain();
        let order = order_key(board, h, gain, s.extra_turn, tt_move, shared.rules);
        // Field by field: a `Child` built whole and then copied in was read back in 16-byte
        // pieces spanning the smaller stores just made, which waits for them.
        let c = &mut children[count];
        c.board = next;
        c.gain = gain;
        c.extra_turn = s.extra_turn;
        c.game_over = s.game_over;
        c.house = h as u8;
        c.order = order;
        c.at = at;
        count += 1;
    }
    // The moves best first, as indices into `children`: an insertion sort of the keys, each
    // `order << 4 | index` (the children themselves are not moved).
    let mut keys = [0u32; MAX_MOVES];
    for (i, c) in children[..count].iter().enumerate() {
        let key = c.order << 4 | i as u32;
        let mut j = i;
        while j > 0 && keys[j - 1] < key {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = key;
    }
    let mut sorted = [0u8; MAX_MOVES];
    for (i, key) in keys[..count].iter().enumerate() {
        sorted[i] = (key & 0xF) as u8;
    }
    let sorted = &sorted[..count];

    // Enhanced transposition cut-off: a child already in the table may refute this node, or
    // prove its own move too weak to matter (its value at most alpha), which then needs no
    // search: its bound joins the result as it is.
    let mut best = i32::MIN;
    let mut best_move = children[sorted[0] as usize].house as usize;
    // Children (by index) that need no search.
    let mut skip = 0u32;
    // Moves into the databases are valued at once, exactly: they need no search, may refute
    // the node, and raise alpha for the others.
    if let Some(db) = shared.db {
        for &i in sorted {
            let c = &children[i as usize];
            let Some((k, entry)) = c.at else {
                continue;
            };
            let f = match db.f_at(k, entry) {
                Ok(f) => f,
                Err(fault) => {
                    shared.fail(fault, abort);
                    return (0, 0);
                }
            };
            let v = c.value(f);
            if v >= beta {
                return (v, depth);
            }
            skip |= 1 << i;
            if v > best {
                best = v;
                best_move = c.house as usize;
            }
        }
        alpha = alpha.max(best);
    }
    if seeds >= shared.tuning.etc_min_seeds {
        for &i in sorted {
            let c = &children[i as usize];
            if c.game_over {
                if c.gain >= beta {
                    return (c.gain, depth);
                }
                continue;
            }
            if skip >> i & 1 != 0 {
                continue;
            }
            let Some(e) = shared.tt.probe(c.board.key()) else {
                continue;
            };
            if e.depth < child_depth {
                continue;
            }
            // Bounds on the move's value, from the child's bounds.
            let (low, high) = if c.extra_turn {
                (c.value(e.lower), c.value(e.upper))
            } else {
                (c.value(e.upper), c.value(e.lower))
            };
            if low >= beta {
                return (low, depth);
            }
            if high <= alpha {
                skip |= 1 << i;
                resolved = resolved.min(parent_depth(e.depth));
                if high > best {
                    best = high;
                    best_move = c.house as usize;
                }
            }
        }
    }

    // The moves still to search, in order.
    let mut todo = [0u8; MAX_MOVES];
    let mut kept = 0;
    for &i in sorted {
        if skip >> i & 1 == 0 {
            todo[kept] = i;
            kept += 1;
        }
    }
    let mut todo: &[u8] = &todo[..kept];

    let nodes_before = local.searched;
    let tuning = &shared.tuning;
    if depth == EXACT_DEPTH
        && ply < tuning.trial_plies
        && todo.len() >= 2
        && board.houses_per_side() >= tuning.trial_min_houses
    {
        // Trials: each move in turn within a node budget, the moves left over searched again
        // within a larger one, round after round, so that a move whose proof is cheap is found
        // before one whose proof is dear. What a trial over budget finished below stays in
        // the table for the next.
        let mut open_moves = [0u8; MAX_MOVES];
        let mut open = todo.len();
        open_moves[..open].copy_from_slice(todo);
        let mut budget = tuning.trial_nodes;
        while open > 0 {
            let mut left = 0;
            for k in 0..open {
                let i = open_moves[k];
                let c = &children[i as usize];
                let trial = abort.child_within(budget);
                let (v, d) = search_child(shared, local, &trial, c, alpha, beta, child_depth, ply);
                if abort.is_set() {
                    shared.unfinished(board, ply);
                    return (0, 0);
                }
                if trial.own_is_set() {
                    open_moves[left] = i;
                    left += 1;
                    continue;
                }
                resolved = resolved.min(d);
                if raise(&mut best, &mut best_move, &mut alpha, v, c.house, beta) {
                    // Refuted: the moves still open need no search.
                    left = 0;
                    break;
                }
            }
            open = left;
            budget = budget.saturating_mul(tuning.trial_growth);
        }
        // Every move is decided: refuted, failed low or the cut-off.
        todo = &[];
    }
    let split_here =
        ply < shared.tuning.parallel_plies && seeds >= shared.tuning.parallel_min_seeds;
    // Young brothers wait: near the root, once the first move is searched alone, the others
    // go in parallel; elsewhere one after another.
    for (n, &i) in todo.iter().enumerate() {
        let c = &children[i as usize];
        if split_here && n > 0 && todo.len() - n >= 2 {
            let split = abort.child();
            let results: Vec<(i32, u8, usize, u64)> = todo[n..]
                .par_iter()
                .map(|&i| {
                    let c = &children[i as usize];
                    let mut mine = Local::default();
                    let (v, d) =
                        search_child(shared, &mut mine, &split, c, alpha, beta, child_depth, ply);
                    let searched = mine.searched;
                    mine.flush(shared);
                    // A task of fewer nodes than a flush never looked at the clock.
                    shared.stop_if_late(&split);
                    if split.is_set() {
                        return (i32::MIN, EXACT_DEPTH, c.house as usize, searched);
                    }
                    if v >= beta {
                        split.set();
                    }
                    (v, d, c.house as usize, searched)
                })
                .collect();
            // The subtree's nodes, whichever thread searched them.
            local.searched += results.iter().map(|r| r.3).sum::<u64>();
            if abort.is_set() {
                shared.unfinished(board, ply);
                return (0, 0);
            }
            for (v, d, h, _) in results {
                resolved = resolved.min(d);
                if v > best {
                    best = v;
                    best_move = h;
                }
            }
            break;
        }
        let (v, d) = search_child(shared, local, abort, c, alpha, beta, child_depth, ply);
        if abort.is_set() {
            shared.unfinished(board, ply);
            return (0, 0);
        }
        resolved = resolved.min(d);
        if raise(&mut best, &mut best_move, &mut alpha, v, c.house, beta) {
            break;
        }
    }

    let (lo, hi) = if best >= beta {
        (best, upper)
    } else if best <= alpha_in {
        (lower, best)
    } else {
        (best, best)
    };
    let subtree = local.searched - nodes_before + 1;
    if let Some(h) = shared.harvest {
        if h.covers(ply) && resolved == EXACT_DEPTH {
            h.done(board, lo, hi, subtree);
        }
    }
    if use_table {
        let work = log2(subtree);
        shared.tt.store_hashed(
            hashed.expect("hashed where the table is used"),
            Entry {
                lower: lo,
                upper: hi,
                best: Some(best_move),
                work,
                depth: resolved,
            },
        );
    }
    (best, resolved)
}

/// Takes move `house`'s value `v` into a node's best so far (and alpha); whether it refutes
/// the node (`v >= beta`).
#[inline(always)]
fn raise(
    best: &mut i32,
    best_move: &mut usize,
    alpha: &mut i32,
    v: i32,
    house: u8,
    beta: i32,
) -> bool {
    if v > *best {
        *best = v;
        *best_move = house as usize;
        if v > *alpha {
            *alpha = v;
            return v >= beta;
        }
    }
    false
}

/// The key by which a node's moves are searched, highest first: the table's best move, then
/// extra turns (the house nearer the store first), then by gain. Non-negative and below 2^22:
/// the sort adds 4 bits. Between moves of equal gain, under standard rules the sowing that ends
/// nearest the store first (its seeds nearest the count that would have reached it exactly: the
/// house's distance to the store), then (under both rules) the house nearer the store.
/// Measured (docs/performance.md): this saved 16% of the nodes of Kalah(6,4), 58% of Kalah(6,5)
/// and 2.5% of the Kalah(6,6) subtrees; under empty-capture it cost 17% more on Kalah(6,4).
#[inline(always)]
fn order_key<L: Lanes>(
    board: Board<L>,
    h: usize,
    gain: i32,
    extra_turn: bool,
    tt_move: Option<usize>,
    rules: Rules,
) -> u32 {
    if tt_move == Some(h) {
        1 << 21
    } else if extra_turn {
        (1 << 20) + h as u32
    } else {
        let near = match rules {
            Rules::Standard => {
                let to_store = (board.houses_per_side() - h) as u32;
                31 - board.mover_house(h).abs_diff(to_store).min(31)
            }
            Rules::EmptyCapture => 0,
        };
        ((gain + 256) as u32) << 10 | near << 5 | h as u32
    }
}

/// The houses (0-based) of `board`'s moves in the order [`search`] tries them, given the
/// table's best move `tt_move`: for a campaign, which follows the search's order over the
/// moves it splits.
pub fn move_order<L: Lanes>(board: Board<L>, rules: Rules, tt_move: Option<usize>) -> Vec<usize> {
    let mut keyed: Vec<(u32, usize)> = (0..board.houses_per_side())
        .filter(|&h| board.movable() >> h & 1 == 1)
        .map(|h| {
            let (_, s) = board.sow(h, rules);
            (
                order_key(board, h, s.gain(), s.extra_turn, tt_move, rules),
                h,
            )
        })
        .collect();
    keyed.sort_unstable_by(|a, b| b.cmp(a));
    keyed.into_iter().map(|(_, h)| h).collect()
}

/// The value of move `c` for the mover within (alpha, beta), and the depth to which it holds.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn search_child<L: Lanes>(
    shared: &Shared<'_>,
    local: &mut Local,
    abort: &Abort<'_>,
    c: &Child<L>,
    alpha: i32,
    beta: i32,
    child_depth: u8,
    ply: u32,
) -> (i32, u8) {
    if c.game_over {
        return (c.gain, EXACT_DEPTH);
    }
    let (a, b) = c.window(alpha, beta);
    let (v, d) = search(shared, local, abort, c.board, a, b, child_depth, ply + 1);
    (c.value(v), parent_depth(d))
}

/// The depth to which a node's result holds, given a child's result held `d` plies deep.
#[inline(always)]
fn parent_depth(d: u8) -> u8 {
    if d == EXACT_DEPTH { d } else { d + 1 }
}

#[inline(always)]
fn log2(n: u64) -> u8 {
    (63 - n.leading_zeros()) as u8
}
