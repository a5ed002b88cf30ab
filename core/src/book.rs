//! Opening books: exact values proven ahead of time, kept in ledgers, answered at once.
//!
//! A ledger ([`crate::prove::ledger`]) that holds the exact value of every position to some
//! depth below a start is an opening book. A position is answered from the book when its own
//! value and the value of each of its moves are known without a search: each move leads to the
//! end of the game, to a board the endgame levels hold, or to a board the book holds exactly.
//!
//! ```text
//!   start ──┬── 1 ──> a ──┬── ...      depth 0..=D: every board exact in the book
//!           ├── 2 ──> b   └── ...
//!           └── ...                    depth D+1..: the endgame levels, or a search
//!
//!   answered at once: depth 0..D-1 (their moves lead into the book)
//!   perfect line:     through the book while its boards' moves are known, then the levels;
//!                     it stops where neither knows the next board ([`BookAnswer::pv_complete`])
//! ```
//!
//! The books read are the ledgers kalah ships, built into the binary ([`SHIPPED`]: the books
//! of `data/books/` and the campaigns of `data/proofs/`), and every `*.jsonl` file (but the
//! checks files, `*.checks.jsonl`) in a
//! directory given (the database home). They are read together, checked against each other:
//! two facts that answer and contradict (about one board, or a board's and its moves', as the
//! proof tree grown from them finds) are an error that names them, never a value. Two claims
//! (below) that contradict are no error: both are shown, each naming the other. Bounds that
//! are not exact are kept too: [`Book::bounds`] gives them, for people.
//!
//! **Only checked facts answer.** The shipped ledgers are checked by the test suite (a shipped
//! book without shipped checks, such as empty-capture Kalah(6,5)'s, is read as claims only:
//! its values were computed once, and no check proved them again). A fact of
//! a file answers only when the file's checks (`X.checks.jsonl` beside `X.jsonl`, written by
//! `kalah prove --check X.jsonl --all` or `--certify`, see [`crate::prove::certificate`]) hold
//! a check of it by another path, named by the digest of its text: a fact changed since is
//! unchecked again. Facts not checked are *claims*, kept apart ([`Book::claims`]) and shown as
//! claims, never as values; facts their checks found wrong are dropped and counted.
//!
//! [`make`] writes a book: the distinct boards to a depth below a root, each solved exactly and
//! appended to a ledger as a fact, in the order of their depth; a book cut off resumes from its
//! ledger.

use crate::clock::Instant;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::analysis::Analysis;
use crate::board::Board;
use crate::db::{DbError, Tablebase, finished_f};
use crate::lanes::{Lanes, Narrow};
use crate::notation::Turn;
use crate::position::{Move, Position};
use crate::prove::certificate::{Certificate, Checks, Side, Verdict, checks_path};
use crate::prove::fact::{Bounds, Fact};
use crate::prove::ledger::{Ledger, LedgerError, LedgerWriter, Origin};
use crate::prove::shipped::CHECKED;
use crate::prove::tree::{Tree, TreeError};
use crate::rules::Rules;
use crate::search::{SolveError, Solver};

/// The ledgers built into kalah: a name (`kalah-M-N-RULES...`) and the text.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "kalah-6-4-standard-book.jsonl",
        include_str!("../../data/books/kalah-6-4-standard-book.jsonl"),
    ),
    (
        "kalah-6-4-empty-capture-book.jsonl",
        include_str!("../../data/books/kalah-6-4-empty-capture-book.jsonl"),
    ),
    (
        "kalah-6-5-standard-book.jsonl",
        include_str!("../../data/books/kalah-6-5-standard-book.jsonl"),
    ),
    (
        "kalah-6-5-empty-capture-book.jsonl",
        include_str!("../../data/books/kalah-6-5-empty-capture-book.jsonl"),
    ),
    (
        "kalah-6-5-standard.jsonl",
        include_str!("../../data/proofs/kalah-6-5-standard.jsonl"),
    ),
    (
        "kalah-6-5-empty-capture.jsonl",
        include_str!("../../data/proofs/kalah-6-5-empty-capture.jsonl"),
    ),
    (
        "kalah-6-6-empty-capture.jsonl",
        include_str!("../../data/proofs/kalah-6-6-empty-capture.jsonl"),
    ),
    (
        "kalah-6-6-standard.jsonl",
        include_str!("../../data/proofs/kalah-6-6-standard.jsonl"),
    ),
];

/// Where a shipped ledger lies in kalah's source tree: `data/books/` for the opening books
/// (`...-book.jsonl`), `data/proofs/` for the campaigns.
pub fn shipped_path(name: &str) -> String {
    let dir = if name.ends_with("-book.jsonl") {
        "data/books"
    } else {
        "data/proofs"
    };
    format!("{dir}/{name}")
}

/// The shipped campaign ledger of `game` (houses, rules, seeds in all), if kalah ships one:
/// its place in the source tree ([`shipped_path`]).
pub fn shipped_campaign(game: (usize, Rules, u32)) -> Option<String> {
    SHIPPED
        .iter()
        .map(|&(name, _)| name)
        .find(|name| !name.ends_with("-book.jsonl") && game_of_name(name) == Some(game))
        .map(shipped_path)
}

/// The most sowings of a perfect line read from the book ([`Book::line`]: a Kalah(6,6) game is
/// about 80; the levels finish any line that reaches them).
const MAX_LINE_SOWINGS: usize = 400;

/// The most positions of a proof tree grown to bound a position ([`Book::bounds`]): some
/// tens of milliseconds, whatever the ledgers hold (a campaign's tree is a few thousand).
const MAX_TREE: usize = 1 << 16;

/// The most claims that disagree with another shown for one board ([`Book::claims`]).
pub const MAX_DISPUTED_SHOWN: usize = 8;

/// The most ledger files read from one directory.
pub const MAX_FILES: usize = 1024;

/// The largest ledger file read as a book (64 MiB: some 200,000 facts, read in about 2 s; a
/// Kalah(6,4) book of depth 6 is 7 MB). A larger one is an error that names it, before it is
/// read.
pub const MAX_BOOK_BYTES: u64 = 64 << 20;

/// The most bytes of ledgers and of their checks files read from one directory, in all: as
/// much as one ledger may be ([`MAX_BOOK_BYTES`]), however many files it is split into. More
/// is an error naming the directory, before any file is read: every `query` reads them all,
/// and `serve` holds their facts for its lifetime.
pub const MAX_DIR_BYTES: u64 = MAX_BOOK_BYTES;

/// The most facts read from the ledgers of one directory, in all (what [`MAX_DIR_BYTES`] holds
/// in lines of the usual length, some 320 bytes: 200,000 facts held take some 220 MB).
pub const MAX_DIR_FACTS: usize = 200_000;

/// Why a book cannot answer.
#[derive(Debug)]
pub enum BookError {
    /// A ledger cannot be read, or contradicts itself or another.
    Ledger(LedgerError),
    /// The endgame levels could not be read.
    Database(DbError),
    /// The book's value of a board is not the best of its moves' values: a fact is wrong, or
    /// the levels are.
    Inconsistent(String),
    /// A search for the book failed (a damaged block, a cancel).
    Solve(SolveError),
    /// The facts about a position contradict the facts about its moves (as the proof tree
    /// grown from them finds): an error, never an answer.
    Contradiction(TreeError),
}

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookError::Ledger(e) => e.fmt(f),
            BookError::Database(e) => e.fmt(f),
            BookError::Inconsistent(why) => f.write_str(why),
            BookError::Solve(e) => e.fmt(f),
            BookError::Contradiction(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BookError {}

impl From<LedgerError> for BookError {
    fn from(e: LedgerError) -> BookError {
        BookError::Ledger(e)
    }
}

impl From<DbError> for BookError {
    fn from(e: DbError) -> BookError {
        BookError::Database(e)
    }
}

/// An answer from the book.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookAnswer {
    /// The value, every move's value, the best moves, and the perfect line as far as the book
    /// and the levels know it.
    pub analysis: Analysis,
    /// Whether the perfect line goes to the end of the game.
    pub pv_complete: bool,
}

/// A fact of a file that no check by another path has proven again: what it claims of a
/// position's value (stores included, for the side to move), and where it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    /// The file and line of the fact.
    pub at: Origin,
    /// The bounds it claims.
    pub bounds: Bounds,
    /// Where a claim about the same board that it contradicts was read, if one was: claims
    /// that disagree are both shown, and neither is an error (they answer nothing).
    pub disputed_by: Option<Origin>,
}

impl Claimed {
    /// Whether `value` (stores included, for the side to move) agrees with the claim.
    pub fn holds(&self, value: i32) -> bool {
        self.bounds.lower <= value && value <= self.bounds.upper
    }
}

/// What the files read hold, fact by fact (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trust {
    /// Facts proven again by another path (or that claim nothing of a value).
    pub checked: usize,
    /// Facts no check by another path has proven again: claims.
    pub unchecked: usize,
    /// Facts their checks found wrong (never read).
    pub wrong: usize,
}

/// What the facts prove of a position's value, and how far it is certified: each bound
/// rests on facts each proven again by another path (see [`crate::prove::certificate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proven {
    /// The bounds (stores included, for the side to move).
    pub bounds: Bounds,
    /// Whether the lower bound is certified (a bound that rests on no fact, only on the sowings
    /// and the seeds, is).
    pub lower_certified: bool,
    /// Whether the upper bound is certified.
    pub upper_certified: bool,
    /// Whether the bounds rest on any fact at all (not on the sowings and the seeds alone).
    pub rests_on_facts: bool,
}

impl Proven {
    /// Whether the bounds rest on facts, each proven again by another path.
    pub fn is_certified(&self) -> bool {
        self.rests_on_facts && self.lower_certified && self.upper_certified
    }
}

/// The facts of the books read (see the module docs).
#[derive(Default)]
pub struct Book {
    /// The facts that answer: the shipped ones, and those of files their checks proved again.
    ledger: Ledger,
    /// The checks read: of the shipped ledgers (those built in, [`CHECKED`]) and the files'
    /// own.
    checks: Checks,
    /// The facts of files not proven again: shown as claims only.
    claims: Ledger,
    /// Claims that contradict one of `claims` (about the same board): shown beside it, each
    /// with where the claim it contradicts was read.
    disputed: Vec<(Fact, Origin, Origin)>,
    /// How many facts of each kind the files held.
    trust: Trust,
    /// The ledgers read: shipped ones by name, the others by path.
    sources: Vec<String>,
    /// The shipped ledgers read.
    shipped: Vec<&'static str>,
    /// The facts read from files ([`Book::add_file`]), at most [`MAX_DIR_FACTS`].
    file_facts: usize,
}

impl Book {
    /// A book with no fact.
    pub fn empty() -> Book {
        Book::default()
    }

    /// The books: the shipped ledgers if `shipped` (if `only` is given, only those of its
    /// game: houses, rules and seeds in all, stores included), and every `*.jsonl` file in
    /// `dir` if given (a directory that is not there holds none; its files are read whole,
    /// whatever their variants).
    pub fn open(
        shipped: bool,
        only: Option<(usize, Rules, u32)>,
        dir: Option<&Path>,
    ) -> Result<Book, LedgerError> {
        let mut book = Book::empty();
        if let Some(dir) = dir {
            for path in ledger_files(dir)? {
                book.add_file(&path)?;
            }
        }
        if shipped {
            book.add_shipped(only)?;
        }
        Ok(book)
    }

    /// Adds the shipped ledgers of the game `only` (houses, rules, seeds in all; every game if
    /// `None`) not read yet: for a batch of positions of several games.
    pub fn add_shipped(&mut self, only: Option<(usize, Rules, u32)>) -> Result<(), LedgerError> {
        for &(name, text) in SHIPPED {
            let wanted = only.is_none_or(|game| game_of_name(name) == Some(game));
            if wanted && !self.shipped.contains(&name) {
                self.shipped.push(name);
                // Its checks, if it has any: those built in with it (crate::prove::shipped).
                let path = shipped_path(name);
                let checks = CHECKED.iter().find(|(p, _, _)| *p == path);
                if name.ends_with("-book.jsonl") && checks.is_none() {
                    // A book shipped without checks states exact values no other path has
                    // proven: claims, shown as such, never values.
                    let mut own = Ledger::setting_aside();
                    own.add_text(Path::new(name), text)?;
                    for (fact, origin) in own.facts() {
                        self.add_claim(fact, origin)?;
                    }
                    continue;
                }
                self.ledger.add_text(Path::new(name), text)?;
                self.sources.push(name.to_owned());
                if let Some(&(_, _, checks)) = checks {
                    let checks_name = checks_path(Path::new(name));
                    self.checks.add_text(&checks_name, checks)?;
                }
            }
        }
        Ok(())
    }

    /// Reads the ledger `path` with its checks (`X.checks.jsonl` beside it, if there): the
    /// facts proven again by another path answer, the others are claims (see the module
    /// docs). A fact that contradicts another of the same kind is an error naming both.
    pub fn add_file(&mut self, path: &Path) -> Result<(), LedgerError> {
        within_book_bound(path)?;
        // Facts of the file that contradict each other are weighed one by one too: two claims
        // that disagree are no error, two checked facts that do are.
        let mut own = Ledger::setting_aside();
        own.add_file(path)?;
        self.file_facts += own.facts().len() + own.set_aside().len();
        if self.file_facts > MAX_DIR_FACTS {
            return Err(LedgerError::Io {
                file: path.to_path_buf(),
                error: std::io::Error::other(format!(
                    "the ledgers read up to this one hold {} facts, more than the {MAX_DIR_FACTS} \
                     read from one directory in all (move some ledgers out of it, merge what \
                     they prove into a smaller one, or --no-book)",
                    self.file_facts
                )),
            });
        }
        // The file's checks join those read before: a check names its fact by the digest of
        // its text, whatever file holds it (see crate::prove::certificate).
        self.checks.add_file(&checks_path(path))?;
        let mut answers = false;
        let set_aside = own.set_aside().iter().map(|(f, at, _)| (f, at));
        for (fact, origin) in own.facts().iter().map(|(f, at)| (f, at)).chain(set_aside) {
            if !fact.is_informative() {
                // It claims nothing of a value (a test that ran out of its budget).
                self.ledger.add(fact.clone(), origin.clone())?;
                self.trust.checked += 1;
                continue;
            }
            // What the checks say, before the fact is kept.
            let verdict = match self.checks.verdict(fact) {
                Verdict::Holds(_) => Some(true),
                Verdict::Wrong(_) => Some(false),
                Verdict::Unchecked => None,
            };
            match verdict {
                Some(true) => {
                    self.ledger.add(fact.clone(), origin.clone())?;
                    self.trust.checked += 1;
                    answers = true;
                }
                Some(false) => self.trust.wrong += 1,
                None => {
                    self.add_claim(fact, origin)?;
                    self.trust.unchecked += 1;
                }
            }
        }
        if answers {
            self.sources.push(path.display().to_string());
        }
        Ok(())
    }

    /// Keeps `fact` (read at `origin`) as a claim. Claims answer nothing, so two that
    /// contradict stop nothing either: the later one is kept apart and shown beside the other,
    /// as claims that disagree (a file dropped in the directory cannot make every answer an
    /// error).
    fn add_claim(&mut self, fact: &Fact, origin: &Origin) -> Result<(), LedgerError> {
        match self.claims.add(fact.clone(), origin.clone()) {
            Ok(()) => Ok(()),
            Err(LedgerError::Conflict { first, .. }) => {
                self.disputed.push((fact.clone(), origin.clone(), first));
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// How many facts of the files read were checked, unchecked, or found wrong.
    pub fn trust(&self) -> Trust {
        self.trust
    }

    /// What the unchecked facts of the files read claim of `pos`'s own board (stores
    /// included, for the side to move): at most one for each side of the bounds, the
    /// tightest. Claims are never values: see the module docs.
    pub fn claims<L: Lanes>(&self, pos: &Position<L>) -> Vec<Claimed> {
        if pos.is_finished() {
            return Vec::new();
        }
        let Some(board) = narrow(pos.board()) else {
            return Vec::new();
        };
        let rules = pos.rules();
        let stores = pos.store_difference();
        let claimed = |fact: &Fact, at: &Origin, disputed_by: Option<Origin>| {
            let f = fact.f_bounds();
            Claimed {
                at: at.clone(),
                bounds: Bounds {
                    lower: f.lower + stores,
                    upper: f.upper + stores,
                },
                disputed_by,
            }
        };
        let mut out: Vec<Claimed> = Vec::new();
        // The claims that disagree with another about this board, each naming the other (the
        // first few: an answer stays small whatever a file holds).
        let disputed: Vec<Claimed> = self
            .disputed
            .iter()
            .filter(|(fact, _, _)| fact.position.rules() == rules && fact.board() == board)
            .take(MAX_DISPUTED_SHOWN)
            .map(|(fact, at, first)| claimed(fact, at, Some(first.clone())))
            .collect();
        if let Some(known) = self.claims.known(rules, board) {
            let (low, high) = known.from();
            for i in [low, high] {
                let (fact, at) = &self.claims.facts()[i];
                let by = disputed.iter().find(|d| d.disputed_by.as_ref() == Some(at));
                let c = claimed(fact, at, by.map(|d| d.at.clone()));
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out.extend(disputed);
        out
    }

    /// The ledgers read whose facts answer: the shipped ones by name, the files with a
    /// checked fact by path.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// How many facts were read (claims and facts found wrong included).
    pub fn facts(&self) -> usize {
        self.ledger.facts().len()
            + self.claims.facts().len()
            + self.disputed.len()
            + self.trust.wrong
    }

    /// The bounds the facts give on the value of `pos` (stores included, for the side to move),
    /// if they say more than its seeds do: its own facts', and those of the moves below it
    /// where a campaign split it (minimax over its proof tree, [`Tree`]); `None` for a finished
    /// game or a board the book does not know. Facts that contradict the facts of the moves
    /// below them are an error naming them ([`BookError::Contradiction`]), never bounds.
    pub fn bounds<L: Lanes>(&self, pos: &Position<L>) -> Result<Option<Bounds>, BookError> {
        if pos.is_finished() {
            return Ok(None);
        }
        let own = self.f_bounds(pos.board(), pos.rules());
        // A campaign's root has no fact of its own: its bounds are its tree's, when the facts
        // know a position of it (a tree the facts know nothing of only says what its first
        // sowings do: nothing proven). The tree's root meets its own facts, so its bounds
        // are the tighter.
        let tree = self.tree(pos)?.map(|tree| tree.root().bounds);
        let Some(f) = tree.or(own) else {
            return Ok(None);
        };
        let widest = Bounds::widest(pos.seeds_on_board(), pos.rules());
        if f.lower <= widest.lower && f.upper >= widest.upper {
            return Ok(None);
        }
        let stores = pos.store_difference();
        Ok(Some(Bounds {
            lower: f.lower + stores,
            upper: f.upper + stores,
        }))
    }

    /// The proof tree of `pos` as the facts split it, if the facts know a position of it
    /// (`None` too for a position past the narrow lanes, and for a tree past [`MAX_TREE`]
    /// positions: the board's own facts then bound it alone); an error for facts that
    /// contradict the facts of their moves.
    fn tree<L: Lanes>(&self, pos: &Position<L>) -> Result<Option<Tree>, BookError> {
        let rules = pos.rules();
        let Ok(narrow) = Position::<Narrow>::from_setup(&pos.to_setup(), rules) else {
            return Ok(None);
        };
        let tree = match Tree::grow(narrow, &self.ledger, MAX_TREE) {
            Ok(tree) => tree,
            Err(TreeError::TooLarge(_)) => return Ok(None),
            Err(e) => return Err(BookError::Contradiction(e)),
        };
        let known = tree
            .nodes()
            .iter()
            .any(|n| self.ledger.known(rules, n.board()).is_some());
        Ok(known.then_some(tree))
    }

    /// What the facts prove of `pos`'s value, as [`Book::bounds`] gives it, and whether each
    /// of its two bounds is certified by the checks read: the cheapest set of facts it rests
    /// on, over the proof tree of `pos`, each proven again by another path
    /// ([`Certificate::of_tree`]). `None` where [`Book::bounds`] is; an error where it is.
    pub fn proven<L: Lanes>(&self, pos: &Position<L>) -> Result<Option<Proven>, BookError> {
        if pos.is_finished() {
            return Ok(None);
        }
        let rules = pos.rules();
        let Some(tree) = self.tree(pos)? else {
            // No tree to weigh: its bounds are the board's own facts', not certified.
            return Ok(self.bounds(pos)?.map(|bounds| Proven {
                bounds,
                lower_certified: false,
                upper_certified: false,
                rests_on_facts: true,
            }));
        };
        let f = tree.root().bounds;
        let widest = Bounds::widest(pos.seeds_on_board(), rules);
        if f.lower <= widest.lower && f.upper >= widest.upper {
            return Ok(None);
        }
        let certificate = Certificate::of_tree(&tree, &self.ledger, &self.checks);
        let root_claims = || certificate.claims.iter().filter(|c| c.mv.is_none());
        let certified = |side: Side| {
            root_claims()
                .filter(|c| c.side == side)
                .all(|c| c.is_certified())
        };
        let stores = pos.store_difference();
        Ok(Some(Proven {
            bounds: Bounds {
                lower: f.lower + stores,
                upper: f.upper + stores,
            },
            lower_certified: certified(Side::Lower),
            upper_certified: certified(Side::Upper),
            rests_on_facts: root_claims().any(|c| !c.facts.is_empty()),
        }))
    }

    /// What the facts say of f of `board`, if anything.
    fn f_bounds<L: Lanes>(&self, board: Board<L>, rules: Rules) -> Option<Bounds> {
        known_f(&self.ledger, board, rules)
    }

    /// The answer for `pos` if the book knows its value and every move's (see the module
    /// docs); `db` (the levels of `pos`'s board size and rules) is probed for the boards the
    /// levels hold. `None` for a finished game, a board the levels hold themselves, and any
    /// board the book cannot answer whole.
    pub fn analyze<L: Lanes>(
        &self,
        pos: &Position<L>,
        db: Option<&Tablebase>,
    ) -> Result<Option<BookAnswer>, BookError> {
        let rules = pos.rules();
        let db = db.filter(|db| db.houses() == pos.houses_per_side() && db.rules() == rules);
        let Some(side) = pos.to_move() else {
            return Ok(None);
        };
        let board = pos.board();
        if db.is_some_and(|db| board.seeds() <= db.max_level()) {
            return Ok(None);
        }
        let Some(f) = self
            .f_bounds(board, rules)
            .filter(|b| b.is_exact())
            .map(|b| b.lower)
        else {
            return Ok(None);
        };
        let Some(values) = move_values(&self.ledger, board, rules, db)? else {
            return Ok(None);
        };
        check(board, rules, f, &values)?;
        let (pv, pv_complete) = self.line(pos, db)?;
        Ok(Some(BookAnswer {
            analysis: Analysis::of_move_values(side, pos.store_difference(), f, &values, pv),
            pv_complete,
        }))
    }

    /// The perfect line from `pos` as far as the book and the levels `db` know it: at each step
    /// the lowest house proven to keep the value (its lower bound reaching the position's exact
    /// value), through the book's boards, then the levels' line; and whether it reaches the
    /// end of the game. It stops where the value is not known exactly, or no move is proven to
    /// keep it (or after [`MAX_LINE_SOWINGS`] sowings).
    pub fn line<L: Lanes>(
        &self,
        pos: &Position<L>,
        db: Option<&Tablebase>,
    ) -> Result<(Vec<Turn>, bool), BookError> {
        let db = db.filter(|db| db.houses() == pos.houses_per_side() && db.rules() == pos.rules());
        let mut pv = Vec::new();
        let mut turn: Vec<Move> = Vec::new();
        let mut at = *pos;
        let mut complete = false;
        let level_value = |p: &Position<L>| -> Result<Option<i32>, DbError> {
            match db.filter(|db| p.seeds_on_board() <= db.max_level()) {
                Some(db) => Ok(db
                    .probe_checked(p.board())?
                    .map(|f| f + p.store_difference())),
                None => Ok(None),
            }
        };
        for _ in 0..MAX_LINE_SOWINGS {
            if at.is_finished() {
                complete = true;
                break;
            }
            if let Some(db) = db.filter(|db| at.seeds_on_board() <= db.max_level()) {
                if let Some(rest) = db.analyze(&at)? {
                    let mut turns = rest.pv.into_iter();
                    if let Some(first) = turns.next() {
                        turn.extend(first.0);
                        pv.push(Turn(std::mem::take(&mut turn)));
                    }
                    pv.extend(turns);
                    complete = true;
                }
                break;
            }
            let Some(v) = self.bounds(&at)?.filter(|b| b.is_exact()).map(|b| b.lower) else {
                break;
            };
            let mut keeps = None;
            for mv in at.legal_moves() {
                let mut failed = None;
                let b = after_move(&at, mv, |child| {
                    let known = match level_value(child) {
                        Ok(Some(value)) => Ok(Some(Bounds::exact(value))),
                        Ok(None) => self.bounds(child),
                        Err(e) => Err(BookError::Database(e)),
                    };
                    known
                        .unwrap_or_else(|e| {
                            failed = Some(e);
                            None
                        })
                        .unwrap_or_else(|| value_range(child))
                });
                if let Some(e) = failed {
                    return Err(e);
                }
                if b.lower >= v {
                    keeps = Some(mv);
                    break;
                }
            }
            let Some(mv) = keeps else { break };
            let (next, sowing) = at.play_unchecked(mv);
            turn.push(mv);
            if !sowing.extra_turn {
                pv.push(Turn(std::mem::take(&mut turn)));
            }
            at = next;
        }
        if !turn.is_empty() {
            pv.push(Turn(turn));
        }
        Ok((pv, complete))
    }
}

/// The widest bounds of `pos`'s value (stores included, for the side to move): what its seeds
/// allow.
pub fn value_range<L: Lanes>(pos: &Position<L>) -> Bounds {
    let w = Bounds::widest(pos.seeds_on_board(), pos.rules());
    let stores = pos.store_difference();
    Bounds {
        lower: w.lower + stores,
        upper: w.upper + stores,
    }
}

/// Bounds on the mover's final margin (stores included) after the move `mv` of `pos`, from
/// `of`, bounds on the value of the position it leads to for the side to move there: as they
/// are after an extra turn, negated when the turn passes, exact at the game's end.
pub fn after_move<L: Lanes>(
    pos: &Position<L>,
    mv: Move,
    of: impl FnOnce(&Position<L>) -> Bounds,
) -> Bounds {
    let (next, _) = pos.play_unchecked(mv);
    match (next.outcome(), pos.to_move()) {
        (Some(end), Some(mover)) => Bounds::exact(end.margin(mover)),
        (Some(_), None) => Bounds::exact(0),
        (None, mover) if next.to_move() == mover => of(&next),
        (None, _) => of(&next).negated(),
    }
}

/// The exact f of `board` from `ledger`, the levels or the end of the game, if any of them
/// knows it.
fn exact_f<L: Lanes>(
    ledger: &Ledger,
    board: Board<L>,
    rules: Rules,
    db: Option<&Tablebase>,
) -> Result<Option<i32>, DbError> {
    if board.is_finished() {
        return Ok(Some(finished_f(
            board.mover_seeds(),
            board.opponent_seeds(),
        )));
    }
    if let Some(db) = db.filter(|db| board.seeds() <= db.max_level()) {
        if let Some(f) = db.probe_checked(board)? {
            return Ok(Some(f));
        }
    }
    Ok(known_f(ledger, board, rules)
        .filter(|b| b.is_exact())
        .map(|b| b.lower))
}

/// What `ledger`'s facts say of f of `board`, if anything.
fn known_f<L: Lanes>(ledger: &Ledger, board: Board<L>, rules: Rules) -> Option<Bounds> {
    ledger
        .known(rules, narrow(board)?)
        .map(|known| known.bounds)
}

/// The value of each legal move of `board` (f-relative: the store difference it makes from
/// here on, for the mover), if [`exact_f`] knows every one.
fn move_values<L: Lanes>(
    ledger: &Ledger,
    board: Board<L>,
    rules: Rules,
    db: Option<&Tablebase>,
) -> Result<Option<Vec<(Move, i32)>>, DbError> {
    let movable = board.movable();
    let mut values = Vec::new();
    for h in (0..board.houses_per_side()).filter(|h| movable >> h & 1 == 1) {
        let (child, sowing) = board.sow(h, rules);
        let Some(f) = exact_f(ledger, child, rules, db)? else {
            return Ok(None);
        };
        let value = sowing.value_with(f);
        values.push((Move::new(h + 1).expect("a house number"), value));
    }
    Ok(Some(values))
}

/// An error unless the best of `values` is `f`.
fn check<L: Lanes>(
    board: Board<L>,
    rules: Rules,
    f: i32,
    values: &[(Move, i32)],
) -> Result<(), BookError> {
    if values.iter().map(|&(_, v)| v).max() == Some(f) {
        return Ok(());
    }
    let listed: Vec<String> = values.iter().map(|(mv, v)| format!("{mv}:{v:+}")).collect();
    Err(BookError::Inconsistent(format!(
        "the book gives f = {f:+} for the board {} ({rules} rules), but its moves give {}: a \
         ledger's fact or the levels are wrong",
        houses_text(board),
        listed.join(" ")
    )))
}

/// The game a shipped ledger's name says (`kalah-M-N-RULES...`): houses, rules and the seeds
/// in all (2·M·N).
fn game_of_name(name: &str) -> Option<(usize, Rules, u32)> {
    let mut parts = name.strip_prefix("kalah-")?.splitn(3, '-');
    let houses: usize = parts.next()?.parse().ok()?;
    let seeds: u32 = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let rules = if rest.starts_with("empty-capture") {
        Rules::EmptyCapture
    } else if rest.starts_with("standard") {
        Rules::Standard
    } else {
        return None;
    };
    Some((houses, rules, 2 * houses as u32 * seeds))
}

/// The game of `pos` as [`Book::open`] takes it: houses, rules and the seeds in all.
pub fn game_of<L: Lanes>(pos: &Position<L>) -> (usize, Rules, u32) {
    let stores = pos.store(crate::Side::South) + pos.store(crate::Side::North);
    (
        pos.houses_per_side(),
        pos.rules(),
        pos.seeds_on_board() + stores,
    )
}

/// The `*.jsonl` files of `dir` but the checks files, sorted (none if it is not there); an
/// error past [`MAX_FILES`], or when they and their checks files hold more than
/// [`MAX_DIR_BYTES`] in all.
pub fn ledger_files(dir: &Path) -> Result<Vec<PathBuf>, LedgerError> {
    let io = |error| LedgerError::Io {
        file: dir.to_path_buf(),
        error,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(io)?.path();
        // Checks files (`X.checks.jsonl`, see crate::prove::certificate) hold no facts.
        let checks = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".checks.jsonl"));
        if path.extension().is_some_and(|e| e == "jsonl") && !checks {
            files.push(path);
            if files.len() > MAX_FILES {
                return Err(io(std::io::Error::other(format!(
                    "more than {MAX_FILES} ledger files (*.jsonl)"
                ))));
            }
        }
    }
    files.sort();
    for f in &files {
        within_book_bound(f)?;
    }
    let total = files.iter().fold(0u64, |sum, f| {
        sum.saturating_add(file_size(f))
            .saturating_add(file_size(&checks_path(f)))
    });
    crate::prove::ledger::within(
        dir,
        total,
        MAX_DIR_BYTES,
        &format!(
            "the {} MiB of ledgers and checks files read from one directory in all (*.jsonl, \
             read by every query: move some out of it, merge what they prove into a smaller \
             ledger, or --no-book)",
            MAX_DIR_BYTES >> 20
        ),
    )?;
    Ok(files)
}

/// The size of the file at `path` (0 if it cannot be asked: reading it says why).
fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// An error naming the ledger `path` if it is larger than a book may be ([`MAX_BOOK_BYTES`]).
fn within_book_bound(path: &Path) -> Result<(), LedgerError> {
    crate::prove::ledger::within(
        path,
        file_size(path),
        MAX_BOOK_BYTES,
        &format!(
            "the {} MiB a ledger read as a book may be (move it out of the database \
             directory, or merge what it proves into a smaller one)",
            MAX_BOOK_BYTES >> 20
        ),
    )
}

/// The houses of `board` for people: the mover's, then the opponent's, each from house 1.
fn houses_text<L: Lanes>(board: Board<L>) -> String {
    let m = board.houses_per_side();
    let side = |house: &dyn Fn(usize) -> u32| {
        (0..m)
            .map(|i| house(i).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "mover {} / opponent {}",
        side(&|i| board.mover_house(i)),
        side(&|i| board.opponent_house(i))
    )
}

/// `board` in narrow lanes, if it fits them.
fn narrow<L: Lanes>(board: Board<L>) -> Option<Board<Narrow>> {
    let m = board.houses_per_side();
    let mover: Vec<u32> = (0..m).map(|i| board.mover_house(i)).collect();
    let opponent: Vec<u32> = (0..m).map(|i| board.opponent_house(i)).collect();
    Board::from_houses(&mover, &opponent)
}

/// How far [`make`] has got.
#[derive(Clone, Copy, Debug)]
pub struct MakeProgress {
    /// Boards of the book so far (known before, or solved now).
    pub done: usize,
    /// Boards the book will hold.
    pub total: usize,
    /// Boards solved in this run.
    pub solved: usize,
    /// Search nodes of this run.
    pub nodes: u64,
}

/// What [`make`] did.
#[derive(Clone, Copy, Debug)]
pub struct Made {
    /// Distinct boards to the depth (not finished, not in the levels).
    pub boards: usize,
    /// Of them, known exactly in the ledger before.
    pub known: usize,
    /// Appended now: searched, or worked out from the moves' values.
    pub solved: usize,
    /// Of them, worked out from the moves' values with no search.
    pub derived: usize,
    /// Search nodes of this run.
    pub nodes: u64,
}

/// A book too large for the memory it may use: the depth reached and the boards met when the
/// enumeration stopped, and the memory they took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The depth being enumerated.
    pub depth: u32,
    /// The distinct boards met so far (and the moves waiting below them).
    pub boards: usize,
    /// The bytes they took.
    pub bytes: u64,
    /// Whether the system refused more memory (a limit such as `ulimit -v`) before the walk
    /// reached the bytes it was given.
    pub refused: bool,
}

/// The distinct boards of the positions `depth` sowings or fewer below `root` (extra turns
/// count as sowings), without the finished ones and those the levels up to `top` hold, each
/// with one position that reaches it and the depth where it is first met, shallowest first.
/// Stops, before it takes more than `max_bytes` of memory, with [`TooLarge`] (each ply
/// multiplies the boards by about 5 in Kalah(6,4): a book is bounded by memory long before
/// time). [`estimate`] says at once what the count would take.
pub fn positions_to(
    root: &Position<Narrow>,
    depth: u32,
    top: Option<u32>,
    max_bytes: u64,
) -> Result<Vec<(Position<Narrow>, u32)>, TooLarge> {
    walk(root, depth, top, max_bytes, usize::MAX).map(|w| w.boards)
}

/// The boards an estimate counts exactly before it extrapolates: about half a second.
const PROBE_BOARDS: usize = 250_000;

/// What a book to some depth would hold and take, said before it is counted ([`estimate`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The distinct boards [`positions_to`] would return.
    pub boards: u64,
    /// The most memory the count would take at once.
    pub bytes: u64,
    /// The depth counted exactly; the plies beyond it are extrapolated.
    pub counted_to: u32,
    /// The boards counted to that depth.
    pub counted: u64,
    /// How many times more boards the first ply beyond it is taken to add.
    pub growth: f64,
    /// Whether the whole book was counted (then `boards` and `bytes` are exact).
    pub exact: bool,
}

/// The size of the book of `root` to `depth` that [`positions_to`] would count, estimated at
/// once: the boards are counted exactly to the first ply that ends past 250,000 of them (half
/// a second), and the plies beyond are taken to go on growing as the last ones counted did:
/// the growth of the last ply, shrinking ply by ply by as much as it shrank from the ply before.
/// Transpositions, finished games and the levels slow the growth ever faster deeper down, so
/// the estimate errs large, not small: Kalah(6,6) to depth 10, counted to depth 8 (0.6 s),
/// 32.3 M boards where 32.0 M are; Kalah(4,3) to depth 16, where the game runs out of boards,
/// 2.5 M where 0.8 M are. Counting the probe takes at most `max_bytes` ([`TooLarge`]).
pub fn estimate(
    root: &Position<Narrow>,
    depth: u32,
    top: Option<u32>,
    max_bytes: u64,
) -> Result<Estimate, TooLarge> {
    let walked = walk(root, depth, top, max_bytes, PROBE_BOARDS)?;
    Ok(extrapolate(&walked, depth))
}

/// A book that [`positions_within`] refuses: too large by its [`estimate`], before counting,
/// or by the count itself, should the estimate have erred small.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refused {
    /// The estimate is past the memory allowed.
    Estimated(Estimate),
    /// The count reached the memory allowed.
    Counted(TooLarge),
}

/// [`positions_to`] within `max_bytes`, refused at once when the [`estimate`] is past them;
/// the probe of the estimate is the answer when it reached the depth (a small book is walked
/// once).
pub fn positions_within(
    root: &Position<Narrow>,
    depth: u32,
    top: Option<u32>,
    max_bytes: u64,
) -> Result<Vec<(Position<Narrow>, u32)>, Refused> {
    let walked = walk(root, depth, top, max_bytes, PROBE_BOARDS).map_err(Refused::Counted)?;
    let guess = extrapolate(&walked, depth);
    if guess.exact {
        return Ok(walked.boards);
    }
    if guess.bytes > max_bytes {
        return Err(Refused::Estimated(guess));
    }
    drop(walked);
    positions_to(root, depth, top, max_bytes).map_err(Refused::Counted)
}

/// The [`Estimate`] of the book to `depth` from the walk of its first plies.
fn extrapolate(walked: &Walk, depth: u32) -> Estimate {
    let plies = &walked.plies;
    let last = plies.len() - 1;
    let counted_to = last as u32;
    let counted = walked.boards.len() as u64;
    let exact = counted_to == depth || walked.waiting == 0;
    // How many times more boards ply `i` holds than the one before.
    let ratio = |i: usize| plies[i] as f64 / plies[i - 1].max(1) as f64;
    let (mut growth, shrink) = match last {
        0 => (0.0, 1.0),
        1 => (ratio(1), 1.0),
        _ => (ratio(last), (ratio(last) / ratio(last - 1)).min(1.0)),
    };
    let first_growth = growth;
    let children = walked.waiting as f64 / plies[last].max(1) as f64;
    // The peak of the count: at each ply, the boards so far, the moves waiting below the ply
    // before and those being gathered below this one.
    let mut total = counted as f64;
    let mut ply = plies[last] as f64;
    let mut peak = walked.peak as f64;
    if !exact {
        for d in counted_to + 1..=depth {
            let waiting = ply * children;
            ply *= growth;
            growth *= shrink;
            total += ply;
            let next = if d < depth { ply * children } else { 0.0 };
            peak = peak.max(total * COST_FOUND as f64 + (waiting + next) * COST_WAITING as f64);
        }
    }
    Estimate {
        boards: total.min(u64::MAX as f64) as u64,
        bytes: peak.min(u64::MAX as f64) as u64,
        counted_to,
        counted,
        growth: first_growth,
        exact,
    }
}

/// What a board met takes in the walk, its containers' spare capacity and overhead included:
/// its place in the answer and in the set of boards seen.
const COST_FOUND: u64 = 2 * std::mem::size_of::<(Position<Narrow>, u32)>() as u64
    + 3 * std::mem::size_of::<Board<Narrow>>() as u64;
/// What a position waiting to be walked takes.
const COST_WAITING: u64 = 2 * std::mem::size_of::<Position<Narrow>>() as u64;

/// A breadth-first walk below a root ([`positions_to`]), stopped at the end of the first ply
/// that leaves at least `stop_after` boards.
struct Walk {
    boards: Vec<(Position<Narrow>, u32)>,
    /// The boards first met at each ply walked.
    plies: Vec<u64>,
    /// The positions waiting below the last ply walked.
    waiting: u64,
    /// The most memory the walk took at once.
    peak: u64,
}

fn walk(
    root: &Position<Narrow>,
    depth: u32,
    top: Option<u32>,
    max_bytes: u64,
    stop_after: usize,
) -> Result<Walk, TooLarge> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut plies = Vec::new();
    let mut frontier = vec![*root];
    let mut peak = 0;
    let mut d = 0;
    loop {
        // The ply that may pass `stop_after` is the last: its moves are counted, not kept.
        let last = d == depth || out.len() + frontier.len() >= stop_after;
        let mut next = Vec::new();
        let mut moves = 0;
        let before = out.len();
        let waiting = frontier.len() as u64 * COST_WAITING;
        for p in frontier {
            let board = p.board();
            // Every container grows fallibly: memory refused by the system (`ulimit -v`) ends
            // the walk as too large, never the process.
            let refused = |out: &Vec<_>, next: &Vec<_>| TooLarge {
                depth: d,
                boards: out.len() + next.len(),
                bytes: out.len() as u64 * COST_FOUND + next.len() as u64 * COST_WAITING + waiting,
                refused: true,
            };
            if seen.try_reserve(1).is_err() || out.try_reserve(1).is_err() {
                return Err(refused(&out, &next));
            }
            if p.is_finished() || top.is_some_and(|top| board.seeds() <= top) || !seen.insert(board)
            {
                continue;
            }
            if d < depth {
                let legal = p.legal_moves();
                moves += legal.len() as u64;
                if !last {
                    if next.try_reserve(legal.len()).is_err() {
                        return Err(refused(&out, &next));
                    }
                    next.extend(legal.into_iter().map(|mv| p.play_unchecked(mv).0));
                }
            }
            out.push((p, d));
            if out.len() % 1024 == 0 {
                let bytes =
                    out.len() as u64 * COST_FOUND + next.len() as u64 * COST_WAITING + waiting;
                peak = peak.max(bytes);
                if bytes > max_bytes {
                    return Err(TooLarge {
                        depth: d,
                        boards: out.len() + next.len(),
                        bytes,
                        refused: false,
                    });
                }
            }
        }
        peak = peak.max(out.len() as u64 * COST_FOUND + next.len() as u64 * COST_WAITING + waiting);
        plies.push((out.len() - before) as u64);
        frontier = next;
        if last || frontier.is_empty() {
            return Ok(Walk {
                boards: out,
                plies,
                waiting: moves,
                peak,
            });
        }
        d += 1;
    }
}

/// Writes the book of `root`, `boards` being its boards ([`positions_to`], shallowest first),
/// deepest boards first: every board
/// not yet exact in `ledger` is worked out by minimax when each of its moves is known (from
/// the ledger, the levels or the end of the game: the interior of the book costs no search),
/// else solved with `solver`, and appended to `writer` (synced) as an exact fact, then read
/// into `ledger`. `db` is the levels the solver probes. Cut off at any moment, the same call
/// resumes where it stopped.
pub fn make(
    root: &Position<Narrow>,
    boards: &[(Position<Narrow>, u32)],
    solver: &Solver,
    db: Option<&Tablebase>,
    ledger: &mut Ledger,
    writer: &mut LedgerWriter,
    progress: &mut dyn FnMut(&MakeProgress),
) -> Result<Made, BookError> {
    let rules = root.rules();
    let started_nodes = solver.nodes();
    let mut made = Made {
        boards: boards.len(),
        known: 0,
        solved: 0,
        derived: 0,
        nodes: 0,
    };
    for (i, (p, _)) in boards.iter().rev().enumerate() {
        let board = p.board();
        let exact = ledger
            .known(rules, board)
            .is_some_and(|known| known.bounds.is_exact());
        if exact {
            made.known += 1;
        } else {
            let cpu = crate::cpu_time();
            let started = Instant::now();
            let nodes = solver.nodes();
            let f = match move_values(ledger, board, rules, db)? {
                Some(values) => {
                    made.derived += 1;
                    values.iter().map(|&(_, v)| v).max().expect("a legal move")
                }
                None => solver.exact(board, &mut |_| {}).map_err(BookError::Solve)?,
            };
            let cpu_s = match (cpu, crate::cpu_time()) {
                (Some(a), Some(b)) => b.saturating_sub(a).as_secs_f64(),
                _ => started.elapsed().as_secs_f64(),
            };
            let stores = p.store_difference();
            let fact = Fact {
                position: *p,
                lower: f + stores,
                upper: f + stores,
                nodes: solver.nodes() - nodes,
                cpu_s,
                top: db.map(Tablebase::max_level),
                kalah: env!("CARGO_PKG_VERSION").to_owned(),
                root: Some(root.to_string()),
                budget: None,
                over_budget: false,
                within: None,
                continues: None,
                threads: u32::try_from(solver.config().threads).ok(),
            };
            writer.append(&fact)?;
            ledger.refresh()?;
            made.solved += 1;
        }
        made.nodes = solver.nodes() - started_nodes;
        progress(&MakeProgress {
            done: i + 1,
            total: boards.len(),
            solved: made.solved,
            nodes: made.nodes,
        });
    }
    Ok(made)
}
