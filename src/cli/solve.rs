//! `kalah solve`, `kalah analyze` and `kalah bench`: the exact solver.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use clap::builder::TypedValueParser as _;
use kalah::book::Book;
use kalah::db::Tablebase;
use kalah::{
    Algorithm, Analysis, AnyPosition, Lanes, Position, Rules, Solver, SolverConfig, Variant,
    with_position,
};
use serde_json::json;

use super::CliError;
use super::args::{
    PositionArg, RulesArg, header, parse_position, print_json, rules_parser, side_text,
};
use super::books::{BookArg, book_error, bounds_text, value_range};
use super::db_choice::DbChoice;
use super::progress::Indicator;
use super::table_file::TableFileArgs;

/// Search options shared by `solve` and `analyze`.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores]. The values
    /// found do not depend on it.
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,

    /// Transposition table size in MiB, 1 to the machine's physical memory. Default: for this
    /// board, the least of: by the seeds (512 MiB for Kalah(6,4), doubling every 6 seeds,
    /// 16 to 8192; with databases, by the seeds above them: 8 MiB for 24, 2048 for 32), room
    /// for every board that can occur (1 MiB for Kalah(2,2)), and a quarter of the physical
    /// memory. A table above 512 MiB is used from 64 MiB up, growing with the search.
    #[arg(long = "tt-mb", value_name = "MIB", value_parser = super::args::mib())]
    tt_mb: Option<usize>,

    /// Search algorithm: minimax (no pruning), memo (memoised minimax), alphabeta (no table),
    /// scout (NegaScout, no table) or mtdf (MTD(f) with the transposition table, move
    /// ordering and parallel search: the fastest). All are exact.
    #[arg(long, default_value = "mtdf", value_parser = clap::builder::PossibleValuesParser::new(Algorithm::ALL.map(Algorithm::as_str)).map(|s| s.parse::<Algorithm>().expect("listed")))]
    algorithm: Algorithm,

    #[command(flatten)]
    db: DbChoice,

    /// Instead of database files, first build the endgame levels up to this many seeds (0 to
    /// 64) in memory, and look boards up in them instead of searching [default: auto, when no
    /// database files are read]. Given, the database home is not read. `auto`: for boards of
    /// 40 seeds or more, the levels up to 30 seeds below the board (one more for every 5 seeds
    /// above 50), 2 GiB at most (Kalah(6,4): up to 18, 2.5 s to build, and the solve takes half
    /// the time); `off`: none. A number above the board's seeds builds the levels up to the
    /// board's seeds (the whole game: a strong solution). Only `--algorithm mtdf` probes
    /// databases.
    #[arg(
        long = "memory-db",
        value_name = "SEEDS|auto|off",
        value_parser = parse_memory_db,
        conflicts_with = "db"
    )]
    memory_db: Option<MemoryDb>,

    /// Print JSON (see docs/commands.md for the fields).
    #[arg(long)]
    json: bool,
}

/// `--memory-db`: which levels to build in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemoryDb {
    /// By the seeds on the board ([`kalah::search::auto_memory_db`]).
    Auto,
    /// None.
    Off,
    /// Levels up to this many seeds.
    UpTo(u32),
}

fn parse_memory_db(s: &str) -> Result<MemoryDb, String> {
    match s {
        "auto" => Ok(MemoryDb::Auto),
        "off" => Ok(MemoryDb::Off),
        _ => match s.parse::<u32>() {
            Ok(k) if k <= kalah::db::MAX_LEVEL => Ok(MemoryDb::UpTo(k)),
            Ok(_) => Err(format!(
                "levels go up to {} seeds at most",
                kalah::db::MAX_LEVEL
            )),
            Err(_) => Err("expected a number of seeds, `auto` or `off`".to_owned()),
        },
    }
}

/// The databases a search probes, if any.
pub struct SearchDb {
    /// The levels probed.
    tablebase: Option<Arc<Tablebase>>,
    /// Built in memory for this search, in this time (`None`: files, or none).
    built: Option<Duration>,
    /// Why there is none (when `tablebase` is `None`), for people.
    none: String,
    /// Whether --memory-db was given (not taken by default).
    asked: bool,
}

impl SearchDb {
    /// The line that says which databases the search probed.
    fn line(&self) -> String {
        match (&self.tablebase, self.built) {
            (Some(tablebase), Some(time)) => format!(
                "endgame levels 0..={} built in memory first in {:.3} s ({})",
                tablebase.max_level(),
                time.as_secs_f64(),
                if self.asked {
                    "--memory-db"
                } else {
                    "no database files found: --memory-db auto"
                }
            ),
            (Some(tablebase), None) => super::db_choice::files_line(tablebase),
            (None, _) => self.none.clone(),
        }
    }
}

impl SearchArgs {
    /// The database files read for `houses` houses under `rules`: none with --memory-db (its
    /// levels are built for the search instead) or --no-db.
    fn files(&self, houses: usize, rules: Rules) -> Result<Option<Arc<Tablebase>>, CliError> {
        match self.memory_db {
            Some(_) => Ok(None),
            None => self.db.open(houses, rules),
        }
    }

    /// The solver's settings and databases for a board of `seeds` seeds: `files`, the
    /// database files opened by [`SearchArgs::files`], if any; else the levels --memory-db asks
    /// for (by default when no files are read), built now (with a progress bar).
    fn prepare(
        &self,
        houses: usize,
        rules: Rules,
        seeds: u32,
        files: Option<Arc<Tablebase>>,
    ) -> Result<(SolverConfig, SearchDb), CliError> {
        if let Some(tablebase) = files {
            let config = self.config(houses, seeds, Some(tablebase.max_level()));
            let db = SearchDb {
                tablebase: Some(tablebase),
                built: None,
                none: String::new(),
                asked: false,
            };
            return Ok((config, db));
        }
        // Only MTD(f) probes databases; levels above the board's seeds are never reached.
        let top = match (self.algorithm, self.memory_db.unwrap_or(MemoryDb::Auto)) {
            (Algorithm::Mtdf, MemoryDb::Auto) => kalah::search::auto_memory_db(houses, seeds),
            (Algorithm::Mtdf, MemoryDb::UpTo(k)) => Some(k.min(seeds)),
            _ => None,
        };
        let config = self.config(houses, seeds, top);
        let db = match top {
            Some(top) => {
                let (tablebase, time) = build_in_memory(houses, rules, top, config.threads)?;
                SearchDb {
                    tablebase: Some(tablebase),
                    built: Some(time),
                    none: String::new(),
                    asked: self.memory_db.is_some(),
                }
            }
            None => SearchDb {
                tablebase: None,
                built: None,
                none: match self.memory_db {
                    Some(_) => "no endgame database (--memory-db)".to_owned(),
                    None => self.db.none_found(houses, rules),
                },
                asked: self.memory_db.is_some(),
            },
        };
        Ok((config, db))
    }

    /// The solver's settings for a board of `houses` houses a side with `seeds` seeds,
    /// searched with databases up to `db_top` seeds if any.
    fn config(&self, houses: usize, seeds: u32, db_top: Option<u32>) -> SolverConfig {
        let default = SolverConfig::default();
        SolverConfig {
            tt_mib: self
                .tt_mb
                .unwrap_or_else(|| kalah::search::auto_table_mib(houses, seeds, db_top)),
            algorithm: self.algorithm,
            threads: self.threads.unwrap_or(default.threads),
            ..default
        }
    }

    /// The solver for `p` with its settings and databases ([`SearchArgs::prepare`]), fitted
    /// to --table-file and with that table loaded ([`solver_for`]).
    fn solver<L: Lanes>(
        &self,
        p: &Position<L>,
        table: &TableFileArgs,
    ) -> Result<(Solver, SolverConfig, SearchDb), CliError> {
        let files = self.files(p.houses_per_side(), p.rules())?;
        self.solver_given(p, table, files)
    }

    /// [`SearchArgs::solver`] with the database files already opened ([`SearchArgs::files`]).
    fn solver_given<L: Lanes>(
        &self,
        p: &Position<L>,
        table: &TableFileArgs,
        files: Option<Arc<Tablebase>>,
    ) -> Result<(Solver, SolverConfig, SearchDb), CliError> {
        let (houses, rules, seeds) = (p.houses_per_side(), p.rules(), p.seeds_on_board());
        let (mut config, db) = self.prepare(houses, rules, seeds, files)?;
        table.fit(&mut config, houses, rules, self.tt_mb)?;
        let solver = solver_for(p, config, &db, table)?;
        Ok((solver, config, db))
    }
}

/// Solve Kalah(M,N) from the start: the first player's exact margin, every optimal first move
/// and a perfect game (the value of each first move too with --all-moves).
///
/// The value is the final store difference, South (who moves first) minus North, when both
/// play perfectly: positive means South wins.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Houses a side, M (1 to 12; exact solving is practical up to about 6).
    #[arg(long, short = 'm', value_parser = super::args::count::<usize>(super::args::HOUSES))]
    houses: usize,
    /// Seeds a house at the start, N (1 to 32767, and 2·M·N at most 65535).
    #[arg(long, short = 'n', value_parser = super::args::count::<u64>(super::args::SEEDS))]
    seeds: u64,
    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,
    /// Also compute the exact value of every first move, not only which are optimal (each bad
    /// move needs its own proof: several times the work of the solve).
    #[arg(long, conflicts_with = "value_only")]
    all_moves: bool,
    /// Only the value: no optimal moves, no perfect line (`best`, `moves` and `pv` are empty).
    #[arg(long)]
    value_only: bool,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    table: TableFileArgs,
}

/// The exact value of a position and of every legal move.
///
/// Values are final store differences for the side to move, stores included; a move's value
/// is that of the same side after playing it and continuing perfectly.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: RulesArg,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    book: BookArg,
    #[command(flatten)]
    table: TableFileArgs,
}

/// The exact value of a position and of every legal move, read from the endgame database when
/// the position has few enough seeds on the board (at once), or from an opening book when one
/// proves it (at once; see --no-book), searched otherwise (probing the database inside the
/// search).
///
/// Same output as `analyze`, plus "source": "database", "ledger" or "search".
///
/// POSITION `-` reads positions from stdin, one a line (blank lines and `#` comments skipped),
/// and answers each in turn, one JSON object a line with --json: the databases are opened once
/// and the search's table stays warm, for thousands of positions in one run. A line that
/// cannot be answered gets `{"line": N, "error": "..."}` (or a message on stderr) and the
/// batch goes on; the exit code is then 2. Two things end the batch instead, after the lines
/// answered so far (exit code 1): a line with no line break within 64 MiB (the input is not
/// lines of text), and a failure of the databases or of the machine, such as a damaged block
/// of a level (no later line could be trusted to it: repair the level, see `kalah db verify`). One batch, one board size: the first position sets
/// the houses (and, with --memory-db, the levels built); the table is at least 512 MiB.
#[derive(Args, Debug)]
pub struct QueryArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: RulesArg,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    book: BookArg,
}

pub fn run_query(args: QueryArgs) -> Result<(), CliError> {
    if args.position.position == "-" {
        return query_batch(&args);
    }
    let pos = args.position.parse(args.rules.rules)?;
    with_position!(pos, p => query_in_batch(&p, &args, &mut None, false))
}

/// What `kalah query -` keeps from one position to the next: set up for the first position
/// (its houses, and with --memory-db its seeds), one solver whose table stays warm.
struct Batch {
    houses: usize,
    /// The database files read (none with --memory-db).
    files: Option<Arc<Tablebase>>,
    /// The search's settings and databases, set up for the first position searched (levels
    /// built in memory only then: positions answered at once never wait for them).
    search: Option<(SolverConfig, SearchDb)>,
    solver: Option<Solver>,
    /// The opening books of the batch's board size and rules.
    book: Book,
}

/// `kalah query -`: the positions on stdin, one a line (blank lines and lines starting with
/// `#` skipped), each answered as `query` answers one. A line that cannot be answered gets an
/// error (on stdout as `{"line": N, "error": ...}` with --json, else on stderr) and the next
/// lines go on; the exit code is then 2.
fn query_batch(args: &QueryArgs) -> Result<(), CliError> {
    use kalah::text::{MAX_LINE, read_line};
    let json = args.search.json;
    let mut batch: Option<Batch> = None;
    let mut failed = 0;
    let mut input = std::io::stdin().lock();
    // Lines are read in bounded memory: an over-long or non-UTF-8 line is one error.
    for i in 0u64.. {
        let line = read_line(&mut input, MAX_LINE).map_err(|e| {
            let message = format!("line {}: cannot read the input: {e}", i + 1);
            match e.kind() {
                std::io::ErrorKind::InvalidData => CliError::input(message),
                _ => CliError::failure(message),
            }
        })?;
        let Some(line) = line else { break };
        let answered = line
            .into_text(MAX_LINE)
            .map_err(CliError::input)
            .and_then(|line| {
                let text = line.trim();
                if text.is_empty() || text.starts_with('#') {
                    return Ok(());
                }
                let pos = parse_position(text, args.position.to_move, args.rules.rules)?;
                with_position!(pos, p => query_in_batch(&p, args, &mut batch, true))
            });
        if let Err(e) = answered {
            failed += 1;
            if json {
                print_json(&json!({"line": i + 1, "error": e.message}));
            } else {
                eprintln!("kalah: line {}: {}", i + 1, e.message);
            }
            // A failure of the machine, not of the line, ends the batch.
            if e.code != 2 {
                return Err(e);
            }
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(CliError::input(format!(
            "{n} line{} of the input could not be answered",
            if n == 1 { "" } else { "s" }
        ))),
    }
}

/// One position of a batch (or a batch of one: `kalah query POSITION`): from the database
/// files at once if they hold them, else searched (probing them). Levels built in memory
/// (--memory-db) serve the search only. `many`: more positions may follow, so the table is
/// not sized for this one alone (at least [`kalah::search::DEFAULT_TT_MIB`] unless --tt-mb).
fn query_in_batch<L: Lanes>(
    p: &Position<L>,
    query: &QueryArgs,
    batch: &mut Option<Batch>,
    many: bool,
) -> Result<(), CliError> {
    let args = &query.search;
    let started = Instant::now();
    let houses = p.houses_per_side();
    if batch.is_none() {
        let files = args.files(houses, p.rules())?;
        let book = query.book.open(&args.db, Some(kalah::book::game_of(p)))?;
        *batch = Some(Batch {
            houses,
            files,
            search: None,
            solver: None,
            book,
        });
    }
    let batch = batch.as_mut().expect("just set up");
    if houses != batch.houses {
        return Err(CliError::input(format!(
            "{houses} houses a side, but the batch's first position has {}: one batch, one \
             board size",
            batch.houses
        )));
    }
    if let Some(db) = batch.files.as_deref() {
        let found = db
            .analyze(p)
            .map_err(|e| CliError::failure(format!("cannot read the database: {e}")))?;
        if let Some(a) = found {
            let answer = Answer {
                analysis: &a,
                elapsed: started.elapsed(),
                nodes: 0,
                source: Source::Database(db),
                bounds: None,
            };
            print_analysis(p, None, true, &answer, args.json);
            return Ok(());
        }
    }
    if !query.book.no_book {
        let game = kalah::book::game_of(p);
        batch
            .book
            .add_shipped(Some(game))
            .map_err(|e| CliError::failure(format!("cannot read the opening books: {e}")))?;
    }
    // In a batch the bounds go in the JSON only: a line on stderr a position would bury the
    // errors there.
    let quiet = args.json || many;
    let Some(bounds) = from_book(
        p,
        &batch.book,
        batch.files.as_deref(),
        started,
        args.json,
        quiet,
    )?
    else {
        return Ok(());
    };
    if batch.search.is_none() {
        let files = batch.files.clone();
        let (mut config, db) = args.prepare(houses, p.rules(), p.seeds_on_board(), files)?;
        if many && args.tt_mb.is_none() {
            config.tt_mib = config.tt_mib.max(kalah::search::DEFAULT_TT_MIB);
        }
        batch.search = Some((config, db));
    }
    let (config, db) = batch.search.as_ref().expect("just set up");
    // A query keeps no table file.
    let no_file = TableFileArgs::default();
    if batch.solver.is_none() {
        batch.solver = Some(solver_for(p, *config, db, &no_file)?);
    }
    let solver = batch.solver.as_ref().expect("just made");
    let (a, elapsed, nodes) = solve_with_progress(p, true, solver, &no_file)?;
    let answer = Answer {
        analysis: &a,
        elapsed,
        nodes,
        source: Source::Search(config, db, args.tt_mb.is_some()),
        bounds,
    };
    print_analysis(p, None, true, &answer, args.json);
    Ok(())
}

pub fn run_solve(args: SolveArgs) -> Result<(), CliError> {
    let variant = Variant::new(args.houses, args.seeds, args.rules)
        .map_err(|e| CliError::input(format!("invalid variant: {e}")))?;
    let pos = AnyPosition::start(variant);
    if args.value_only {
        with_position!(pos, p => report_value(&p, variant, &args.search, &args.table))?;
    } else {
        let all = args.all_moves;
        with_position!(pos, p => report(&p, Some(variant), all, None, &args.search, &args.table))?;
    }
    args.table.check_saved()
}

pub fn run_analyze(args: AnalyzeArgs) -> Result<(), CliError> {
    let pos = args.position.parse(args.rules.rules)?;
    with_position!(pos, p => report(&p, None, true, Some(&args.book), &args.search, &args.table))?;
    args.table.check_saved()
}

/// Builds the levels `0..=top` in memory on `threads` threads, with progress on stderr
/// ([`Indicator`]); returns them and the time the build took.
pub fn build_in_memory(
    houses: usize,
    rules: Rules,
    top: u32,
    threads: usize,
) -> Result<(Arc<Tablebase>, Duration), CliError> {
    let fail = |e: String| {
        CliError::failure(format!(
            "cannot build the endgame levels up to {top} seeds in memory (--memory-db): {e}"
        ))
    };
    // starts[k]: the entries of the levels below level k; starts[top + 1]: all of them.
    let starts: Vec<u64> = std::iter::once(0)
        .chain((0..=top).scan(0, |sum, k| {
            *sum += kalah::db::level_len(houses, k);
            Some(*sum)
        }))
        .collect();
    let indicator = Indicator::bar(
        format!("levels 0..={top} in memory"),
        starts[top as usize + 1],
        "entries",
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let started = Instant::now();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let tablebase = pool
        .install(|| {
            kalah::db::build_in_memory(houses, rules, top, &cancel, &|p| {
                indicator.set_done(starts[p.level as usize] + p.done)
            })
        })
        .map_err(|e| fail(e.to_string()))?;
    indicator.finish();
    Ok((Arc::new(tablebase), started.elapsed()))
}

/// Solves `p` with `solver` and progress on stderr ([`with_progress`]); returns the analysis,
/// the time and the nodes of this solve.
fn solve_with_progress<L: Lanes>(
    p: &Position<L>,
    all_moves: bool,
    solver: &Solver,
    table: &TableFileArgs,
) -> Result<(Analysis, Duration, u64), CliError> {
    let (analysis, elapsed, nodes) = with_progress(p, solver, table, |on_step| {
        solver.analyze(p, all_moves, on_step)
    });
    let analysis = analysis.map_err(|e| CliError::failure(format!("cannot solve: {e}")))?;
    Ok((analysis, elapsed, nodes))
}

/// Runs `work` (a solve of `p` by `solver`, given the callback for its MTD(f) steps) with
/// progress on stderr ([`Indicator`]: the nodes, their rate and the last step's bounds; on a
/// terminal also a line per step above the spinner); with
/// --table-file, the table is saved every --save-every minutes and at the end, and Ctrl-C saves
/// it before the process ends (exit code 130). Returns `work`'s result, its time and the nodes
/// it searched.
fn with_progress<L: Lanes, T>(
    p: &Position<L>,
    solver: &Solver,
    table: &TableFileArgs,
    work: impl FnOnce(&mut dyn FnMut(&kalah::Progress)) -> T,
) -> (T, Duration, u64) {
    let nodes_before = solver.nodes();
    let indicator = Indicator::spinner("solving", "nodes");
    let started = Instant::now();
    let stores = p.store_difference();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (result, elapsed) = std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            let mut saved = Instant::now();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                indicator.set_done(solver.nodes() - nodes_before);
                if kalah::interrupted() {
                    indicator.suspend(|| {
                        eprintln!("interrupted: saving the table first");
                        if let Some(line) = table.save(solver) {
                            match table.check_saved() {
                                Ok(()) => eprintln!("{line}; the same command resumes from it"),
                                Err(_) => eprintln!("{line}"),
                            }
                        }
                        std::process::exit(130);
                    });
                }
                if table
                    .period()
                    .is_some_and(|period| saved.elapsed() >= period)
                {
                    // Said even when stderr is a log, not a terminal.
                    if let Some(line) = table.save(solver) {
                        indicator.println(line);
                    }
                    saved = Instant::now();
                }
                // Woken at once when the solve ends.
                std::thread::park_timeout(Duration::from_millis(200));
            }
        });
        let mut on_step = |s: &kalah::Progress| {
            let depth = s
                .depth
                .map_or("exact search".to_owned(), |d| format!("depth {d}"));
            let bounds = format!("value in [{}, {}]", stores + s.lower, stores + s.upper);
            indicator.set_message(format!("{depth}: {bounds}"));
            indicator.note(format!(
                "  {depth}: {bounds} for the side to move, {} nodes, {:.1} s",
                s.nodes,
                s.elapsed.as_secs_f64()
            ));
        };
        let result = work(&mut on_step);
        let elapsed = started.elapsed();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        ticker.thread().unpark();
        let _ = ticker.join();
        (result, elapsed)
    });
    indicator.finish();
    if let Some(line) = table.save(solver) {
        // A failed last save is the command's error (check_saved), said once, not here too.
        if table.check_saved().is_ok() {
            eprintln!("{line}");
        }
    }
    (result, elapsed, solver.nodes() - nodes_before)
}

/// A solver for `p` with `config` and the databases `db`, with --table-file's table loaded
/// into it (after `config` was fitted to the file: see [`TableFileArgs::fit`]). With a table
/// file, Ctrl-C from now on only sets a flag, which [`with_progress`] answers by saving.
fn solver_for<L: Lanes>(
    p: &Position<L>,
    config: SolverConfig,
    db: &SearchDb,
    table: &TableFileArgs,
) -> Result<Solver, CliError> {
    let tablebase = db.tablebase.clone();
    let solver = new_solver(p.houses_per_side(), p.rules(), config, tablebase)?;
    if table.period().is_some() {
        kalah::catch_interrupt();
        solver.use_whole_table();
    }
    if let Some(line) = table.load(&solver)? {
        eprintln!("{line}");
    }
    Ok(solver)
}

/// Answers `p` (the start of `variant` if given) by a search, or at once from the opening
/// books of `book` if given and they prove it (`analyze`).
fn report<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    all_moves: bool,
    book: Option<&BookArg>,
    args: &SearchArgs,
    table: &TableFileArgs,
) -> Result<(), CliError> {
    let started = Instant::now();
    // Opened once: for the books' answer, then for the search.
    let files = args.files(p.houses_per_side(), p.rules())?;
    let mut bounds = None;
    if let Some(book) = book {
        let book = book.open(&args.db, Some(kalah::book::game_of(p)))?;
        match from_book(p, &book, files.as_deref(), started, args.json, args.json)? {
            Some(b) => bounds = b,
            None => return Ok(()),
        }
    }
    let (solver, config, db) = args.solver_given(p, table, files)?;
    let (a, elapsed, nodes) = solve_with_progress(p, all_moves, &solver, table)?;
    let answer = Answer {
        analysis: &a,
        elapsed,
        nodes,
        source: Source::Search(&config, &db, args.tt_mb.is_some()),
        bounds,
    };
    print_analysis(p, variant, all_moves, &answer, args.json);
    Ok(())
}

/// Answers `p` from `book` (the levels `db` giving the boards they hold) if it proves the value
/// of `p` and of each of its moves, printing the answer (as JSON with `json`): then `None`.
/// Otherwise the bounds the book proves on `p`'s value, if any, said on stderr (unless
/// `quiet`) before the search that follows.
fn from_book<L: Lanes>(
    p: &Position<L>,
    book: &kalah::book::Book,
    db: Option<&Tablebase>,
    started: Instant,
    json: bool,
    quiet: bool,
) -> Result<Option<Option<kalah::prove::fact::Bounds>>, CliError> {
    if let Some(found) = book.analyze(p, db).map_err(book_error)? {
        let answer = Answer {
            analysis: &found.analysis,
            elapsed: started.elapsed(),
            nodes: 0,
            source: Source::Ledger(book.sources(), found.pv_complete),
            bounds: None,
        };
        print_analysis(p, None, true, &answer, json);
        return Ok(None);
    }
    let bounds = book.bounds(p);
    if let (Some(b), false) = (bounds, quiet) {
        eprintln!(
            "the ledgers prove its value {}; searching for the exact value",
            bounds_text(b, value_range(p))
        );
    }
    Ok(Some(bounds))
}

/// Where an analysis came from.
pub enum Source<'a> {
    /// The search, with these settings and databases (and whether --tt-mb gave the table).
    Search(&'a SolverConfig, &'a SearchDb, bool),
    /// The database files.
    Database(&'a Tablebase),
    /// The opening books (the ledgers read), and whether the perfect line reaches the end.
    Ledger(&'a [String], bool),
}

/// An analysis and what it cost.
pub struct Answer<'a> {
    pub analysis: &'a Analysis,
    pub elapsed: Duration,
    pub nodes: u64,
    pub source: Source<'a>,
    /// Bounds the ledgers proved on the value before it was searched.
    pub bounds: Option<kalah::prove::fact::Bounds>,
}

/// `writeln!` into a `String` (which cannot fail).
macro_rules! outln {
    ($text:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($text, $($arg)*);
    }};
}

/// Prints an analysis of `p`, as JSON or for people.
pub fn print_analysis<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    all_moves: bool,
    answer: &Answer<'_>,
    json: bool,
) {
    let (a, elapsed, nodes) = (answer.analysis, answer.elapsed, answer.nodes);
    if let Some(b) = answer
        .bounds
        .filter(|b| a.value < b.lower || a.value > b.upper)
    {
        eprintln!(
            "warning: the search's value {:+} is outside the bounds a ledger proves, [{}, {}]: a \
             ledger is wrong (kalah prove --check finds which fact)",
            a.value, b.lower, b.upper
        );
    }
    if json {
        let mut out = analysis_json(p, variant, a);
        match answer.source {
            Source::Search(config, db, given) => {
                add_search_fields(&mut out, nodes, elapsed, config, db, given);
                out["source"] = json!("search");
            }
            Source::Database(db) => {
                out["nodes"] = json!(0);
                out["time_ms"] = json!(elapsed.as_millis() as u64);
                out["source"] = json!("database");
                out["db_max_seeds"] = json!(db.max_level());
                out["db"] = super::db_choice::files_json(Some(db));
            }
            Source::Ledger(books, pv_complete) => {
                out["nodes"] = json!(0);
                out["time_ms"] = json!(elapsed.as_millis() as u64);
                out["source"] = json!("ledger");
                out["books"] = json!(books);
                out["pv_complete"] = json!(pv_complete);
            }
        }
        if let Some(b) = answer.bounds {
            out["ledger_bounds"] = json!({"lower": b.lower, "upper": b.upper});
        }
        print_json(&out);
        return;
    }
    // One write for the whole answer: `query -` answers thousands a second.
    let mut text = String::new();
    let name = variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds()));
    let pv: Vec<String> = a.pv.iter().map(|t| t.to_string()).collect();
    let title = name.unwrap_or_else(|| format!("{p} ({} houses a side)", p.houses_per_side()));
    outln!(
        text,
        "{title}, {} rules, {}",
        p.rules(),
        side_text(a.to_move)
    );
    let verdict = match (a.to_move, a.value) {
        (None, v) => format!("game over: South's margin {v:+}"),
        (Some(side), v) if v > 0 => format!("{side} wins by {v}"),
        (Some(side), v) if v < 0 => format!("{side} loses by {}", -v),
        (Some(_), _) => "draw".to_owned(),
    };
    outln!(text, "value: {:+} ({verdict}), stores included", a.value);
    if !a.moves.is_empty() {
        let best: Vec<String> = a.best.iter().map(|m| m.to_string()).collect();
        outln!(text, "best moves: {}", best.join(" "));
        if all_moves {
            let values: Vec<String> = a
                .moves
                .iter()
                .map(|m| format!("{}:{:+}", m.mv, m.value))
                .collect();
            outln!(text, "move values: {}", values.join("  "));
        }
        let partial = matches!(answer.source, Source::Ledger(_, false));
        let note = if partial {
            " (as far as the books and the levels know it)"
        } else {
            ""
        };
        outln!(text, "perfect line: {}{note}", pv.join(" "));
    }
    match answer.source {
        Source::Search(config, db, given) => {
            let rate = nodes as f64 / elapsed.as_secs_f64().max(1e-9);
            outln!(
                text,
                "{nodes} nodes in {:.3} s ({:.1} M nodes/s), {} thread{}, {}, {}",
                elapsed.as_secs_f64(),
                rate / 1e6,
                config.threads,
                if config.threads == 1 { "" } else { "s" },
                table_text(config, given),
                config.algorithm
            );
            outln!(text, "{}", db.line());
        }
        Source::Database(db) => outln!(
            text,
            "read from the database (levels 0..={} in {}) in {:.3} ms",
            db.max_level(),
            db.dir().display(),
            elapsed.as_secs_f64() * 1e3
        ),
        Source::Ledger(books, _) => outln!(
            text,
            "read from the opening books ({}) in {:.3} ms",
            books.join(", "),
            elapsed.as_secs_f64() * 1e3
        ),
    }
    print!("{text}");
}

/// The JSON of an analysis of `p` (of the start of `variant` if given): the [`header`], then
/// `variant`, `value`, `best`, `moves` (house order), `pv` and, with a variant, `seeds`.
pub fn analysis_json<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    a: &Analysis,
) -> serde_json::Value {
    let mut out = header(p);
    out["variant"] = json!(variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds())));
    out["value"] = json!(a.value);
    out["best"] = json!(a.best.iter().map(|m| m.house()).collect::<Vec<_>>());
    out["moves"] = a
        .moves
        .iter()
        .map(|m| json!({"house": m.mv.house(), "value": m.value}))
        .collect();
    out["pv"] = json!(a.pv.iter().map(|t| t.to_string()).collect::<Vec<_>>());
    if let Some(v) = variant {
        out["seeds"] = v.seeds().into();
    }
    out
}

/// A solver for `houses` and `rules` probing `db` if given, or the CLI's error if it cannot
/// start.
pub(super) fn new_solver(
    houses: usize,
    rules: Rules,
    config: SolverConfig,
    db: Option<Arc<Tablebase>>,
) -> Result<Solver, CliError> {
    let fail = |e: kalah::SolveError| CliError::failure(format!("cannot start the solver: {e}"));
    let solver = Solver::new(houses, rules, config).map_err(fail)?;
    match db {
        Some(db) => solver.with_tablebase(db).map_err(fail),
        None => Ok(solver),
    }
}

/// The table size for people, and where it came from: `64 MiB table (--tt-mb)`, or `1 MiB
/// table (for this board)` when sized by the board and the machine
/// ([`kalah::search::auto_table_mib`]).
fn table_text(config: &SolverConfig, given: bool) -> String {
    let from = if given { "--tt-mb" } else { "for this board" };
    format!("{} MiB table ({from})", config.tt_mib)
}

/// The search statistics and settings at the end of a solver's JSON answer.
fn add_search_fields(
    out: &mut serde_json::Value,
    nodes: u64,
    elapsed: Duration,
    config: &SolverConfig,
    db: &SearchDb,
    tt_given: bool,
) {
    out["nodes"] = json!(nodes);
    out["time_ms"] = json!(elapsed.as_millis() as u64);
    out["threads"] = json!(config.threads);
    out["tt_mb"] = json!(config.tt_mib);
    out["tt_mb_from"] = json!(if tt_given { "option" } else { "board" });
    out["algorithm"] = json!(config.algorithm.as_str());
    let tablebase = db.tablebase.as_deref();
    out["db_max_seeds"] = json!(tablebase.map(Tablebase::max_level));
    out["db_in_memory"] = json!(db.built.is_some());
    out["db_build_ms"] = json!(db.built.map(|t| t.as_millis() as u64));
    out["db"] = super::db_choice::files_json(tablebase);
}

/// `solve --value-only`: the start position's value alone.
fn report_value<L: Lanes>(
    p: &Position<L>,
    variant: Variant,
    args: &SearchArgs,
    table: &TableFileArgs,
) -> Result<(), CliError> {
    let (solver, config, db) = args.solver(p, table)?;
    let (f, elapsed, nodes) = with_progress(p, &solver, table, |on_step| {
        solver.exact(p.board(), on_step)
    });
    let f = f.map_err(|e| CliError::failure(format!("cannot solve: {e}")))?;
    let value = p.store_difference() + f;
    let name = format!("Kalah({},{})", variant.houses(), variant.seeds());
    if args.json {
        let mut out = header(p);
        out["variant"] = json!(name);
        out["seeds"] = json!(variant.seeds());
        out["value"] = json!(value);
        out["best"] = json!([]);
        out["moves"] = json!([]);
        out["pv"] = json!([]);
        add_search_fields(&mut out, nodes, elapsed, &config, &db, args.tt_mb.is_some());
        print_json(&out);
    } else {
        println!(
            "{name}, {} rules: value {value:+} for South, the first player",
            p.rules()
        );
        println!(
            "{nodes} nodes in {:.3} s, {} threads, {}, {}",
            elapsed.as_secs_f64(),
            config.threads,
            table_text(&config, args.tt_mb.is_some()),
            config.algorithm
        );
        println!("{}", db.line());
    }
    Ok(())
}

/// Solve a fixed suite of positions with one thread and print one line:
/// `N nodes, T ms, X nodes/s`. The node count is a regression fingerprint: it changes only
/// when the search changes.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Transposition table size in MiB, 1 to the machine's physical memory (part of the
    /// fingerprint).
    #[arg(
        long = "tt-mb",
        value_name = "MIB",
        default_value_t = 64,
        value_parser = super::args::mib()
    )]
    tt_mb: usize,
    /// Print JSON: {"nodes", "time_ms", "nodes_per_second", "values"}.
    #[arg(long)]
    json: bool,
}

/// The bench suite: (houses, seeds, rules).
const BENCH_SUITE: [(usize, u64, Rules); 6] = [
    (4, 4, Rules::Standard),
    (4, 4, Rules::EmptyCapture),
    (5, 3, Rules::Standard),
    (5, 3, Rules::EmptyCapture),
    (6, 3, Rules::Standard),
    (6, 3, Rules::EmptyCapture),
];

pub fn run_bench(args: BenchArgs) -> Result<(), CliError> {
    let mut nodes = 0;
    let mut values = Vec::new();
    let started = Instant::now();
    for (m, n, rules) in BENCH_SUITE {
        let variant = Variant::new(m, n, rules).expect("bench variants are valid");
        let p = Position::<kalah::Narrow>::start(variant).expect("bench variants are narrow");
        let config = SolverConfig {
            threads: 1,
            tt_mib: args.tt_mb,
            ..SolverConfig::default()
        };
        let solver = new_solver(m, rules, config, None)?;
        let f = solver
            .exact(p.board(), &mut |_| {})
            .map_err(|e| CliError::failure(format!("cannot solve: {e}")))?;
        values.push(format!("Kalah({m},{n}) {rules} {f:+}"));
        nodes += solver.nodes();
    }
    let elapsed = started.elapsed();
    let rate = nodes as f64 / elapsed.as_secs_f64().max(1e-9);
    if args.json {
        print_json(&json!({
            "nodes": nodes,
            "time_ms": elapsed.as_millis() as u64,
            "nodes_per_second": rate.round() as u64,
            "values": values,
        }));
    } else {
        println!(
            "{nodes} nodes, {} ms, {:.0} nodes/s",
            elapsed.as_millis(),
            rate
        );
    }
    Ok(())
}
