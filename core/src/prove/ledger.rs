//! The ledger: the facts of a proof, one JSON line each ([`Fact`]), in append-only text files.
//!
//! A ledger is any number of files read together: a worker's own, which it appends to, and
//! those of other workers, read again as they grow. Facts do not depend on their order, so
//! files merge by concatenation. While reading, every fact is checked against the facts
//! already read about the same board: two whose bounds do not overlap are a
//! [`LedgerError::Conflict`] that names both lines, and nothing is concluded from either.
//!
//! Writing ([`LedgerWriter`]): a worker holds an exclusive lock on its file, writes each fact
//! as one line in one `write` and syncs it before it starts the next job. A worker killed
//! mid-write leaves at most a last line with no newline (a *torn* line): readers leave it
//! unread, and the next writer of that file cuts it off before it appends. A line that ends in
//! a newline but is not a fact (cut, garbled, or over [`MAX_LINE`] bytes) is an error naming
//! the file and the line: it is never read as a value.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::board::Board;
use crate::fast_hash::FastMap;
use crate::lanes::{Lanes, Narrow};
use crate::prove::fact::{Bounds, Fact, MAX_LINE};
use crate::rules::Rules;

/// Where a fact was read: a file and its line (from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Why a ledger cannot be read or written.
#[derive(Debug)]
pub enum LedgerError {
    /// A file could not be read or written.
    Io {
        /// The file.
        file: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// A line is not a fact.
    Garbled {
        /// The line.
        at: Origin,
        /// What is wrong with it.
        why: String,
    },
    /// Two facts about one board whose bounds do not overlap.
    Conflict {
        /// The fact read first.
        first: Origin,
        /// The fact that contradicts it.
        second: Origin,
        /// The position and both sets of bounds, for people.
        detail: String,
    },
    /// Another process holds the file to write it.
    Busy(PathBuf),
    /// A file to append to is not a ledger (nor empty): it is left as it is.
    NotALedger {
        /// The file.
        file: PathBuf,
        /// Why not, naming the line.
        why: String,
    },
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LedgerError::Io { file, error } => write!(f, "{}: {error}", file.display()),
            LedgerError::Garbled { at, why } => {
                write!(f, "{at}: not a fact ({why}); no value is read from it")
            }
            LedgerError::Conflict {
                first,
                second,
                detail,
            } => write!(f, "{first} and {second} contradict each other: {detail}"),
            LedgerError::Busy(file) => write!(
                f,
                "{} is being written by another worker (one writer a ledger file: give this \
                 worker its own file, and read the other with --read)",
                file.display()
            ),
            LedgerError::NotALedger { file, why } => write!(
                f,
                "{} is not a ledger ({why}): nothing was written to it (give a new file, or a \
                 ledger of facts)",
                file.display()
            ),
        }
    }
}

impl std::error::Error for LedgerError {}

/// What the facts say about one board.
#[derive(Clone, Debug)]
pub struct Known {
    /// The tightest bounds on f.
    pub bounds: Bounds,
    /// The fact that gave the lower bound (an index into [`Ledger::facts`]).
    lower_from: usize,
    /// The fact that gave the upper bound.
    upper_from: usize,
    /// The largest node budget a test of this board ran out of, if any: the board is then
    /// split into its moves.
    pub over_budget: Option<u64>,
}

impl Known {
    /// The facts that gave the lower and the upper bound (indices into [`Ledger::facts`]).
    pub fn from(&self) -> (usize, usize) {
        (self.lower_from, self.upper_from)
    }
}

/// A file read so far.
struct Source {
    path: PathBuf,
    /// Bytes read (whole lines only).
    offset: u64,
    /// Lines read.
    lines: usize,
    /// A last line without its newline, in bytes (a torn write, or one still being written).
    torn: u64,
    /// The file read (device and inode), to see when the path names another one.
    id: Option<(u64, u64)>,
}

/// The largest ledger file read (1 GiB: some 3 million facts of at most [`MAX_LINE`] bytes; the
/// Kalah(6,6) campaign's is 0.4 MB after 17 CPU-hours).
pub const MAX_LEDGER_BYTES: u64 = 1 << 30;

/// An error naming `file` if its `len` bytes are more than `max` (`bound` says that bound for
/// people): files read from the user are bounded, and a file past its bound is named before
/// it is read.
pub(crate) fn within(file: &Path, len: u64, max: u64, bound: &str) -> Result<(), LedgerError> {
    if len <= max {
        return Ok(());
    }
    Err(LedgerError::Io {
        file: file.to_path_buf(),
        error: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{len} bytes, more than {bound}"),
        ),
    })
}

/// The fact of one line read at `at`: none for a blank line, an error naming the line for one
/// that is not a fact.
fn parse_line<L: Lanes>(text: &str, at: &Origin) -> Result<Option<Fact<L>>, LedgerError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    Fact::from_line(text)
        .map(Some)
        .map_err(|e| LedgerError::Garbled {
            at: at.clone(),
            why: e.0,
        })
}

/// The device and inode of an open file, where the OS says.
fn file_id(file: &File) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        file.metadata().ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
}

/// The facts of one or more ledger files, checked against each other (see the module docs).
#[derive(Default)]
pub struct Ledger<L: Lanes = Narrow> {
    sources: Vec<Source>,
    facts: Vec<(Fact<L>, Origin)>,
    known: FastMap<(Rules, Board<L>), Known>,
    /// Whether a fact that contradicts one read before is set aside instead of an error
    /// ([`Ledger::setting_aside`]).
    sets_aside: bool,
    /// The facts set aside, each with where the fact it contradicts was read.
    set_aside: Vec<(Fact<L>, Origin, Origin)>,
}

impl<L: Lanes> Ledger<L> {
    /// An empty ledger.
    pub fn new() -> Ledger<L> {
        Ledger::default()
    }

    /// An empty ledger that sets aside a fact contradicting one read before
    /// ([`Ledger::set_aside`]) where another is an error: for the files of a directory, whose
    /// facts are weighed one by one (only checked facts answer, and claims that disagree are
    /// no error: see [`crate::book`]).
    pub fn setting_aside() -> Ledger<L> {
        Ledger {
            sets_aside: true,
            ..Ledger::default()
        }
    }

    /// The facts set aside ([`Ledger::setting_aside`]): each, where it was read, and where
    /// the fact it contradicts was read.
    pub fn set_aside(&self) -> &[(Fact<L>, Origin, Origin)] {
        &self.set_aside
    }

    /// Reads `path` (a file that is not there holds no fact yet) and, at each
    /// [`Ledger::refresh`], what has been appended to it since.
    pub fn add_file(&mut self, path: &Path) -> Result<(), LedgerError> {
        if self.sources.iter().any(|s| s.path == path) {
            return Ok(());
        }
        self.sources.push(Source {
            path: path.to_path_buf(),
            offset: 0,
            lines: 0,
            torn: 0,
            id: None,
        });
        self.refresh()
    }

    /// Reads the lines appended to every file since the last read.
    pub fn refresh(&mut self) -> Result<(), LedgerError> {
        for i in 0..self.sources.len() {
            self.read_new(i)?;
        }
        Ok(())
    }

    fn read_new(&mut self, i: usize) -> Result<(), LedgerError> {
        let path = self.sources[i].path.clone();
        let io = |error| LedgerError::Io {
            file: path.clone(),
            error,
        };
        let file = match crate::files::open_regular(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len();
        within(
            &path,
            len,
            MAX_LEDGER_BYTES,
            &format!(
                "the {} GiB a ledger may be (some 3 million facts): split it, or merge what it \
                 proves into a smaller one",
                MAX_LEDGER_BYTES >> 30
            ),
        )?;
        let id = file_id(&file);
        let source = &self.sources[i];
        // Replaced under the reader (`git checkout`, `stash` or `pull`, a copy renamed over
        // it, removed and made again) or cut short: read from its start, every fact not read
        // from this path before. The facts read from the old file stay: nothing known is
        // forgotten, and the writer carries them into the new file
        // ([`LedgerWriter::follow`]).
        let mut replaced =
            (source.id.is_some() && id.is_some() && source.id != id) || len < source.offset;
        if !replaced && source.offset > 0 {
            // Rewritten in place, as long or longer: what was read ends in a newline, or the
            // file is another one.
            let mut byte = [0u8; 1];
            let mut f = &file;
            f.seek(SeekFrom::Start(source.offset - 1)).map_err(io)?;
            f.read_exact(&mut byte).map_err(io)?;
            replaced = byte[0] != b'\n';
        }
        let (offset, first) = if replaced {
            (0, 0)
        } else {
            (source.offset, source.lines)
        };
        let mut reader = BufReader::new(file);
        reader.seek(SeekFrom::Start(offset)).map_err(io)?;
        let read = if replaced {
            let known: std::collections::HashSet<String> = self
                .facts
                .iter()
                .filter(|(_, at)| at.file == path)
                .map(|(f, _)| f.to_line())
                .collect();
            read_lines(reader, &path, 0, |text, at| match parse_line(text, &at)? {
                Some(fact) if !known.contains(&fact.to_line()) => self.add(fact, at),
                _ => Ok(()),
            })?
        } else {
            read_lines(reader, &path, first, |text, at| self.add_line(text, at))?
        };
        let (offset, lines, torn) = (offset + read.bytes, first + read.lines, read.torn);
        let source = &mut self.sources[i];
        source.offset = offset;
        source.lines = lines;
        source.torn = torn;
        source.id = id;
        Ok(())
    }

    /// Reads `text`, a whole ledger held in memory (a book built into the binary), as the file
    /// `name`: every line a fact, checked as a file's are.
    pub fn add_text(&mut self, name: &Path, text: &str) -> Result<(), LedgerError> {
        for (i, line) in text.lines().enumerate() {
            let at = Origin {
                file: name.to_path_buf(),
                line: i + 1,
            };
            self.add_line(line, at)?;
        }
        Ok(())
    }

    /// Adds the fact of one line read at `at` (a blank line holds none).
    fn add_line(&mut self, text: &str, at: Origin) -> Result<(), LedgerError> {
        match parse_line(text, &at)? {
            Some(fact) => self.add(fact, at),
            None => Ok(()),
        }
    }

    /// Adds a fact read at `at`, checked against the facts about the same board.
    pub fn add(&mut self, fact: Fact<L>, at: Origin) -> Result<(), LedgerError> {
        let rules = fact.position.rules();
        let board = fact.board();
        let f = fact.f_bounds();
        let index = self.facts.len();
        let budget = fact.over_budget.then_some(fact.budget.unwrap_or(0));
        match self.known.get_mut(&(rules, board)) {
            None => {
                if f.lower > f.upper {
                    return Err(LedgerError::Garbled {
                        at,
                        why: "its bounds leave no value of the right parity".into(),
                    });
                }
                self.known.insert(
                    (rules, board),
                    Known {
                        bounds: f,
                        lower_from: index,
                        upper_from: index,
                        over_budget: budget,
                    },
                );
            }
            Some(known) => {
                let Some(_) = known.bounds.meet(f) else {
                    let other = if f.lower > known.bounds.upper {
                        known.upper_from
                    } else {
                        known.lower_from
                    };
                    let (first_fact, first) = &self.facts[other];
                    let detail = format!(
                        "{} ({} rules): value in [{}, {}] against [{}, {}] for {}",
                        first_fact.position,
                        rules,
                        first_fact.lower,
                        first_fact.upper,
                        fact.lower,
                        fact.upper,
                        fact.position
                    );
                    if self.sets_aside {
                        let first = first.clone();
                        self.set_aside.push((fact, at, first));
                        return Ok(());
                    }
                    return Err(LedgerError::Conflict {
                        first: first.clone(),
                        second: at,
                        detail,
                    });
                };
                if f.lower > known.bounds.lower {
                    known.bounds.lower = f.lower;
                    known.lower_from = index;
                }
                if f.upper < known.bounds.upper {
                    known.bounds.upper = f.upper;
                    known.upper_from = index;
                }
                known.over_budget = known.over_budget.max(budget);
            }
        }
        self.facts.push((fact, at));
        Ok(())
    }

    /// What the facts say of `board` under `rules`, if anything.
    pub fn known(&self, rules: Rules, board: Board<L>) -> Option<&Known> {
        self.known.get(&(rules, board))
    }

    /// Every fact read, in the order read, with where it was read.
    pub fn facts(&self) -> &[(Fact<L>, Origin)] {
        &self.facts
    }

    /// The files whose last line is torn (no newline: a worker killed mid-write, or one
    /// writing now), with the bytes of that line.
    pub fn torn(&self) -> Vec<(&Path, u64)> {
        self.sources
            .iter()
            .filter(|s| s.torn > 0)
            .map(|s| (s.path.as_path(), s.torn))
            .collect()
    }
}

/// What [`read_lines`] read: the bytes and the number of its whole lines, and the bytes of a
/// torn last line (0 if none).
pub(crate) struct LinesRead {
    pub bytes: u64,
    pub lines: usize,
    pub torn: u64,
}

/// Reads `reader`, the file `file` from its line `first + 1` on, as ledgers and checks files are
/// read: each whole line (without its newline) goes to `each` with where it was read. A last
/// line without its newline is a write torn by a kill (or one under way), left unread if it can
/// be the start of a JSON line (it begins with `{`); a line over [`MAX_LINE`] bytes, one that is
/// not UTF-8, or a last line that cannot be a torn one, is [`LedgerError::Garbled`].
pub(crate) fn read_lines(
    mut reader: impl BufRead,
    file: &Path,
    first: usize,
    mut each: impl FnMut(&str, Origin) -> Result<(), LedgerError>,
) -> Result<LinesRead, LedgerError> {
    let mut read = LinesRead {
        bytes: 0,
        lines: 0,
        torn: 0,
    };
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|error| LedgerError::Io {
                file: file.to_path_buf(),
                error,
            })?;
        if n == 0 {
            return Ok(read);
        }
        let at = Origin {
            file: file.to_path_buf(),
            line: first + read.lines + 1,
        };
        let garbled = |why: &str| LedgerError::Garbled {
            at: at.clone(),
            why: why.to_owned(),
        };
        if buf.last() != Some(&b'\n') {
            if n > MAX_LINE {
                return Err(garbled(&format!("a line over {MAX_LINE} bytes")));
            }
            if buf.first() != Some(&b'{') {
                return Err(garbled(
                    "a last line with no line break that is not the start of a JSON line",
                ));
            }
            read.torn = n as u64;
            return Ok(read);
        }
        let text = std::str::from_utf8(&buf[..n - 1]).map_err(|_| garbled("not UTF-8 text"))?;
        read.bytes += n as u64;
        read.lines += 1;
        each(text, at)?;
    }
}

/// The file a worker appends its facts to, held with an exclusive lock (see the module docs).
pub struct LedgerWriter {
    file: File,
    path: PathBuf,
}

impl LedgerWriter {
    /// Opens `path` to append to (made if missing), locks it, and cuts off a torn last line.
    pub fn open(path: &Path) -> Result<LedgerWriter, LedgerError> {
        let io = |error| LedgerError::Io {
            file: path.to_path_buf(),
            error,
        };
        if let Some(what) = crate::files::not_regular(path) {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("it is {what}, not a regular file"),
            )));
        }
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Never followed through a link, never waiting on a FIFO.
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let mut file = match options.open(path) {
            Ok(file) => file,
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it is a symbolic link, not a regular file: not followed",
                )));
            }
            Err(e) => return Err(io(e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if file.metadata().map_err(io)?.nlink() > 1 {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it has other names (hard links): a ledger is written through one name only",
                )));
            }
        }
        match crate::memory::lock_exclusive(&file, false) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(LedgerError::Busy(path.to_path_buf()));
            }
            Err(e) => return Err(io(e)),
        }
        // Nothing is written to a file that is not a ledger (a user's notes, say): it must
        // read as one, every line a fact (or a check) but a torn last one.
        let text = whole_bytes(&mut file).map_err(io)?;
        let not_a_ledger = |at: &Origin, why: &str| LedgerError::NotALedger {
            file: path.to_path_buf(),
            why: format!("line {}: {why}", at.line),
        };
        read_lines(&text[..], path, 0, |line, at| {
            let ok = line.trim().is_empty()
                || serde_json::from_str::<serde_json::Value>(line)
                    .is_ok_and(|v| v.get("fact").is_some() || v.get("check").is_some());
            if ok {
                Ok(())
            } else {
                Err(not_a_ledger(&at, "not a fact"))
            }
        })
        .map_err(|e| match e {
            LedgerError::Garbled { at, why } => not_a_ledger(&at, &why),
            e => e,
        })?;
        // Cut a torn last line: everything after the last newline.
        let len = file.metadata().map_err(io)?.len();
        let keep = last_newline_end(&mut file, len).map_err(io)?;
        if keep < len {
            file.set_len(keep).map_err(io)?;
            file.sync_data().map_err(io)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(LedgerWriter {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends `fact` as one line, in one write, and syncs it to the disk.
    ///
    /// If the path no longer names the file opened (a `git checkout`, `stash` or `pull`, a
    /// copy renamed over it, a removal), the fact goes to the file the path names now, made if
    /// missing, together with every line of the file opened that the new one lacks: no fact
    /// written before is lost with the replaced file, and the worker, which reads the ledger
    /// by its path, sees what it wrote.
    pub fn append<L: Lanes>(&mut self, fact: &Fact<L>) -> Result<(), LedgerError> {
        self.append_all(std::slice::from_ref(fact))
    }

    /// Appends `facts` as one line each, all in one write, and syncs them to the disk, as
    /// [`LedgerWriter::append`] does one.
    pub fn append_all<L: Lanes>(&mut self, facts: &[Fact<L>]) -> Result<(), LedgerError> {
        let lines: Vec<String> = facts.iter().map(Fact::to_line).collect();
        self.append_lines(&lines)
    }

    /// Appends `lines` (each without its newline), all in one write, and syncs them, as
    /// [`LedgerWriter::append`] does a fact: the writer of the checks files
    /// ([`crate::prove::certificate`]) too.
    pub fn append_lines(&mut self, text: &[String]) -> Result<(), LedgerError> {
        self.follow_path()?;
        // At the end of the file as it is now: one cut short in place gets no hole.
        self.file
            .seek(SeekFrom::End(0))
            .map_err(|error| LedgerError::Io {
                file: self.path.clone(),
                error,
            })?;
        let mut lines = String::new();
        for line in text {
            lines.push_str(line);
            lines.push('\n');
        }
        self.file
            .write_all(lines.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|error| LedgerError::Io {
                file: self.path.clone(),
                error,
            })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves to the file the path names now if it is not the one opened, carrying over the
    /// lines it lacks (see [`LedgerWriter::append`]): a worker calls it before it reads its
    /// ledger again, so that a file replaced under it holds every fact it wrote even if it
    /// stops before its next append.
    pub fn follow(&mut self) -> Result<(), LedgerError> {
        self.follow_path()
    }

    fn follow_path(&mut self) -> Result<(), LedgerError> {
        if self.still_at_path() {
            return Ok(());
        }
        let io = |error| LedgerError::Io {
            file: self.path.clone(),
            error,
        };
        let old = whole_text(&mut self.file).map_err(io)?;
        let mut next = LedgerWriter::open(&self.path)?;
        let now = whole_text(&mut next.file).map_err(io)?;
        let present: std::collections::HashSet<&str> = now.lines().collect();
        // Whole lines only: a torn last line was never a fact.
        let whole = &old[..old.rfind('\n').map_or(0, |i| i + 1)];
        let missing: String = whole
            .lines()
            .filter(|line| !line.is_empty() && !present.contains(line))
            .map(|line| format!("{line}\n"))
            .collect();
        next.file.seek(SeekFrom::End(0)).map_err(io)?;
        next.file
            .write_all(missing.as_bytes())
            .and_then(|()| next.file.sync_data())
            .map_err(io)?;
        *self = next;
        Ok(())
    }

    /// Whether the path still names the file opened (always, where that cannot be asked).
    fn still_at_path(&self) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (self.file.metadata(), std::fs::metadata(&self.path)) {
                (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            true
        }
    }
}

/// All of `file` from its start, as bytes.
fn whole_bytes(file: &mut File) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// All of `file` from its start, as text.
fn whole_text(file: &mut File) -> std::io::Result<String> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// The length of `file` up to and including its last newline (0 if it has none).
fn last_newline_end(file: &mut File, len: u64) -> std::io::Result<u64> {
    let mut end = len;
    let mut buf = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}
