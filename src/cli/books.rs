//! `--no-book`: the opening books and proof ledgers that `query`, `analyze` and `serve`
//! answer from ([`kalah::book`]), the answer they give when they prove a position, and how their
//! bounds are written for people.

use std::time::Instant;

use clap::Args;
use kalah::book::{Book, BookError, Claimed, after_move};
use kalah::prove::fact::Bounds;
use kalah::{Lanes, Position, Rules};

use super::CliError;
use super::answer::{Answer, Source, print_analysis};
use super::db_choice::DbChoice;

/// Whether to read the opening books.
#[derive(Args, Debug, Clone, Default)]
pub struct BookArg {
    /// Answer nothing from the opening books and proof ledgers: search instead. By default
    /// the ledgers built into kalah (the opening books of Kalah(6,4) and Kalah(6,5), both
    /// rules, and the campaigns' ledgers) and every `*.jsonl` ledger in the database directory
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

/// What the books say of a position they cannot answer: the bounds their checked facts prove,
/// and what unchecked facts claim (never values: see [`kalah::book`]).
#[derive(Clone, Debug, Default)]
pub struct Ledgered {
    pub bounds: Option<Bounds>,
    pub claims: Vec<Claimed>,
}

/// A claim for people: `claimed by forged.jsonl:3 (unchecked): +20 (wins by 20)`.
pub fn claim_text(c: &Claimed, widest: Bounds) -> String {
    format!(
        "claimed by {} (unchecked): {}",
        c.at,
        bounds_text(c.bounds, widest)
    )
}

/// A claim as JSON, and whether `value` (if known) agrees with it.
pub fn claim_json(c: &Claimed, value: Option<i32>) -> serde_json::Value {
    serde_json::json!({
        "at": c.at.to_string(),
        "lower": c.bounds.lower,
        "upper": c.bounds.upper,
        "checked": false,
        "holds": value.map(|v| c.holds(v)),
    })
}

/// Answers `p` from `book` (the levels `db` giving the boards they hold) if it proves the value
/// of `p` and of each of its moves, printing the answer (as JSON with `json`): then `None`.
/// Otherwise the bounds the book proves on `p`'s value, if any (the caller says them,
/// [`say_bounds`], or answers with them, [`print_ledger_bounds`]), and the claims of
/// unchecked facts, said on stderr (unless `quiet`).
pub fn from_book<L: Lanes>(
    p: &Position<L>,
    book: &kalah::book::Book,
    db: Option<&kalah::db::Tablebase>,
    started: Instant,
    json: bool,
    quiet: bool,
) -> Result<Option<Ledgered>, CliError> {
    if let Some(found) = book.analyze(p, db).map_err(book_error)? {
        let answer = Answer {
            analysis: &found.analysis,
            elapsed: started.elapsed(),
            nodes: 0,
            source: Source::Ledger(book.sources(), found.pv_complete),
            bounds: None,
            claims: Vec::new(),
        };
        print_analysis(p, None, true, &answer, json);
        return Ok(None);
    }
    let bounds = book.bounds(p);
    let claims = book.claims(p);
    if !quiet {
        for c in &claims {
            eprintln!(
                "{}: not read as its value (kalah prove --check {} --all checks that file's facts)",
                claim_text(c, value_range(p)),
                c.at.file.display()
            );
        }
    }
    Ok(Some(Ledgered { bounds, claims }))
}

/// Says on stderr, before the search that follows [`from_book`], what the ledgers prove of
/// `p`'s value, if anything, and so what is searched.
pub fn say_bounds<L: Lanes>(p: &Position<L>, bounds: Option<Bounds>) {
    if let Some(b) = bounds {
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

/// Where the ledgers bound `p` (`bounds`, from [`from_book`]) and its search would be refused
/// (`refusal`, [`super::search::SearchArgs::refusal`], asked only then): answers with what they
/// prove ([`print_ledger_bounds`]), `Some(Ok)` when that settles the value, `Some(Err)` (the
/// refusal) when it only bounds it. `None`: the search goes on.
pub fn answer_unsearched<L: Lanes>(
    p: &Position<L>,
    variant: Option<kalah::Variant>,
    book: &Book,
    bounds: Option<Bounds>,
    refusal: impl FnOnce() -> Option<String>,
    started: Instant,
    json: bool,
) -> Option<Result<(), CliError>> {
    let bounds = bounds?;
    let why = refusal()?;
    print_ledger_bounds(p, variant, book, bounds, &why, started, json);
    Some(if bounds.is_exact() {
        Ok(())
    } else {
        Err(super::search::not_started(&why))
    })
}

/// Answers `p` (the start of `variant` if given) with what `book` proves of it when its
/// search is not started (`why`, the cost model's message): the value's bounds `bounds`, each
/// move's ([`Book::move_bounds`]), the moves proven best and those that may be, as text or
/// JSON (source `ledger`, `searched: false`). The caller says whether that is an answer (the
/// value exact) or an error.
pub fn print_ledger_bounds<L: Lanes>(
    p: &Position<L>,
    variant: Option<kalah::Variant>,
    book: &Book,
    bounds: Bounds,
    why: &str,
    started: Instant,
    json: bool,
) {
    let moves = book.move_bounds(p);
    // With the value exact: a move worth it is best, a move that may reach it may be.
    let (best, maybe): (Vec<_>, Vec<_>) = if bounds.is_exact() {
        let v = bounds.lower;
        let best = moves.iter().filter(|(_, b)| b.lower >= v).map(|(m, _)| *m);
        let maybe = moves
            .iter()
            .filter(|(_, b)| b.lower < v && b.upper >= v)
            .map(|(m, _)| *m);
        (best.collect(), maybe.collect())
    } else {
        (Vec::new(), Vec::new())
    };
    let elapsed = started.elapsed();
    if json {
        let mut out = super::args::header(p);
        out["variant"] =
            serde_json::json!(variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds())));
        if let Some(v) = variant {
            out["seeds"] = v.seeds().into();
        }
        out["value"] = serde_json::json!(bounds.is_exact().then_some(bounds.lower));
        out["lower"] = bounds.lower.into();
        out["upper"] = bounds.upper.into();
        out["best"] = best.iter().map(|m| m.house()).collect();
        out["maybe_best"] = maybe.iter().map(|m| m.house()).collect();
        out["moves"] = moves
            .iter()
            .map(|(m, b)| {
                serde_json::json!({
                    "house": m.house(),
                    "value": b.is_exact().then_some(b.lower),
                    "lower": b.lower,
                    "upper": b.upper,
                })
            })
            .collect();
        out["pv"] = serde_json::json!([]);
        super::answer::add_ledger_fields(&mut out, book.sources(), elapsed);
        out["searched"] = false.into();
        out["not_searched"] = why.into();
        super::args::print_json(&out);
        return;
    }
    let mut text = String::new();
    let title = super::answer::title(p, variant);
    let to_move = super::args::side_text(p.to_move());
    text += &format!("{title}, {} rules, {to_move}\n", p.rules());
    text += &format!(
        "value: {}, stores included, proven by the ledgers\n",
        bounds_text(bounds, value_range(p))
    );
    for (m, b) in &moves {
        text += &format!(
            "  move {:>2}: {}\n",
            m.house(),
            bounds_text(*b, after_move(p, *m, value_range))
        );
    }
    let list = |ms: &[kalah::Move]| {
        let names: Vec<String> = ms.iter().map(|m| m.to_string()).collect();
        names.join(", ")
    };
    if bounds.is_exact() {
        text += &match (best.is_empty(), maybe.is_empty()) {
            (_, true) => format!("best moves: {}\n", list(&best)),
            (true, false) => format!("best moves: one of {}\n", list(&maybe)),
            (false, false) => format!(
                "best moves: {}; {} may be best too\n",
                list(&best),
                list(&maybe)
            ),
        };
    }
    text += &super::answer::ledger_line(book.sources(), elapsed);
    // Without the value, the error that follows says why nothing was searched.
    if bounds.is_exact() {
        text += &format!("; not searched further: {why} --long searches it anyway.");
    }
    text.push('\n');
    print!("{text}");
}
