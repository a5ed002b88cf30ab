//! `--no-book`: the opening books and proof ledgers that the answers read ([`kalah::book`],
//! [`kalah::answer`]), and how their bounds and claims are written for people.

use clap::Args;
use kalah::book::{Book, BookError, Claimed};
use kalah::prove::fact::Bounds;
use kalah::{Lanes, Position, Rules};

use super::CliError;
use super::db_choice::DbChoice;

/// Whether to read the opening books.
#[derive(Args, Debug, Clone, Default)]
pub struct BookArg {
    /// Answer nothing from the opening books and proof ledgers: search instead. By default
    /// the ledgers built into kalah (the opening books of Kalah(6,4) and Kalah(6,5), both
    /// rules, but empty-capture Kalah(6,5)'s, not checked yet, read as claims only, and the
    /// campaigns' ledgers) and every `*.jsonl` ledger in the database directory
    /// (--db, else the database home) are read: a position whose value and moves' values they
    /// prove is answered at once (source `ledger`), and the bounds they prove on any other are
    /// shown before it is searched. `kalah prove --book DEPTH --ledger FILE` writes a book.
    #[arg(long)]
    pub no_book: bool,
}

impl BookArg {
    /// The books for `only` (a game: houses, rules, seeds in all; every game if `None`): none with
    /// --no-book; the shipped ones and the ledgers of the database directory (none with
    /// --no-db) otherwise.
    pub fn open(&self, db: &DbChoice, only: Option<(usize, Rules, u32)>) -> Result<Book, CliError> {
        if self.no_book {
            return Ok(Book::empty());
        }
        let dir = db.dir()?;
        Book::open(true, only, dir.as_deref()).map_err(|e| {
            CliError::failure(format!(
                "cannot read the opening books: {e} (--no-book searches without them)"
            ))
        })
    }
}

/// A book that cannot answer: the command's error, with what to do.
pub fn book_error(e: BookError) -> CliError {
    CliError::failure(format!(
        "cannot answer from the opening books: {e} (--no-book searches without them)"
    ))
}

/// `b` for people, `widest` being what the seeds allow: `+4 (wins by 4)`, `>= +2 (wins)`,
/// `in [-3, +5] (open)`.
pub fn bounds_text(b: Bounds, widest: Bounds) -> String {
    let what = |v: i32| match v.cmp(&0) {
        std::cmp::Ordering::Greater => format!("wins by {v}"),
        std::cmp::Ordering::Equal => "draws".to_owned(),
        std::cmp::Ordering::Less => format!("loses by {}", -v),
    };
    if b.is_exact() {
        return format!("{} ({})", signed(b.lower), what(b.lower));
    }
    let low = b.lower > widest.lower;
    let high = b.upper < widest.upper;
    let verdict = if b.lower > 0 {
        "wins"
    } else if b.upper < 0 {
        "loses"
    } else if b.lower == 0 {
        "draws or wins"
    } else if b.upper == 0 {
        "draws or loses"
    } else {
        "open"
    };
    match (low, high) {
        (true, false) => format!(">= {} ({verdict})", signed(b.lower)),
        (false, true) => format!("<= {} ({verdict})", signed(b.upper)),
        (true, true) => format!("in [{}, {}] ({verdict})", signed(b.lower), signed(b.upper)),
        (false, false) => "unknown".to_owned(),
    }
}

/// `v` with its sign (`+2`, `0`, `-3`).
pub fn signed(v: i32) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

pub use kalah::book::value_range;

/// A claim for people: `claimed by forged.jsonl:3 (unchecked): +20 (wins by 20)`, and the
/// claim it disagrees with, if any (`; disagrees with forged.jsonl:2`).
pub fn claim_text(c: &Claimed, widest: Bounds) -> String {
    let disputed = c
        .disputed_by
        .as_ref()
        .map_or(String::new(), |by| format!("; disagrees with {by}"));
    format!(
        "claimed by {} (unchecked{disputed}): {}",
        c.at,
        bounds_text(c.bounds, widest)
    )
}

pub use kalah::api::claim_json;

/// Says on stderr, before a search, what the ledgers say of `p` that the search does not
/// read as its value: the claims of unchecked facts, and the bounds the ledgers prove (so what
/// is searched).
pub fn say_before_search<L: Lanes>(p: &Position<L>, known: &kalah::answer::Answer) {
    for c in &known.claims {
        eprintln!(
            "{}: not read as its value (kalah prove --check {} --all checks that file's facts)",
            claim_text(c, value_range(p)),
            c.at.file.display()
        );
    }
    if let Some(b) = known.ledger_bounds {
        // The value may be proven and some move only bounded (a campaign of --all-moves that
        // stopped once the best moves were known): what is searched is then the moves' values.
        let what = if b.lower == b.upper {
            "searching for each move's exact value"
        } else {
            "searching for the exact value"
        };
        eprintln!(
            "the ledgers prove its value {}; {what}",
            bounds_text(b, value_range(p))
        );
    }
}
