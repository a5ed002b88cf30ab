//! `kalah._kalah`: the Python bindings of the kalah library (see `kalah/__init__.pyi` for the
//! API as Python sees it).
//!
//! Long calls (a solve, a database build, a batch of values) run with the GIL released, on a
//! thread of their own, while the calling thread looks at Python's signals every 20 ms: Ctrl-C
//! cancels the work and raises `KeyboardInterrupt`, and a time limit that expires raises
//! `TimeoutError`; neither ever returns a guess.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use numpy::{PyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use kalah::answer::{
    Answer, AnswerError, Budget, NotDone, SearchWork, Searcher, Sources, Want, answer, look_up,
};
use kalah::db::{DbError, Tablebase as Levels};
use kalah::{
    AnyPosition, Board, Move, Narrow, Rules, Setup, Side, SolveError, Solver, SolverConfig,
    with_position,
};

create_exception!(
    kalah,
    DatabaseError,
    PyException,
    "A level of the endgame databases is missing, damaged or changed while in use: no value is \
     given from it."
);

/// How often a waiting call looks at Python's signals and its progress.
const POLL: Duration = Duration::from_millis(20);

fn rules_of(text: &str) -> PyResult<Rules> {
    text.parse::<Rules>().map_err(|_| {
        PyValueError::new_err(format!(
            "rules must be 'standard' or 'empty-capture', not {text:?}"
        ))
    })
}

fn side_name(side: Option<Side>) -> Option<&'static str> {
    side.map(|s| match s {
        Side::South => "south",
        Side::North => "north",
    })
}

fn side_of(text: &str) -> PyResult<Side> {
    match text {
        "south" => Ok(Side::South),
        "north" => Ok(Side::North),
        _ => Err(PyValueError::new_err(format!(
            "to_move must be 'south' or 'north', not {text:?}"
        ))),
    }
}

fn db_error(e: DbError) -> PyErr {
    DatabaseError::new_err(e.to_string())
}

fn solve_error(e: SolveError) -> PyErr {
    match e {
        SolveError::Database(e) => db_error(e),
        SolveError::OutOfTime => PyTimeoutError::new_err(
            "the time limit passed before the value was proven (no value is guessed)",
        ),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// Runs `work` on a thread of its own with the GIL released; every [`POLL`] the calling thread
/// checks Python's signals and calls `tick`; an error of either calls `cancel` (which must
/// make `work` return soon) and is raised once `work` has returned.
fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> T + Send,
    cancel: &(dyn Fn() + Sync),
    tick: &mut (dyn FnMut(Python<'_>) -> PyResult<()> + Send),
) -> PyResult<T> {
    py.detach(|| {
        std::thread::scope(|scope| {
            let (done, finished) = std::sync::mpsc::channel::<()>();
            let handle = scope.spawn(move || {
                let out = work();
                let _ = done.send(());
                out
            });
            let mut failure: Option<PyErr> = None;
            // Until the work says it is done (or its thread ends, sending nothing on a panic).
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(POLL)
            {
                if failure.is_none() {
                    let checked = Python::attach(|py| py.check_signals().and_then(|()| tick(py)));
                    if let Err(e) = checked {
                        failure = Some(e);
                        cancel();
                    }
                }
            }
            let out = handle
                .join()
                .map_err(|_| PyRuntimeError::new_err("the work panicked"))?;
            // The last progress, then the first error.
            if failure.is_none() {
                failure = Python::attach(&mut *tick).err();
            }
            match failure {
                Some(e) => Err(e),
                None => Ok(out),
            }
        })
    })
}

/// A Kalah position: the houses and stores of both sides, the side to move, the capture rule.
/// Immutable and hashable; `play` returns a new position.
#[pyclass(frozen, module = "kalah")]
#[derive(Clone)]
struct Position {
    inner: AnyPosition,
}

impl Position {
    fn from_setup(setup: &Setup, rules: Rules) -> PyResult<Position> {
        AnyPosition::from_setup(setup, rules)
            .map(|inner| Position { inner })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn setup(&self) -> Setup {
        with_position!(self.inner, p => p.to_setup())
    }

    fn rules(&self) -> Rules {
        with_position!(self.inner, p => p.rules())
    }
}

#[pymethods]
impl Position {
    /// A position from its KGP literal, `<m,south_store,north_store,s_1..s_m,n_1..n_m>`,
    /// optionally followed by ` north` (or give `to_move`).
    #[new]
    #[pyo3(signature = (literal, rules = "standard", to_move = None))]
    fn new(literal: &str, rules: &str, to_move: Option<&str>) -> PyResult<Position> {
        if literal.len() > 4096 {
            return Err(PyValueError::new_err(
                "a position literal of more than 4096 bytes",
            ));
        }
        let mut setup: Setup = literal
            .parse()
            .map_err(|e: kalah::NotationError| PyValueError::new_err(e.to_string()))?;
        if let Some(side) = to_move {
            let side = side_of(side)?;
            // A literal that names its side to move (`... north`) and a `to_move` that
            // disagrees: which one was meant is not ours to guess.
            let named = literal
                .rsplit_once('>')
                .is_some_and(|(_, rest)| !rest.trim().is_empty());
            if named && setup.to_move != Some(side) {
                return Err(PyValueError::new_err(format!(
                    "the literal says {} is to move, to_move says {}: give one of them",
                    side_name(setup.to_move).unwrap_or("nobody"),
                    side_name(Some(side)).unwrap_or("nobody")
                )));
            }
            setup.to_move = Some(side);
        }
        Position::from_setup(&setup, rules_of(rules)?)
    }

    /// The start of Kalah(houses, seeds): `seeds` in every house, South to move.
    #[staticmethod]
    #[pyo3(signature = (houses, seeds, rules = "standard"))]
    fn start(houses: usize, seeds: u64, rules: &str) -> PyResult<Position> {
        // One error, the first that applies (a board size out of range says nothing else).
        kalah::Variant::new(houses, seeds, rules_of(rules)?)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let setup = Setup {
            houses,
            stores: [0, 0],
            south: vec![seeds; houses],
            north: vec![seeds; houses],
            to_move: Some(Side::South),
        };
        Position::from_setup(&setup, rules_of(rules)?)
    }

    /// A position from `2m + 2` counts in sowing order: South's houses 1..m, South's store,
    /// North's houses 1..m, North's store.
    #[staticmethod]
    #[pyo3(signature = (pits, to_move = "south", rules = "standard"))]
    fn from_list(pits: Vec<i64>, to_move: Option<&str>, rules: &str) -> PyResult<Position> {
        if pits.len() < 4 || pits.len() % 2 != 0 {
            return Err(PyValueError::new_err(format!(
                "a list of 2m + 2 counts (m houses a side, then the stores), not {} of them",
                pits.len()
            )));
        }
        if let Some(bad) = pits.iter().find(|&&x| x < 0) {
            return Err(PyValueError::new_err(format!("a negative count: {bad}")));
        }
        let m = pits.len() / 2 - 1;
        let count = |x: &i64| *x as u64;
        let setup = Setup {
            houses: m,
            stores: [count(&pits[m]), count(&pits[2 * m + 1])],
            south: pits[..m].iter().map(count).collect(),
            north: pits[m + 1..2 * m + 1].iter().map(count).collect(),
            to_move: to_move.map(side_of).transpose()?,
        };
        Position::from_setup(&setup, rules_of(rules)?)
    }

    /// The position of an OpenSpiel `mancala` state (Kalah(6,4), standard rules): player 0 is
    /// South, its pits 1..6 South's houses 1..6, pit 7 its store; pits 8..13 North's houses
    /// 1..6, pit 0 North's store. At the end OpenSpiel leaves the last seeds in their houses:
    /// the position is then over, with the same `outcome()`.
    #[staticmethod]
    fn from_openspiel(state: &Bound<'_, PyAny>) -> PyResult<Position> {
        let tensor: Vec<f64> = state.call_method1("observation_tensor", (0,))?.extract()?;
        if tensor.len() != 16 {
            return Err(PyValueError::new_err(format!(
                "not an OpenSpiel mancala state: an observation of {} numbers, not 16",
                tensor.len()
            )));
        }
        // Pits 0..13 first (then two numbers of OpenSpiel's own).
        let pits = &tensor[..14];
        let count = |x: &f64| *x as u64;
        let terminal: bool = state.call_method0("is_terminal")?.extract()?;
        let player: i64 = state.call_method0("current_player")?.extract()?;
        let to_move = match (terminal, player) {
            (true, _) => None,
            (false, 0) => Some(Side::South),
            (false, 1) => Some(Side::North),
            (false, p) => {
                return Err(PyValueError::new_err(format!(
                    "not a mancala player to move: {p}"
                )));
            }
        };
        let setup = Setup {
            houses: 6,
            stores: [count(&pits[7]), count(&pits[0])],
            south: pits[1..7].iter().map(count).collect(),
            north: pits[8..14].iter().map(count).collect(),
            to_move,
        };
        Position::from_setup(&setup, Rules::Standard)
    }

    /// The legal moves: the houses (1..m) of the side to move that hold seeds; none once the
    /// game is over.
    fn moves(&self) -> Vec<usize> {
        with_position!(self.inner, p => p.legal_moves().into_iter().map(Move::house).collect())
    }

    /// The position after the side to move sows `house` (1..m).
    fn play(&self, house: usize) -> PyResult<Position> {
        let mv = Move::new(house)
            .ok_or_else(|| PyValueError::new_err(format!("house {house}: houses count from 1")))?;
        let setup = with_position!(self.inner, p => p
            .play(mv)
            .map(|(q, _)| q.to_setup())
            .map_err(|e| PyValueError::new_err(e.to_string())))?;
        Position::from_setup(&setup, self.rules())
    }

    /// Whether the game is over (a side has no seeds in its houses).
    fn is_over(&self) -> bool {
        with_position!(self.inner, p => p.is_finished())
    }

    /// `'south'`, `'north'`, or `None` once the game is over.
    #[getter]
    fn to_move(&self) -> Option<&'static str> {
        side_name(with_position!(self.inner, p => p.to_move()))
    }

    /// The KGP literal (with ` north` when North is to move).
    #[getter]
    fn literal(&self) -> String {
        self.inner.to_string()
    }

    /// `'standard'` or `'empty-capture'`.
    #[getter]
    fn rules_name(&self) -> &'static str {
        self.rules().as_str()
    }

    /// Houses a side.
    #[getter]
    fn houses(&self) -> usize {
        with_position!(self.inner, p => p.houses_per_side())
    }

    /// Seeds in the houses (not the stores).
    #[getter]
    fn seeds_on_board(&self) -> u32 {
        with_position!(self.inner, p => p.seeds_on_board())
    }

    /// The counts in sowing order: South's houses 1..m, South's store, North's houses 1..m,
    /// North's store (as `from_list` takes them).
    fn to_list(&self) -> Vec<u64> {
        let s = self.setup();
        let mut out = s.south.clone();
        out.push(s.stores[0]);
        out.extend(&s.north);
        out.push(s.stores[1]);
        out
    }

    /// Once the game is over, South's final margin; else `None`.
    fn outcome(&self) -> Option<i32> {
        with_position!(self.inner, p => p.outcome().map(|o| o.margin(Side::South)))
    }

    fn __str__(&self) -> String {
        self.literal()
    }

    fn __repr__(&self) -> String {
        format!(
            "Position({:?}, rules={:?})",
            self.literal(),
            self.rules().as_str()
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Position>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.literal().hash(&mut h);
        self.rules().as_str().hash(&mut h);
        h.finish()
    }
}

/// What is known of a position: its value (or bounds on it), each move's value (or bounds),
/// a perfect line as far as it is known, where they came from and whether they are certified:
/// what `kalah query --json` says of it ([`kalah::answer`]).
#[pyclass(frozen, module = "kalah", get_all)]
struct Solution {
    /// Final store difference for the side to move, stores included, under perfect play (once
    /// the game is over: South's margin); `None` where only its bounds are known.
    value: Option<i32>,
    /// The value's bounds (equal to `value` when it is known).
    lower: i32,
    /// The value's bounds.
    upper: i32,
    /// Whether the value rests on ledger facts each proven again by another path.
    certified: bool,
    /// Each legal move's value for the side to move (`None` where only bounds are known):
    /// `{house: value}`.
    moves: Py<PyDict>,
    /// Each legal move's bounds: `{house: (lower, upper)}`.
    bounds: Py<PyDict>,
    /// Whether each legal move's bounds are certified: `{house: bool}`.
    move_certified: Py<PyDict>,
    /// The moves proven worth `value`, lowest house first.
    best: Vec<usize>,
    /// The moves that may be worth `value` too (their bounds reach it).
    maybe_best: Vec<usize>,
    /// A perfect game, one turn a string (`"3-6"`: sow 3, then 6 after the extra turn), the
    /// side to move first, as far as it is known.
    pv: Vec<String>,
    /// Whether `pv` reaches the end of the game.
    pv_complete: bool,
    /// `'south'`, `'north'` or `None`.
    to_move: Option<&'static str>,
    /// Where the value came from: `'database'`, `'ledger'`, `'search'` or `'end'`.
    source: &'static str,
    /// Why a search was not done (or did not finish), if it was needed: `None` otherwise.
    not_searched: Option<String>,
}

#[pymethods]
impl Solution {
    fn __repr__(&self, py: Python<'_>) -> String {
        let value = match self.value {
            Some(v) => v.to_string(),
            None => format!("None, lower={}, upper={}", self.lower, self.upper),
        };
        format!(
            "Solution(value={value}, moves={}, best={:?}, pv={:?}, certified={})",
            self.moves
                .bind(py)
                .repr()
                .map_or_else(|_| "?".into(), |r| r.to_string()),
            self.best,
            self.pv,
            if self.certified { "True" } else { "False" }
        )
    }
}

fn solution(py: Python<'_>, a: &Answer) -> PyResult<Solution> {
    let (moves, bounds, certified) = (PyDict::new(py), PyDict::new(py), PyDict::new(py));
    for m in &a.moves {
        let house = m.mv.house();
        moves.set_item(house, m.value())?;
        bounds.set_item(house, (m.bounds.lower, m.bounds.upper))?;
        certified.set_item(house, m.certified)?;
    }
    let why = a.not_done.map(|n| match n {
        NotDone::Cost { cost, .. } => format!(
            "the cost model puts the search at about {:.0} s on {} threads ({:.3e} nodes): not \
             started (long=True, or a time_limit, starts it)",
            cost.seconds, cost.threads, cost.nodes
        ),
        NotDone::OutOfTime => "the time limit passed before every value was proven".to_owned(),
        NotDone::Cancelled => "the search was cancelled".to_owned(),
        NotDone::Seeds { seeds, limit } => format!("{seeds} seeds, more than searched ({limit})"),
        NotDone::NoSearch => "no search (Tablebase.analyze reads the levels and books only)".into(),
    });
    Ok(Solution {
        value: a.exact(),
        lower: a.value.lower,
        upper: a.value.upper,
        certified: a.certified,
        moves: moves.unbind(),
        bounds: bounds.unbind(),
        move_certified: certified.unbind(),
        best: a.best().iter().map(|m| m.house()).collect(),
        maybe_best: a.maybe_best().iter().map(|m| m.house()).collect(),
        pv: a.pv.iter().map(|t| t.to_string()).collect(),
        pv_complete: a.pv_complete,
        to_move: side_name(a.to_move),
        source: a.source.as_str(),
        not_searched: why,
    })
}

/// The database directory a call names: `None` is the database home (if any), `False` none.
fn db_dir(db: Option<&Bound<'_, PyAny>>) -> PyResult<Option<PathBuf>> {
    match db {
        None => Ok(kalah::db::home::home()),
        Some(x) if x.is_instance_of::<pyo3::types::PyBool>() => {
            if x.extract::<bool>()? {
                Ok(kalah::db::home::home())
            } else {
                Ok(None)
            }
        }
        Some(x) => Ok(Some(x.extract::<PathBuf>()?)),
    }
}

/// `dir`, else the database home.
fn dir_or_home(dir: Option<PathBuf>) -> PyResult<PathBuf> {
    match dir {
        Some(d) => Ok(d),
        None => kalah::db::home::home().ok_or_else(|| {
            DatabaseError::new_err(
                "no database home (set KALAH_DB, XDG_DATA_HOME or HOME, or give dir)",
            )
        }),
    }
}

/// The levels of `dir` for this board and rules, if it has any (`given`: the caller named the
/// directory, so that its absence is an error).
fn open_levels(
    dir: &std::path::Path,
    houses: usize,
    rules: Rules,
    given: bool,
) -> PyResult<Option<Arc<Levels>>> {
    match kalah::db::tablebase::levels_in(dir, houses, rules) {
        Ok(found) if found.first() == Some(&0) => {
            Levels::open(dir, houses, rules, kalah::db::Access::Map)
                .map(|t| Some(Arc::new(t)))
                .map_err(db_error)
        }
        Ok(_) if !given => Ok(None),
        Ok(_) => Err(DatabaseError::new_err(format!(
            "no levels for {houses} houses, {rules} rules in {}",
            dir.display()
        ))),
        Err(_) if !given => Ok(None),
        Err(e) => Err(db_error(e)),
    }
}

/// Solves `position` exactly (see the stub for the arguments): the answer of
/// [`kalah::answer`] from the levels, the opening books and ledgers, then a search (within
/// `time_limit`; without one, not started where the cost model puts it past an hour, unless
/// `long`).
#[pyfunction]
#[pyo3(signature = (position, *, rules = None, threads = None, db = None, time_limit = None, tt_mb = None, book = true, long = false))]
#[allow(clippy::too_many_arguments)]
fn solve(
    py: Python<'_>,
    position: &Position,
    rules: Option<&str>,
    threads: Option<usize>,
    db: Option<&Bound<'_, PyAny>>,
    time_limit: Option<f64>,
    tt_mb: Option<usize>,
    book: bool,
    long: bool,
) -> PyResult<Solution> {
    // The time limit counts from the call: opening the levels and making the table too.
    let called = Instant::now();
    let given = db.is_some_and(|x| !x.is_instance_of::<pyo3::types::PyBool>());
    let dir = db_dir(db)?;
    // The same board under other rules, if asked.
    let p = match rules {
        Some(r) => Position::from_setup(&position.setup(), rules_of(r)?)?.inner,
        None => position.inner,
    };
    let (houses, rules, seeds) =
        with_position!(p, q => (q.houses_per_side(), q.rules(), q.seeds_on_board()));
    if let Some(t) = time_limit {
        if !(t.is_finite() && t > 0.0 && t <= 1e7) {
            return Err(PyValueError::new_err(format!(
                "time_limit must be a number of seconds above 0 (and at most 10^7), not {t}"
            )));
        }
    }
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if threads == 0 || threads > 1024 {
        return Err(PyValueError::new_err("threads must be 1 to 1024"));
    }
    let levels = match &dir {
        Some(d) => open_levels(d, houses, rules, given)?,
        None => None,
    };
    // The shipped books and ledgers, and the checked ledgers of the directory (as `kalah
    // query` reads them).
    let books = match book {
        true => {
            let game = with_position!(p, q => kalah::book::game_of(&q));
            Some(
                kalah::book::Book::open(true, Some(game), dir.as_deref()).map_err(|e| {
                    PyValueError::new_err(format!(
                        "cannot read the opening books: {e} (book=False searches without them)"
                    ))
                })?,
            )
        }
        false => None,
    };
    let config = SolverConfig {
        threads,
        tt_mib: tt_mb.unwrap_or_else(|| {
            let top = levels.as_ref().map(|l| l.max_level());
            kalah::search::auto_table_mib(houses, seeds, top, rules)
        }),
        ..SolverConfig::default()
    };
    let deadline = time_limit.map(|t| called + Duration::from_secs_f64(t));
    let budget = Budget {
        // A time limit bounds the search itself; without one, `long` starts any.
        model_seconds: (time_limit.is_none() && !long).then_some(LONG_SECONDS),
        deadline,
        max_seeds: None,
    };
    // The solver (its table: gigabytes for a large board, seconds to allocate) is made on the
    // work's thread, only if a search is needed, so that Ctrl-C is seen while it is made; a
    // cancel before it exists is kept in `stop` and heeded as soon as it does.
    let stop = AtomicBool::new(false);
    let made: std::sync::OnceLock<Solver> = std::sync::OnceLock::new();
    let result = interruptible(
        py,
        || {
            let sources = Sources {
                levels: levels.as_deref(),
                ledgers: books.as_ref(),
            };
            let mut search = PySearch {
                config,
                levels: levels.clone(),
                houses,
                rules,
                made: &made,
                stop: &stop,
            };
            with_position!(p, q => answer(&q, &sources, Want::EveryMove, &budget, Some(&mut search)))
        },
        &|| {
            stop.store(true, Ordering::SeqCst);
            if let Some(solver) = made.get() {
                solver.cancel();
            }
        },
        &mut |_| Ok(()),
    )?;
    let a = result.map_err(answer_error)?;
    if a.exact().is_none() {
        // Never a guess: the time limit passed, or the search was not started.
        return Err(match a.not_done {
            Some(NotDone::Cost { cost, .. }) => PyTimeoutError::new_err(format!(
                "this search would take about {:.0} s on {} threads by the cost model (a rough \
                 model, off by ten either way): not started (long=True, or a time_limit, starts \
                 it; the value is in [{}, {}])",
                cost.seconds, cost.threads, a.value.lower, a.value.upper
            )),
            _ => PyTimeoutError::new_err(format!(
                "the time limit passed before the value was proven (no value is guessed; it is \
                 in [{}, {}])",
                a.value.lower, a.value.upper
            )),
        });
    }
    solution(py, &a)
}

/// The search past which `solve` without a time limit does not start one (unless `long`), by
/// the cost model: an hour, as `kalah query`.
const LONG_SECONDS: f64 = 3600.0;

/// The search of `solve`: its solver made on the work's thread when first needed.
struct PySearch<'a> {
    config: SolverConfig,
    levels: Option<Arc<Levels>>,
    houses: usize,
    rules: Rules,
    made: &'a std::sync::OnceLock<Solver>,
    stop: &'a AtomicBool,
}

impl Searcher for PySearch<'_> {
    type Error = SolveError;

    fn config(&self) -> SolverConfig {
        self.config
    }

    fn levels_top(&self) -> Option<u32> {
        self.levels.as_ref().map(|l| l.max_level())
    }

    fn search(&mut self, _known: &Answer, work: &mut SearchWork<'_>) -> Result<(), SolveError> {
        let mut solver = Solver::new(self.houses, self.rules, self.config)?;
        if let Some(levels) = self.levels.clone() {
            solver = solver.with_tablebase(levels)?;
        }
        let solver = self.made.get_or_init(|| solver);
        if self.stop.load(Ordering::SeqCst) {
            solver.cancel();
        }
        work(solver, &mut |_| {});
        Ok(())
    }
}

/// An answer's failure as a Python exception.
fn answer_error(e: AnswerError<SolveError>) -> PyErr {
    match e {
        AnswerError::Levels(e) => db_error(e),
        AnswerError::Ledgers(e) => PyValueError::new_err(format!(
            "cannot answer from the opening books: {e} (book=False searches without them)"
        )),
        AnswerError::Search(e) | AnswerError::Searcher(e) => solve_error(e),
    }
}

/// The levels of each board size and rule set, opened on first use (`None`: the directory has
/// none for it).
type Opened = HashMap<(usize, Rules), Option<Arc<Levels>>>;

/// The opening books of each game (houses, rules, seeds in all), read on first use.
type Books = HashMap<(usize, Rules, u32), Arc<kalah::book::Book>>;

/// Endgame databases of a directory (see the stub).
#[pyclass(module = "kalah")]
struct Tablebase {
    dir: PathBuf,
    open: Mutex<Opened>,
    books: Mutex<Books>,
}

impl Tablebase {
    fn levels(&self, houses: usize, rules: Rules) -> PyResult<Arc<Levels>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = open.get(&(houses, rules)) {
            return found.clone().ok_or_else(|| self.none_for(houses, rules));
        }
        let found = open_levels(&self.dir, houses, rules, false)?;
        open.insert((houses, rules), found.clone());
        found.ok_or_else(|| self.none_for(houses, rules))
    }

    /// The opening books of `game`: the shipped ones and the checked ledgers of the directory
    /// (as `kalah query` reads them).
    fn books(&self, game: (usize, Rules, u32)) -> PyResult<Arc<kalah::book::Book>> {
        let mut books = self.books.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = books.get(&game) {
            return Ok(found.clone());
        }
        let found = kalah::book::Book::open(true, Some(game), Some(&self.dir)).map_err(|e| {
            PyValueError::new_err(format!(
                "cannot read the opening books: {e} (book=False reads the levels alone)"
            ))
        })?;
        let found = Arc::new(found);
        books.insert(game, found.clone());
        Ok(found)
    }

    fn none_for(&self, houses: usize, rules: Rules) -> PyErr {
        DatabaseError::new_err(format!(
            "no levels for {houses} houses, {rules} rules in {} (kalah.build_db builds them)",
            self.dir.display()
        ))
    }
}

#[pymethods]
impl Tablebase {
    #[new]
    #[pyo3(signature = (dir = None))]
    fn new(dir: Option<PathBuf>) -> PyResult<Tablebase> {
        let dir = dir_or_home(dir)?;
        if !dir.is_dir() {
            return Err(DatabaseError::new_err(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        Ok(Tablebase {
            dir,
            open: Mutex::new(HashMap::new()),
            books: Mutex::new(HashMap::new()),
        })
    }

    /// The directory.
    #[getter]
    fn dir(&self) -> PathBuf {
        self.dir.clone()
    }

    /// The top level (seeds on the board) held for this board and rules.
    #[pyo3(signature = (houses, rules = "standard"))]
    fn max_level(&self, houses: usize, rules: &str) -> PyResult<u32> {
        Ok(self.levels(houses, rules_of(rules)?)?.max_level())
    }

    /// The exact value of `position` for its side to move, stores included (South's margin
    /// once the game is over); `None` above the top level.
    fn value(&self, position: &Position) -> PyResult<Option<i32>> {
        let p = position.inner;
        let (houses, rules) = with_position!(p, q => (q.houses_per_side(), q.rules()));
        let levels = self.levels(houses, rules)?;
        with_position!(p, q => {
            if let Some(o) = q.outcome() {
                return Ok(Some(o.margin(Side::South)));
            }
            let f = levels.probe_checked(q.board()).map_err(db_error)?;
            Ok(f.map(|f| f + q.store_difference()))
        })
    }

    /// What the levels, else the opening books and ledgers (unless `book` is false) know of
    /// `position` ([`kalah::answer`], no search): its value or bounds, every move's; `None`
    /// where neither knows anything.
    #[pyo3(signature = (position, *, book = true))]
    fn analyze(
        &self,
        py: Python<'_>,
        position: &Position,
        book: bool,
    ) -> PyResult<Option<Solution>> {
        let p = position.inner;
        let (houses, rules) = with_position!(p, q => (q.houses_per_side(), q.rules()));
        let levels = self.levels(houses, rules);
        let books = match book {
            true => Some(self.books(with_position!(p, q => kalah::book::game_of(&q)))?),
            false => None,
        };
        let sources = Sources {
            levels: levels.as_ref().ok().map(|l| &**l),
            ledgers: books.as_deref(),
        };
        let a = with_position!(p, q => look_up(&q, &sources, Want::EveryMove)).map_err(
            |e| match e {
                AnswerError::Levels(e) => db_error(e),
                other => {
                    PyValueError::new_err(format!("{other} (book=False reads the levels alone)"))
                }
            },
        )?;
        if a.source == kalah::answer::Source::Seeds {
            // Nothing known: no levels for this board is an error, as before.
            levels?;
            return Ok(None);
        }
        Ok(Some(solution(py, &a)?))
    }

    /// The values of many boards at once (see the stub): an (N, 2m+2) array of unsigned
    /// counts, each row the mover's houses 1..m, the mover's store, the opponent's houses
    /// 1..m, the opponent's store; the values for the mover, as int16, in parallel.
    #[pyo3(signature = (boards, rules = "standard"))]
    fn values<'py>(
        &self,
        py: Python<'py>,
        boards: &Bound<'py, PyAny>,
        rules: &str,
    ) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let rules = rules_of(rules)?;
        let np = py.import("numpy")?;
        let array = counts_u32(py, &np, boards)?;
        let array: PyReadonlyArray2<'py, u32> = array.extract().map_err(|_| {
            PyValueError::new_err("boards must be a 2-dimensional array of unsigned counts")
        })?;
        let shape = array.shape();
        let (rows, cols) = (shape[0], shape[1]);
        if cols < 4 || cols % 2 != 0 || cols / 2 - 1 > 8 {
            return Err(PyValueError::new_err(format!(
                "each row holds 2m + 2 counts, m from 1 to 8 houses a side: not {cols}"
            )));
        }
        let m = cols / 2 - 1;
        let levels = self.levels(m, rules)?;
        let data = array
            .as_slice()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        // Every count fits (counts_u32); a row's seeds in all must fit a game too.
        for row in 0..rows {
            let total: u64 = data[row * cols..(row + 1) * cols]
                .iter()
                .map(|&x| u64::from(x))
                .sum();
            if total > u64::from(kalah::MAX_SEEDS) {
                return Err(PyValueError::new_err(format!(
                    "row {row}: {total} seeds in all is more than the supported {}",
                    kalah::MAX_SEEDS
                )));
            }
        }
        let mut out = vec![0i32; rows];
        let failed: Mutex<Option<(usize, String)>> = Mutex::new(None);
        let note = |row: usize, why: String| {
            let mut f = failed.lock().unwrap_or_else(|e| e.into_inner());
            if f.as_ref().is_none_or(|(r, _)| row < *r) {
                *f = Some((row, why));
            }
        };
        let cancel = AtomicBool::new(false);
        let work = || {
            out.par_chunks_mut(4096)
                .enumerate()
                .for_each(|(chunk, values)| {
                    if cancel.load(Ordering::Relaxed) {
                        return;
                    }
                    for (i, value) in values.iter_mut().enumerate() {
                        let row = chunk * 4096 + i;
                        let r = &data[row * cols..(row + 1) * cols];
                        let (mover, opponent) = (&r[..m], &r[m + 1..2 * m + 1]);
                        let Some(board) = Board::<Narrow>::from_houses(mover, opponent) else {
                            note(row, "more seeds than a board of the databases holds".into());
                            return;
                        };
                        match levels.probe(board) {
                            Ok(Some(f)) => {
                                *value = f + r[m] as i32 - r[2 * m + 1] as i32;
                            }
                            Ok(None) => {
                                note(
                                    row,
                                    format!(
                                        "{} seeds on the board, above the top level {}",
                                        board.seeds(),
                                        levels.max_level()
                                    ),
                                );
                                return;
                            }
                            Err(e) => {
                                note(row, format!("database: {e}"));
                                return;
                            }
                        }
                    }
                });
        };
        interruptible(
            py,
            work,
            &|| cancel.store(true, Ordering::Relaxed),
            &mut |_| Ok(()),
        )?;
        if let Some((row, why)) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(match why.strip_prefix("database: ") {
                Some(e) => DatabaseError::new_err(format!("row {row}: {e}")),
                None => PyValueError::new_err(format!("row {row}: {why}")),
            });
        }
        levels.unchanged().map_err(db_error)?;
        Ok(PyArray1::from_vec(py, out))
    }

    fn __repr__(&self) -> String {
        format!("Tablebase({:?})", self.dir.display().to_string())
    }
}

/// `boards` as a C-contiguous 2-dimensional array of `uint32`, every count checked first as
/// `Position.from_list` checks them: integers only (no floats, not even whole ones; no
/// booleans), none negative, none above the seeds a game holds; the first that is not is a
/// `ValueError` naming its row and column. Nothing is wrapped or rounded.
fn counts_u32<'py>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    boards: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let array = np.call_method1("asarray", (boards,))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim != 2 {
        return Err(PyValueError::new_err(format!(
            "boards must be a 2-dimensional array (one board a row), not one of {ndim} dimensions"
        )));
    }
    let size: usize = array.getattr("size")?.extract()?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let name: String = dtype.getattr("name")?.str()?.extract()?;
    // The first (row, column) where `mask` (a boolean array of `array`'s shape) is true.
    let first = |mask: Bound<'py, PyAny>| -> PyResult<Option<(usize, usize)>> {
        let at = np.call_method1("argwhere", (mask,))?;
        let n: usize = at.len()?;
        if n == 0 {
            return Ok(None);
        }
        let rc: Vec<usize> = at.get_item(0)?.call_method0("tolist")?.extract()?;
        Ok(Some((rc[0], rc[1])))
    };
    let item = |rc: (usize, usize)| -> PyResult<String> {
        array.get_item(rc)?.repr()?.extract::<String>()
    };
    if kind != "i" && kind != "u" {
        let at = if kind == "f" && size > 0 {
            let whole = np.call_method1("equal", (&array, np.call_method1("floor", (&array,))?))?;
            first(whole.call_method0("__invert__")?)?.or(Some((0, 0)))
        } else if size > 0 {
            Some((0, 0))
        } else {
            None
        };
        let detail = match at {
            Some(rc) => format!(" (row {}, column {}: {})", rc.0, rc.1, item(rc)?),
            None => String::new(),
        };
        return Err(PyValueError::new_err(format!(
            "counts must be integers, and this array holds {name}{detail}"
        )));
    }
    // (An empty array passes the checks below: no entry is negative or too large.)
    if kind == "i" {
        if let Some(rc) = first(array.call_method1("__lt__", (0,))?)? {
            return Err(PyValueError::new_err(format!(
                "row {}, column {}: a negative count, {}",
                rc.0,
                rc.1,
                item(rc)?
            )));
        }
    }
    if let Some(rc) = first(array.call_method1("__gt__", (kalah::MAX_SEEDS,))?)? {
        return Err(PyValueError::new_err(format!(
            "row {}, column {}: {} seeds, more than a game holds ({})",
            rc.0,
            rc.1,
            item(rc)?,
            kalah::MAX_SEEDS
        )));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", np.getattr("uint32")?)?;
    np.call_method("ascontiguousarray", (&array,), Some(&kwargs))
}

/// Builds the levels 0..=max_seeds (see the stub).
#[pyfunction]
#[pyo3(signature = (houses, max_seeds, rules = "standard", dir = None, progress = None, threads = None))]
fn build_db(
    py: Python<'_>,
    houses: usize,
    max_seeds: u32,
    rules: &str,
    dir: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    threads: Option<usize>,
) -> PyResult<PathBuf> {
    let rules = rules_of(rules)?;
    let dir = dir_or_home(dir)?;
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if threads == 0 || threads > 1024 {
        return Err(PyValueError::new_err("threads must be 1 to 1024"));
    }
    kalah::db::Layout::checked(houses, max_seeds)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let cancel = AtomicBool::new(false);
    let events: Mutex<Vec<(u32, u64, u64, bool)>> = Mutex::new(Vec::new());
    let target = dir.clone();
    let result = interruptible(
        py,
        || {
            pool.install(|| {
                kalah::db::build(&target, houses, rules, max_seeds, &cancel, &|p| {
                    events
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((p.level, p.done, p.total, p.finished));
                })
            })
        },
        &|| cancel.store(true, Ordering::Relaxed),
        &mut |py| {
            let drained: Vec<_> =
                std::mem::take(&mut *events.lock().unwrap_or_else(|e| e.into_inner()));
            if let Some(cb) = &progress {
                for (level, done, total, finished) in drained {
                    cb.call1(py, (level, done, total, finished))?;
                }
            }
            Ok(())
        },
    )?;
    match result {
        Ok(_) => Ok(dir),
        Err(DbError::Cancelled) => Err(PyRuntimeError::new_err("cancelled")),
        Err(e) => Err(db_error(e)),
    }
}

/// The Python module `kalah._kalah`.
#[pymodule]
fn _kalah(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Position>()?;
    m.add_class::<Solution>()?;
    m.add_class::<Tablebase>()?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(build_db, m)?)?;
    m.add("DatabaseError", m.py().get_type::<DatabaseError>())?;
    Ok(())
}
