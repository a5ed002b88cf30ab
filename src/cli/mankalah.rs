//! `kalah mankalah`: an agent for the Manchester ManKalah game engine, over stdin and stdout.

use std::fs::File;
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use kalah::Rules;
use kalah::bots::mankalah::{
    Agent, DEFAULT_BUDGET, DEFAULT_MAX_MOVE_TIME, HOUSES, MAX_LINE, Next, TimePlan,
};
use kalah::play::anytime::EngineConfig;
use kalah::play::record::now_utc;
use kalah::text::{self, Line};

use super::CliError;
use super::db_choice::DbChoice;

/// Plays Kalah(7,7) for the ManKalah game engine, reading its messages on stdin and answering
/// on stdout.
///
/// The rules are the engine's: South's first move never earns an extra turn, and North may
/// answer it with SWAP (the pie rule). The agent reads START;South|North,
/// CHANGE;<move|SWAP>;<board>;YOU|OPP|END and END, and answers MOVE;<house> or SWAP when it is
/// its turn. Boards list North's houses 1 to 7, North's store, South's houses 1 to 7, South's
/// store. stdout carries only the answers; notes (a board that differs from the agent's own
/// view, which it then follows) go to stderr. A malformed message (also a line over 4096
/// bytes, or not UTF-8) ends the agent with one line on stderr and exit code 2; input that
/// ends before END, exit code 1.
///
/// Time: each reply thinks for the smaller of its share of the budget (what is left above a
/// reserve of 1/40 of the budget, at most 30 s, divided by the replies expected: half the seeds
/// above 16 on the board, 3 to 40; twice that for South's first move, 1.5 times for North's
/// answer to it) and --max-move-time. With the defaults that is 5 s a reply. One legal move,
/// and a position solved exactly (databases or exact solver), are answered at once.
///
/// Example: kalah mankalah --time-budget 3600 --db db --log agent.log
#[derive(Args, Debug)]
pub struct MankalahArgs {
    /// The thinking time for the whole game, in seconds, 0.01 to 86400 (the engine allows an
    /// hour; a day is more than any game gets). The agent spends a share of what is left on
    /// each reply and keeps a reserve.
    #[arg(
        long,
        default_value = "3600",
        value_name = "SECONDS",
        value_parser = super::args::seconds(0.01, 86_400.0),
        allow_negative_numbers = true
    )]
    time_budget: Duration,
    /// The longest thinking time for one reply, in seconds, 0.01 to 600. A reply may overrun
    /// it by the time an exact solve takes to finish (well under a second here).
    #[arg(
        long,
        default_value = "5",
        value_name = "SECONDS",
        value_parser = super::args::seconds(0.01, 600.0),
        allow_negative_numbers = true
    )]
    max_move_time: Duration,
    /// Endgame databases for 7 houses, standard rules (`kalah db build --houses 7`): positions
    /// with at most their top level of seeds on the board are played perfectly (the log names
    /// the levels used).
    #[command(flatten)]
    db: DbChoice,
    /// Solver threads for the exact endgame, 1 to 64 (4 a core above 16 cores).
    #[arg(long, default_value_t = 1, value_name = "T", value_parser = super::args::threads())]
    threads: usize,
    /// Write every message in and out to FILE, each with the seconds since the start (and the
    /// agent's notes and thinking, on lines starting with #).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
}

// The defaults of --time-budget and --max-move-time, as clap reads them.
const _: () = assert!(DEFAULT_BUDGET.as_secs() == 3600 && DEFAULT_BUDGET.subsec_nanos() == 0);
const _: () =
    assert!(DEFAULT_MAX_MOVE_TIME.as_secs() == 5 && DEFAULT_MAX_MOVE_TIME.subsec_nanos() == 0);

/// Runs the agent until END.
pub fn run(args: MankalahArgs) -> Result<(), CliError> {
    let plan = TimePlan {
        budget: args.time_budget,
        max_move: args.max_move_time,
    };
    let db = args.db.open(HOUSES, Rules::Standard)?;
    let mut log = match &args.log {
        None => Log::none(),
        Some(path) => Log::create(path)?,
    };
    log.note(&match &db {
        Some(db) => super::db_choice::files_line(db),
        None => args.db.none_found(HOUSES, Rules::Standard),
    });
    let config = EngineConfig {
        db,
        exact_seeds: EngineConfig::default_exact_seeds(HOUSES),
        threads: args.threads,
        tt_mib: 64,
    };
    let mut agent = Agent::new(plan, config)
        .map_err(|e| CliError::failure(format!("cannot start the engine: {e}")))?;
    log.note(&format!(
        "kalah mankalah started {}, time budget {:.3} s, at most {:.3} s a reply",
        now_utc(),
        plan.budget.as_secs_f64(),
        plan.max_move.as_secs_f64()
    ));

    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    loop {
        let line = match read_line(&mut input) {
            Ok(Some(line)) => line,
            Ok(None) if agent.is_finished() => {
                log.note("the input ended after the last move, with no END");
                eprintln!("kalah: warning: the engine's input ended with no END after the game");
                return Ok(());
            }
            Ok(None) => {
                let message = "the engine's input ended before END";
                log.note(message);
                return Err(CliError::failure(message));
            }
            Err(e) => {
                log.note(&e.message);
                return Err(e);
            }
        };
        let received = Instant::now();
        log.line("<", &line);
        let next = agent.receive(&line);
        for note in agent.take_notes() {
            log.note(&note);
            eprintln!("kalah: note: {note}");
        }
        let next = next.map_err(|e| {
            log.note(&e.to_string());
            CliError::input(e.to_string())
        })?;
        match next {
            Next::Wait => {}
            Next::Stop => {
                let state = agent.state();
                let result = state
                    .result()
                    .unwrap_or_else(|| "the game was cut short".into());
                log.note(&format!(
                    "END: {result}; we played {}; {:.3} s of thinking time used",
                    agent.side().map_or("no side".into(), |s| s.to_string()),
                    agent.time_used().as_secs_f64()
                ));
                return Ok(());
            }
            Next::Respond => {
                let decision = agent.respond(received).map_err(CliError::failure)?;
                writeln!(output, "{}", decision.reply)
                    .and_then(|()| output.flush())
                    .map_err(|e| CliError::failure(format!("cannot write to the engine: {e}")))?;
                log.line(">", &decision.reply.to_string());
                let value = match decision.value {
                    Some(v) if decision.exact => format!("value {v:+} (exact)"),
                    Some(v) => format!("value {v:+} at depth {}", decision.depth),
                    None => "forced".into(),
                };
                log.note(&format!(
                    "{value}, {} nodes, {:.3} s (allotted {:.3} s), {:.3} s left",
                    decision.nodes,
                    decision.spent.as_secs_f64(),
                    decision.allotted.as_secs_f64(),
                    agent.time_left().as_secs_f64()
                ));
            }
        }
    }
}

/// One line from the engine without its line break (`\n` or `\r\n`); `None` at the end of
/// the input. A line longer than [`MAX_LINE`] is refused as soon as
/// it is (an endless line is not read to its end), as is a line that is not UTF-8.
fn read_line(input: &mut impl BufRead) -> Result<Option<String>, CliError> {
    let line = text::read_line_cut(input, MAX_LINE)
        .map_err(|e| CliError::failure(format!("cannot read from the engine: {e}")))?;
    match line {
        None => Ok(None),
        Some(Line::Text(text)) => Ok(Some(text)),
        Some(Line::TooLong(_)) => Err(CliError::input(format!(
            "bad message from the engine: a line longer than {MAX_LINE} bytes"
        ))),
        Some(Line::NotUtf8(bytes)) => Err(CliError::input(format!(
            "bad message from the engine {}: not UTF-8 text",
            text::quote(&String::from_utf8_lossy(&bytes))
        ))),
    }
}

/// The `--log` file: every line with the seconds since the start.
struct Log {
    file: Option<BufWriter<File>>,
    start: Instant,
}

impl Log {
    fn none() -> Log {
        Log {
            file: None,
            start: Instant::now(),
        }
    }

    fn create(path: &std::path::Path) -> Result<Log, CliError> {
        let file = kalah::files::open_log(path, false).map_err(|e| {
            CliError::input(format!(
                "cannot create the log {}: {e}",
                text::quote(&path.to_string_lossy())
            ))
        })?;
        Ok(Log {
            file: Some(BufWriter::new(file)),
            start: Instant::now(),
        })
    }

    /// A message in (`<`) or out (`>`).
    fn line(&mut self, direction: &str, text: &str) {
        self.write(direction, &text.escape_debug().to_string());
    }

    /// A note of the agent's.
    fn note(&mut self, text: &str) {
        self.write("#", text);
    }

    /// Writes and flushes one line; a failing log does not stop the game.
    fn write(&mut self, tag: &str, text: &str) {
        let seconds = self.start.elapsed().as_secs_f64();
        if let Some(file) = &mut self.file {
            let ok = writeln!(file, "{seconds:10.3} {tag} {text}").and_then(|()| file.flush());
            if let Err(e) = ok {
                eprintln!("kalah: warning: cannot write the log, no more logging: {e}");
                self.file = None;
            }
        }
    }
}
