//! The search options that `solve`, `analyze` and `query` share, the databases a search
//! probes (files, or levels built in memory first), and the solver set up from them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use clap::builder::TypedValueParser as _;
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
    /// would read (the files, or those --memory-db would build), for the work asked: the value
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

/// The error of a search past the hour not started outside a terminal: `why`
/// ([`SearchArgs::refusal`]), and that --long starts it.
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

    /// The solver's settings and databases for a board of `seeds` seeds: `files`, the
    /// database files opened by [`SearchArgs::files`], if any; else the levels --memory-db asks
    /// for (by default when no files are read), built now (with a progress bar).
    ///
    /// Before a search that the cost model puts past an hour, asks first
    /// ([`SearchArgs::confirm_cost`]; `root` is the position's literal, for the campaign it
    /// suggests; `work`: what the search is asked, [`Work::of`] the position).
    pub fn prepare(
        &self,
        root: &str,
        work: Work,
        files: Option<Arc<Tablebase>>,
    ) -> Result<(SolverConfig, SearchDb), CliError> {
        let Work {
            houses,
            rules,
            seeds,
            ..
        } = work;
        if let Some(tablebase) = files {
            let config = self.config(houses, rules, seeds, Some(tablebase.max_level()));
            self.confirm_cost(root, work, Some(tablebase.max_level()), &config)?;
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
        self.confirm_cost(root, work, top, &config)?;
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

    /// `--estimate`: prints what the cost model ([`kalah::search::cost`]) puts the exact search
    /// of `p` at, reading `files` if opened (else the levels --memory-db would build), in text
    /// or JSON; nothing is built or searched. `variant`: `p` is its start.
    pub fn print_estimate<L: Lanes>(
        &self,
        p: &Position<L>,
        variant: Option<kalah::Variant>,
        every_move: bool,
        files: Option<&Tablebase>,
    ) {
        let (houses, seeds) = (p.houses_per_side(), p.seeds_on_board());
        let (top, levels) = match files {
            Some(db) => (Some(db.max_level()), super::db_choice::files_line(db)),
            None => match self.memory_top(houses, seeds) {
                Some(t) => (
                    Some(t),
                    format!("endgame levels 0..={t} built in memory first"),
                ),
                None => (None, "no endgame levels".to_owned()),
            },
        };
        let threads = self.config(houses, p.rules(), seeds, top).threads;
        let nodes = Work::of(p, every_move).nodes(top);
        let seconds = kalah::search::cost::estimated_seconds(nodes, threads);
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

    /// What the search of `p` (of every move's value with `every_move`) would take, if the cost
    /// model puts it past the hour after which [`SearchArgs::prepare`] asks before starting it
    /// or refuses: the message that says so, with the levels `files` (else those --memory-db
    /// would build). `None` when it would start at once (or --long, or not MTD(f)).
    pub fn refusal<L: Lanes>(
        &self,
        p: &Position<L>,
        every_move: bool,
        files: Option<&Tablebase>,
    ) -> Option<String> {
        let (houses, seeds) = (p.houses_per_side(), p.seeds_on_board());
        let top = match files {
            Some(db) => Some(db.max_level()),
            None => self.memory_top(houses, seeds),
        };
        let config = self.config(houses, p.rules(), seeds, top);
        self.cost_message(&p.to_string(), Work::of(p, every_move), top, &config)
    }

    /// What a search of `work` reading the levels `0..=top` would take, if the cost model
    /// ([`kalah::search::cost`]) puts it past an hour: the message that says so and that a
    /// campaign keeps its work. `None` below the hour, with --long, or for another algorithm.
    fn cost_message(
        &self,
        root: &str,
        work: Work,
        top: Option<u32>,
        config: &SolverConfig,
    ) -> Option<String> {
        let Work { rules, seeds, .. } = work;
        if self.long || self.algorithm != Algorithm::Mtdf {
            return None;
        }
        let nodes = work.nodes(top);
        let seconds = kalah::search::cost::estimated_seconds(nodes, config.threads);
        if seconds < 3600.0 {
            return None;
        }
        let levels = top.map_or("no endgame levels".to_owned(), |t| {
            format!("the levels 0..{t}")
        });
        let rules_flag = rules.option();
        // A campaign takes boards of at most 255 seeds; levels stop at 8 houses.
        let campaign = if seeds <= 255 {
            format!(
                " A proof too big for one run belongs in a campaign, which keeps every answer \
                 in a ledger and resumes after any stop: kalah prove '{root}'{rules_flag} \
                 --ledger FILE (see kalah prove --help)."
            )
        } else {
            String::new()
        };
        let more_levels = if work.houses <= kalah::db::MAX_DB_HOUSES {
            " More levels (kalah db build) make any search cheaper."
        } else {
            ""
        };
        Some(format!(
            "this search would take about {} on {} threads ({} nodes by the cost model: \
             {seeds} seeds on the board, {levels}; a rough model, off by ten either way).\
             {campaign}{more_levels}",
            super::human::human_duration(Duration::from_secs_f64(seconds.min(1e12))),
            config.threads,
            super::human::human_count(nodes.min(1e18) as u64),
        ))
    }

    /// Before a search that the cost model puts past an hour ([`Self::cost_message`]): says what
    /// it would take; in a terminal asks, elsewhere refuses without --long.
    fn confirm_cost(
        &self,
        root: &str,
        work: Work,
        top: Option<u32>,
        config: &SolverConfig,
    ) -> Result<(), CliError> {
        use std::io::IsTerminal;
        let Some(message) = self.cost_message(root, work, top, config) else {
            return Ok(());
        };
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            eprintln!("{message}");
            eprint!("Search anyway? [y/N] ");
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
                return Ok(());
            }
            return Err(CliError {
                message: "not started".into(),
                code: 1,
            });
        }
        Err(not_started(&message))
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

    /// The solver for `p` with its settings and databases ([`SearchArgs::prepare`]) from the
    /// database files already opened ([`SearchArgs::files`]), fitted to --table-file and with
    /// that table loaded ([`solver_for`]).
    pub fn solver_given<L: Lanes>(
        &self,
        p: &Position<L>,
        every_move: bool,
        table: &TableFileArgs,
        files: Option<Arc<Tablebase>>,
    ) -> Result<(Solver, SolverConfig, SearchDb), CliError> {
        let work = Work::of(p, every_move);
        let (mut config, db) = self.prepare(&p.to_string(), work, files)?;
        table.fit(
            &mut config,
            work.houses,
            work.rules,
            self.tt_mb,
            TableOrigin::Searches,
        )?;
        let solver = solver_for(p, config, &db, table)?;
        Ok((solver, config, db))
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

/// What a search is asked, for the cost model ([`kalah::search::cost`]): the board's houses,
/// rules and seeds, and whether it values every move (`solve --all-moves`, `analyze`, `query`)
/// or the position only.
#[derive(Clone, Copy)]
pub struct Work {
    houses: usize,
    rules: Rules,
    seeds: u32,
    every_move: bool,
}

impl Work {
    /// The search of `p`: of every move's value (`every_move`) or of its value only.
    pub fn of<L: Lanes>(p: &Position<L>, every_move: bool) -> Work {
        Work {
            houses: p.houses_per_side(),
            rules: p.rules(),
            seeds: p.seeds_on_board(),
            every_move,
        }
    }

    /// The model's nodes for this work on the levels `0..=top`.
    fn nodes(self, top: Option<u32>) -> f64 {
        let Work {
            houses,
            rules,
            seeds,
            every_move,
        } = self;
        kalah::search::cost::estimated_nodes(houses, seeds, top, rules, every_move)
    }
}
