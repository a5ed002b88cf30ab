//! The exact solver: the value of a position, of each of its moves, and a perfect line.
//!
//! [`Solver`] narrows the value of a board with null-window searches (MTD(f)) over the fail-soft
//! [`negamax::search`], which shares a lock-free [`tt::TranspositionTable`] across rayon threads:
//! first at growing depths (iterative deepening, for a first guess and move ordering), then to
//! the end of the game. The optimal moves and the perfect line come from one null-window test
//! per move (a move's value is never above the position's, so "at least f" means "equal").
//! The [`Algorithm`] ladder (plain minimax, memoised minimax, alpha-beta, NegaScout, MTD(f))
//! gives the same exact values with less and less work, to show what each step buys.

pub mod cost;
pub mod harvest;
pub mod ladder;
pub mod negamax;
pub mod table_file;
pub mod tt;

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::clock::Instant;

pub use crate::analysis::{Analysis, MoveValue};
use crate::board::Board;
use crate::db::{DbError, Tablebase, finished_f};
use crate::lanes::Lanes;
use crate::notation::Turn;
use crate::position::{Move, Position};
use crate::rules::{Rules, Side};
use harvest::Harvest;
use negamax::{Abort, Local, Shared, Tuning, f_bounds};
use tt::{EXACT_DEPTH, TableAllocError, TranspositionTable};

/// The search algorithms, from the plainest to the fastest; all give exact values.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Algorithm {
    /// Every line to the end, no pruning.
    Minimax,
    /// Minimax remembering the value of every board met (a hash map, no size limit).
    Memo,
    /// Fail-soft alpha-beta, no table.
    AlphaBeta,
    /// NegaScout: null-window tests of the later moves, re-searched when they fail high.
    Scout,
    /// MTD(f) null-window narrowing over alpha-beta with the shared transposition table,
    /// move ordering, enhanced transposition cut-off and parallel search.
    #[default]
    Mtdf,
}

impl Algorithm {
    /// Every algorithm, plainest first.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Minimax,
        Algorithm::Memo,
        Algorithm::AlphaBeta,
        Algorithm::Scout,
        Algorithm::Mtdf,
    ];

    /// The command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Minimax => "minimax",
            Algorithm::Memo => "memo",
            Algorithm::AlphaBeta => "alphabeta",
            Algorithm::Scout => "scout",
            Algorithm::Mtdf => "mtdf",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Algorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Algorithm, String> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| format!("unknown algorithm '{s}'"))
    }
}

/// How to set up a [`Solver`].
#[derive(Clone, Copy, Debug)]
pub struct SolverConfig {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Transposition table size in MiB.
    pub tt_mib: usize,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Search tuning.
    pub tuning: Tuning,
}

impl Default for SolverConfig {
    fn default() -> SolverConfig {
        SolverConfig {
            threads: crate::cores(),
            tt_mib: DEFAULT_TT_MIB,
            algorithm: Algorithm::Mtdf,
            tuning: Tuning::default(),
        }
    }
}

/// The table size used when none is asked for: 512 MiB.
pub const DEFAULT_TT_MIB: usize = 512;

/// The largest table a caller may ask for, in MiB (the smallest is 1: a table of 0 MiB, one
/// bucket, would make a solve run for ever): the machine's physical memory (64 GiB where the
/// OS does not say). A table is touched all over during a long solve: one bigger than the
/// memory would only swap, or get the process killed.
pub fn max_table_mib() -> usize {
    const UNKNOWN_MEMORY_MIB: u64 = 64 << 10;
    let mib = crate::physical_memory().map_or(UNKNOWN_MEMORY_MIB, |bytes| bytes >> 20);
    usize::try_from(mib).unwrap_or(usize::MAX).max(1)
}

/// A table size that suits a board with `seeds` seeds: 512 MiB for 48 seeds (Kalah(6,4)),
/// doubling every 6 seeds more, between 16 MiB and 8 GiB. Smaller tables stay in cache better
/// and cost less to map in; bigger problems need room.
pub fn auto_tt_mib(seeds: u32) -> usize {
    let steps = (i64::from(seeds) - 24).div_euclid(6).clamp(-1, 8);
    (32usize << (steps + 1)) / 2
}

/// A table size for a board with `seeds` seeds searched with databases up to `top` seeds:
/// the search covers only the `seeds - top` seeds above them, and its nodes grow by about 1.9
/// a seed: 8 MiB for 24 seeds above (Kalah(6,4) with levels up to 24), doubling with every
/// seed more (2 GiB for 32: Kalah(6,5) with levels up to 28), between 4 MiB and 8 GiB. A table bigger than the search fills costs more than
/// it saves: every page it touches is a fault and a TLB miss. Measured on 2 cores (AMD EPYC,
/// value only): Kalah(6,4) on levels 0..24, one thread, 1.42-1.47 s with 4-8 MiB against
/// 1.77-1.83 s with 64 MiB for the same nodes (5.1-5.4 M); Kalah(6,5) on levels 0..30, two
/// threads, 39.9 s with 128 MiB, 42.2-42.4 s with 512-1024 MiB, 47.5 s with 2048 MiB (within
/// the noise of that machine; with the levels up to 28, an earlier machine took 12% longer
/// with 512 MiB than with 2 GiB).
pub fn auto_tt_mib_with_db(seeds: u32, top: u32) -> usize {
    let above = i64::from(seeds) - i64::from(top);
    let doublings = (above - 24).clamp(-1, 10);
    ((16usize << (doublings + 1)) / 4).min(auto_tt_mib(seeds))
}

/// Boards of this many houses a side and more get at least [`auto_tt_mib_by_model`]: the
/// sizes by the seeds were fitted on six houses, where a seed costs less.
pub const MODEL_SIZED_MIN_HOUSES: usize = 7;

/// A table size by the cost model ([`cost::estimated_nodes`] of the value alone): a byte for
/// every 4 nodes it expects, rounded up to a power of two. The sizes by the seeds were fitted
/// on six houses; a wide board's search of the same seeds is far larger (a house more costs
/// 3.3 times at equal seeds), and a table too small for it costs the trials near the root their
/// gain, each move tried again finding little of its last try. Measured on the 2-core AMD EPYC,
/// one thread, the value of the start, no levels: Kalah(10,2) standard 566 M nodes with
/// 128 MiB (the size by its 40 seeds), 243 M with 1 GiB (this size), 229 M with 4 GiB (before
/// the trials, 384 M with 128 MiB); Kalah(11,2) empty-capture 255 M with 256 MiB, 144 M with
/// 512 MiB (this size); Kalah(12,1) standard 165 M with 32 MiB, 82 M with 64 MiB (this size).
pub fn auto_tt_mib_by_model(houses: usize, seeds: u32, db_top: Option<u32>, rules: Rules) -> usize {
    let nodes = cost::estimated_nodes(houses, seeds, db_top, rules, false);
    let mib = (nodes / 4.0 / f64::from(1 << 20))
        .ceil()
        .clamp(1.0, f64::from(1 << 30));
    (mib as usize).next_power_of_two()
}

/// The table size for a board of `houses` houses a side with `seeds` seeds and capture rule
/// `rules`, searched with databases up to `db_top` seeds if any: the least of
/// - by the seeds: [`auto_tt_mib_with_db`] or [`auto_tt_mib`] (the search grows with them),
///   or from [`MODEL_SIZED_MIN_HOUSES`] houses on, [`auto_tt_mib_by_model`] if that is more;
/// - by the boards that can occur: room for one entry of each board the search may store
///   ([`boards_above`]), so that a tiny board gets a megabyte;
/// - by the machine: a quarter of its physical memory ([`table_memory_cap_mib`]).
///
/// The table is only an upper bound on the memory used: a search uses a part of it that
/// grows with its nodes ([`tt::TranspositionTable::grow`]).
pub fn auto_table_mib(houses: usize, seeds: u32, db_top: Option<u32>, rules: Rules) -> usize {
    let mut by_seeds = match db_top {
        Some(top) => auto_tt_mib_with_db(seeds, top),
        None => auto_tt_mib(seeds),
    };
    if houses >= MODEL_SIZED_MIN_HOUSES {
        by_seeds = by_seeds.max(auto_tt_mib_by_model(houses, seeds, db_top, rules));
    }
    let entry_bytes = (tt::TranspositionTable::BUCKET_BYTES / 4) as f64;
    let by_boards = boards_above(houses, seeds, db_top) * entry_bytes / f64::from(1 << 20);
    let by_boards = if by_boards >= by_seeds as f64 {
        by_seeds
    } else {
        (by_boards.ceil() as usize).max(1).next_power_of_two()
    };
    by_seeds.min(by_boards).min(table_memory_cap_mib())
}

/// The boards with more than `db_top` seeds (all of them without databases) and at most
/// `seeds`, on `houses` houses a side: the boards a search from `seeds` seeds may store in
/// its table (seeds on the board never grow; the stores are not part of a board). There are
/// C(s + 2m - 1, 2m - 1) boards of s seeds on 2m houses, so C(S + 2m, 2m) of at most S.
pub fn boards_above(houses: usize, seeds: u32, db_top: Option<u32>) -> f64 {
    let at_most = |s: i64| -> f64 {
        if s < 0 {
            return 0.0;
        }
        // C(s + 2m, 2m) as a product of 2m fractions, in floating point (it may be huge).
        let k = 2 * houses as i64;
        (1..=k).fold(1.0, |acc, i| acc * (s + i) as f64 / i as f64)
    };
    let below = db_top.map_or(-1, i64::from);
    (at_most(i64::from(seeds)) - at_most(below.min(i64::from(seeds)))).max(0.0)
}

/// The largest default table on this machine: a quarter of its physical memory (in MiB, a
/// power of two, at least 16), or 8 GiB where the machine does not say.
pub fn table_memory_cap_mib() -> usize {
    match crate::physical_memory() {
        Some(bytes) => {
            let quarter = (bytes / 4) >> 20;
            let pow2 = if quarter == 0 {
                1
            } else {
                1u64 << (63 - quarter.leading_zeros())
            };
            usize::try_from(pow2.max(16)).unwrap_or(usize::MAX)
        }
        None => 8 << 10,
    }
}

/// Seeds on the board from which [`auto_memory_db`] builds levels at all.
pub const MEMORY_DB_MIN_SEEDS: u32 = 40;
/// [`auto_memory_db`] builds the levels up to this many seeds fewer than the board has (one
/// more for every 5 seeds above 50) ...
pub const MEMORY_DB_GAP: u32 = 30;
/// ... and at most this many bytes of packed entries in all.
pub const MEMORY_DB_MAX_BYTES: u64 = 2 << 30;

/// The top level of the endgame databases worth building in memory before solving a board of
/// `houses` houses a side with `seeds` seeds, when none are on disk; `None` when the search is
/// quicker without (fewer than [`MEMORY_DB_MIN_SEEDS`] seeds, or more houses than databases
/// index).
///
/// The levels go up to [`MEMORY_DB_GAP`] seeds below the board (one seed further down for
/// every 5 seeds above 50), and no further than [`MEMORY_DB_MAX_BYTES`] of entries as they are
/// held, packed at their level's width (since the packed levels, Kalah(6,5) gets 0..26 in
/// 1.69 GB where one byte an entry stopped at 0..25). Measured on
/// 2 cores (build + solve, value only, against the search alone): Kalah(6,4) standard with
/// levels up to 18, 2.5 + 7.6 s against 20 s; Kalah(5,5) standard up to 20, 0.8 + 6.9 s against
/// 19 s; Kalah(4,6) up to 18, 0.2 s against 1.0 s; Kalah(5,6) standard up to 28, 17 + 9 s (up
/// to 30: 34 + 6 s, measured before the enhanced cut-off kept its distance from the
/// databases); Kalah(6,5) standard up to 25 (the 2 GiB cap), 78 + 306 s, where up to 23 took
/// 29 + 660 s (before that change too). Around the chosen level, a level more or less costs
/// 5-20% (the build grows by a level's size, the search shrinks by less).
pub fn auto_memory_db(houses: usize, seeds: u32) -> Option<u32> {
    if seeds < MEMORY_DB_MIN_SEEDS || houses > crate::db::MAX_DB_HOUSES {
        return None;
    }
    let mut top = None;
    let mut bytes = 0u64;
    let gap = MEMORY_DB_GAP + seeds.saturating_sub(50) / 5;
    for k in 0..=seeds.saturating_sub(gap).min(crate::db::MAX_LEVEL) {
        let entries = crate::db::level_len(houses, k);
        bytes += crate::db::packed::packed_len(entries, crate::db::packed::width(k));
        if bytes > MEMORY_DB_MAX_BYTES {
            break;
        }
        top = Some(k);
    }
    top
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            parallel_plies: 12,
            parallel_min_seeds: 12,
            etc_min_seeds: 24,
            etc_db_gap: 16,
            tt_min_seeds: 3,
            deepening_step: 3,
            deepening_max: 15,
            deepening_nodes: 16_000_000,
            trial_plies: 2,
            trial_min_houses: 7,
            trial_nodes: 1 << 20,
            trial_growth: 4,
        }
    }
}

/// Why a solve could not start or finish.
#[derive(Debug)]
pub enum SolveError {
    /// The transposition table could not be allocated.
    Table(TableAllocError),
    /// The thread pool could not be built.
    Threads(String),
    /// A database could not be opened, or a block the search read from it is damaged (the
    /// search then stops: no value is given).
    Database(DbError),
    /// The position's houses or rules differ from the solver's.
    Mismatch {
        /// What the solver was built for.
        solver: String,
        /// What the position has.
        position: String,
    },
    /// The search reached the deadline set by [`Solver::set_deadline`] first: no value is given.
    OutOfTime,
    /// The search was stopped by [`Solver::cancel`]: no value is given.
    Cancelled,
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Table(e) => e.fmt(f),
            SolveError::Threads(e) => write!(f, "cannot start the worker threads: {e}"),
            SolveError::Database(e) => write!(f, "database: {e}"),
            SolveError::Mismatch { solver, position } => {
                write!(f, "this solver is for {solver}, the position is {position}")
            }
            SolveError::OutOfTime => f.write_str("the search ran out of its time"),
            SolveError::Cancelled => f.write_str("the search was cancelled"),
        }
    }
}

impl std::error::Error for SolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SolveError::Database(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DbError> for SolveError {
    fn from(e: DbError) -> SolveError {
        SolveError::Database(e)
    }
}

/// A step of the MTD(f) narrowing, reported to the progress callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// The depth of the iteration (`None`: the exact search, to the end of the game). The
    /// bounds of a depth-limited iteration are on the depth-limited value, not on f.
    pub depth: Option<u8>,
    /// f >= lower ...
    pub lower: i32,
    /// ... and f <= upper, for the board being solved.
    pub upper: i32,
    /// The move being valued ([`Solver::analyze`] with `all_moves`), None for the board itself.
    /// With a move, `lower` and `upper` bound that move's value for the board's mover, stores
    /// excluded (not the value of the board the move leads to, for its own mover).
    pub mv: Option<Move>,
    /// Nodes searched so far by this solver.
    pub nodes: u64,
    /// Time since the solver was made.
    pub elapsed: Duration,
}

/// A solver's node count, readable from any thread ([`Solver::node_counter`]).
#[derive(Clone, Debug)]
pub struct NodeCounter(Arc<AtomicU64>);

impl NodeCounter {
    /// Nodes searched so far (updated every few thousand nodes while a search runs).
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Whether this platform starts threads (not WebAssembly in a browser, whose std refuses).
fn can_start_threads() -> bool {
    std::thread::Builder::new()
        .spawn(|| ())
        .is_ok_and(|t| t.join().is_ok())
}

/// An exact solver for one number of houses and one capture rule.
pub struct Solver {
    houses: usize,
    rules: Rules,
    config: SolverConfig,
    tt: TranspositionTable,
    /// The threads of the searches; `None` where no thread can be started (see `new`).
    pool: Option<rayon::ThreadPool>,
    nodes: Arc<AtomicU64>,
    started: Instant,
    db: Option<Arc<Tablebase>>,
    /// When searches must stop ([`Solver::set_deadline`]).
    deadline: Mutex<Option<Instant>>,
    /// Set by [`Solver::cancel`]: every search stops.
    cancelled: AtomicBool,
    /// Whose searches these are, for the table files it saves and loads.
    origin: table_file::TableOrigin,
}

impl Solver {
    /// A solver for boards of `houses` houses a side under `rules`.
    pub fn new(houses: usize, rules: Rules, config: SolverConfig) -> Result<Solver, SolveError> {
        let tt_mib = if config.algorithm == Algorithm::Mtdf {
            config.tt_mib
        } else {
            0
        };
        let tt = TranspositionTable::new(tt_mib).map_err(SolveError::Table)?;
        let pool = match rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads.max(1))
            .thread_name(|i| format!("kalah-search-{i}"))
            .build()
        {
            Ok(pool) => Some(pool),
            // No thread can be started here (WebAssembly in a browser): one thread searches on
            // the caller's, and the parallel splits of the search run on rayon's global pool,
            // which is then the calling thread alone, so they run one after another exactly
            // as on a pool of one thread.
            Err(_) if config.threads <= 1 && !can_start_threads() => None,
            Err(e) => return Err(SolveError::Threads(e.to_string())),
        };
        Ok(Solver {
            houses,
            rules,
            config,
            tt,
            pool,
            nodes: Arc::new(AtomicU64::new(0)),
            started: Instant::now(),
            db: None,
            deadline: Mutex::new(None),
            cancelled: AtomicBool::new(false),
            origin: table_file::TableOrigin::Searches,
        })
    }

    /// Empties the transposition table: the next search starts from nothing it knew (a check
    /// whose position the table had decided at once searches it again from an empty one).
    pub fn clear_table(&self) {
        self.tt.clear();
    }

    /// This solver, as the solver of a certificate's checks that read the levels `0..=top`
    /// (`None`: none): it loads only a table file that such checks filled, and marks the files
    /// it saves as theirs (see [`table_file::TableOrigin`]).
    pub fn for_checks(mut self, top: Option<u32>) -> Solver {
        self.origin = table_file::TableOrigin::Checks { top };
        self
    }

    /// This solver, looking up every board with at most `db`'s top level of seeds in it
    /// instead of searching it (MTD(f) only). All its levels are opened and checked now.
    pub fn with_tablebase(mut self, db: Arc<Tablebase>) -> Result<Solver, SolveError> {
        if db.houses() != self.houses || db.rules() != self.rules {
            return Err(SolveError::Mismatch {
                solver: format!("{} houses, {} rules", self.houses, self.rules),
                position: format!(
                    "a database for {} houses, {} rules",
                    db.houses(),
                    db.rules()
                ),
            });
        }
        db.slices()?;
        self.db = Some(db);
        Ok(self)
    }

    /// The top level of the endgame levels this solver probes, if any.
    pub fn levels_top(&self) -> Option<u32> {
        self.db.as_ref().map(|db| db.max_level())
    }

    /// Saves the transposition table to `path` (see [`table_file`]); safe while a search runs
    /// on another thread.
    pub fn save_table(&self, path: &std::path::Path) -> Result<(), table_file::TableFileError> {
        table_file::save(&self.tt, self.houses, self.rules, self.origin, path)
    }

    /// Loads the table file at `path` into the transposition table, which must be of its size
    /// (see [`table_file::TableFileHeader::mib`]), and of an origin that serves this solver's
    /// ([`Solver::for_checks`]); its bounds then serve every later search.
    pub fn load_table(&self, path: &std::path::Path) -> Result<(), table_file::TableFileError> {
        table_file::load(&self.tt, self.houses, self.rules, self.origin, path)
    }

    /// Nodes searched so far (updated every few thousand nodes while a search runs).
    pub fn nodes(&self) -> u64 {
        self.nodes.load(Ordering::Relaxed)
    }

    /// A handle on this solver's node count that another thread may read while a search
    /// runs (progress between the steps a search reports).
    pub fn node_counter(&self) -> NodeCounter {
        NodeCounter(self.nodes.clone())
    }

    /// The configuration.
    pub fn config(&self) -> &SolverConfig {
        &self.config
    }

    /// Bytes of transposition table.
    pub fn table_bytes(&self) -> usize {
        self.tt.bytes()
    }

    /// Bytes of transposition table in use so far: the table grows with the search, up to
    /// [`Solver::table_bytes`] (see [`TranspositionTable::grow`]).
    pub fn table_bytes_in_use(&self) -> usize {
        self.tt.bytes_in_use()
    }

    /// Uses the whole transposition table from now on, not a prefix that grows with the
    /// search: for a table saved to a file and loaded again, which must find each board where
    /// it was stored.
    pub fn use_whole_table(&self) {
        self.tt.use_all();
    }

    /// From now on every search of this solver stops at `deadline` (`None`: never) with
    /// [`SolveError::OutOfTime`], leaving the table as sound as before: a stopped search stores
    /// nothing it had not proven. Only [`Algorithm::Mtdf`] heeds it; it is checked every few
    /// thousand nodes.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = deadline;
    }

    /// Stops the search running now, from another thread, and every later one, with
    /// [`SolveError::Cancelled`] (checked every few thousand nodes); the table stays as sound
    /// as before.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// A null-window test of `board` (not finished) at `beta`, to the end of the game, that
    /// gives up after about `max_nodes` nodes (`None`: no limit; the limit is checked every
    /// few thousand nodes a thread). Returns `Ok(Some(v))` with the fail-soft contract of
    /// [`negamax::search`] on the window `(beta - 1, beta)`: `v >= beta` means f >= v, and
    /// `v < beta` means f <= v; `Ok(None)` if the budget ran out first (nothing wrong was
    /// stored: the table keeps what the test had proven).
    pub fn test<L: Lanes>(
        &self,
        board: Board<L>,
        beta: i32,
        max_nodes: Option<u64>,
    ) -> Result<Option<i32>, SolveError> {
        self.test_with(board, beta, max_nodes, None)
    }

    /// [`Solver::test`], recording in `harvest` (cleared first) what the search finished near
    /// its root: when the budget runs out, the subtrees it had proven (see [`harvest`]). A board
    /// of more than 255 seeds records nothing.
    pub fn test_harvesting<L: Lanes>(
        &self,
        board: Board<L>,
        beta: i32,
        max_nodes: u64,
        harvest: &Harvest,
    ) -> Result<Option<i32>, SolveError> {
        harvest.clear();
        self.test_with(board, beta, Some(max_nodes), Some(harvest))
    }

    fn test_with<L: Lanes>(
        &self,
        board: Board<L>,
        beta: i32,
        max_nodes: Option<u64>,
        harvest: Option<&Harvest>,
    ) -> Result<Option<i32>, SolveError> {
        self.check_houses(board)?;
        if board.is_finished() {
            return Ok(Some(finished_f(
                board.mover_seeds(),
                board.opponent_seeds(),
            )));
        }
        let limit = max_nodes.map_or(u64::MAX, |n| self.nodes().saturating_add(n));
        // A harvest names boards by a byte a house: exact up to 255 seeds on the board.
        let harvest = harvest.filter(|_| board.seeds() <= 255);
        Ok(self
            .null_window_limited(board, beta, EXACT_DEPTH, limit, harvest)?
            .map(|(v, _)| v))
    }

    /// The houses (0-based) of `board`'s moves in the order a search of it tries them now:
    /// the table's best move for it first, then the search's static order.
    pub fn move_order<L: Lanes>(&self, board: Board<L>) -> Vec<usize> {
        let tt_move = (board.seeds() <= tt::MAX_SEEDS && self.config.algorithm == Algorithm::Mtdf)
            .then(|| self.tt.probe(board.key()))
            .flatten()
            .and_then(|e| e.best);
        negamax::move_order(board, self.rules, tt_move)
    }

    /// The value of `board` searched `depth` plies deep (boards at the horizon count their f
    /// as 0): a cheap estimate of f, as iterative deepening makes it, from the table's bounds
    /// where they reach. Exact when the game ends within the horizon.
    pub fn estimate<L: Lanes>(&self, board: Board<L>, depth: u8) -> Result<i32, SolveError> {
        if board.is_finished() {
            return Ok(finished_f(board.mover_seeds(), board.opponent_seeds()));
        }
        Ok(self
            .mtdf_at(board, 0, depth.min(EXACT_DEPTH - 1), &mut |_| {})?
            .0)
    }

    fn check_houses<L: Lanes>(&self, board: Board<L>) -> Result<(), SolveError> {
        if board.houses_per_side() != self.houses {
            return Err(SolveError::Mismatch {
                solver: format!("{} houses, {} rules", self.houses, self.rules),
                position: format!("{} houses", board.houses_per_side()),
            });
        }
        Ok(())
    }

    fn check<L: Lanes>(&self, pos: &Position<L>) -> Result<(), SolveError> {
        if pos.houses_per_side() != self.houses || pos.rules() != self.rules {
            return Err(SolveError::Mismatch {
                solver: format!("{} houses, {} rules", self.houses, self.rules),
                position: format!("{} houses, {} rules", pos.houses_per_side(), pos.rules()),
            });
        }
        Ok(())
    }

    /// f of `board` (the future store difference for its side to move), exact; an error only
    /// if a database block the search read is damaged ([`SolveError::Database`]).
    pub fn exact<L: Lanes>(
        &self,
        board: Board<L>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<i32, SolveError> {
        if board.is_finished() {
            return Ok(finished_f(board.mover_seeds(), board.opponent_seeds()));
        }
        match self.config.algorithm {
            Algorithm::Mtdf => self.mtdf(board, 0, progress),
            other => {
                // The plainer algorithms heed a cancel and the deadline too.
                let deadline = *self.deadline.lock().unwrap_or_else(|e| e.into_inner());
                let stop = || {
                    self.cancelled.load(Ordering::Relaxed)
                        || deadline.is_some_and(|d| Instant::now() >= d)
                };
                let mut count = ladder::Count::new(&stop);
                let v = ladder::solve(other, board, self.rules, &mut count);
                self.nodes.fetch_add(count.nodes, Ordering::Relaxed);
                match count.stopped() {
                    false => Ok(v),
                    true if self.cancelled.load(Ordering::Relaxed) => Err(SolveError::Cancelled),
                    true => Err(SolveError::OutOfTime),
                }
            }
        }
    }

    /// Iterative deepening: MTD(f) at growing depths, each from the previous value, then the
    /// exact MTD(f) from the last one (see [`Tuning::deepening_step`]).
    fn mtdf<L: Lanes>(
        &self,
        board: Board<L>,
        guess: i32,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<i32, SolveError> {
        let (g, exact) = self.deepen(board, guess, self.config.tuning.deepening_nodes, progress)?;
        if exact {
            return Ok(g);
        }
        Ok(self.mtdf_at(board, g, EXACT_DEPTH, progress)?.0)
    }

    /// The iterative deepening of [`Solver::exact`] alone (MTD(f) at growing depths from
    /// `guess`, within `max_nodes`): the last depth's value, and whether it is already exact
    /// (the game ended within the horizon on every line).
    fn deepen<L: Lanes>(
        &self,
        board: Board<L>,
        guess: i32,
        max_nodes: u64,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(i32, bool), SolveError> {
        let tuning = self.config.tuning;
        let mut g = guess;
        if tuning.deepening_step > 0 {
            let limit = self.nodes().saturating_add(max_nodes);
            let mut depth = tuning.deepening_step;
            while depth <= tuning.deepening_max {
                let Some((v, resolved)) = self.mtdf_at_limited(board, g, depth, progress, limit)?
                else {
                    // Out of nodes: the exact search starts from the last iteration's value.
                    break;
                };
                if resolved == EXACT_DEPTH {
                    return Ok((v, true));
                }
                g = v;
                depth = depth.saturating_add(tuning.deepening_step);
            }
        }
        Ok((g, false))
    }

    /// A first guess of f for `board` (not finished), as the exact solve makes its own: MTD(f)
    /// at growing depths ([`Tuning::deepening_step`] to [`Tuning::deepening_max`] plies,
    /// within [`Tuning::deepening_nodes`] nodes), which also leaves the table the best moves
    /// the exact search then tries first. Exact when every line ends within the horizon.
    pub fn guess<L: Lanes>(&self, board: Board<L>) -> Result<i32, SolveError> {
        self.guess_within(board, u64::MAX)
    }

    /// [`Solver::guess`] within at most `max_nodes` nodes (and [`Tuning::deepening_nodes`]):
    /// what a test within a budget spends to order its moves first.
    pub fn guess_within<L: Lanes>(
        &self,
        board: Board<L>,
        max_nodes: u64,
    ) -> Result<i32, SolveError> {
        if board.is_finished() {
            return Ok(finished_f(board.mover_seeds(), board.opponent_seeds()));
        }
        self.check_houses(board)?;
        let max_nodes = max_nodes.min(self.config.tuning.deepening_nodes);
        Ok(self.deepen(board, 0, max_nodes, &mut |_| {})?.0)
    }

    /// MTD(f) at one depth: null-window tests from `guess` until the bounds meet. Returns the
    /// value and the depth to which it holds ([`EXACT_DEPTH`]: it is f).
    fn mtdf_at<L: Lanes>(
        &self,
        board: Board<L>,
        guess: i32,
        depth: u8,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(i32, u8), SolveError> {
        Ok(self
            .mtdf_at_limited(board, guess, depth, progress, u64::MAX)?
            .expect("no node limit"))
    }

    /// [`Solver::mtdf_at`], given up (`Ok(None)`) once this solver's node count reaches
    /// `node_limit`.
    fn mtdf_at_limited<L: Lanes>(
        &self,
        board: Board<L>,
        guess: i32,
        depth: u8,
        progress: &mut dyn FnMut(&Progress),
        node_limit: u64,
    ) -> Result<Option<(i32, u8)>, SolveError> {
        let (mut lower, mut upper) = f_bounds(board.seeds(), self.rules);
        // The depth to which the bounds hold: to the end, unless the table narrowed them.
        let mut resolved = EXACT_DEPTH;
        if let Some(e) = (board.seeds() <= tt::MAX_SEEDS)
            .then(|| self.tt.probe(board.key()))
            .flatten()
        {
            if e.depth >= depth {
                lower = lower.max(e.lower);
                upper = upper.min(e.upper);
                resolved = e.depth;
            }
        }
        // Values have the parity of the seeds on the board: keep the guess on it.
        let mut g = guess.clamp(lower, upper);
        if (g - lower) % 2 != 0 {
            g -= 1;
        }
        while lower < upper {
            let beta = if g <= lower { lower + 2 } else { g };
            let Some((v, d)) = self.null_window_limited(board, beta, depth, node_limit, None)?
            else {
                return Ok(None);
            };
            resolved = resolved.min(d);
            if v < beta {
                upper = v;
            } else {
                lower = v;
            }
            g = v;
            progress(&Progress {
                depth: (depth != EXACT_DEPTH).then_some(depth),
                lower,
                upper,
                mv: None,
                nodes: self.nodes(),
                elapsed: self.started.elapsed(),
            });
        }
        Ok(Some((lower, resolved)))
    }

    /// One null-window search with window (beta - 1, beta), `depth` plies deep, on the pool.
    /// A damaged database block stops it with the error.
    fn null_window<L: Lanes>(
        &self,
        board: Board<L>,
        beta: i32,
        depth: u8,
    ) -> Result<(i32, u8), SolveError> {
        Ok(self
            .null_window_limited(board, beta, depth, u64::MAX, None)?
            .expect("no node limit"))
    }

    /// [`Solver::null_window`], stopped (`Ok(None)`) once this solver's node count reaches
    /// `node_limit`, recording what it finished near the root in `harvest` if given.
    fn null_window_limited<L: Lanes>(
        &self,
        board: Board<L>,
        beta: i32,
        depth: u8,
        node_limit: u64,
        harvest: Option<&Harvest>,
    ) -> Result<Option<(i32, u8)>, SolveError> {
        let probe = match &self.db {
            Some(db) => Some(db.slices()?),
            None => None,
        };
        let deadline = *self.deadline.lock().unwrap_or_else(|e| e.into_inner());
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(SolveError::OutOfTime);
        }
        if self.cancelled.load(Ordering::Relaxed) {
            return Err(SolveError::Cancelled);
        }
        if self.nodes() >= node_limit {
            return Ok(None);
        }
        let fault = OnceLock::new();
        let shared = Shared {
            tt: &self.tt,
            rules: self.rules,
            tuning: self
                .config
                .tuning
                .with_databases(probe.as_ref().map(|p| p.max_level())),
            nodes: &self.nodes,
            db: probe.as_ref(),
            fault: &fault,
            deadline,
            node_limit,
            cancel: &self.cancelled,
            harvest,
        };
        let run = || {
            let abort = Abort::root();
            let mut local = Local::default();
            let result =
                negamax::search(&shared, &mut local, &abort, board, beta - 1, beta, depth, 0);
            local.flush(&shared);
            (result, abort.is_set())
        };
        let (result, stopped) = match &self.pool {
            Some(pool) => pool.install(run),
            None => run(),
        };
        // A level written while the search read it: its result means nothing.
        if let Some(db) = &self.db {
            db.unchanged()?;
        }
        // The root is only ever set by a fault, the deadline, the node limit or a cancel.
        match (fault.get(), &probe) {
            (Some(&fault), Some(probe)) => Err(SolveError::Database(probe.error(fault))),
            _ if stopped && self.cancelled.load(Ordering::Relaxed) => Err(SolveError::Cancelled),
            _ if stopped && self.nodes() >= node_limit => Ok(None),
            _ if stopped => Err(SolveError::OutOfTime),
            _ => Ok(Some(result)),
        }
    }

    /// The value of `pos` (stores included, for the side to move) and its lowest optimal move,
    /// without the dearer parts of [`Solver::analyze`]; `None` once the game is over.
    pub fn best_move<L: Lanes>(
        &self,
        pos: &Position<L>,
    ) -> Result<Option<(i32, Move)>, SolveError> {
        self.best_move_with(pos, &mut |_| {})
    }

    /// [`Solver::best_move`], reporting each step of the narrowing of the value to `progress`
    /// (its bounds are on f, the value less the store difference: see [`Progress`]).
    pub fn best_move_with<L: Lanes>(
        &self,
        pos: &Position<L>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<Option<(i32, Move)>, SolveError> {
        self.check(pos)?;
        if pos.to_move().is_none() {
            return Ok(None);
        }
        let board = pos.board();
        let f = self.exact(board, progress)?;
        let mv = self.lowest_keeping(board, f)?;
        Ok(Some((pos.store_difference() + f, mv)))
    }

    /// The value of `pos`, its optimal moves and a perfect line; with `all_moves` also the exact
    /// value of every legal move (much dearer: a bad move's exact value needs its own proof),
    /// otherwise `moves` lists the optimal moves only.
    pub fn analyze<L: Lanes>(
        &self,
        pos: &Position<L>,
        all_moves: bool,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<Analysis, SolveError> {
        self.check(pos)?;
        let Some(side) = pos.to_move() else {
            let outcome = pos.outcome().expect("a finished game has an outcome");
            return Ok(Analysis {
                to_move: None,
                value: outcome.margin(Side::South),
                moves: Vec::new(),
                best: Vec::new(),
                pv: Vec::new(),
            });
        };
        let stores = pos.store_difference();
        let board = pos.board();
        let f = self.exact(board, progress)?;
        let mut moves = Vec::new();
        for mv in pos.legal_moves() {
            let value = if all_moves {
                Some(self.move_value(board, mv, progress)?)
            } else {
                self.reaches(board, mv, f)?.then_some(f)
            };
            if let Some(v) = value {
                moves.push(MoveValue {
                    mv,
                    value: stores + v,
                });
            }
        }
        let best = moves
            .iter()
            .filter(|m| m.value == stores + f)
            .map(|m| m.mv)
            .collect();
        let pv = self.principal_variation(board, f)?;
        Ok(Analysis {
            to_move: Some(side),
            value: stores + f,
            moves,
            best,
            pv,
        })
    }

    /// The value of sowing `mv` on `board` for the mover, stores excluded.
    fn move_value<L: Lanes>(
        &self,
        board: Board<L>,
        mv: Move,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<i32, SolveError> {
        let (child, s) = board.sow(mv.index(), self.rules);
        let gain = s.gain();
        // The child's steps, told as bounds on the move's value for this board's mover.
        let mut on_child = |p: &Progress| {
            let (lower, upper) = if s.extra_turn {
                (gain + p.lower, gain + p.upper)
            } else {
                (gain - p.upper, gain - p.lower)
            };
            progress(&Progress {
                lower,
                upper,
                mv: Some(mv),
                ..*p
            })
        };
        Ok(if s.game_over {
            gain
        } else if s.extra_turn {
            gain + self.exact(child, &mut on_child)?
        } else {
            gain - self.exact(child, &mut on_child)?
        })
    }

    /// Whether sowing `mv` on `board` keeps the value `f` (a move's value is never above f, so
    /// one null-window test of the child decides it).
    fn reaches<L: Lanes>(&self, board: Board<L>, mv: Move, f: i32) -> Result<bool, SolveError> {
        let (child, s) = board.sow(mv.index(), self.rules);
        let gain = s.gain();
        if s.game_over {
            return Ok(gain >= f);
        }
        if self.config.algorithm != Algorithm::Mtdf {
            return Ok(self.move_value(board, mv, &mut |_| {})? >= f);
        }
        Ok(if s.extra_turn {
            // gain + f(child) >= f  <=>  f(child) >= f - gain
            let beta = f - gain;
            self.null_window(child, beta, EXACT_DEPTH)?.0 >= beta
        } else {
            // gain - f(child) >= f  <=>  f(child) <= gain - f, i.e. fails below gain - f + 1
            let beta = gain - f + 1;
            self.null_window(child, beta, EXACT_DEPTH)?.0 < beta
        })
    }

    /// The lowest house of `board` (not finished) whose move keeps its value `f`. None doing
    /// so is an error: only a database whose entries contradict each other (their checksums
    /// passing) can cause it.
    fn lowest_keeping<L: Lanes>(&self, board: Board<L>, f: i32) -> Result<Move, SolveError> {
        let mask = board.movable();
        for h in (0..board.houses_per_side()).filter(|h| mask >> h & 1 == 1) {
            let mv = Move::new(h + 1).expect("house index below MAX_HOUSES");
            if self.reaches(board, mv, f)? {
                return Ok(mv);
            }
        }
        Err(SolveError::Database(DbError::Unsupported(format!(
            "no move keeps the value f = {f} found: the database's entries contradict each \
             other (run `kalah db verify --all`)"
        ))))
    }

    /// A perfect game from `board`, whose f is `f`: at each step the lowest house that keeps f.
    fn principal_variation<L: Lanes>(
        &self,
        mut board: Board<L>,
        mut f: i32,
    ) -> Result<Vec<Turn>, SolveError> {
        let mut turns = Vec::new();
        let mut turn = Vec::new();
        while !board.is_finished() {
            let mv = self.lowest_keeping(board, f)?;
            let (child, s) = board.sow(mv.index(), self.rules);
            let gain = s.gain();
            turn.push(mv);
            if s.extra_turn {
                f -= gain;
            } else {
                f = gain - f;
                turns.push(Turn(std::mem::take(&mut turn)));
            }
            board = child;
        }
        if !turn.is_empty() {
            turns.push(Turn(turn));
        }
        Ok(turns)
    }
}

#[cfg(test)]
mod tests {
    use crate::Rules;

    #[test]
    fn auto_table_size_grows_with_the_seeds() {
        assert_eq!(super::auto_tt_mib(0), 16);
        assert_eq!(super::auto_tt_mib(24), 32);
        assert_eq!(super::auto_tt_mib(48), 512);
        assert_eq!(super::auto_tt_mib(60), 2048);
        assert_eq!(super::auto_tt_mib(400), 8192);
        assert_eq!(super::auto_tt_mib_with_db(48, 24), 8);
        assert_eq!(super::auto_tt_mib_with_db(60, 30), 512);
        assert_eq!(super::auto_tt_mib_with_db(60, 28), 2048);
        assert_eq!(super::auto_tt_mib_with_db(20, 24), 4);
        assert_eq!(super::auto_tt_mib_with_db(400, 24), 8192);
        assert_eq!(super::auto_tt_mib_with_db(48, 16), 512);
    }

    #[test]
    fn tables_are_sized_by_the_boards_that_can_occur() {
        // 2 boards of 1 seed on 2 houses; 3 of 2: 1 + 2 + 3 boards of at most 2 seeds.
        assert_eq!(super::boards_above(1, 2, None), 6.0);
        assert_eq!(super::boards_above(1, 2, Some(0)), 5.0);
        assert_eq!(super::boards_above(1, 2, Some(2)), 0.0);
        // Kalah(2,2): 495 boards of at most 8 seeds; a megabyte.
        assert_eq!(super::boards_above(2, 8, None), 495.0);
        assert_eq!(super::auto_table_mib(2, 8, None, Rules::Standard), 1);
        assert_eq!(super::auto_table_mib(1, 2, None, Rules::Standard), 1);
        // Kalah(6,4) and (6,5) keep their sizes (unless the machine has less than 2 GiB, or
        // 8 GiB for (6,5)). Wide boards by the cost model, never below the size by the seeds:
        // Kalah(10,2) standard 1 GiB (128 MiB by its seeds), empty-capture 128 MiB (the model
        // expects 16 times fewer nodes); Kalah(8,2) keeps 64 MiB; Kalah(7,4) on the levels
        // 0..24 1 GiB.
        let cap = super::table_memory_cap_mib();
        for (houses, seeds, top, rules, mib) in [
            (6, 48, None, Rules::Standard, 512),
            (6, 48, Some(24), Rules::Standard, 8),
            (6, 60, Some(28), Rules::Standard, 2048),
            (10, 40, None, Rules::Standard, 1024),
            (10, 40, None, Rules::EmptyCapture, 128),
            (8, 32, None, Rules::Standard, 64),
            (7, 56, Some(24), Rules::Standard, 1024),
        ] {
            let got = super::auto_table_mib(houses, seeds, top, rules);
            assert_eq!(
                got,
                mib.min(cap),
                "{houses} houses, {seeds} seeds, {top:?}, {rules}"
            );
        }
    }

    #[test]
    fn memory_databases_stop_thirty_seeds_below_and_within_two_gib() {
        use super::auto_memory_db;
        assert_eq!(auto_memory_db(6, 36), None);
        assert_eq!(auto_memory_db(6, 48), Some(18));
        assert_eq!(auto_memory_db(5, 50), Some(20));
        assert_eq!(auto_memory_db(4, 48), Some(18));
        assert_eq!(auto_memory_db(5, 60), Some(28));
        // 6 houses, packed: the levels up to 26 take 1.69 GB, up to 27 2.44 GB.
        assert_eq!(auto_memory_db(6, 60), Some(26));
        assert_eq!(auto_memory_db(6, 72), Some(26));
        assert_eq!(auto_memory_db(9, 72), None);
    }
}
