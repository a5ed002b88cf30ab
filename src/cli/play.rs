//! `kalah play`: a game at the terminal (or from piped input), engines and humans.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kalah::files::Claimed;
use kalah::play::record::{Record, now_utc};
use kalah::play::{Action, Game, GameRules, PlayRules, Player, PlayerSpec, Resources, Thinking};
use kalah::text;

use super::CliError;
use super::db_choice::DbChoice;
use super::hints::Hints;
use super::progress::Indicator;
use super::thinking::thinking_text;

/// Play a game of Kalah: humans at the terminal, engines, or both.
///
/// The board is drawn after every move. A human types a house number (1..M, counted from their
/// own side, house M next to their store), `hint` (the exact value of every legal move, when
/// the position can be solved quickly; else the anytime engine's estimate, see --hint-time),
/// `undo` (take back your last move and the replies to it), `swap` (under --pie, as North after
/// South's first turn) or `quit` (save the game so far and stop; --resume continues it). Input
/// may be piped: each line is one command. While an engine thinks, stderr shows what it is
/// doing (a spinner on a terminal, a line every few seconds otherwise).
///
/// Players: human, random[:SEED], greedy, minimax:D (D 1 to 30), alphabeta:D, perfect,
/// engine:TIME (1ms to 86400s; engine:TIME:no-db leaves the endgame databases out),
/// learner[:FILE] (alphabeta:4 that remembers, in FILE [default: kalah-learner.txt], the
/// openings of the games it failed to win, and steers away from them).
#[derive(Args, Debug)]
pub struct PlayArgs {
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
        value_parser = super::args::count::<u32>(super::args::SEEDS)
    )]
    seeds: u32,
    /// Rule set: standard, empty-capture, awari-basic (the 1973 BASIC game) or mankalah
    /// (standard, but South's first sowing earns no extra turn).
    #[arg(long, default_value = "standard", value_parser = super::args::play_rules_parser())]
    rules: PlayRules,
    /// The pie rule: North may answer South's first turn with `swap` and take South's side.
    #[arg(long)]
    pie: bool,
    /// Who plays South (moves first) [default: human; with --resume, the record's South].
    #[arg(long, value_name = "SPEC", value_parser = super::args::player_spec())]
    south: Option<String>,
    /// Who plays North [default: alphabeta:6; with --resume, the record's North].
    #[arg(long, value_name = "SPEC", value_parser = super::args::player_spec())]
    north: Option<String>,
    /// Endgame databases for `perfect`, the engines and hints.
    #[command(flatten)]
    db: DbChoice,
    /// `perfect` and hints answer from the opening books where they know every move's value.
    #[command(flatten)]
    book: super::books::BookArg,
    /// Write the game record here after every move, so that a session stopped in any way
    /// leaves the game so far. FILE is held for the whole game: a second game given the same
    /// FILE is refused while this one runs. An existing FILE is refused (see --force) unless it
    /// is empty or the game being resumed.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Continue the game saved in FILE (a record, as `quit` and --record write them): the
    /// variant and the moves so far come from it, and the game goes on being saved to it
    /// (unless --record names another file).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["houses", "seeds", "rules", "pie"]
    )]
    resume: Option<PathBuf>,
    /// Hints solve positions with at most this many seeds on the board (or in the database),
    /// 0 to 64 (beyond, a hint would take hours).
    #[arg(
        long,
        default_value_t = 30,
        value_name = "S",
        value_parser = super::args::count::<u32>(super::args::EXACT_SEEDS)
    )]
    hint_seeds: u32,
    /// Where no exact hint is in reach (more seeds than --hint-seeds and not in --db,
    /// awari-basic, mankalah's first sowing), `hint` runs the anytime engine this long, 0.01 to
    /// 600 seconds, and gives its estimate (a hint is worth waiting seconds for, not hours).
    #[arg(
        long,
        default_value = "2",
        value_name = "SECONDS",
        value_parser = super::args::seconds(0.01, 600.0)
    )]
    hint_time: Duration,
    /// Solver threads for `perfect` and hints, 1 to 64 (4 a core above 16 cores)
    /// [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,
    /// Replace an existing file given to --record that is neither empty nor the game being
    /// resumed (and, without --record, an existing kalah-saved-game.txt when the game is saved
    /// at `quit`).
    #[arg(long)]
    force: bool,
    /// Show the nodes each engine move searched (compare minimax:D with alphabeta:D).
    #[arg(long)]
    verbose: bool,
}

/// The longest line a human may type, in bytes: a command is a few characters, so this is
/// plenty, and a longer line (a file piped by mistake) is one error, read in bounded memory.
const MAX_HUMAN_LINE: usize = 1024;

/// Checks the variant of a game to be played.
pub fn game_rules(
    houses: usize,
    seeds: u32,
    rules: PlayRules,
    pie: bool,
) -> Result<GameRules, CliError> {
    kalah::Variant::new(houses, u64::from(seeds), rules.kalah().unwrap_or_default())
        .map_err(|e| CliError::input(format!("invalid variant: {e}")))?;
    if seeds == 0 {
        return Err(CliError::input("--seeds must be at least 1"));
    }
    Ok(GameRules {
        houses,
        seeds,
        rules,
        pie,
    })
}

pub fn run(args: PlayArgs) -> Result<(), CliError> {
    let (game, saved_names) = match &args.resume {
        Some(file) => {
            let record = super::files::read_record(file)?;
            let game = record
                .replay()
                .expect("a parsed record has only legal actions");
            (game, Some([record.south, record.north]))
        }
        None => (
            Game::new(game_rules(args.houses, args.seeds, args.rules, args.pie)?),
            None,
        ),
    };
    let rules = game.rules();
    let threads = super::args::threads_or_all(args.threads);
    // Each seat's player: as given, else the resumed record's, else the default.
    let mut names = Vec::new();
    let mut specs = Vec::new();
    for (seat, (given, default, flag)) in [
        (&args.south, "human", "--south"),
        (&args.north, "alphabeta:6", "--north"),
    ]
    .into_iter()
    .enumerate()
    {
        let saved = saved_names.as_ref().map(|n| n[seat].clone());
        let name = given
            .clone()
            .or(saved)
            .unwrap_or_else(|| default.to_owned());
        let spec = name.parse::<PlayerSpec>().map_err(|e| {
            if given.is_none() && saved_names.is_some() {
                CliError::input(format!("the resumed record names an {e} (give {flag})"))
            } else {
                CliError::input(e.to_string())
            }
        })?;
        names.push(name);
        specs.push(spec);
    }
    let perfect = specs.contains(&PlayerSpec::Perfect);
    let db = super::game_db::open_db_for_perfect(&args.db, rules, perfect, threads)?;
    let book = super::game_db::open_book_for_perfect(&args.book, &args.db, rules, perfect)?;
    // The hints read the perfect player's books, if it has them (none with --no-book).
    let hint_book = if args.book.no_book {
        Some(std::sync::Arc::new(kalah::book::Book::empty()))
    } else {
        book.clone()
    };
    let res = Resources {
        db: db.clone(),
        book,
        threads,
        tt_mib: 0,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    let mut players: Vec<Option<Box<dyn Player>>> = Vec::new();
    for spec in specs {
        players.push(match spec {
            PlayerSpec::Human => None,
            spec => Some(
                spec.make(rules.houses, rules.seeds, rules.rules, &res)
                    .map_err(|e| {
                        let spec = text::quote(&spec.to_string());
                        CliError::input(format!("cannot make player {spec}: {e}"))
                    })?,
            ),
        });
    }
    let record = match args.record.as_ref().or(args.resume.as_ref()) {
        Some(path) => Some(super::files::claim_record(
            path,
            args.resume.as_deref(),
            args.force,
        )?),
        None => None,
    };
    // A finished game resumed is only shown: the players (the learner) have seen its end.
    let over_already = game.state().to_move().is_none();
    let mut session = Session {
        game,
        names: [names[0].clone(), names[1].clone()],
        record,
        unsaved: args.resume.is_none(),
        saved: false,
        hints: Hints::new(db, hint_book, threads, args.hint_seeds, args.hint_time),
        input: std::io::stdin().lock(),
        interactive: std::io::IsTerminal::is_terminal(&std::io::stdin()),
        verbose: args.verbose,
    };
    println!(
        "{rules}: {} (South) against {} (North)",
        text::escape(&session.names[0]),
        text::escape(&session.names[1])
    );
    if let Some(file) = &args.resume {
        let n = session.game.actions().len();
        println!(
            "resumed from {} after {n} action{}",
            file.display(),
            if n == 1 { "" } else { "s" }
        );
    }
    // Ctrl-C (or SIGTERM) at any moment: say where the game is, then stop (exit code 130).
    // The record is written whole after every move, so what it holds is the game so far.
    let saved_to = session.record.as_ref().map(|r| r.path().to_owned());
    kalah::catch_interrupt();
    super::threads::spawn("interrupt", move || {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(100));
            if kalah::interrupted() {
                match &saved_to {
                    Some(path) => eprintln!(
                        "\ninterrupted: the game so far is in {} (kalah play --resume {} goes on with it)",
                        path.display(),
                        path.display()
                    ),
                    None => eprintln!(
                        "\ninterrupted: the game is not saved (type `quit` to stop and save it, or give --record FILE)"
                    ),
                }
                std::process::exit(130);
            }
        }
    })?;
    let finished = session.play(&mut players)?;
    match (&session.record, finished) {
        // Saved after every move already.
        (Some(record), _) => {
            if session.saved {
                println!("game saved to {}", record.path().display());
            }
        }
        (None, false) => {
            let record = session
                .record
                .insert(super::files::claim_saved_game(args.force)?);
            let path = record.path().to_owned();
            session.save()?;
            println!("game saved to {}", path.display());
        }
        (None, true) => {}
    }
    if finished && !over_already {
        for (seat, player) in players.iter_mut().enumerate() {
            if let Some(p) = player {
                p.game_over(&session.game, seat)
                    .map_err(|e| CliError::failure(format!("{}: {e}", p.name())))?;
            }
        }
    }
    Ok(())
}

/// What a human typed.
enum Ask {
    Act(Action),
    Redraw,
    Quit,
}

struct Session<R: BufRead> {
    game: Game,
    names: [String; 2],
    /// Where the game is saved after every move, if anywhere (held for the whole game).
    record: Option<Claimed>,
    /// The game changed since it was last saved (or began).
    unsaved: bool,
    /// The game was saved to `record` at least once.
    saved: bool,
    hints: Hints,
    input: R,
    /// Whether the input is a terminal (its lines are echoed by the terminal itself).
    interactive: bool,
    /// Show the engines' nodes.
    verbose: bool,
}

impl<R: BufRead> Session<R> {
    /// Writes the game so far to the session's record, if any, whole.
    fn save(&mut self) -> Result<(), CliError> {
        let Some(record) = self.record.as_mut() else {
            return Ok(());
        };
        let text =
            Record::of(&self.game, &self.names[0], &self.names[1], Some(now_utc())).to_text();
        super::files::replace_whole(record, &text).map_err(|e| {
            CliError::failure(format!("cannot write {}: {e}", record.path().display()))
        })
    }

    /// Plays until the game ends (`true`) or a human quits (`false`), saving the game to the
    /// session's record whenever it changed.
    fn play(&mut self, players: &mut [Option<Box<dyn Player>>]) -> Result<bool, CliError> {
        loop {
            if self.unsaved && self.record.is_some() {
                self.save()?;
                self.unsaved = false;
                self.saved = true;
            }
            let state = self.game.state();
            println!("\n{}", state.render().trim_end());
            // The drawing's last line already gives the result once the game is over.
            let Some(side) = state.to_move() else {
                return Ok(true);
            };
            let seat = self.game.seat(side);
            let who = text::escape(&self.names[seat]);
            let action = match &mut players[seat] {
                Some(engine) => {
                    let before = engine.nodes();
                    let indicator = Indicator::spinner(format!("{side} ({who}) thinking"), "");
                    let chosen = choose_with_live_nodes(engine.as_mut(), &self.game, &indicator);
                    indicator.finish();
                    let action = chosen.map_err(|e| CliError::failure(format!("{who}: {e}")))?;
                    match (self.verbose, before, engine.nodes()) {
                        (true, Some(a), Some(b)) => {
                            println!("{side} ({who}) plays {action} ({} nodes)", b - a)
                        }
                        _ => println!("{side} ({who}) plays {action}"),
                    }
                    action
                }
                None => match self.ask(side)? {
                    Ask::Act(action) => action,
                    Ask::Redraw => continue,
                    Ask::Quit => return Ok(false),
                },
            };
            let sown = self
                .game
                .play(action)
                .map_err(|e| CliError::failure(format!("{who} chose {action}: {e}")))?;
            self.unsaved = true;
            if sown.is_some_and(|s| s.extra_turn && !s.game_over) {
                println!("{side}'s last seed fell into its store: extra turn, {side} moves again");
            }
            if action == Action::Swap {
                let name = |side| text::escape(&self.names[self.game.seat(side)]);
                println!(
                    "swapped: {} (North until now) plays South, {} plays North",
                    name(kalah::Side::South),
                    name(kalah::Side::North)
                );
            }
        }
    }

    /// Prompts the human playing `side` until a legal action, `undo` or `quit`.
    fn ask(&mut self, side: kalah::Side) -> Result<Ask, CliError> {
        let m = self.game.rules().houses;
        loop {
            let swap = if self.game.can_swap() { ", swap" } else { "" };
            print!("{side}, your move (1-{m}, hint, undo{swap}, quit): ");
            let _ = std::io::stdout().flush();
            // Bounded: an endless line is read in pieces, reported, and the prompt comes back.
            let read = match text::read_line(&mut self.input, MAX_HUMAN_LINE) {
                Ok(read) => read,
                // Not lines of text (an endless line): as the end of the input.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    println!("\n{e}: stopping");
                    return Ok(Ask::Quit);
                }
                Err(e) => return Err(CliError::failure(format!("cannot read the input: {e}"))),
            };
            let Some(line) = read else {
                println!("\nend of input: stopping");
                return Ok(Ask::Quit);
            };
            let line = match line.into_text(MAX_HUMAN_LINE) {
                Ok(line) => line,
                Err(why) => {
                    if !self.interactive {
                        println!();
                    }
                    println!("{why}");
                    continue;
                }
            };
            let line = line.trim();
            if !self.interactive {
                // Piped input: show what was read, so the transcript reads like a session
                // (escaped: the terminal shows the input, it does not obey it).
                println!("{}", text::escape(line));
            }
            match line {
                "" => continue,
                "quit" | "q" => return Ok(Ask::Quit),
                "hint" | "h" => println!("{}", self.hints.hint(&self.game)),
                "undo" | "u" => {
                    if self.undo(side) {
                        return Ok(Ask::Redraw);
                    }
                }
                _ => match line.parse::<Action>() {
                    Ok(action) if self.game.legal_actions().contains(&action) => {
                        return Ok(Ask::Act(action));
                    }
                    Ok(Action::Swap) => println!("swap is not allowed now"),
                    Ok(action) => {
                        let why = self.game.clone().play(action).err().map(|e| e.to_string());
                        println!("{}", why.unwrap_or_else(|| "not allowed now".into()));
                    }
                    Err(_) => println!(
                        "{} is not a house number (1-{m}), hint, undo{swap} or quit",
                        text::quote(line)
                    ),
                },
            }
        }
    }

    /// Takes back the last action of the human now playing `side` and everything after it;
    /// `false` if there is none.
    fn undo(&mut self, side: kalah::Side) -> bool {
        let seat = self.game.seat(side);
        let game = &self.game;
        // The last action made by this seat (whichever side it played then).
        let last = (0..game.actions().len()).rev().find(|&i| {
            let before = game.truncated(i);
            before
                .state()
                .to_move()
                .is_some_and(|s| before.seat(s) == seat)
        });
        match last {
            Some(i) => {
                let undone = self.game.actions().len() - i;
                self.game = self.game.truncated(i);
                self.unsaved = true;
                println!(
                    "taken back: your last move{} ({undone} action{} in all); play it again",
                    if undone > 1 {
                        " and what followed it"
                    } else {
                        ""
                    },
                    if undone == 1 { "" } else { "s" }
                );
                true
            }
            None => {
                println!("nothing to undo");
                false
            }
        }
    }
}

/// `engine`'s choice in `game`, what it reports drawn on `indicator`; an exact solver's
/// node count is read again every quarter of a second meanwhile, so that the count moves
/// during a test that lasts seconds (the solver reports only between its tests).
fn choose_with_live_nodes(
    engine: &mut dyn Player,
    game: &Game,
    indicator: &Indicator,
) -> Result<Action, kalah::play::PlayError> {
    let Some(counter) = engine.node_counter() else {
        let mut watch = |t: &Thinking| indicator.set_message(thinking_text(t));
        return engine.choose_watched(game, &mut watch);
    };
    let last = std::sync::Mutex::new(None::<Thinking>);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The count is a display only: without a thread for it (none to be had), the choice is
        // made as it is without a count.
        let ticker = std::thread::Builder::new().spawn_scoped(scope, || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::park_timeout(std::time::Duration::from_millis(250));
                let last = *last.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(Thinking::Solving {
                    depth,
                    lower,
                    upper,
                    ..
                }) = last
                {
                    indicator.set_message(thinking_text(&Thinking::Solving {
                        depth,
                        lower,
                        upper,
                        nodes: counter.get(),
                    }));
                }
            }
        });
        let mut watch = |t: &Thinking| {
            *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(*t);
            indicator.set_message(thinking_text(t));
        };
        let chosen = engine.choose_watched(game, &mut watch);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Ok(ticker) = ticker {
            ticker.thread().unpark();
        }
        chosen
    })
}
