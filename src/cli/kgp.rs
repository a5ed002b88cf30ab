//! `kalah kgp`: a bot for a Kalah Game Protocol server (freeplay mode).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kalah::bots::kgp::{self, ClientConfig, Event, KgpError};
use kalah::text::escape;

use super::CliError;
use super::db_choice::DbChoice;

/// Plays on a KGP (Kalah Game Protocol) server in freeplay mode.
///
/// Connects over plain TCP, answers the server's `kgp` greeting with `set info:name`,
/// `set info:authors`, `set auth:token` (each only if given) and `mode freeplay`, then answers
/// every `state` with `move` commands (a legal move at once, a better one whenever the search
/// finds it) and `yield` once the value is exact or its time is up; `ping` is answered at once,
/// `stop` ends the search. Boards of any size are played from the mover's side (KGP's
/// `<m,own_store,other_store,own_1..own_m,other_1..other_m>`).
///
/// Runs until the server says `goodbye` (exit 0). SIGTERM or Ctrl-C stops it gracefully: no new
/// game is taken, the game in play is finished (until our move ends it, a state of another
/// game comes, or none comes for 10 s), then it says `goodbye` and exits 0; a second signal
/// exits at once (code 130). A lost connection is retried after 1, 2,
/// 4, ... seconds (at most 60), --retries times in a row; then the command exits with code 1.
/// Each answered state (board, moves, time used) is appended to the log file, with every
/// line from the server that was ignored.
#[derive(Args, Debug)]
pub struct KgpArgs {
    /// The server's host name or address.
    #[arg(long, value_name = "HOST")]
    host: String,

    /// The server's TCP port, 1 to 65535.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    port: u16,

    /// The bot's name, sent as `set info:name`.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,

    /// The bot's authors, sent as `set info:authors`.
    #[arg(long, value_name = "TEXT")]
    authors: Option<String>,

    /// A secret that ties this bot's connections together, sent as `set auth:token` (in clear
    /// text: the connection is not encrypted).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,

    /// Seconds of thinking per state at most, 0.01 to 86400, counted from its arrival (the
    /// tournament allows 5; a `stop` from the server, or its `time:clock`, may end it sooner).
    #[arg(
        long,
        value_name = "S",
        default_value = "4.5",
        value_parser = super::args::seconds(0.01, 86_400.0),
        allow_negative_numbers = true
    )]
    time_per_move: Duration,

    /// Endgame databases (standard rules), used for the board sizes the directory holds (the
    /// log names the levels used for each).
    #[command(flatten)]
    db: DbChoice,

    /// The log file (appended to) [default: kalah-kgp.log in $XDG_STATE_HOME/kalah, else
    /// ~/.local/state/kalah (made if missing), else in the current directory]. Its path is
    /// the first line on stderr.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,

    /// Reconnection attempts in a row before giving up, 0 (none) to 10000 (a week of attempts
    /// a minute apart).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 5,
        value_parser = super::args::count::<u32>(0..=10_000)
    )]
    retries: u32,

    /// Seconds before the first reconnection attempt, 0 to 60; the wait doubles with each
    /// further one, up to 60.
    #[arg(
        long,
        value_name = "S",
        default_value = "1",
        value_parser = super::args::seconds(0.0, 60.0),
        allow_negative_numbers = true
    )]
    retry_delay: Duration,

    /// Seconds, 0 to 1: no move goes sooner than this after its state (moves found sooner are
    /// held, the latest sent then), a move the server refuses with `error` goes again this long
    /// after, and the last move stands this long before `yield`. (The KWARC practice server
    /// records a state just after sending it: a move that comes back at once can be refused or
    /// lost, and a `yield` after it would leave the server to play a random move.)
    #[arg(
        long,
        value_name = "S",
        default_value = "0.1",
        value_parser = super::args::seconds(0.0, 1.0),
        allow_negative_numbers = true
    )]
    resend_pause: Duration,

    /// The exact solver's table in MiB, 1 to the machine's physical memory (KGP bots get
    /// about 1 GiB of memory).
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = super::args::mib())]
    tt_mb: usize,

    /// Also print one line on stderr for every state answered.
    #[arg(long)]
    verbose: bool,
}

/// A string for a `set` command: no line breaks or other control characters.
fn text(option: &str, value: Option<String>) -> Result<Option<String>, CliError> {
    match value {
        Some(v) if v.is_empty() => Err(CliError::input(format!("{option} must not be empty"))),
        Some(v) if v.chars().any(char::is_control) => Err(CliError::input(format!(
            "{option} must not contain line breaks or other control characters"
        ))),
        v => Ok(v),
    }
}

pub fn run(args: KgpArgs) -> Result<(), CliError> {
    if args.host.trim().is_empty() {
        return Err(CliError::input("--host must not be empty"));
    }
    args.db.given_dir()?;
    let db_dir = args.db.dir()?;
    let config = ClientConfig {
        host: args.host.trim().to_owned(),
        port: args.port,
        name: text("--name", args.name)?,
        authors: text("--authors", args.authors)?,
        token: text("--token", args.token)?,
        time_per_move: args.time_per_move,
        db_dir,
        db_max_level: args.db.max_level,
        tt_mib: args.tt_mb,
        retries: args.retries,
        retry_delay: args.retry_delay,
        resend_pause: args.resend_pause,
        stop: kalah::interrupted,
    };
    let log_path = match &args.log {
        Some(path) => path.clone(),
        None => default_log()?,
    };
    let mut log = kalah::files::open_log(&log_path, true).map_err(|e| {
        CliError::input(format!(
            "cannot open the log file {}: {e}",
            kalah::text::quote(&log_path.to_string_lossy())
        ))
    })?;
    eprintln!("kalah kgp: log in {}", log_path.display());
    // SIGTERM or Ctrl-C: finish the game in play, say goodbye, exit 0; a second one: at once.
    kalah::catch_interrupt_twice();
    let verbose = args.verbose;
    let result = kgp::run(&config, &mut log, &mut |event| match event {
        Event::Connected { address } => eprintln!("kalah kgp: connected to {address}"),
        Event::Greeted { version } => eprintln!(
            "kalah kgp: the server speaks KGP {}; playing freeplay",
            escape(version)
        ),
        Event::Answered(answer) if verbose => eprintln!("kalah kgp: {answer}"),
        Event::Answered(_) => {}
        Event::ServerError(text) => eprintln!("kalah kgp: the server says: {}", escape(text)),
        Event::Disconnected { reason } => eprintln!("kalah kgp: {reason}"),
        Event::Retrying { attempt, of, delay } => eprintln!(
            "kalah kgp: reconnecting in {:.1} s (attempt {attempt} of {of})",
            delay.as_secs_f64()
        ),
    });
    match result {
        Ok(summary) => {
            println!(
                "{}: {} state{} answered in {} connection{}",
                if summary.stopped {
                    "stopped (the game in play finished), said goodbye"
                } else {
                    "the server said goodbye"
                },
                summary.answered,
                if summary.answered == 1 { "" } else { "s" },
                summary.sessions,
                if summary.sessions == 1 { "" } else { "s" },
            );
            Ok(())
        }
        Err(e @ KgpError::GaveUp { .. }) | Err(e @ KgpError::Incompatible { .. }) => {
            Err(CliError::failure(e.to_string()))
        }
    }
}

/// Where the log goes without --log: `kalah-kgp.log` in the state directory of the XDG
/// convention (`$XDG_STATE_HOME/kalah` if that is an absolute path, else
/// `~/.local/state/kalah`), made if missing; in the current directory when there is no home.
fn default_log() -> Result<PathBuf, CliError> {
    let Some(dir) = kalah::db::home::state_dir() else {
        return Ok(PathBuf::from("kalah-kgp.log"));
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        CliError::failure(format!(
            "cannot make the log directory {}: {e} (--log FILE names another place)",
            dir.display()
        ))
    })?;
    Ok(dir.join("kalah-kgp.log"))
}
