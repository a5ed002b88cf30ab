//! A client of the Kalah Game Protocol (KGP) of the KWARC kalah-game server, in freeplay mode.
//!
//! KGP is plain text over TCP, one command a line (CRLF; a bare LF is accepted):
//! `[id][@ref] name arguments...`. An id names a command, a reference (`@id`) answers one.
//! Arguments are integers, reals, words, double-quoted strings (`\` escapes the next character)
//! and board literals `<m,south_store,north_store,s_1..s_m,n_1..n_m>`.
//!
//! ## What this client does (the subset of KGP it implements)
//!
//! - **Handshake**: waits for the server's `kgp MAJOR MINOR PATCH` (major version 1; another
//!   major version ends the client with [`KgpError::Incompatible`]), then sends
//!   `set info:name`, `set info:authors` and `set auth:token` (each only if configured) and
//!   `mode freeplay`. It accepts `init` (and `state`s with or without an `init` before them).
//! - **`ping`** is answered by `pong` (referencing the ping's id) at once by the reading
//!   thread, also in the middle of a search.
//! - **`state <board>`**: the board is always seen from the side to move, called South here
//!   (KGP: the first store and the first row are the mover's); any size. The client sends
//!   `n@id move k` (house k, 1-based, referencing the state's id; n is the client's own id) as
//!   soon as it has a legal move and again each time its search changes its mind, then
//!   `@id yield` when it is done and its last move has stood (see the race below): the
//!   value is exact, or its own time ([`ClientConfig::time_per_move`], capped by the server's
//!   `set time:clock`) is up. A move is checked against the board before it is sent: the
//!   client never sends an illegal move. Boards the engine cannot take (more than 12 houses a
//!   side, more seeds than the crate counts, a side already empty) get a simple legal move at
//!   once (an extra turn if there is one, else the non-empty house nearest the store) and a
//!   `yield`; a board with no seeds on the mover's side gets only a `yield`.
//! - **`stop`** (referencing a state, or none: every state) ends the search for that state; no
//!   `move` or `yield` is sent for it afterwards. A stop for a state not yet begun skips it.
//! - A new `state` while another is being searched cuts the older search short: it still
//!   answers with the legal move it has, then yields (one CPU thinks about one board at a
//!   time, and the server's clock runs for the newer one too). A state not yet begun when a
//!   newer one comes is skipped (no move, no yield, no pause): a flood of states is answered
//!   by its last one, at once.
//! - **`set`**: `time:clock` (seconds left) caps the thinking time; `game:id` and
//!   `game:opponent` are written to the log; other options are ignored, as the spec requires.
//! - **`error`** and **`nok`** from the server are logged and reported as events; `ok` and
//!   `init` are accepted silently; any other command, and every line that does not parse
//!   (bad syntax, not UTF-8, longer than [`MAX_LINE`]) or makes no sense (a `state` whose
//!   board is not a board), is ignored with a note in the log (the line escaped and cut,
//!   [`crate::text::quote`]). No line from the server ends the client or makes it panic.
//! - **`goodbye`** ends the client normally. A connection that fails or closes without a
//!   goodbye is retried after a delay that doubles each time (from
//!   [`ClientConfig::retry_delay`], at most [`MAX_RETRY_DELAY`]), at most
//!   [`ClientConfig::retries`] times in a row; a session that answered a state resets the
//!   count.
//!
//! - **The server's race**: the KWARC practice server records a state only just after sending
//!   it, and refuses (or silently drops) a `move` that comes back sooner. The client sends no
//!   move sooner than [`ClientConfig::resend_pause`] after the state (moves found sooner are
//!   held, the latest sent when the pause is over); every `move` carries an id of the client's
//!   (odd numbers), so an `error` names it, and the refused move goes again a pause later; the
//!   client yields only once its last move has stood a pause (`request` module).
//!
//! The client's other commands carry no ids, only references. Each answered state is one
//! line in the log: the board, every move sent and when, the final choice, errors and moves
//! sent again, yield or stop, the time used and the nodes searched.
//!
//! The engine is [`crate::play::anytime::Engine`] under standard rules, one thread. The KGP
//! server ends a game as soon as one store holds more than half of all seeds; that decides the
//! same winner as playing on, and the engine maximises the final store difference, so its
//! moves are good under either ending.
//!
//! The library never prints: what happens comes back as [`Event`]s and log lines.

use std::fmt;
use std::io::{self, BufReader, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use crate::db::{Access, Tablebase};
use crate::play::anytime::{Engine, EngineConfig, Thought};
use crate::play::{Action, Game, GameRules, PlayRules, PlayState};
use crate::position::{AnyPosition, Move, Setup};
use crate::rules::Rules;
use crate::text::{self, Line, escape, quote};

mod request;

use request::{Request, Shared, lock};

/// The longest command line taken, in bytes, line break excluded: the spec's limit (16384
/// characters). A longer line is read to its end in bounded memory and ignored.
pub const MAX_LINE: usize = 16384;

/// The major protocol version this client speaks.
pub const PROTOCOL_MAJOR: i64 = 1;

/// The default thinking time per state: the KGP tournament's 5 s, less a margin for the
/// network and for an exact solve, which is not interrupted.
pub const DEFAULT_TIME_PER_MOVE: Duration = Duration::from_millis(4500);

/// The longest wait between two connection attempts.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one write to the server may block before the connection counts as lost.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The least thinking time, whatever the server's clock says.
const MIN_THINKING: Duration = Duration::from_millis(100);

/// The margin kept on the server's clock (`set time:clock`).
const CLOCK_MARGIN: Duration = Duration::from_millis(500);

/// The default [`ClientConfig::resend_pause`].
pub const DEFAULT_RESEND_PAUSE: Duration = Duration::from_millis(100);

/// The longest [`ClientConfig::resend_pause`] taken.
pub const MAX_RESEND_PAUSE: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/// One argument of a command.
#[derive(Clone, PartialEq, Debug)]
pub enum Argument {
    /// An integer: `32`, `+0`, `-100`.
    Integer(i64),
    /// A real number: `0.0`, `-.123`.
    Real(f64),
    /// A bare word: `freeplay`, `info:name`.
    Word(String),
    /// A double-quoted string, unescaped.
    Text(String),
    /// A board literal with its angle brackets: `<3,0,0,3,3,3,3,3,3>`.
    Board(String),
}

impl Argument {
    /// The text of a word or a string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Argument::Word(s) | Argument::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value of an integer.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Argument::Integer(i) => Some(*i),
            _ => None,
        }
    }
}

impl fmt::Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Argument::Integer(i) => write!(f, "{i}"),
            Argument::Real(r) => write!(f, "{r:?}"),
            Argument::Word(w) => f.write_str(w),
            Argument::Board(b) => f.write_str(b),
            Argument::Text(s) => {
                f.write_str("\"")?;
                for c in s.chars() {
                    if c == '"' || c == '\\' {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")
            }
        }
    }
}

/// One KGP command: `[id][@reference] name arguments...`.
#[derive(Clone, PartialEq, Debug)]
pub struct Command {
    /// Its id, if it has one.
    pub id: Option<u64>,
    /// The id of the command it answers, if any.
    pub reference: Option<u64>,
    /// The command's name: `state`, `move`, ...
    pub name: String,
    /// Its arguments.
    pub args: Vec<Argument>,
}

impl Command {
    /// A command with no id, no reference and no arguments.
    pub fn new(name: &str) -> Command {
        Command {
            id: None,
            reference: None,
            name: name.to_owned(),
            args: Vec::new(),
        }
    }

    /// A command answering the command with id `reference` (if it had one).
    pub fn reply(reference: Option<u64>, name: &str) -> Command {
        Command {
            reference,
            ..Command::new(name)
        }
    }

    /// The command with one more argument.
    pub fn with(mut self, arg: Argument) -> Command {
        self.args.push(arg);
        self
    }
}

impl fmt::Display for Command {
    /// The command as sent, without the line break.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(id) = self.id {
            write!(f, "{id}")?;
        }
        if let Some(r) = self.reference {
            write!(f, "@{r}")?;
        }
        if self.id.is_some() || self.reference.is_some() {
            f.write_str(" ")?;
        }
        f.write_str(&self.name)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

/// Why a line is not a command (a message that shows the line's text quoted,
/// [`crate::text::quote`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseCommandError(pub String);

impl fmt::Display for ParseCommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseCommandError {}

impl FromStr for Command {
    type Err = ParseCommandError;

    /// Parses one line (its line break, if any, is ignored). Words are taken leniently: any
    /// run of characters other than white space that is not a number.
    fn from_str(line: &str) -> Result<Command, ParseCommandError> {
        let err = |why: &str| Err(ParseCommandError(why.to_owned()));
        let mut rest = line.trim();
        if rest.is_empty() {
            return err("an empty line");
        }
        let (mut id, mut reference) = (None, None);
        if rest.starts_with(|c: char| c.is_ascii_digit() || c == '@') {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let head = &rest[..end];
            let (id_text, ref_text) = match head.split_once('@') {
                Some((i, r)) => (i, Some(r)),
                None => (head, None),
            };
            let number = |t: &str| {
                (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| t.parse::<u64>().ok())
                    .flatten()
            };
            if !id_text.is_empty() {
                id = Some(number(id_text).ok_or_else(|| {
                    ParseCommandError(format!("{} is not a command id", quote(head)))
                })?);
            }
            if let Some(r) = ref_text {
                reference = Some(number(r).ok_or_else(|| {
                    ParseCommandError(format!("{} is not a command reference", quote(head)))
                })?);
            }
            rest = rest[end..].trim_start();
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let name = &rest[..end];
        if name.is_empty() {
            return err("no command name");
        }
        if !name.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(ParseCommandError(format!(
                "{} is not a command name (letters and digits)",
                quote(name)
            )));
        }
        let args = parse_arguments(&rest[end..])?;
        Ok(Command {
            id,
            reference,
            name: name.to_owned(),
            args,
        })
    }
}

fn parse_arguments(mut rest: &str) -> Result<Vec<Argument>, ParseCommandError> {
    let mut args = Vec::new();
    loop {
        rest = rest.trim_start();
        let Some(first) = rest.chars().next() else {
            return Ok(args);
        };
        match first {
            '"' => {
                let mut text = String::new();
                let mut chars = rest.char_indices().skip(1);
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            Some((_, escaped)) => text.push(escaped),
                            None => break,
                        },
                        '"' => {
                            end = Some(i + 1);
                            break;
                        }
                        c => text.push(c),
                    }
                }
                let end = end.ok_or_else(|| ParseCommandError("an unterminated string".into()))?;
                args.push(Argument::Text(text));
                rest = &rest[end..];
            }
            '<' => {
                let end = rest
                    .find('>')
                    .ok_or_else(|| ParseCommandError("an unterminated board literal".into()))?;
                let board: String = rest[..=end]
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                args.push(Argument::Board(board));
                rest = &rest[end + 1..];
            }
            _ => {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                args.push(classify(&rest[..end]));
                rest = &rest[end..];
            }
        }
    }
}

/// An integer, a real or a word.
fn classify(token: &str) -> Argument {
    let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if digits(unsigned) {
        if let Ok(i) = token.parse::<i64>() {
            return Argument::Integer(i);
        }
    }
    if let Some((whole, fraction)) = unsigned.split_once('.') {
        if (whole.is_empty() || digits(whole)) && digits(fraction) {
            if let Ok(r) = token.parse::<f64>() {
                return Argument::Real(r);
            }
        }
    }
    Argument::Word(token.to_owned())
}

// ---------------------------------------------------------------------------------------------
// Configuration, events, results
// ---------------------------------------------------------------------------------------------

/// How the client connects and plays.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The server's host name or address.
    pub host: String,
    /// The server's TCP port.
    pub port: u16,
    /// Sent as `set info:name`, if given.
    pub name: Option<String>,
    /// Sent as `set info:authors`, if given.
    pub authors: Option<String>,
    /// Sent as `set auth:token`, if given (non-empty: the spec requires it).
    pub token: Option<String>,
    /// Thinking time per state, counted from the arrival of the `state` line.
    pub time_per_move: Duration,
    /// A directory of endgame databases (standard rules), used for the board sizes it holds.
    pub db_dir: Option<PathBuf>,
    /// Only the levels up to this one of `db_dir` (all of which must be there).
    pub db_max_level: Option<u32>,
    /// The exact solver's table in MiB (a KGP bot gets about 1 GiB in all).
    pub tt_mib: usize,
    /// Reconnection attempts in a row before giving up.
    pub retries: u32,
    /// The wait before the first reconnection attempt; it doubles with each further one.
    pub retry_delay: Duration,
    /// No move goes sooner than this after its state arrived; a move the server refuses with
    /// `error` goes again this long after; a move must stand this long before `yield` (see
    /// the `request` module: the practice server records a state only just after sending
    /// it). At most [`MAX_RESEND_PAUSE`].
    pub resend_pause: Duration,
    /// Asked between commands: once it says yes, the client takes no new game, finishes the
    /// game in play (see [`Summary::stopped`]), says `goodbye` and returns.
    pub stop: fn() -> bool,
}

impl ClientConfig {
    /// The defaults for a server at `host:port`: no name, authors or token, 4.5 s a state, no
    /// databases, a 64 MiB table, 5 reconnection attempts from 1 s apart.
    pub fn new(host: &str, port: u16) -> ClientConfig {
        ClientConfig {
            host: host.to_owned(),
            port,
            name: None,
            authors: None,
            token: None,
            time_per_move: DEFAULT_TIME_PER_MOVE,
            db_dir: None,
            db_max_level: None,
            tt_mib: 64,
            retries: 5,
            retry_delay: Duration::from_secs(1),
            resend_pause: DEFAULT_RESEND_PAUSE,
            stop: || false,
        }
    }

    fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One `move` sent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SentMove {
    /// The house, 1-based.
    pub house: usize,
    /// The search depth that chose it (sowings; 0 for an exact result).
    pub depth: u32,
    /// Its value for the mover (see [`Thought::value`]).
    pub value: i32,
    /// The value is exact.
    pub exact: bool,
    /// When it was sent, after the `state` line arrived.
    pub after: Duration,
}

/// How the client answered one `state`.
#[derive(Clone, PartialEq, Debug)]
pub struct Answer {
    /// The state's id.
    pub id: Option<u64>,
    /// The board literal as received.
    pub board: String,
    /// The logical game (`set game:id`), if the server named one.
    pub game: Option<String>,
    /// Every move chosen, in order (those chosen within the first pause are held, and only
    /// the last of them is sent: see [`ClientConfig::resend_pause`]).
    pub moves: Vec<SentMove>,
    /// The engine's last result (`None` when the engine was not used).
    pub last: Option<Thought>,
    /// A `yield` was sent.
    pub yielded: bool,
    /// `error`s the server sent for this state's moves.
    pub refused: u32,
    /// Moves sent again after an error.
    pub resent: u32,
    /// The server stopped the request.
    pub stopped: bool,
    /// What else to know: the simple rule was used, the board was cut short, ...
    pub note: Option<String>,
    /// The time from the `state` line to the end of the answer.
    pub elapsed: Duration,
}

impl fmt::Display for Answer {
    /// One log line: `state 4 <...>: move 3 (depth 1, +2, 0.001 s) ...; yield; 0.350 s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("state")?;
        if let Some(id) = self.id {
            write!(f, " {id}")?;
        }
        write!(f, " {}", self.board)?;
        if let Some(g) = &self.game {
            write!(f, " (game {})", quote(g))?;
        }
        f.write_str(":")?;
        if self.moves.is_empty() {
            f.write_str(" no move")?;
        }
        for m in &self.moves {
            let how = how_found(m.exact, m.depth);
            write!(
                f,
                " move {} ({how}, {:+}, {:.3} s)",
                m.house,
                m.value,
                m.after.as_secs_f64()
            )?;
        }
        if let Some(t) = &self.last {
            let how = how_found(t.exact, t.depth);
            write!(
                f,
                "; final {} ({how}, {:+}), {} nodes",
                t.action, t.value, t.nodes
            )?;
        }
        if let Some(note) = &self.note {
            write!(f, "; {note}")?;
        }
        if self.refused > 0 {
            let s = if self.refused == 1 { "" } else { "s" };
            write!(f, "; {} error{s} from the server", self.refused)?;
        }
        if self.resent > 0 {
            write!(f, "; sent again {}x", self.resent)?;
        }
        if self.stopped {
            f.write_str("; stopped by the server")?;
        }
        if self.yielded {
            f.write_str("; yield")?;
        }
        write!(f, "; {:.3} s", self.elapsed.as_secs_f64())
    }
}

/// What the client reports while it runs.
#[derive(Clone, PartialEq, Debug)]
pub enum Event {
    /// Connected to the server.
    Connected {
        /// `host:port`.
        address: String,
    },
    /// The server's `kgp` greeting was answered with `mode freeplay`.
    Greeted {
        /// The server's protocol version, `1.0.0`, as sent (show it with
        /// [`crate::text::escape`]).
        version: String,
    },
    /// One `state` answered.
    Answered(Answer),
    /// The server sent `error` or `nok`: the command and its arguments as sent (show them
    /// with [`crate::text::escape`]).
    ServerError(String),
    /// The connection failed or was lost.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// The client waits, then connects again.
    Retrying {
        /// The attempt (1 for the first retry).
        attempt: u32,
        /// The most attempts it will make in a row.
        of: u32,
        /// The wait.
        delay: Duration,
    },
}

/// How a run ended normally: the server said `goodbye`, or the client did when asked to stop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Summary {
    /// Connections made.
    pub sessions: u32,
    /// `state` commands answered.
    pub answered: u64,
    /// The client said `goodbye` because [`ClientConfig::stop`] asked it to: after its move
    /// ended the game in play, or when a state of another game came (not answered), or
    /// when no state came for [`STOP_IDLE`] (the opponent's move ended the game), or at once
    /// when no game was in play.
    pub stopped: bool,
}

/// Asked to stop, the client waits this long for the next state of the game in play before it
/// takes the game as over (ended by the opponent's move, which the client never sees).
pub const STOP_IDLE: Duration = Duration::from_secs(10);

/// How often the client asks [`ClientConfig::stop`] while it waits for the server.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Why the client stopped without a `goodbye`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum KgpError {
    /// The server could not be reached, or kept going away, `attempts` times in a row.
    GaveUp {
        /// `host:port`.
        address: String,
        /// Failed attempts in a row.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// The server speaks another major version of the protocol.
    Incompatible {
        /// Its version, as sent (the message shows it escaped and cut).
        version: String,
    },
}

impl fmt::Display for KgpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KgpError::GaveUp {
                address,
                attempts,
                last,
            } => write!(
                f,
                "gave up on the KGP server at {address} after {attempts} failed connection{} in \
                 a row (last: {last})",
                if *attempts == 1 { "" } else { "s" }
            ),
            KgpError::Incompatible { version } => write!(
                f,
                "the server speaks KGP {}; this client speaks KGP {PROTOCOL_MAJOR}.x",
                escape(version)
            ),
        }
    }
}

impl std::error::Error for KgpError {}

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/// Whether the last move of `answer` ended its game: the board is over after it, or a store
/// holds more than half of the seeds (where the KGP server ends a game). A state answered
/// with no move leaves the game in play.
fn ends_game(answer: &Answer) -> bool {
    let Some(last) = answer.moves.last() else {
        return false;
    };
    let Ok(setup) = answer.board.parse::<Setup>() else {
        return false;
    };
    // Only boards the rules engine takes (sizes and seed counts it can count).
    if AnyPosition::from_setup(&setup, Rules::Standard).is_err() {
        return false;
    }
    let mut state = PlayState::from_setup(&setup, PlayRules::Kalah(Rules::Standard));
    let Some(mv) = Move::new(last.house) else {
        return false;
    };
    if !state.is_legal(mv) {
        return false;
    }
    state.play(mv);
    let total =
        state.seeds_on_board() + state.store(crate::Side::South) + state.store(crate::Side::North);
    state.is_over()
        || [crate::Side::South, crate::Side::North]
            .iter()
            .any(|&s| 2 * state.store(s) > total)
}

/// Connects to the server of `config`, plays freeplay until the server says `goodbye`, and
/// reconnects as the module docs say when the connection is lost. Every answered state and
/// every ignored line goes to `log` (one line each, UTC time first); `on_event` hears of
/// connections, answers, server errors and retries. Failures to write the log are ignored.
pub fn run(
    config: &ClientConfig,
    log: &mut dyn Write,
    on_event: &mut dyn FnMut(&Event),
) -> Result<Summary, KgpError> {
    let mut client = Client {
        config,
        log,
        on_event,
        engine: None,
        summary: Summary {
            sessions: 0,
            answered: 0,
            stopped: false,
        },
        game: None,
        clock: None,
        in_play: None,
    };
    client.run()
}

struct Client<'a> {
    config: &'a ClientConfig,
    log: &'a mut dyn Write,
    on_event: &'a mut dyn FnMut(&Event),
    /// The engine for the last board size seen, kept across states and connections.
    engine: Option<(usize, Engine)>,
    summary: Summary,
    /// `set game:id`.
    game: Option<String>,
    /// `set time:clock`: seconds left, and when the server said so.
    clock: Option<(f64, Instant)>,
    /// The game of the last state answered, if our move did not end it (`Some(None)`: a game
    /// the server did not name).
    in_play: Option<Option<String>>,
}

/// How one connection ended.
enum SessionEnd {
    Goodbye,
    /// Asked to stop, the client said goodbye.
    Stopped,
    Lost {
        reason: String,
        answered: u64,
    },
    Incompatible(String),
}

/// What the reading thread passes on.
enum Incoming {
    Command(Command),
    /// `request` knows when the line arrived.
    State {
        command: Command,
        request: Arc<Request>,
    },
    /// A line ignored: as the log shows it (quoted), and why.
    Bad {
        line: String,
        why: String,
    },
    Closed(String),
}

impl Client<'_> {
    fn run(&mut self) -> Result<Summary, KgpError> {
        let address = self.config.address();
        let mut failures = 0u32;
        loop {
            let last = match connect(self.config) {
                Ok(stream) => {
                    self.summary.sessions += 1;
                    self.note(&format!("connected to {address}"));
                    self.event(Event::Connected {
                        address: address.clone(),
                    });
                    match self.session(stream) {
                        SessionEnd::Goodbye => {
                            self.note("the server said goodbye");
                            return Ok(self.summary);
                        }
                        SessionEnd::Stopped => {
                            self.summary.stopped = true;
                            return Ok(self.summary);
                        }
                        SessionEnd::Incompatible(version) => {
                            self.note(&format!(
                                "the server speaks KGP {}: giving up",
                                escape(&version)
                            ));
                            return Err(KgpError::Incompatible { version });
                        }
                        SessionEnd::Lost { reason, answered } => {
                            if answered > 0 {
                                failures = 0;
                            }
                            self.note(&format!("connection lost: {reason}"));
                            self.event(Event::Disconnected {
                                reason: reason.clone(),
                            });
                            reason
                        }
                    }
                }
                Err(e) => {
                    let reason = format!("cannot connect to {address}: {e}");
                    self.note(&reason);
                    self.event(Event::Disconnected {
                        reason: reason.clone(),
                    });
                    reason
                }
            };
            failures += 1;
            if failures > self.config.retries {
                let error = KgpError::GaveUp {
                    address,
                    attempts: failures,
                    last,
                };
                self.note(&error.to_string());
                return Err(error);
            }
            let delay = backoff(self.config.retry_delay, failures);
            self.note(&format!(
                "reconnecting in {:.1} s (attempt {failures} of {})",
                delay.as_secs_f64(),
                self.config.retries
            ));
            self.event(Event::Retrying {
                attempt: failures,
                of: self.config.retries,
                delay,
            });
            thread::sleep(delay);
        }
    }

    fn event(&mut self, event: Event) {
        (self.on_event)(&event);
    }

    /// One log line, UTC time first. A log that cannot be written is not worth a lost game.
    fn note(&mut self, text: &str) {
        let _ = writeln!(self.log, "{} {text}", utc_now());
        let _ = self.log.flush();
    }

    /// One connection: a reading thread answers pings and stops, this thread does the rest.
    fn session(&mut self, stream: TcpStream) -> SessionEnd {
        let _ = stream.set_nodelay(true);
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        let (reader, writer) = match (stream.try_clone(), stream.try_clone()) {
            (Ok(r), Ok(w)) => (r, w),
            (Err(e), _) | (_, Err(e)) => {
                return SessionEnd::Lost {
                    reason: format!("cannot share the connection between threads: {e}"),
                    answered: 0,
                };
            }
        };
        let pause = self.config.resend_pause.min(MAX_RESEND_PAUSE);
        let shared = Arc::new(Shared::new(writer, pause));
        let (tx, rx) = mpsc::channel();
        let reading = {
            let shared = shared.clone();
            thread::Builder::new()
                .name("kgp-reader".into())
                .spawn(move || read_loop(reader, &shared, &tx))
        };
        let handle = match reading {
            Ok(handle) => handle,
            Err(e) => {
                return SessionEnd::Lost {
                    reason: format!("cannot start the reading thread: {e}"),
                    answered: 0,
                };
            }
        };
        let end = self.serve(&shared, &rx);
        // Ends the reading thread: its read fails at once.
        let _ = stream.shutdown(Shutdown::Both);
        let _ = handle.join();
        end
    }

    fn serve(&mut self, shared: &Arc<Shared>, rx: &Receiver<Incoming>) -> SessionEnd {
        let mut greeted = false;
        let mut answered = 0u64;
        let lost = |reason: String, answered| SessionEnd::Lost { reason, answered };
        // Asked to stop: since when, and the last time a state came.
        let mut stopping: Option<Instant> = None;
        let mut last_state = Instant::now();
        loop {
            if stopping.is_none() && (self.config.stop)() {
                stopping = Some(Instant::now());
                last_state = Instant::now();
                match &self.in_play {
                    None => return self.leave(shared, "asked to stop, no game in play"),
                    Some(game) => {
                        let game = game.as_deref().map_or("(unnamed)".into(), quote);
                        self.note(&format!("asked to stop: finishing game {game} first"));
                    }
                }
            }
            if stopping.is_some() && last_state.elapsed() >= STOP_IDLE {
                return self.leave(
                    shared,
                    "asked to stop; no state of the game in play came for 10 s: it is over",
                );
            }
            let incoming = match rx.recv_timeout(STOP_POLL) {
                Ok(incoming) => incoming,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return lost("the reading thread ended".into(), answered);
                }
            };
            if let (Some(_), Incoming::State { request, .. }) = (stopping, &incoming) {
                last_state = Instant::now();
                if self.in_play.as_ref() != Some(&self.game) {
                    shared.finish(request);
                    return self.leave(shared, "asked to stop; a state of another game came");
                }
            }
            match incoming {
                Incoming::Closed(reason) => return lost(reason, answered),
                Incoming::Bad { line, why } => {
                    self.note(&format!("ignored a line from the server ({why}): {line}"));
                }
                Incoming::State { command, request } => {
                    if !greeted {
                        self.note("a state before the kgp greeting (answered anyway)");
                    }
                    let answer = self.answer(shared, &command, &request);
                    shared.finish(&request);
                    if let Some(answer) = answer {
                        answered += 1;
                        self.summary.answered += 1;
                        self.in_play = (!ends_game(&answer)).then(|| answer.game.clone());
                        self.note(&answer.to_string());
                        self.event(Event::Answered(answer));
                        if stopping.is_some() && self.in_play.is_none() {
                            return self.leave(shared, "asked to stop; our move ended the game");
                        }
                    }
                }
                Incoming::Command(command) => match command.name.as_str() {
                    "kgp" if greeted => self.note("a second kgp greeting (ignored)"),
                    "kgp" => {
                        let version = command
                            .args
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(".");
                        let major = command.args.first().and_then(Argument::as_integer);
                        if major != Some(PROTOCOL_MAJOR) {
                            let _ = shared.send(&Command::new("error").with(Argument::Text(
                                format!("this client speaks KGP {PROTOCOL_MAJOR}.x only"),
                            )));
                            return SessionEnd::Incompatible(version);
                        }
                        if let Err(e) = self.greet(shared) {
                            return lost(format!("cannot write to the server: {e}"), answered);
                        }
                        greeted = true;
                        self.note(&format!(
                            "server speaks KGP {}; sent mode freeplay",
                            escape(&version)
                        ));
                        self.event(Event::Greeted { version });
                    }
                    "goodbye" => return SessionEnd::Goodbye,
                    "set" => self.set(&command),
                    "error" | "nok" => {
                        let text = format!(
                            "{}{}",
                            command.name,
                            command
                                .args
                                .iter()
                                .map(|a| format!(" {}", a.as_text().unwrap_or(&a.to_string())))
                                .collect::<String>()
                        );
                        self.note(&format!("the server says: {}", escape(&text)));
                        self.event(Event::ServerError(text));
                    }
                    "init" | "ok" | "pong" => {}
                    _ => self.note(&format!(
                        "ignored an unknown command: {}",
                        quote(&command.to_string())
                    )),
                },
            }
        }
    }

    /// Says `goodbye` to the server (asked to stop) and notes why.
    fn leave(&mut self, shared: &Shared, why: &str) -> SessionEnd {
        let _ = shared.send(&Command::new("goodbye"));
        self.note(&format!("{why}: said goodbye"));
        SessionEnd::Stopped
    }

    fn greet(&self, shared: &Shared) -> io::Result<()> {
        let options = [
            ("info:name", &self.config.name),
            ("info:authors", &self.config.authors),
            ("auth:token", &self.config.token),
        ];
        for (option, value) in options {
            if let Some(value) = value {
                shared.send(
                    &Command::new("set")
                        .with(Argument::Word(option.to_owned()))
                        .with(Argument::Text(value.clone())),
                )?;
            }
        }
        shared.send(&Command::new("mode").with(Argument::Word("freeplay".into())))
    }

    fn set(&mut self, command: &Command) {
        let (Some(option), value) = (
            command.args.first().and_then(Argument::as_text),
            command.args.get(1),
        ) else {
            self.note(&format!(
                "ignored a set without an option: {}",
                quote(&command.to_string())
            ));
            return;
        };
        match option {
            "time:clock" => {
                let seconds = match value {
                    Some(Argument::Integer(i)) => Some(*i as f64),
                    Some(Argument::Real(r)) => Some(*r),
                    _ => None,
                };
                self.clock = seconds.map(|s| (s, Instant::now()));
            }
            "game:id" | "game:opponent" => {
                let text = value.map(|v| v.as_text().map_or(v.to_string(), str::to_owned));
                if option == "game:id" {
                    self.game = text.clone().filter(|t| !t.is_empty());
                }
                self.note(&format!(
                    "{option} {}",
                    text.as_deref().map_or("(none)".into(), quote)
                ));
            }
            _ => {}
        }
    }

    /// The thinking time for a state that arrived at `received`.
    fn budget(&self, received: Instant) -> Duration {
        let mut budget = self.config.time_per_move;
        if let Some((seconds, when)) = self.clock {
            if seconds.is_finite() && seconds >= 0.0 {
                let left = Duration::from_secs_f64(seconds.min(1e9))
                    .saturating_sub(received.saturating_duration_since(when))
                    .saturating_sub(CLOCK_MARGIN);
                budget = budget.min(left.max(MIN_THINKING));
            }
        }
        budget
    }

    /// Answers one `state`; `None` if it was not a state we could read.
    fn answer(
        &mut self,
        shared: &Arc<Shared>,
        command: &Command,
        request: &Arc<Request>,
    ) -> Option<Answer> {
        let received = request.received;
        let Some(Argument::Board(board)) = command.args.first() else {
            self.note(&format!(
                "ignored a state without a board: {}",
                quote(&command.to_string())
            ));
            return None;
        };
        let Some(houses) = raw_south(board) else {
            self.note(&format!(
                "ignored a state with a bad board: {}",
                quote(&command.to_string())
            ));
            return None;
        };
        let mut answer = Answer {
            id: request.id,
            board: board.clone(),
            game: self.game.clone(),
            moves: Vec::new(),
            last: None,
            yielded: false,
            refused: 0,
            resent: 0,
            stopped: false,
            note: None,
            elapsed: Duration::ZERO,
        };
        if request.stopped.load(Ordering::SeqCst) {
            answer.stopped = true;
            answer.note = Some("stopped before it was begun".into());
            answer.elapsed = received.elapsed();
            return Some(answer);
        }
        // A newer state came before this one was begun: only the newest matters, so this one
        // gets no move and no pause (a flood of states is answered by its last, at once).
        if request.halt.load(Ordering::SeqCst) {
            answer.stopped = true;
            answer.note = Some("a newer state came before it was begun: skipped".into());
            answer.elapsed = received.elapsed();
            return Some(answer);
        }
        // The last move must stand for a pause before the yield (see `request`).
        let pause = shared.pause();
        let budget = self.budget(received);
        let deadline = received + budget.saturating_sub(pause).max(budget / 2);
        let ok = match self.playable(board) {
            Ok(state) => self.think(shared, request, &state, deadline, &mut answer),
            Err(why) => {
                answer.note = Some(why);
                match simple_move(&houses) {
                    Some(house) => send_simple_move(shared, request, house, &mut answer),
                    None => Ok(()),
                }
            }
        };
        let ok = ok.and_then(|()| request.settle(shared));
        answer.stopped = request.stopped.load(Ordering::SeqCst);
        if ok.is_ok() && !answer.stopped {
            answer.yielded = shared.send(&Command::reply(request.id, "yield")).is_ok();
        }
        (answer.refused, answer.resent) = request.refusals();
        answer.elapsed = received.elapsed();
        Some(answer)
    }

    /// The board as a state the engine plays, or why it cannot (the simple rule answers).
    fn playable(&mut self, board: &str) -> Result<PlayState, String> {
        let setup: Setup = board
            .parse()
            .map_err(|e| format!("simple move: the engine cannot take this board ({e})"))?;
        AnyPosition::from_setup(&setup, Rules::Standard)
            .map_err(|e| format!("simple move: the engine cannot take this board ({e})"))?;
        let state = PlayState::from_setup(&setup, PlayRules::Kalah(Rules::Standard));
        if state.is_over() {
            return Err("simple move: one side is empty, so the game is over".into());
        }
        Ok(state)
    }

    /// Searches `state` until the deadline, a stop or an exact result, sending each new move.
    fn think(
        &mut self,
        shared: &Arc<Shared>,
        request: &Arc<Request>,
        state: &PlayState,
        deadline: Instant,
        answer: &mut Answer,
    ) -> io::Result<()> {
        let houses = state.houses_per_side();
        let engine = match self.engine(houses) {
            Ok(engine) => engine,
            Err(why) => {
                answer.note = Some(why);
                let house = simple_move(state.houses(crate::Side::South))
                    .expect("a game not over has a move");
                return send_simple_move(shared, request, house, answer);
            }
        };
        let rules = GameRules {
            houses,
            seeds: 0,
            rules: PlayRules::Kalah(Rules::Standard),
            pie: false,
        };
        let game = Game::from_state(rules, *state);
        let mut result = Ok(());
        let mut last_move: Option<Move> = None;
        let mut moves = Vec::new();
        let last = engine.think(&game, deadline, &request.halt, &mut |t: &Thought| {
            let Action::Sow(mv) = t.action else {
                return;
            };
            if !state.is_legal(mv) || last_move == Some(mv) || result.is_err() {
                return;
            }
            last_move = Some(mv);
            if request.stopped.load(Ordering::SeqCst) {
                return;
            }
            match request.choose(shared, mv.house()) {
                Ok(()) => moves.push(SentMove {
                    house: mv.house(),
                    depth: t.depth,
                    value: t.value,
                    exact: t.exact,
                    after: request.received.elapsed(),
                }),
                Err(e) => {
                    request.halt.store(true, Ordering::SeqCst);
                    result = Err(e);
                }
            }
        });
        if let Some(e) = engine.take_solve_error() {
            answer.note = Some(format!("exact solve failed, searched instead: {e}"));
        }
        answer.moves = moves;
        answer.last = Some(last);
        result
    }

    /// The engine for `houses` houses a side (made on first use; one board size at a time).
    fn engine(&mut self, houses: usize) -> Result<&mut Engine, String> {
        if self.engine.as_ref().is_none_or(|(h, _)| *h != houses) {
            self.engine = None;
            let db = self.tablebase(houses);
            let config = EngineConfig {
                db,
                exact_seeds: EngineConfig::default_exact_seeds(houses),
                threads: 1,
                tt_mib: self.config.tt_mib,
            };
            let engine = Engine::new(houses, PlayRules::Kalah(Rules::Standard), config)
                .map_err(|e| format!("simple move: no engine for {houses} houses ({e})"))?;
            self.engine = Some((houses, engine));
        }
        Ok(&mut self.engine.as_mut().expect("made above").1)
    }

    /// The databases for `houses` in the configured directory, if any (a note if none).
    fn tablebase(&mut self, houses: usize) -> Option<Arc<Tablebase>> {
        let dir = self.config.db_dir.clone()?;
        let top = self.config.db_max_level;
        match Tablebase::open_up_to(&dir, houses, Rules::Standard, Access::Map, top) {
            Ok(t) => {
                self.note(&format!(
                    "databases for {houses} houses: levels 0..={} in {}",
                    t.max_level(),
                    dir.display()
                ));
                Some(Arc::new(t))
            }
            Err(e) => {
                self.note(&format!("searching {houses} houses without databases: {e}"));
                None
            }
        }
    }
}

/// Sends `house`, chosen without a search, and records it in `answer` once sent.
fn send_simple_move(
    shared: &Arc<Shared>,
    request: &Arc<Request>,
    house: usize,
    answer: &mut Answer,
) -> io::Result<()> {
    request.choose(shared, house)?;
    answer.moves.push(SentMove {
        house,
        depth: 0,
        value: 0,
        exact: false,
        after: request.received.elapsed(),
    });
    Ok(())
}

/// The mover's houses of a board literal of any size, if it is well formed (m ≥ 1 and
/// 2m + 3 numbers; m is the server's, so it may be anything: the count is checked, never
/// computed with an overflow).
fn raw_south(board: &str) -> Option<Vec<u64>> {
    let inner = board.strip_prefix('<')?.strip_suffix('>')?;
    let numbers: Vec<u64> = inner
        .split(',')
        .map(|t| t.trim().parse::<u64>().ok())
        .collect::<Option<_>>()?;
    let m = usize::try_from(*numbers.first()?).ok()?;
    let expected = m.checked_mul(2)?.checked_add(3)?;
    (m >= 1 && numbers.len() == expected).then(|| numbers[3..3 + m].to_vec())
}

/// The simple rule: a house whose last seed lands in the store (the one nearest the store),
/// else the non-empty house nearest the store; `None` if every house is empty.
fn simple_move<T: Copy + Into<u64>>(south: &[T]) -> Option<usize> {
    let m = south.len() as u64;
    let seeds = |i: usize| south[i].into();
    (0..south.len())
        .rev()
        .find(|&i| seeds(i) == m - i as u64)
        .or_else(|| (0..south.len()).rev().find(|&i| seeds(i) > 0))
        .map(|i| i + 1)
}

/// Waits for the first retry `delay`, doubled for each further attempt, at most
/// [`MAX_RETRY_DELAY`].
fn backoff(delay: Duration, attempt: u32) -> Duration {
    let factor = 1u32 << attempt.saturating_sub(1).min(16);
    delay.saturating_mul(factor).min(MAX_RETRY_DELAY)
}

fn connect(config: &ClientConfig) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host name has no address");
    for addr in (config.host.as_str(), config.port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The reading thread: answers `ping` and applies `stop` itself, passes the rest on.
fn read_loop(stream: TcpStream, shared: &Arc<Shared>, tx: &Sender<Incoming>) {
    let mut reader = BufReader::new(stream);
    let closed = loop {
        let bad = |line: String, why: String| tx.send(Incoming::Bad { line, why });
        let text = match text::read_line(&mut reader, MAX_LINE) {
            Ok(None) => break "the server closed the connection".to_owned(),
            Err(e) => break format!("reading from the server failed: {e}"),
            Ok(Some(Line::TooLong(n))) => {
                let why = format!("{n} bytes, longer than {MAX_LINE}");
                let _ = bad("(not kept)".into(), why);
                continue;
            }
            Ok(Some(Line::NotUtf8(bytes))) => {
                let _ = bad(quote(&String::from_utf8_lossy(&bytes)), "not UTF-8".into());
                continue;
            }
            Ok(Some(Line::Text(text))) => text,
        };
        if text.trim().is_empty() {
            continue;
        }
        let command = match text.parse::<Command>() {
            Ok(c) => c,
            Err(e) => {
                let _ = bad(quote(&text), e.to_string());
                continue;
            }
        };
        let received = Instant::now();
        let incoming = match command.name.as_str() {
            "ping" => {
                // A failed write shows up as a failed read soon enough.
                let _ = shared.send(&Command::reply(command.id, "pong"));
                continue;
            }
            "stop" => {
                for r in lock(&shared.requests).iter() {
                    if command.reference.is_none() || command.reference == r.id {
                        r.stopped.store(true, Ordering::SeqCst);
                        r.halt.store(true, Ordering::SeqCst);
                    }
                }
                continue;
            }
            "error" | "nok" => {
                // A refused move goes again after the pause; the main thread logs the line.
                shared.refused(command.reference);
                Incoming::Command(command)
            }
            "state" => {
                let request = Arc::new(Request::new(command.id, received));
                {
                    let mut requests = lock(&shared.requests);
                    for r in requests.iter() {
                        r.halt.store(true, Ordering::SeqCst);
                    }
                    requests.push(request.clone());
                }
                Incoming::State { command, request }
            }
            _ => Incoming::Command(command),
        };
        if tx.send(incoming).is_err() {
            return;
        }
    };
    shared.halt_all();
    let _ = tx.send(Incoming::Closed(closed));
}

/// `exact` or `depth D`, for the log.
fn how_found(exact: bool, depth: u32) -> String {
    if exact {
        "exact".to_owned()
    } else {
        format!("depth {depth}")
    }
}

/// Now in UTC, ISO 8601 to the millisecond: `2024-05-01T12:00:00.123Z`.
fn utc_now() -> String {
    crate::play::record::UtcTime::now().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_ids_references_and_every_argument_type() {
        let c: Command = "6@4 stop".parse().unwrap();
        assert_eq!(
            (c.id, c.reference, c.name.as_str()),
            (Some(6), Some(4), "stop")
        );
        let c: Command = "@4 move 1\r".parse().unwrap();
        assert_eq!((c.id, c.reference), (None, Some(4)));
        assert_eq!(c.args, vec![Argument::Integer(1)]);
        let c: Command = "4 state <3,0,0,3,3,3,3,3,3>".parse().unwrap();
        assert_eq!(c.args, vec![Argument::Board("<3,0,0,3,3,3,3,3,3>".into())]);
        let c: Command = r#"set info:name "a \"b\" c" -.5 +3 x-y:z"#.parse().unwrap();
        assert_eq!(
            c.args,
            vec![
                Argument::Word("info:name".into()),
                Argument::Text("a \"b\" c".into()),
                Argument::Real(-0.5),
                Argument::Integer(3),
                Argument::Word("x-y:z".into()),
            ]
        );
        assert_eq!(c.to_string(), r#"set info:name "a \"b\" c" -0.5 3 x-y:z"#);
        assert_eq!(Command::reply(Some(8), "yield").to_string(), "@8 yield");
        assert_eq!(Command::reply(None, "pong").to_string(), "pong");
    }

    #[test]
    fn bad_lines_are_errors_not_panics() {
        for line in [
            "",
            "   ",
            "@",
            "4",
            "4@ x",
            "a@4 x",
            "@@4 x",
            "9999999999999999999999 x",
            "st-ate",
            "set \"open",
            "state <3,0",
        ] {
            assert!(line.parse::<Command>().is_err(), "{line:?}");
        }
    }

    #[test]
    fn the_simple_rule_prefers_an_extra_turn_then_the_house_nearest_the_store() {
        assert_eq!(simple_move(&[1u32, 2, 1]), Some(3));
        assert_eq!(simple_move(&[1u32, 2, 0]), Some(2));
        assert_eq!(simple_move(&[0u32, 5, 0]), Some(2));
        assert_eq!(simple_move(&[0u32, 0, 0]), None);
        assert_eq!(raw_south("<2,0,0,1,2,3,4>"), Some(vec![1, 2]));
        assert_eq!(raw_south("<2,0,0,1,2,3>"), None);
        assert_eq!(raw_south("<0,0,0>"), None);
        // 2m + 3 would overflow: not a board, not a panic.
        assert_eq!(raw_south("<9223372036854775807>"), None);
        assert_eq!(raw_south("<18446744073709551615,0,0>"), None);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let d = Duration::from_secs(1);
        assert_eq!(backoff(d, 1), d);
        assert_eq!(backoff(d, 3), 4 * d);
        assert_eq!(backoff(d, 40), MAX_RETRY_DELAY);
    }

    #[test]
    fn utc_dates_are_well_formed() {
        let now = utc_now();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'), "{now}");
    }
}
