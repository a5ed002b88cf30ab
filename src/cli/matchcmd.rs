//! `kalah match`: two engines, many games in parallel, A's wins, draws, losses and margin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use kalah::files::ClaimError;
use kalah::play::arena::{
    GameResult, MatchConfig, MatchReport, MatchStats, MatchTotals, play_match,
};
use kalah::play::record::{Record, now_utc};
use kalah::play::{GameRules, PlayError, PlayRules, PlayerSpec, Resources};
use serde_json::json;

use super::CliError;
use super::db_choice::DbChoice;
use super::progress::Indicator;

/// Play a match between two engines: many games, in parallel, counted for player A.
///
/// Games go in pairs: both games of a pair start with the same random opening (K random
/// sowings, --opening-plies), A is South in the first and B in the second, so neither gains
/// from the side it plays. An odd --games plays one last game with A as South.
///
/// Players: random[:SEED], greedy, minimax:D (D 1 to 30), alphabeta:D, perfect (Kalah rules
/// only; with --db it reads the endgame databases), engine:TIME (1ms to 86400s; it looks the
/// positions the databases cover up inside its search; engine:TIME:no-db reads none, to
/// measure what they bring), learner[:FILE]. `random:S` plays game g with seed S+g; plain `random` with a seed drawn from
/// --seed. The same --seed replays the same match.
///
/// Memory does not grow with --games: each game is counted, written and printed as it ends,
/// then dropped.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Player A, the one the results are counted for (e.g. alphabeta:6).
    #[arg(value_name = "A", value_parser = super::args::player_spec())]
    a: String,

    /// Player B (e.g. random).
    #[arg(value_name = "B", value_parser = super::args::player_spec())]
    b: String,

    /// Games to play, 1 to 1000000000 (pairs of games share an opening; a billion games take
    /// hours even on the smallest board).
    #[arg(
        long,
        short = 'g',
        value_name = "N",
        default_value_t = 100,
        value_parser = super::args::count::<usize>(1..=MAX_GAMES)
    )]
    games: usize,

    /// Houses a side, M (1 to 12).
    #[arg(
        long,
        short = 'm',
        default_value_t = 6,
        value_parser = super::args::count::<usize>(super::args::HOUSES)
    )]
    houses: usize,

    /// Seeds a house at the start, N (1 to 32767, and 2·M·N at most 65535).
    #[arg(
        long,
        short = 'n',
        default_value_t = 4,
        value_parser = super::args::count::<u64>(super::args::SEEDS)
    )]
    seeds: u64,

    /// Rule set: `standard`, `empty-capture` (a lone last seed opposite an empty house is
    /// banked too), `awari-basic` (the 1973 BASIC game) or `mankalah` (standard, but South's
    /// first sowing earns no extra turn).
    #[arg(long, default_value = "standard", value_parser = super::args::play_rules_parser())]
    rules: PlayRules,

    /// The pie rule: North may answer South's first turn by taking over South's side.
    #[arg(long)]
    pie: bool,

    /// Random sowings at the start of each pair of games, 0 to 100, so that deterministic
    /// engines do not play one game over and over (under the pie rule the opening stops when
    /// North may swap; more than 100 random sowings are a random game, not an opening).
    #[arg(
        long,
        value_name = "K",
        default_value_t = 2,
        value_parser = super::args::count::<usize>(0..=100)
    )]
    opening_plies: usize,

    /// Seed of the openings and of unseeded random players, any whole number from 0 to
    /// 18446744073709551615.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,

    /// Endgame databases for the perfect player and the engines (Kalah rules only).
    #[command(flatten)]
    db: DbChoice,

    /// The perfect player answers from the opening books where they know every move's value.
    #[command(flatten)]
    book: super::books::BookArg,

    /// Games played at once, 1 to 64 (4 a core above 16 cores) [default: all cores]. The
    /// results do not depend on it.
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,

    /// Write every game to DIR as a game record, game-0001.txt, game-0002.txt, ... (the
    /// directory is created). DIR is held for the whole match: a second match given the same
    /// DIR is refused while this one runs. A DIR that already holds any of the match's file
    /// names is refused (see --force).
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,

    /// Replace the records of the same names already in --record DIR.
    #[arg(long, requires = "record")]
    force: bool,

    /// One line per game: sides, margin, stores and the nodes each searching player used.
    #[arg(long, short = 'v')]
    verbose: bool,

    /// Print one JSON object: the variant and players, `games`, `wins`, `draws` and `losses`
    /// counted for A, `seeds_a`, `seeds_b`, `margin_mean` and `margin_ci95`, `nodes_a`,
    /// `nodes_b`, `time_ms`; with --verbose also `results`, every game, each written out as it
    /// ends.
    #[arg(long)]
    json: bool,
}

/// The most games a match plays.
const MAX_GAMES: u64 = 1_000_000_000;

pub fn run(args: MatchArgs) -> Result<(), CliError> {
    let spec = |s: &str| {
        s.parse::<PlayerSpec>()
            .map_err(|e| CliError::input(e.to_string()))
    };
    let (a, b) = (spec(&args.a)?, spec(&args.b)?);
    for (role, s) in [("A", &a), ("B", &b)] {
        if *s == PlayerSpec::Human {
            return Err(CliError::input(format!(
                "player {role} is human: a match is between engines (play one yourself with \
                 `kalah play`)"
            )));
        }
    }
    let variant = kalah::Variant::new(args.houses, args.seeds, kalah::Rules::Standard)
        .map_err(|e| CliError::input(format!("invalid variant: {e}")))?;
    let rules = GameRules {
        houses: variant.houses(),
        seeds: variant.seeds(),
        rules: args.rules,
        pie: args.pie,
    };
    let config = MatchConfig {
        rules,
        games: args.games,
        opening_plies: args.opening_plies,
        seed: args.seed,
    };
    // Held until the match is over.
    let _record_dir = match &args.record {
        Some(dir) => prepare_record_dir(dir, args.games, args.force)?,
        None => None,
    };
    let threads = super::args::threads_or_all(args.threads);
    let perfect = a == PlayerSpec::Perfect || b == PlayerSpec::Perfect;
    let db = super::game_db::open_db_for_perfect(&args.db, rules, perfect, threads)?;
    let book = super::game_db::open_book_for_perfect(&args.book, &args.db, rules, perfect)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("kalah-match-{i}"))
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the worker threads: {e}")))?;
    let res = Resources {
        db,
        book,
        threads: 1,
        tt_mib: 0,
        seed: args.seed,
    };

    let indicator = Indicator::bar("match", args.games as u64, "games");
    // With --verbose, each game is written out in game order as soon as the games before it
    // are over (so at most a block of games waits: see kalah::play::arena).
    let games = Mutex::new(InOrder::default());
    let record_error = Mutex::new(None::<String>);
    let totals = Mutex::new(MatchTotals::default());
    let on_game = |r: &GameResult| {
        // The record is written, and the game counted, under the totals' lock: a Ctrl-C
        // (which takes it) cuts no record and counts no game whose record is not there.
        let mut counted = totals.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(dir) = &args.record
            && let Err(e) = write_record(dir, r, &a, &b, &config)
        {
            record_error.lock().expect("not poisoned").get_or_insert(e);
        }
        counted.add(r);
        drop(counted);
        if args.verbose {
            let text = if args.json {
                game_json(r).to_string()
            } else {
                game_line(r, args.games)
            };
            let mut games = games.lock().expect("not poisoned");
            games.add(r.index, text, |i, text| {
                indicator.suspend(|| print_game(i, text, args.json));
            });
        }
    };
    let progress = |done: usize| indicator.set_done(done as u64);
    // Ctrl-C or SIGTERM: the games over are counted and said (and their records kept), the
    // games in flight are dropped, and the process ends at once (a perfect player's game may
    // take minutes to finish).
    kalah::catch_interrupt();
    let finished = AtomicBool::new(false);
    let report = std::thread::scope(|scope| -> Result<_, CliError> {
        super::cancel_on_interrupt(scope, &finished, || {
            // Holding the games waiting to be written out, so that none is cut.
            let games = games.lock().unwrap_or_else(|e| e.into_inner());
            let totals = totals.lock().unwrap_or_else(|e| e.into_inner());
            indicator.suspend(|| {
                if args.verbose && args.json && games.next > 0 {
                    println!("],\"error\":\"interrupted\"}}");
                }
                let record = args.record.as_deref();
                eprintln!("{}", interrupted_text(&totals.stats(), args.games, record));
                let _ = std::io::Write::flush(&mut std::io::stdout());
                std::process::exit(130)
            })
        })?;
        let report = pool.install(|| play_match(&a, &b, &config, &res, &progress, &on_game));
        finished.store(true, Ordering::Relaxed);
        Ok(report)
    })?;
    indicator.finish();
    // With --verbose --json the games have been written out: the other fields close the object.
    let listed = args.verbose && args.json;
    let started = games.into_inner().expect("not poisoned").next > 0;
    let report = report.map_err(|e| {
        let error = match e {
            // A player that cannot be made or cannot play these rules: the user's choice.
            PlayError::Spec(m) | PlayError::Unsupported(m) => CliError::input(m),
            other => CliError::failure(other.to_string()),
        };
        if listed && started {
            println!("],\"error\":{}}}", json!(error.message));
        }
        error
    })?;
    // The results stand even if a record could not be written: shown first, then the error.
    if args.json {
        let summary = match_json(&report, &a, &b, &config).to_string();
        match summary.strip_prefix('{') {
            // `{"results":[...` is open: the other fields close it.
            Some(fields) if listed => println!("],{fields}"),
            _ => println!("{summary}"),
        }
    } else {
        print_summary(&report, &a, &b, &config, threads);
    }
    match record_error.into_inner().expect("not poisoned") {
        Some(e) => Err(CliError::failure(e)),
        None => Ok(()),
    }
}

/// What a match stopped by Ctrl-C says: the games over and A's results in them, where their
/// records are, and that the games in flight are dropped.
fn interrupted_text(stats: &MatchStats, games: usize, record: Option<&Path>) -> String {
    let over = stats.games;
    let results = if over == 0 {
        String::new()
    } else {
        format!(
            " (A: {} won, {} drawn, {} lost, margin {:+.2} a game)",
            stats.wins, stats.draws, stats.losses, stats.margin_mean
        )
    };
    let records = match record {
        Some(dir) if over > 0 => format!("; their records are in {}", dir.display()),
        _ => String::new(),
    };
    format!(
        "interrupted after {over} of {games} games{results}{records}; the games in flight are \
         dropped, no summary (a match cut short is no sample of the whole)"
    )
}

/// The games of a match put back in order: each is written out once all before it are.
#[derive(Default)]
struct InOrder {
    /// The number of the next game to write out.
    next: usize,
    /// The games over but not written out yet, by number.
    waiting: BTreeMap<usize, String>,
}

impl InOrder {
    /// Adds game `index` and writes out, with `emit`, every game that is now next.
    fn add(&mut self, index: usize, text: String, mut emit: impl FnMut(usize, &str)) {
        self.waiting.insert(index, text);
        while let Some(text) = self.waiting.remove(&self.next) {
            emit(self.next, &text);
            self.next += 1;
        }
    }
}

/// Writes out game `index` of --verbose: its line, or its JSON object in the `results` list
/// (which opens the whole JSON object).
fn print_game(index: usize, text: &str, json: bool) {
    use std::io::Write;
    if !json {
        println!("{text}");
        return;
    }
    let mut out = std::io::stdout().lock();
    let before = if index == 0 { "{\"results\":[" } else { "," };
    let _ = write!(out, "{before}{text}");
    let _ = out.flush();
}

/// Prepares --record DIR for a match of `games` games: creates it, holds it against a second
/// match, checks that files can be made in it and, unless `force`, that it holds none of the
/// records the match will write. Returns the lock on DIR, if the system has one.
fn prepare_record_dir(
    dir: &Path,
    games: usize,
    force: bool,
) -> Result<Option<std::fs::File>, CliError> {
    let name = dir.display();
    std::fs::create_dir_all(dir).map_err(|e| {
        CliError::input(format!("--record: cannot create the directory {name}: {e}"))
    })?;
    let lock = kalah::files::lock_dir(dir).map_err(|e| match e {
        ClaimError::InUse => CliError::input(format!(
            "--record {name} is in use by another match (wait for it to end, or choose another \
             directory)"
        )),
        ClaimError::Io(e) => CliError::input(format!("--record: cannot use {name}: {e}")),
    })?;
    kalah::files::check_writable(&record_path(dir, 0))
        .map_err(|e| CliError::input(format!("--record: cannot write files in {name}: {e}")))?;
    if force {
        return Ok(lock);
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::input(format!("--record: cannot read the directory {name}: {e}")))?;
    let mut taken: Vec<String> = entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|file| {
            file.strip_prefix("game-")
                .and_then(|rest| rest.strip_suffix(".txt"))
                .and_then(|number| number.parse::<usize>().ok())
                .is_some_and(|n| (1..=games).contains(&n) && *file == record_name(n - 1))
        })
        .collect();
    taken.sort();
    match taken.as_slice() {
        [] => Ok(lock),
        [first, rest @ ..] => Err(CliError::input(format!(
            "--record {name} already holds {first}{}: give --force to replace them, or choose \
             another directory",
            match rest.len() {
                0 => String::new(),
                n => format!(" and {n} more of this match's records"),
            }
        ))),
    }
}

/// The name of the record of game `index` (from 0): game-0001.txt, ...
fn record_name(index: usize) -> String {
    format!("game-{:04}.txt", index + 1)
}

/// The record of game `index` (from 0) in `dir`.
fn record_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(record_name(index))
}

/// Writes game `r` to `dir/game-NNNN.txt` (numbered from 1).
fn write_record(
    dir: &std::path::Path,
    r: &GameResult,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
) -> Result<(), String> {
    let (south, north) = if r.a_started_south() { (a, b) } else { (b, a) };
    let mut record = Record::of(
        &r.game,
        &south.to_string(),
        &north.to_string(),
        Some(now_utc()),
    );
    record.opening = r.opening;
    let text = record.to_text();
    // A comment after the first line: where the game comes from (comments are ignored when
    // the record is read).
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let note = format!(
        "# kalah match: A {a}, B {b}, game {} of {}, seed {}; the first {} action{} the \
         random opening\n",
        r.index + 1,
        config.games,
        config.seed,
        r.opening,
        if r.opening == 1 { " is" } else { "s are" },
    );
    let path = record_path(dir, r.index);
    super::files::write_whole(&path, &format!("{first}\n{note}{rest}"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn nodes_text(nodes: Option<u64>) -> String {
    nodes.map_or("-".to_owned(), |n| n.to_string())
}

/// The --verbose line of one game.
fn game_line(r: &GameResult, games: usize) -> String {
    let width = games.to_string().len();
    let side = if r.a_started_south() {
        "South"
    } else {
        "North"
    };
    let swapped = if r.game.swapped() { " (swapped)" } else { "" };
    format!(
        "game {:>width$}: A {side}{swapped}, A {:+}, stores A {} B {}, nodes A {} B {}, {} actions",
        r.index + 1,
        r.margin_a,
        r.store_a,
        r.store_b,
        nodes_text(r.nodes_a),
        nodes_text(r.nodes_b),
        r.game.actions().len(),
    )
}

fn print_summary(
    report: &MatchReport,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    threads: usize,
) {
    let s = &report.stats;
    let pairs = config.games / 2;
    let single = if config.games % 2 == 1 {
        " and one single game"
    } else {
        ""
    };
    println!(
        "{}: A = {a}, B = {b}; {} games: {pairs} pair{}{single}, {} random sowing{} to open each",
        config.rules,
        s.games,
        if pairs == 1 { "" } else { "s" },
        config.opening_plies,
        if config.opening_plies == 1 { "" } else { "s" },
    );
    println!(
        "A: {} win{}, {} draw{}, {} loss{} (score {:.1}%)",
        s.wins,
        if s.wins == 1 { "" } else { "s" },
        s.draws,
        if s.draws == 1 { "" } else { "s" },
        s.losses,
        if s.losses == 1 { "" } else { "es" },
        100.0 * s.score()
    );
    println!("seeds: A {}, B {}", s.seeds_a, s.seeds_b);
    match s.margin_ci95 {
        Some(ci) => println!(
            "A's margin: {:+.2} ± {ci:.2} a game (95% confidence, normal approximation)",
            s.margin_mean
        ),
        None => println!("A's margin: {:+.2}", s.margin_mean),
    }
    if s.nodes_a.is_some() || s.nodes_b.is_some() {
        let per_game = |n: Option<u64>| match n {
            Some(n) => format!("{n} ({:.0} a game)", n as f64 / s.games as f64),
            None => "-".to_owned(),
        };
        println!(
            "nodes: A {}, B {}",
            per_game(s.nodes_a),
            per_game(s.nodes_b)
        );
    }
    // A match of quick players takes milliseconds: never `0.00 s`.
    let seconds = report.elapsed.as_secs_f64();
    let time = if seconds < 1.0 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    };
    println!(
        "time: {time} on {threads} thread{}",
        if threads == 1 { "" } else { "s" }
    );
}

fn match_json(
    report: &MatchReport,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
) -> serde_json::Value {
    let s = &report.stats;
    let r = config.rules;
    json!({
        "variant": format!("Kalah({},{})", r.houses, r.seeds),
        "rules": r.rules.as_str(),
        "pie": r.pie,
        "a": a.to_string(),
        "b": b.to_string(),
        "games": s.games,
        "wins": s.wins,
        "draws": s.draws,
        "losses": s.losses,
        "seeds_a": s.seeds_a,
        "seeds_b": s.seeds_b,
        "margin_mean": s.margin_mean,
        "margin_ci95": s.margin_ci95,
        "nodes_a": s.nodes_a,
        "nodes_b": s.nodes_b,
        "opening_plies": config.opening_plies,
        "seed": config.seed,
        "time_ms": report.elapsed.as_millis() as u64,
    })
}

/// One game of --verbose --json's `results`.
fn game_json(g: &GameResult) -> serde_json::Value {
    json!({
        "game": g.index + 1,
        "a_side": if g.a_started_south() { "south" } else { "north" },
        "swapped": g.game.swapped(),
        "margin_a": g.margin_a,
        "store_a": g.store_a,
        "store_b": g.store_b,
        "nodes_a": g.nodes_a,
        "nodes_b": g.nodes_b,
        "actions": g.game.actions().iter().map(|(_, a)| a.to_string()).collect::<Vec<_>>(),
        "opening": g.opening,
    })
}
