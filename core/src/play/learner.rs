//! `learner[:FILE]`: a player that remembers the openings of the games it failed to win.
//!
//! In the spirit of the 1973 BASIC "Awari", which kept its lost games and avoided replaying
//! them. The learner plays like `alphabeta:4`, except that during the first [`OPENING`] actions
//! of a game it prefers, among its moves, the ones that lead into the fewest remembered losing
//! (or drawn) openings; ties go to the search's order. After a game it did not win, it appends
//! the game's opening to its file, one line per game:
//!
//! ```text
//! Kalah(6,4) standard: 3 6 2 1 5 4 4 6
//! Kalah(6,4) standard pie: 1 swap 2 2 5 6 1 3
//! ```
//!
//! (the variant, then the actions of both sides in order, `swap` for the pie rule's swap).
//! Lines of other variants are kept but not used; lines starting with `#` are comments.
//!
//! The file is checked when the learner is made (it must be a regular file or nothing, in a
//! directory where files can be made), so that a match does not find out at its first loss.
//! Each loss is saved at once, whole: under a claim on the file ([`crate::files::claim`]) the
//! file is read again (learners of other games, or other processes, may have added lines),
//! the line is added, and the file is replaced whole. A save that fails leaves the file as it
//! was, and its error holds the line that was not saved.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::play::alphabeta::Searcher;
use crate::play::error::PlayError;
use crate::play::game::{Action, Game, GameRules};
use crate::play::player::Player;
use crate::text::quote;

/// Actions of a game that make its opening.
pub const OPENING: usize = 8;

/// The largest learner file read, in bytes: 32 MiB. A line is about 40 bytes, so this is
/// some 800 000 remembered games; the learner looks through all of them at each of its first
/// [`OPENING`] moves, so a larger memory would make it slow long before it made it better,
/// and a file this large is more likely a mistake (`learner:/some/disk.img`) than a memory.
pub const MAX_LEARNER_BYTES: u64 = 32 << 20;

/// The learner (see the module docs).
pub struct Learner {
    path: PathBuf,
    /// Its spec, as `name` says it.
    name: String,
    base: Searcher,
    /// Remembered openings: (variant key, actions).
    openings: Vec<(String, Vec<Action>)>,
}

fn key(rules: GameRules) -> String {
    let pie = if rules.pie { " pie" } else { "" };
    format!(
        "Kalah({},{}) {}{pie}",
        rules.houses, rules.seeds, rules.rules
    )
}

impl Learner {
    /// A learner with its memory in `path` (read now if it exists; created on first loss). The
    /// file must be a regular file of at most [`MAX_LEARNER_BYTES`] bytes, in the format of the
    /// module docs; the error names the file (and the line at fault).
    pub fn open(path: PathBuf, name: String) -> Result<Learner, PlayError> {
        check_writable(&path)?;
        let openings = match crate::files::read_text(&path, MAX_LEARNER_BYTES) {
            Ok(text) => parse_openings(&text).map_err(|e| {
                PlayError::Spec(format!(
                    "the learner's file {}, {e}",
                    quote(&path.to_string_lossy())
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(PlayError::Io(std::io::Error::new(
                    e.kind(),
                    format!(
                        "cannot read the learner's file {}: {e}",
                        quote(&path.to_string_lossy())
                    ),
                )));
            }
        };
        Ok(Learner {
            path,
            name,
            base: Searcher::new(4, true),
            openings,
        })
    }

    /// How many remembered openings of this variant begin with `line`.
    fn losses_through(&self, variant: &str, line: &[Action]) -> usize {
        self.openings
            .iter()
            .filter(|(v, actions)| v == variant && actions.starts_with(line))
            .count()
    }
}

/// A line of a learner's file that is not a remembered opening.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OpeningError {
    /// The line, 1-based.
    pub line: usize,
    /// The line's text as the message shows it ([`crate::text::quote`]: escaped, cut).
    pub quoted: String,
}

impl fmt::Display for OpeningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: expected 'Kalah(M,N) RULES[ pie]: ACTIONS', found {}",
            self.line, self.quoted
        )
    }
}

impl std::error::Error for OpeningError {}

/// The remembered openings of the text of a learner's file (see the module docs): the
/// variant key and the actions of each line, in order.
pub fn parse_openings(text: &str) -> Result<Vec<(String, Vec<Action>)>, OpeningError> {
    let mut openings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || OpeningError {
            line: i + 1,
            quoted: quote(line),
        };
        let (variant, actions) = line.split_once(':').ok_or_else(bad)?;
        let actions = actions
            .split_whitespace()
            .map(|a| a.parse::<Action>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad())?;
        openings.push((variant.trim().to_owned(), actions));
    }
    Ok(openings)
}

impl Player for Learner {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Result<Action, PlayError> {
        let played: Vec<Action> = game.actions().iter().map(|&(_, a)| a).collect();
        let first = self.base.choose(game)?;
        if played.len() >= OPENING {
            return Ok(first);
        }
        let variant = key(game.rules());
        // The search's choice first, then the other actions in order.
        let mut candidates = vec![first];
        candidates.extend(game.legal_actions().into_iter().filter(|&a| a != first));
        let mut line = played;
        let mut best = None;
        for action in candidates {
            line.push(action);
            let losses = self.losses_through(&variant, &line);
            line.pop();
            if best.is_none_or(|(l, _)| losses < l) {
                best = Some((losses, action));
            }
        }
        Ok(best.expect("a legal action").1)
    }

    fn game_over(&mut self, game: &Game, seat: usize) -> Result<(), PlayError> {
        if game.margin(seat) > 0 {
            return Ok(());
        }
        let opening: Vec<Action> = game
            .actions()
            .iter()
            .take(OPENING)
            .map(|&(_, a)| a)
            .collect();
        let variant = key(game.rules());
        let text: Vec<String> = opening.iter().map(Action::to_string).collect();
        let line = format!("{variant}: {}\n", text.join(" "));
        remember(&self.path, &line).map_err(|e| {
            PlayError::Io(std::io::Error::new(
                e.kind(),
                format!(
                    "cannot save to the learner's file {}: {e}; this game's opening was not \
                     remembered: {}",
                    self.path.display(),
                    line.trim_end()
                ),
            ))
        })?;
        self.openings.push((variant, opening));
        Ok(())
    }

    fn nodes(&self) -> Option<u64> {
        self.base.nodes()
    }
}

/// Checks that the learner's file at `path` can be saved (see the module docs).
fn check_writable(path: &Path) -> Result<(), PlayError> {
    let bad = |why: String| {
        PlayError::Spec(format!(
            "the learner's file {} cannot be written: {why}",
            quote(&path.to_string_lossy())
        ))
    };
    if let Some(what) = crate::files::not_regular(path) {
        return Err(bad(format!("it is {what}, not a regular file")));
    }
    crate::files::check_writable(path).map_err(|e| bad(e.to_string()))
}

/// Adds `line` to the learner's file at `path`, whole (see the module docs).
fn remember(path: &Path, line: &str) -> std::io::Result<()> {
    let mut file = crate::files::claim(path, true).map_err(|e| match e {
        crate::files::ClaimError::Io(e) => e,
        other => std::io::Error::other(other.to_string()),
    })?;
    let mut text = match crate::files::read_text(path, MAX_LEARNER_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    file.replace(|f| f.write_all(text.as_bytes()))
}
