//! `kalah replay`: a recorded game move by move, each sowing valued exactly where it can be.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use kalah::answer::{Budget, OnSolver, Sources, Want, answer};
use kalah::db::Tablebase;
use kalah::play::record::Record;
use kalah::play::{Action, Game, PlayRules, PlayState};
use kalah::text::escape;
use kalah::{AnyPosition, Lanes, Move, Position, Rules, Side, Solver, SolverConfig, with_position};
use serde_json::json;

use super::CliError;
use super::args::{play_literal, print_json};
use super::db_choice::DbChoice;
use super::human::human_duration;
use super::progress::Indicator;
use super::replay_forecast::Forecast;
use super::replay_ply::{Ply, Valuation};

/// Replay a recorded game: every position, the action played and, under Kalah rules, the exact
/// value of each sowing against the best one (the mistake, in seeds).
///
/// Values are final store differences for the side that moves, stores included, under
/// perfect play from there on. A sowing is valued when its position is in the endgame
/// database (--db), an opening book answers it (the first sowings of Kalah(6,4) and (6,5);
/// --no-book), or it has at most S seeds on the board (--solve-seeds, searched); the other
/// sowings get an estimate (a search 10 sowings deep), marked as such and counted apart from
/// the exact mistakes (--no-estimates: none). The actions
/// of a match's random opening are valued but counted against no player. The pie
/// rule's swap, and under the pie rule the moves before North's answer to South's first
/// turn, are not valued (the solver does not know the swap); nothing is valued under
/// awari-basic rules.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The game record (as `kalah match --record` and `kalah play` write them).
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// Endgame databases: positions with few enough seeds are read from them at once, and
    /// the search probes them.
    #[command(flatten)]
    db: DbChoice,

    #[command(flatten)]
    book: super::books::BookArg,

    /// Search the positions with at most S seeds on the board, 0 (value only what the database
    /// holds) to 64 (beyond, a search takes hours). Each such position is solved exactly: keep
    /// S small for big variants. Default: the database's top level plus 12 (a fraction of a
    /// second a position; 36 with the levels 0..24), or 30 without database files. Without
    /// database files, searching boards of 40 seeds or more first builds the small endgame
    /// levels in memory, as `kalah solve` does.
    #[arg(
        long,
        value_name = "S",
        value_parser = super::args::count::<u32>(super::args::EXACT_SEEDS)
    )]
    solve_seeds: Option<u32>,

    /// Value only what the databases, the books and the search reach: no estimates for the
    /// other sowings.
    #[arg(long)]
    no_estimates: bool,

    /// Also draw the game as an SVG file: South's exact value after every sowing (an
    /// evaluation graph), each mistake marked with its size, estimates drawn apart.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,

    /// Print one JSON object: the record's header (`variant`, `south`, `north`, `result`,
    /// ...) and `moves`, one a ply: `ply`, `side`, `player`, `action`, `value` (the sowing's
    /// value for the mover, null if not valued), `best` and `best_move`, `mistake` (seeds
    /// lost), `source`, `exact` (false for an estimate).
    #[arg(long)]
    json: bool,
}

/// The depth of the search that estimates the sowings beyond the exact ones: a few
/// milliseconds a position on Kalah(6,4).
const ESTIMATE_DEPTH: u8 = 10;

/// What `--solve-seeds` is by default: the top level of the database files plus this.
const SOLVE_ABOVE_DB: u32 = 12;

/// The time left is shown only once the replay has run this long: before, too few sowings were
/// timed to forecast from.
const FORECAST_AFTER: Duration = Duration::from_secs(1);

/// `--solve-seeds` without database files.
const SOLVE_WITHOUT_DB: u32 = 30;

/// Values sowings: from the database when it holds the position, else by one solver shared by
/// the whole replay (its table stays warm from one position to the next).
struct Judge {
    rules: Rules,
    db: Option<Arc<Tablebase>>,
    /// The opening books of the game.
    book: kalah::book::Book,
    solver: Solver,
    solve_seeds: u32,
    /// Estimate the sowings beyond `solve_seeds`.
    estimates: bool,
}

impl Judge {
    fn new(
        houses: usize,
        rules: Rules,
        db: Option<Arc<Tablebase>>,
        book: kalah::book::Book,
        solve_seeds: u32,
        estimates: bool,
    ) -> Result<Judge, CliError> {
        let top = db.as_ref().map(|d| d.max_level());
        let tt_mib = kalah::search::auto_table_mib(houses, solve_seeds, top, rules);
        let config = SolverConfig {
            tt_mib,
            ..SolverConfig::default()
        };
        let fail =
            |e: kalah::SolveError| CliError::failure(format!("cannot start the solver: {e}"));
        let mut solver = Solver::new(houses, rules, config).map_err(fail)?;
        if let Some(db) = &db {
            solver = solver.with_tablebase(db.clone()).map_err(fail)?;
        }
        Ok(Judge {
            rules,
            db,
            book,
            solver,
            solve_seeds,
            estimates,
        })
    }

    /// The value of sowing `mv` in `state` against the best, if the position is in the
    /// database or has few enough seeds on the board.
    fn value(&self, state: &PlayState, mv: Move) -> Result<Option<Valuation>, CliError> {
        let pos = AnyPosition::from_setup(&state.to_setup(), self.rules)
            .map_err(|e| CliError::failure(format!("a replayed position is invalid: {e}")))?;
        with_position!(pos, p => self.value_of(&p, mv))
    }

    /// The valuation of `mv` at `p`: the answer ([`kalah::answer`]) from the levels, the
    /// books and ledgers, else a search of a board of at most `solve_seeds` seeds; beyond, an
    /// estimate (unless --no-estimates: none).
    fn value_of<L: Lanes>(&self, p: &Position<L>, mv: Move) -> Result<Option<Valuation>, CliError> {
        let sources = Sources {
            levels: self.db.as_deref(),
            ledgers: Some(&self.book),
        };
        let budget = Budget {
            max_seeds: Some(self.solve_seeds),
            ..Budget::default()
        };
        let want = Want::Move { played: Some(mv) };
        let mut search = OnSolver::quiet(&self.solver);
        let found = answer(p, &sources, want, &budget, Some(&mut search))
            .map_err(super::search::answer_error)?;
        if !found.answers(want) {
            return if self.estimates {
                self.estimate(p, mv).map(Some)
            } else {
                Ok(None)
            };
        }
        let value = found.of_move(mv).and_then(|m| m.value());
        let (Some(value), Some(best), Some(&best_move)) =
            (value, found.exact(), found.best().first())
        else {
            return Ok(None);
        };
        Ok(Some(Valuation {
            value,
            best,
            best_move,
            source: found.source.as_str(),
        }))
    }
}

impl Judge {
    /// The estimated values of every move of `p` (a search [`ESTIMATE_DEPTH`] sowings deep
    /// below each), as the value of `mv` against the best.
    fn estimate<L: Lanes>(&self, p: &Position<L>, mv: Move) -> Result<Valuation, CliError> {
        let fail = |e: kalah::SolveError| CliError::failure(format!("cannot estimate: {e}"));
        let me = p.to_move().expect("a position with a move to make");
        let mut best: Option<(i32, Move)> = None;
        let mut played = None;
        for m in p.legal_moves() {
            let (child, _) = p
                .play(m)
                .map_err(|e| CliError::failure(format!("a replayed sowing is illegal: {e}")))?;
            let v = match child.to_move() {
                None => child.outcome().expect("a finished game").margin(me),
                Some(side) => {
                    let f = self
                        .solver
                        .estimate(child.board(), ESTIMATE_DEPTH)
                        .map_err(fail)?;
                    let v = child.store_difference() + f;
                    if side == me { v } else { -v }
                }
            };
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, m));
            }
            if m == mv {
                played = Some(v);
            }
        }
        let (best, best_move) = best.expect("a legal move");
        Ok(Valuation {
            value: played.expect("the replayed sowing is legal"),
            best,
            best_move,
            source: "estimate",
        })
    }
}

pub fn run(args: ReplayArgs) -> Result<(), CliError> {
    let record = super::files::read_record(&args.file)?;
    let rules = record.rules;
    let kalah_rules = rules.rules.kalah();
    let threads = super::args::threads_or_all(None);
    // Without --solve-seeds: within reach of the database files, if any.
    let files = match kalah_rules {
        Some(r) => args.db.open(rules.houses, r)?,
        None => None,
    };
    let solve_seeds = args.solve_seeds.unwrap_or_else(|| {
        files
            .as_ref()
            .map_or(SOLVE_WITHOUT_DB, |db| db.max_level() + SOLVE_ABOVE_DB)
    });
    let search_seeds = (solve_seeds > 0).then(|| solve_seeds.min(rules.seeds_in_play()));
    let db = match files {
        Some(db) => {
            eprintln!("{}", super::db_choice::files_line(&db));
            Some(db)
        }
        None => super::game_db::open_db(&args.db, rules, search_seeds, "the replay", threads)?,
    };
    let judge = match kalah_rules {
        Some(r) => {
            let game = (rules.houses, r, rules.seeds_in_play());
            let book = args.book.open(&args.db, Some(game))?;
            Some(Judge::new(
                rules.houses,
                r,
                db.clone(),
                book,
                search_seeds.unwrap_or(0),
                !args.no_estimates,
            )?)
        }
        None => None,
    };

    // No bar: an action's time varies a thousandfold (a book or a level answers at once, a
    // search may take minutes), so the time left is forecast from the seeds of the sowings
    // ahead (see `replay_forecast`), not from the actions done.
    let indicator = Indicator::spinner("valuing", "actions");
    let of_all = format!("of {} in the game", record.actions.len());
    indicator.set_message(&of_all);
    // The seeds on the board before every action, to forecast the time left.
    let seeds_before: Vec<u32> = {
        let mut game = Game::new(rules);
        record
            .actions
            .iter()
            .map(|&action| {
                let seeds = game.state().seeds_on_board();
                game.play(action)
                    .expect("a parsed record has only legal actions");
                seeds
            })
            .collect()
    };
    let mut forecast = Forecast::new(
        db.as_ref().map(|d| d.max_level()),
        search_seeds.unwrap_or(0),
        !args.no_estimates,
    );
    let started = Instant::now();
    let mut game = Game::new(rules);
    let mut plies = Vec::with_capacity(record.actions.len());
    // Ctrl-C or SIGTERM while the actions are valued: nothing is printed or drawn (the values
    // come out together at the end), so the process says how far it got and ends at once.
    let valued = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    let mut value_actions = || -> Result<(), CliError> {
        for (i, &action) in record.actions.iter().enumerate() {
            let state = *game.state();
            let side = state
                .to_move()
                .expect("a parsed record has only legal actions");
            // Under the pie rule, North may still swap until it has answered South's first turn.
            // Under mankalah the first sowing earns no extra turn, which the solver does not know.
            let swap_ahead = rules.pie && game.actions().iter().all(|&(s, _)| s == Side::South)
                || state.first_sowing_passes();
            let took = Instant::now();
            let valuation = match (action, &judge) {
                (Action::Sow(mv), Some(judge)) if !swap_ahead => judge.value(&state, mv)?,
                _ => None,
            };
            if let Some(v) = &valuation {
                forecast.record(seeds_before[i], v.source, took.elapsed());
                let left = forecast.remaining(seeds_before[i + 1..].iter().copied());
                match left {
                    Some(left) if started.elapsed() >= FORECAST_AFTER => indicator
                        .set_message(format!("{of_all}, about {} left", human_duration(left))),
                    _ => indicator.set_message(&of_all),
                }
            }
            plies.push(Ply {
                state,
                side,
                seat: game.seat(side),
                action,
                valuation,
            });
            game.play(action)
                .expect("a parsed record has only legal actions");
            indicator.inc(1);
            valued.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    };
    kalah::catch_interrupt();
    let total = record.actions.len();
    std::thread::scope(|scope| {
        super::cancel_on_interrupt(scope, &done, || {
            indicator.suspend(|| {
                eprintln!(
                    "interrupted after valuing {} of {total} actions: nothing printed, no plot \
                     drawn (a replay keeps nothing; fewer --solve-seeds, or --no-estimates, make \
                     it shorter)",
                    valued.load(Ordering::Relaxed)
                );
                std::process::exit(130)
            })
        })?;
        let result = value_actions();
        done.store(true, Ordering::Relaxed);
        result
    })?;
    indicator.finish();

    if let Some(path) = &args.plot {
        super::replay_plot::write(path, &record, &plies)?;
        eprintln!("plot: {}", path.display());
    }
    if args.json {
        let mut out = replay_json(&record, &plies, &game);
        out["db"] = super::db_choice::files_json(db.as_deref());
        print_json(&out);
    } else {
        print_replay(&record, &plies, &game, &args, db.as_deref(), solve_seeds);
    }
    Ok(())
}

fn replay_json(record: &Record, plies: &[Ply], game: &Game) -> serde_json::Value {
    let r = record.rules;
    let names = [&record.south, &record.north];
    let moves: Vec<serde_json::Value> = plies
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = p.valuation.as_ref();
            json!({
                "ply": i + 1,
                "side": p.side.as_str(),
                "player": names[p.seat],
                "action": p.action.to_string(),
                "position": play_literal(&p.state),
                "value": v.map(|v| v.value),
                "best": v.map(|v| v.best),
                "best_move": v.map(|v| v.best_move.house()),
                "mistake": v.map(|v| v.best - v.value),
                "source": v.map(|v| v.source),
                "exact": v.map(|v| v.source != "estimate"),
                "opening": i < record.opening,
            })
        })
        .collect();
    json!({
        "variant": format!("Kalah({},{})", r.houses, r.seeds),
        "rules": r.rules.as_str(),
        "pie": r.pie,
        "south": record.south,
        "north": record.north,
        "date": record.date,
        "opening": record.opening,
        "moves": moves,
        "result": game.state().result(),
        "final_position": play_literal(game.state()),
    })
}

fn print_replay(
    record: &Record,
    plies: &[Ply],
    game: &Game,
    args: &ReplayArgs,
    db: Option<&Tablebase>,
    solve_seeds: u32,
) {
    let file = Path::new(&args.file);
    let r = record.rules;
    // The names and the date are the file's text: shown escaped, never obeyed by the terminal.
    let names = [escape(&record.south), escape(&record.north)];
    println!(
        "{r}: South {}, North {} ({}{})",
        names[0],
        names[1],
        file.display(),
        record
            .date
            .as_ref()
            .map_or(String::new(), |d| format!(", {}", escape(d)))
    );
    match r.rules {
        PlayRules::AwariBasic => {
            println!(
                "awari-basic rules: the moves are not valued (the solver knows Kalah rules only)"
            )
        }
        PlayRules::Kalah(_) | PlayRules::ManKalah => {
            let db = db
                .filter(|d| !d.dir().as_os_str().is_empty())
                .map_or(String::new(), |d| {
                    format!(
                        "is in the database (levels 0..={} in {}) or ",
                        d.max_level(),
                        d.dir().display()
                    )
                });
            let books = if args.book.no_book {
                ""
            } else {
                "is answered by the opening books (shipped, and the database directory's \
                 ledgers; --no-book reads none) or "
            };
            println!(
                "values: final store differences for the mover under perfect play, stores \
                 included; a sowing is valued when its position {db}{books}has at most \
                 {solve_seeds} seeds on the board{}",
                if args.no_estimates {
                    ""
                } else {
                    "; the others are estimated (~, a search 10 sowings deep, not exact: counted \
                     apart)"
                }
            );
            if r.pie {
                println!(
                    "pie rule: South's first turn and North's answer are not valued (the solver \
                     does not know the swap)"
                );
            }
        }
    }
    // Per seat: seeds lost, mistakes made, sowings valued.
    let mut tally = [(0i64, 0usize, 0usize); 2];
    // Per seat: sowings estimated (not in the tally).
    let mut estimated = [0usize; 2];
    for (i, p) in plies.iter().enumerate() {
        println!();
        println!("{}", p.state.render());
        let who = if i < record.opening {
            "random opening"
        } else {
            names[p.seat].as_str()
        };
        let head = format!("{}. {} ({who}): {}", i + 1, p.side, p.action);
        let verdict = match (&p.valuation, p.action) {
            // No player chose it: shown, never counted against anyone.
            (v, _) if i < record.opening => match v {
                Some(v) => format!(
                    "the random opening, no player's choice (value {:+}, best {:+})",
                    v.value, v.best
                ),
                None => "the random opening, no player's choice".to_owned(),
            },
            (_, Action::Swap) => "the pie rule's swap (not valued)".to_owned(),
            (Some(v), _) if v.source == "estimate" => {
                estimated[p.seat] += 1;
                let mistake = v.best - v.value;
                if mistake == 0 {
                    format!("value ~{:+} (best, by estimate)", v.value)
                } else {
                    format!(
                        "value ~{:+}, best ~{:+} (house {}): about {mistake} seed{} lost, by \
                         estimate",
                        v.value,
                        v.best,
                        v.best_move,
                        if mistake == 1 { "" } else { "s" }
                    )
                }
            }
            (Some(v), _) => {
                let t = &mut tally[p.seat];
                t.2 += 1;
                let mistake = v.best - v.value;
                if mistake == 0 {
                    format!("value {:+} (best)", v.value)
                } else {
                    t.0 += i64::from(mistake);
                    t.1 += 1;
                    format!(
                        "value {:+}, best {:+} (house {}): a mistake of {mistake} seed{}",
                        v.value,
                        v.best,
                        v.best_move,
                        if mistake == 1 { "" } else { "s" }
                    )
                }
            }
            (None, _) => match r.rules {
                PlayRules::AwariBasic => "not valued".to_owned(),
                PlayRules::Kalah(_) | PlayRules::ManKalah => format!(
                    "not valued ({} seeds on the board)",
                    p.state.seeds_on_board()
                ),
            },
        };
        println!("{head}    {verdict}");
    }
    println!();
    let drawing = game.state().render();
    match game.state().result() {
        Some(result) => {
            // The drawing's last line judges the game by Kalah's sweep; the result line below
            // is right under every rule set.
            let board = drawing
                .rsplit_once('\n')
                .map_or(drawing.as_str(), |(b, _)| b);
            println!("{board}");
            println!("result: {result}");
        }
        None => {
            println!("{drawing}");
            println!("result: unfinished");
        }
    }
    if r.rules.kalah().is_some() {
        let line: Vec<String> = (0..2)
            .map(|seat| {
                let (seeds, count, valued) = tally[seat];
                let guessed = match estimated[seat] {
                    0 => String::new(),
                    n => format!(" (and {n} estimated)"),
                };
                format!(
                    "{} ({}) {seeds} seed{} in {count} of {valued} valued sowings{guessed}",
                    names[seat],
                    if seat == 0 {
                        "started South"
                    } else {
                        "started North"
                    },
                    if seeds == 1 { "" } else { "s" }
                )
            })
            .collect();
        let opening = match record.opening {
            0 => String::new(),
            1 => " (the random opening's action not counted)".to_owned(),
            n => format!(" (the random opening's {n} actions not counted)"),
        };
        println!("mistakes: {}{opening}", line.join("; "));
    }
}
