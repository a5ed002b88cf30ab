//! `solve --at-least V` and `analyze --at-least V`: whether a value is at least V, by one
//! null-window test instead of the exact value.
//!
//! An exact value needs a proof from both sides (the best line is no worse and no better than
//! it); whether it reaches V needs one: either a strategy that makes V, or a refutation of every
//! try to. After the iterative deepening that orders the moves (the exact solve's own first
//! guess), one null-window test at V answers it, and its fail-soft result is a bound that may
//! say more than asked: `yes, at least +4` to `--at-least 1`. A question the seeds on the board
//! settle (V at most the worst margin, or past the best) and one the opening books' proven
//! bounds settle are answered without a search.

use std::time::Instant;

use clap::Args;
use kalah::prove::fact::Bounds;
use kalah::{Lanes, Position, Variant};
use serde_json::json;

use super::CliError;
use super::answer::{add_search_fields, add_variant_fields, algorithm_text, table_text, title};
use super::args::{header, print_json, side_text};
use super::books::{BookArg, signed, value_range};
use super::search::SearchArgs;
use super::search_progress::with_progress;
use super::table_file::TableFileArgs;

/// The largest |V| that `--at-least` takes: the most seeds a game can have.
const MAX_AT_LEAST: i64 = 65_535;

/// `--at-least V` of `solve` and `analyze`.
#[derive(Args, Debug, Clone, Default)]
pub struct AtLeastArg {
    /// Only whether the value (stores included, for the side to move: South at the start) is at
    /// least V, -65535 to 65535: `--at-least 1` asks whether the side to move wins, `0` whether
    /// it does not lose. One null-window test, often far cheaper than the exact value. The
    /// answer is yes or no with the bound the test proved, which may say more (`yes: at least
    /// +4`); the seeds on the board, or (analyze) the opening books' proven bounds, answer it
    /// without a search when they settle it. With --json: `at_least`, `holds`, `lower`, `upper`, `value`
    /// (null unless the bounds meet) and `source` (`search`, `ledger` or `seeds`).
    #[arg(
        long,
        value_name = "V",
        allow_negative_numbers = true,
        conflicts_with = "estimate",
        value_parser = clap::value_parser!(i32).range(-MAX_AT_LEAST..=MAX_AT_LEAST)
    )]
    pub at_least: Option<i32>,
}

/// What answered the question, and how.
enum Answered<'a> {
    /// The seeds on the board: V is outside every margin they allow (or the game is over).
    Seeds,
    /// The opening books' proven bounds, from these files.
    Ledger(Vec<String>),
    /// A search.
    Search(Searched<'a>),
}

/// What a search cost, and how it was set up.
struct Searched<'a> {
    nodes: u64,
    elapsed: std::time::Duration,
    config: &'a kalah::SolverConfig,
    db: &'a super::search::SearchDb,
    tt_given: bool,
}

/// Answers whether the value of `p` (the start of `variant`, if given) is at least `v`, from the
/// seeds, the opening books of `book` (if given) or a search, and prints the answer.
pub fn report<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    v: i32,
    book: Option<&BookArg>,
    args: &SearchArgs,
    table: &TableFileArgs,
) -> Result<(), CliError> {
    if args.algorithm != kalah::Algorithm::Mtdf {
        return Err(CliError::input(
            "--at-least: only --algorithm mtdf makes a null-window test",
        ));
    }
    let started = Instant::now();
    let range = if p.is_finished() {
        // Each side's houses go to its store: the value is known.
        let board = p.board();
        let value = p.store_difference()
            + kalah::db::finished_f(board.mover_seeds(), board.opponent_seeds());
        Bounds {
            lower: value,
            upper: value,
        }
    } else {
        value_range(p)
    };
    let settles = |b: Bounds| b.lower >= v || b.upper < v;
    if settles(range) {
        print(p, variant, v, range, &Answered::Seeds, started, args.json);
        return Ok(());
    }
    let files = args.files(p.houses_per_side(), p.rules())?;
    if let Some(book) = book {
        let book = book.open(&args.db, Some(kalah::book::game_of(p)))?;
        if let Some(bounds) = book.bounds(p).filter(|&b| settles(b)) {
            let answered = Answered::Ledger(book.sources().to_vec());
            print(p, variant, v, bounds, &answered, started, args.json);
            return Ok(());
        }
    }
    let (solver, config, db) = args.solver_given(p, false, table, files)?;
    let stores = p.store_difference();
    let board = p.board();
    let (tested, elapsed, nodes) = with_progress(p, &solver, table, |_| {
        // The exact solve's first guess: it orders the moves of the test.
        solver.guess(board)?;
        solver.test(board, v - stores, None)
    })?;
    let f = tested
        .map_err(|e| CliError::failure(format!("cannot solve: {e}")))?
        .expect("a test without a node limit finishes");
    let bound = f + stores;
    let bounds = if bound >= v {
        Bounds {
            lower: bound,
            upper: range.upper,
        }
    } else {
        Bounds {
            lower: range.lower,
            upper: bound,
        }
    };
    let answered = Answered::Search(Searched {
        nodes,
        elapsed,
        config: &config,
        db: &db,
        tt_given: args.tt_mb.is_some(),
    });
    print(p, variant, v, bounds, &answered, started, args.json);
    Ok(())
}

/// Prints the answer: whether the value of `p` is at least `v`, given that it lies in `bounds`
/// (which settle it), and what answered it.
fn print<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    v: i32,
    bounds: Bounds,
    answered: &Answered<'_>,
    started: Instant,
    json: bool,
) {
    let holds = bounds.lower >= v;
    let exact = (bounds.lower == bounds.upper).then_some(bounds.lower);
    if json {
        let mut out = header(p);
        add_variant_fields(&mut out, variant);
        out["at_least"] = json!(v);
        out["holds"] = json!(holds);
        out["lower"] = json!(bounds.lower);
        out["upper"] = json!(bounds.upper);
        out["value"] = json!(exact);
        match answered {
            Answered::Seeds | Answered::Ledger(_) => {
                out["nodes"] = json!(0);
                out["time_ms"] = json!(started.elapsed().as_millis() as u64);
                if let Answered::Ledger(books) = answered {
                    out["source"] = json!("ledger");
                    out["books"] = json!(books);
                } else {
                    out["source"] = json!("seeds");
                }
            }
            Answered::Search(s) => {
                add_search_fields(&mut out, s.nodes, s.elapsed, s.config, s.db, s.tt_given);
                out["source"] = json!("search");
            }
        }
        print_json(&out);
        return;
    }
    println!(
        "{}, {} rules, {}",
        title(p, variant),
        p.rules(),
        side_text(p.to_move())
    );
    let answer = match (exact, holds) {
        (Some(value), _) => format!("{}: the value is {}", yes_no(holds), signed(value)),
        (None, true) => format!("yes: at least {}", signed(bounds.lower)),
        (None, false) => format!("no: at most {}", signed(bounds.upper)),
    };
    println!("value at least {}? {answer}, stores included", signed(v));
    match answered {
        Answered::Seeds if p.is_finished() => {
            println!("settled by the end of the game (each side's houses to its store): no search")
        }
        Answered::Seeds => println!(
            "settled by the seeds on the board (every margin lies in [{}, {}]): no search",
            signed(bounds.lower),
            signed(bounds.upper)
        ),
        Answered::Ledger(books) => println!(
            "settled by the proven bounds of the ledgers: {} (no search)",
            books.join(", ")
        ),
        Answered::Search(s) => {
            println!(
                "one null-window test: {} nodes in {:.3} s, {} threads, {}, {}",
                s.nodes,
                s.elapsed.as_secs_f64(),
                s.config.threads,
                table_text(s.config, s.tt_given),
                algorithm_text(s.config)
            );
            println!("{}", s.db.line());
        }
    }
}

fn yes_no(holds: bool) -> &'static str {
    if holds { "yes" } else { "no" }
}
