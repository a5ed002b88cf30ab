//! The search options that `solve`, `analyze` and `query` share, the databases a search
//! probes (files, or levels built in memory first), and the solver set up from them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use clap::builder::TypedValueParser as _;
use kalah::answer::{
    Answer, AnswerError, Budget, Cost, NotDone, SearchWork, Searcher, Sources, Want,
};
use kalah::db::Tablebase;
use kalah::search::table_file::TableOrigin;
use kalah::{Algorithm, Lanes, Position, Rules, Solver, SolverConfig};

use super::CliError;
use super::db_choice::DbChoice;
use super::progress::Indicator;
use super::table_file::TableFileArgs;

/// Search options shared by `solve` and `analyze`.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores]. The values
    /// found do not depend on it.
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    pub threads: Option<usize>,

    /// Transposition table size in MiB, 1 to the machine's physical memory. Default: for this
    /// board, the least of: by the seeds (512 MiB for Kalah(6,4), doubling every 6 seeds,
    /// 16 to 8192; with databases, by the seeds above them: 8 MiB for 24, 2048 for 32; from 7
    /// houses a side, at least a byte for every 4 nodes the cost model expects: 1024 for
    /// Kalah(10,2)), room for every board that can occur (1 MiB for Kalah(2,2)), and a quarter
    /// of the physical memory. A table above 512 MiB is used from 64 MiB up, growing with the
    /// search.
    #[arg(long = "tt-mb", value_name = "MIB", value_parser = super::args::mib())]
    pub tt_mb: Option<usize>,

    /// Search algorithm: minimax (no pruning), memo (memoised minimax), alphabeta (no table),
    /// scout (NegaScout, no table) or mtdf (MTD(f) with the transposition table, move
    /// ordering and parallel search: the fastest). All are exact.
    #[arg(long, default_value = "mtdf", value_parser = clap::builder::PossibleValuesParser::new(Algorithm::ALL.map(Algorithm::as_str)).map(|s| s.parse::<Algorithm>().expect("listed")))]
    pub algorithm: Algorithm,

    /// Iterative deepening before the exact search: depth-limited searches 3, 6, 9, ... plies
    /// deep up to this many, 0 to 60 (0: none) [default: 15], for a first guess of the value
    /// and the move order of the exact search (within 16 M nodes in all). The values found do
    /// not depend on it; the work can, a great deal and either way: on one thread, without
    /// levels, Kalah(8,2) takes 1.5 M nodes with 15 and 9.3 M with 18, Kalah(4,5) 1.2 M and
    /// 1.0 M (docs/performance.md).
    #[arg(long, value_name = "PLIES", value_parser = super::args::deepening())]
    pub deepening: Option<u8>,

    #[command(flatten)]
    pub db: DbChoice,

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
    pub memory_db: Option<MemoryDb>,

    /// Start a search that the cost model puts past an hour without asking. Before such a
    /// search kalah says what it would take and how to run it as a campaign instead (`kalah
    /// prove`, which keeps every answer); in a terminal it asks, elsewhere it starts only with
    /// this flag.
    #[arg(long)]
    pub long: bool,

    /// Print one JSON object instead of text: `value` (the final store difference for the side
    /// to move, stores included), `best` (the optimal houses), `moves` ([{house, value}]), `pv`
    /// (a perfect game, one turn an entry), `nodes`, `time_ms`, `source`, the variant and rules,
    /// and the levels probed (`db`, `db_max_seeds`).
    #[arg(long)]
    pub json: bool,
}

/// `--estimate` (of `solve` and `analyze`).
#[derive(Args, Debug, Clone, Default)]
pub struct EstimateArg {
    /// Say what the cost model puts this search at, and stop: nothing is built or searched.
    /// It gives the nodes, the time on the threads given and the endgame levels the search
    /// would read (the files; with --max-level K and no such files, the levels 0..K as if
    /// built; else those --memory-db would build), for the work asked: the value
    /// (solve, --value-only), or about three times that for every move's value (analyze,
    /// solve --all-moves). The model is rough, off by ten either way: it tells seconds from
    /// hours from years. With --json: one object
    /// (`estimated_nodes`, `estimated_seconds`, `threads`, `levels_top`, `levels`,
    /// `seeds_on_board`, the position and rules, and for solve the variant and its `seeds` a
    /// house).
    #[arg(long)]
    pub estimate: bool,
}

/// `--memory-db`: which levels to build in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryDb {
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
    pub tablebase: Option<Arc<Tablebase>>,
    /// Built in memory for this search, in this time (`None`: files, or none).
    pub built: Option<Duration>,
    /// Why there is none (when `tablebase` is `None`), for people.
    pub none: String,
    /// Whether --memory-db was given (not taken by default).
    pub asked: bool,
}

impl SearchDb {
    /// The line that says which databases the search probed.
    pub fn line(&self) -> String {
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

/// The error of a search past the hour not started: `why` ([`cost_text`]), and that --long
/// starts it.
pub fn not_started(why: &str) -> CliError {
    CliError::input(format!("{why} Not started: --long starts it anyway."))
}

impl SearchArgs {
    /// The database files read for `houses` houses under `rules`: none with --memory-db (its
    /// levels are built for the search instead) or --no-db. Refuses `--memory-db K` for a board
    /// wider than levels index, before the cost model counts on levels that cannot be built.
    pub fn files(&self, houses: usize, rules: Rules) -> Result<Option<Arc<Tablebase>>, CliError> {
        match self.memory_db {
            Some(MemoryDb::UpTo(k)) if houses > kalah::db::MAX_DB_HOUSES => {
                Err(CliError::input(format!(
                    "--memory-db {k}: endgame levels exist for 1 to {} houses a side, and this board has {houses} (--memory-db off searches without them)",
                    kalah::db::MAX_DB_HOUSES
                )))
            }
            Some(_) => Ok(None),
            None => self.db.open(houses, rules),
        }
    }

    /// [`SearchArgs::files`] for `--estimate`: levels --max-level names but this machine does
    /// not hold are no error (the estimate is for them, as if built).
    pub fn estimate_files(
        &self,
        houses: usize,
        rules: Rules,
    ) -> Result<Option<Arc<Tablebase>>, CliError> {
        if self.memory_db.is_none()
            && self.db.max_level.is_some()
            && self.db.locate(houses, rules)?.is_none()
        {
            return Ok(None);
        }
        self.files(houses, rules)
    }

    /// The solver's settings and databases for a board of `seeds` seeds: `files`, the
    /// database files opened by [`SearchArgs::files`], if any; else the levels --memory-db asks
    /// for (by default when no files are read), built now (with a progress bar). Whether to
    /// search at all is the answer's to say ([`kalah::answer`]): this only sets it up.
    pub fn prepare(
        &self,
        houses: usize,
        rules: Rules,
        seeds: u32,
        files: Option<Arc<Tablebase>>,
    ) -> Result<(SolverConfig, SearchDb), CliError> {
        if let Some(tablebase) = files {
            let config = self.config(houses, rules, seeds, Some(tablebase.max_level()));
            let db = SearchDb {
                tablebase: Some(tablebase),
                built: None,
                none: String::new(),
                asked: false,
            };
            return Ok((config, db));
        }
        let top = self.memory_top(houses, seeds);
        let config = self.config(houses, rules, seeds, top);
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

    /// The top of the levels --memory-db builds for a board of `seeds` seeds, if any. Only
    /// MTD(f) probes databases; levels above the board's seeds are never reached.
    fn memory_top(&self, houses: usize, seeds: u32) -> Option<u32> {
        match (self.algorithm, self.memory_db.unwrap_or(MemoryDb::Auto)) {
            (Algorithm::Mtdf, MemoryDb::Auto) => kalah::search::auto_memory_db(houses, seeds),
            (Algorithm::Mtdf, MemoryDb::UpTo(k)) => Some(k.min(seeds)),
            _ => None,
        }
    }

    /// `--estimate`: prints what the cost model ([`kalah::answer::Cost`]) puts the exact search
    /// of `p` at, reading `files` if opened (else the levels --max-level names, as if built,
    /// else those --memory-db would build), in text or JSON; nothing is built or searched.
    /// `variant`: `p` is its start.
    pub fn print_estimate<L: Lanes>(
        &self,
        p: &Position<L>,
        variant: Option<kalah::Variant>,
        every_move: bool,
        files: Option<&Tablebase>,
    ) {
        let (houses, seeds) = (p.houses_per_side(), p.seeds_on_board());
        let (top, levels) = match (files, self.db.max_level) {
            (Some(db), _) => (Some(db.max_level()), super::db_choice::files_line(db)),
            // Levels not on this machine: the estimate is for them, once built.
            (None, Some(k)) if self.memory_db.is_none() => (
                Some(k),
                format!(
                    "endgame levels 0..={k} (not here: `kalah db build --houses {houses} \
                     --max-seeds {k}{}` builds them)",
                    p.rules().option()
                ),
            ),
            (None, _) => match self.memory_top(houses, seeds) {
                Some(t) => (
                    Some(t),
                    format!("endgame levels 0..={t} built in memory first"),
                ),
                None => (None, "no endgame levels".to_owned()),
            },
        };
        let threads = self.config(houses, p.rules(), seeds, top).threads;
        let Cost { nodes, seconds, .. } = Cost::of(p, every_move, top, threads);
        let name = variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds()));
        if self.json {
            let mut out = super::args::header(p);
            if let Some(v) = variant {
                // As in solve's JSON: `seeds` is the seeds a house of the variant.
                out["variant"] = serde_json::json!(name);
                out["seeds"] = serde_json::json!(v.seeds());
            }
            out["seeds_on_board"] = serde_json::json!(seeds);
            out["levels_top"] = serde_json::json!(top);
            out["levels"] = serde_json::json!(levels);
            out["threads"] = serde_json::json!(threads);
            out["estimated_nodes"] = serde_json::json!(nodes.min(1e18).round() as u64);
            out["estimated_seconds"] = serde_json::json!(seconds.min(1e15).round() as u64);
            super::args::print_json(&out);
            return;
        }
        let name = name.map_or(String::new(), |n| format!("{n}, "));
        println!(
            "{name}{} rules, {p}: {seeds} seeds on the board, {levels}: about {} nodes, {} on \
             {threads} threads by the cost model (a rough model, off by ten either way; nothing \
             searched)",
            p.rules().as_str(),
            super::human::human_count(nodes.min(1e18) as u64),
            super::human::human_duration(Duration::from_secs_f64(seconds.min(1e12))),
        );
    }

    /// The solver's settings for a board of `houses` houses a side under `rules` with `seeds`
    /// seeds, searched with databases up to `db_top` seeds if any.
    pub fn config(
        &self,
        houses: usize,
        rules: Rules,
        seeds: u32,
        db_top: Option<u32>,
    ) -> SolverConfig {
        let default = SolverConfig::default();
        SolverConfig {
            tt_mib: self
                .tt_mb
                .unwrap_or_else(|| kalah::search::auto_table_mib(houses, seeds, db_top, rules)),
            algorithm: self.algorithm,
            threads: self.threads.unwrap_or(default.threads),
            tuning: kalah::search::negamax::Tuning {
                deepening_max: self.deepening.unwrap_or(default.tuning.deepening_max),
                ..default.tuning
            },
        }
    }

    /// The budget of a search from the command line: past [`LONG_SECONDS`] by the cost model,
    /// not started without --long.
    pub fn budget(&self) -> Budget {
        Budget {
            model_seconds: (!self.long).then_some(LONG_SECONDS),
            ..Budget::default()
        }
    }
}

/// The search the cost model may put past this, in seconds, before kalah asks first (or,
/// outside a terminal, refuses without --long).
pub const LONG_SECONDS: f64 = 3600.0;

/// What a search past the budget would take, for people: the cost model's figure
/// ([`Cost`]), and that a campaign keeps its work (naming the campaign ledger kalah ships for
/// this game, if any), and that more levels make it cheaper.
pub fn cost_text<L: Lanes>(p: &Position<L>, cost: &Cost) -> String {
    let Cost {
        nodes,
        seconds,
        threads,
        levels_top,
        seeds,
        ..
    } = *cost;
    let levels = levels_top.map_or("no endgame levels".to_owned(), |t| {
        format!("the levels 0..{t}")
    });
    let root = p.to_string();
    let rules_flag = p.rules().option();
    // A campaign takes boards of at most 255 seeds; levels stop at 8 houses.
    let campaign = if seeds <= 255 {
        // Where kalah ships a campaign of this game, a new one starts from its facts.
        let shipped = kalah::book::shipped_campaign(kalah::book::game_of(p))
            .map(|path| {
                format!(
                    " This game's campaign so far ships with kalah's source: --read {path} \
                     builds on its facts."
                )
            })
            .unwrap_or_default();
        format!(
            " A proof too big for one run belongs in a campaign, which keeps every answer \
             in a ledger and resumes after any stop: kalah prove '{root}'{rules_flag} \
             --ledger FILE (see kalah prove --help).{shipped}"
        )
    } else {
        String::new()
    };
    let more_levels = if p.houses_per_side() <= kalah::db::MAX_DB_HOUSES {
        " More levels (kalah db build) make any search cheaper."
    } else {
        ""
    };
    format!(
        "this search would take about {} on {} threads ({} nodes by the cost model: \
         {seeds} seeds on the board, {levels}; a rough model, off by ten either way).\
         {campaign}{more_levels}",
        super::human::human_duration(Duration::from_secs_f64(seconds.min(1e12))),
        threads,
        super::human::human_count(nodes.min(1e18) as u64),
    )
}

/// An answer's failure as the command's error.
pub fn answer_error<E: Into<CliError>>(e: AnswerError<E>) -> CliError {
    match e {
        AnswerError::Levels(e) => CliError::failure(format!("cannot read the database: {e}")),
        AnswerError::Ledgers(e) => super::books::book_error(e),
        AnswerError::Search(e) => CliError::failure(format!("cannot solve: {e}")),
        AnswerError::Searcher(e) => e.into(),
    }
}

/// The solver of a command, made when an answer first needs it, and kept (`query -` answers
/// many positions with it, its table warm).
pub struct Made {
    pub solver: Solver,
    pub config: SolverConfig,
    pub db: SearchDb,
}

/// The command line's [`Searcher`]: the solver of the search options, made when the answer
/// first needs it (the levels of --memory-db built then, with a bar; --table-file's table
/// loaded), the search's progress drawn on stderr ([`with_progress`]); before it, what the
/// ledgers say of the position (unless `quiet`).
pub struct CliSearch<'a, L: Lanes> {
    pub p: &'a Position<L>,
    pub args: &'a SearchArgs,
    pub table: &'a TableFileArgs,
    /// The database files read (for the search to probe).
    pub files: Option<Arc<Tablebase>>,
    /// The solver, once made.
    pub made: &'a mut Option<Made>,
    /// Nothing said on stderr before the search (JSON, a batch).
    pub quiet: bool,
    /// More positions may follow: the table is at least [`kalah::search::DEFAULT_TT_MIB`]
    /// unless --tt-mb.
    pub many: bool,
}

impl<L: Lanes> CliSearch<'_, L> {
    fn top(&self) -> Option<u32> {
        match (&self.made, &self.files) {
            (Some(made), _) => made.db.tablebase.as_ref().map(|t| t.max_level()),
            (None, Some(files)) => Some(files.max_level()),
            (None, None) => self
                .args
                .memory_top(self.p.houses_per_side(), self.p.seeds_on_board()),
        }
    }

    /// The solver, made now if not yet.
    fn make(&mut self) -> Result<&Made, CliError> {
        if self.made.is_none() {
            let p = self.p;
            let (houses, rules) = (p.houses_per_side(), p.rules());
            let files = self.files.clone();
            let (mut config, db) = self
                .args
                .prepare(houses, rules, p.seeds_on_board(), files)?;
            if self.many && self.args.tt_mb.is_none() {
                config.tt_mib = config.tt_mib.max(kalah::search::DEFAULT_TT_MIB);
            }
            self.table.fit(
                &mut config,
                houses,
                rules,
                self.args.tt_mb,
                TableOrigin::Searches,
            )?;
            let solver = solver_for(p, config, &db, self.table)?;
            *self.made = Some(Made { solver, config, db });
        }
        Ok(self.made.as_ref().expect("just made"))
    }
}

impl<L: Lanes> Searcher for CliSearch<'_, L> {
    type Error = CliError;

    fn config(&self) -> SolverConfig {
        match &self.made {
            Some(made) => made.config,
            None => {
                let p = self.p;
                let (houses, rules, seeds) = (p.houses_per_side(), p.rules(), p.seeds_on_board());
                self.args.config(houses, rules, seeds, self.top())
            }
        }
    }

    fn levels_top(&self) -> Option<u32> {
        self.top()
    }

    fn search(&mut self, known: &Answer, work: &mut SearchWork<'_>) -> Result<(), CliError> {
        if !self.quiet {
            super::books::say_before_search(self.p, known);
        }
        let (p, table) = (self.p, self.table);
        let made = self.make()?;
        let solver = &made.solver;
        super::search_progress::with_progress(p, solver, table, |on_step| work(solver, on_step))?;
        Ok(())
    }
}

/// The answer to `want` of `p` from `sources`, then from `search` within the command's budget
/// ([`SearchArgs::budget`]). A search past it with nothing the ledgers prove: in a terminal,
/// kalah says what it would take and asks, and searches if told to; elsewhere the answer says
/// it was not started (the caller refuses).
pub fn ask<L: Lanes>(
    p: &Position<L>,
    sources: &Sources<'_>,
    want: Want,
    search: &mut CliSearch<'_, L>,
) -> Result<Answer, CliError> {
    use std::io::IsTerminal;
    let mut budget = search.args.budget();
    let answer = kalah::answer::answer(p, sources, want, &budget, Some(&mut *search))
        .map_err(answer_error)?;
    let Some(NotDone::Cost { cost, .. }) = answer.not_done else {
        return Ok(answer);
    };
    let asked = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if answer.ledger_bounds.is_some() || !asked {
        return Ok(answer);
    }
    eprintln!("{}", cost_text(p, &cost));
    eprint!("Search anyway? [y/N] ");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    if !matches!(line.trim(), "y" | "Y" | "yes" | "Yes") {
        return Err(CliError {
            message: "not started".into(),
            code: 1,
        });
    }
    budget.model_seconds = None;
    kalah::answer::answer(p, sources, want, &budget, Some(search)).map_err(answer_error)
}

/// After an answer is printed: the command's error if a search it needed was not started
/// (the value not exact: the cost model's message, and that --long starts it).
pub fn refused<L: Lanes>(p: &Position<L>, answer: &Answer) -> Result<(), CliError> {
    match answer.not_done {
        Some(NotDone::Cost { cost, .. }) if answer.exact().is_none() => {
            Err(not_started(&cost_text(p, &cost)))
        }
        _ => Ok(()),
    }
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
    // A build worth minutes and gigabytes is said before it starts, with how to keep it.
    let entries = starts[top as usize + 1];
    if entries >= 100_000_000 {
        eprintln!(
            "building the endgame levels 0..={top} of {houses} houses, {rules} rules, in \
             memory first ({} entries, about {:.1} GB and {} on {threads} thread{}, kept for \
             this run only; `kalah db build --houses {houses} --max-seeds {top}{}` keeps them \
             on disk)",
            super::human::human_count(entries),
            entries as f64 * 1.2 / 1e9,
            super::db::build::estimated_time(houses, &(0..=top).collect::<Vec<_>>(), threads),
            if threads == 1 { "" } else { "s" },
            rules.option()
        );
    }
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
    // Ctrl-C or SIGTERM stops the build between pieces of work, and says so.
    kalah::catch_interrupt();
    let tablebase = pool.install(|| {
        kalah::db::build_in_memory(houses, rules, top, &cancel, &|p| {
            if kalah::interrupted() {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            indicator.set_done(starts[p.level as usize] + p.done)
        })
    });
    indicator.finish();
    let tablebase = match tablebase {
        Err(kalah::db::DbError::Cancelled) => {
            return Err(CliError {
                message: format!(
                    "interrupted while building the levels 0..={top} in memory (--memory-db); \
                     nothing was written to disk"
                ),
                code: 130,
            });
        }
        other => other.map_err(|e| fail(e.to_string()))?,
    };
    Ok((Arc::new(tablebase), started.elapsed()))
}

/// A solver for `p` with `config` and the databases `db`, with --table-file's table loaded
/// into it (after `config` was fitted to the file: see [`TableFileArgs::fit`]). With a table
/// file, Ctrl-C from now on only sets a flag, which [`with_progress`] answers by saving.
pub fn solver_for<L: Lanes>(
    p: &Position<L>,
    config: SolverConfig,
    db: &SearchDb,
    table: &TableFileArgs,
) -> Result<Solver, CliError> {
    let tablebase = db.tablebase.clone();
    let solver = new_solver(p.houses_per_side(), p.rules(), config, tablebase)?;
    with_table_file(solver, table)
}

/// `solver` (new, its table sized by [`TableFileArgs::fit`]) with --table-file's table loaded
/// (a line on stderr says so) and, with a file, its whole table in use from the start and
/// Ctrl-C from now on only setting a flag (the caller saves, then stops).
pub fn with_table_file(solver: Solver, table: &TableFileArgs) -> Result<Solver, CliError> {
    if table.period().is_some() {
        kalah::catch_interrupt();
        solver.use_whole_table();
    }
    if let Some(line) = table.load(&solver)? {
        eprintln!("{line}");
    }
    Ok(solver)
}

/// A solver for `houses` and `rules` probing `db` if given, or the CLI's error if it cannot
/// start.
pub fn new_solver(
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
