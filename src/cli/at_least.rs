//! `solve --at-least V` and `analyze --at-least V`: whether a value is at least V, by one
//! null-window test instead of the exact value.
//!
//! An exact value needs a proof from both sides (the best line is no worse and no better than
//! it); whether it reaches V needs one: either a strategy that makes V, or a refutation of every
//! try to. After the iterative deepening that orders the moves (the exact solve's own first
//! guess), one null-window test at V answers it, and its fail-soft result is a bound that may
//! say more than asked: `yes, at least +4` to `--at-least 1`. A question the seeds on the board
//! settle (V at most the worst margin, or past the best), and one the levels or the ledgers'
//! proven bounds settle, are answered without a search ([`kalah::answer`]).

use clap::Args;
use kalah::answer::{Answer, Source};
use kalah::{Lanes, Position, Variant};
use serde_json::json;

use super::answer::{Shown, add_search_fields, add_variant_fields, search_text, title};
use super::args::{header, print_json, side_text};
use super::books::signed;

/// The largest |V| that `--at-least` takes: the most seeds a game can have.
const MAX_AT_LEAST: i64 = 65_535;

/// `--at-least V` of `solve` and `analyze`.
#[derive(Args, Debug, Clone, Default)]
pub struct AtLeastArg {
    /// Only whether the value (stores included, for the side to move: South at the start) is at
    /// least V, -65535 to 65535: `--at-least 1` asks whether the side to move wins, `0` whether
    /// it does not lose. One null-window test, often far cheaper than the exact value. The
    /// answer is yes or no with the bound the test proved, which may say more (`yes: at least
    /// +4`); the seeds on the board, the endgame levels or the ledgers' proven bounds answer
    /// it without a search when they settle it. With --json: `at_least`, `holds`, `lower`,
    /// `upper`, `value` (null unless the bounds meet), `certified` and `source` (`search`,
    /// `ledger`, `database` or `seeds`).
    #[arg(
        long,
        value_name = "V",
        allow_negative_numbers = true,
        conflicts_with = "estimate",
        value_parser = clap::value_parser!(i32).range(-MAX_AT_LEAST..=MAX_AT_LEAST)
    )]
    pub at_least: Option<i32>,
}

/// Prints the answer to whether the value of `p` (the start of `variant`, if given) is at least
/// `v`: `answer` bounds it (settling it, unless a search was refused), and says what did.
pub fn print<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    v: i32,
    answer: &Answer,
    shown: &Shown<'_>,
    json: bool,
) {
    let bounds = answer.value;
    let holds = bounds.lower >= v;
    let exact = answer.exact();
    let search = shown.search.zip(answer.searched);
    let books = shown.books.join(", ");
    if json {
        let mut out = header(p);
        add_variant_fields(&mut out, variant);
        out["at_least"] = json!(v);
        out["holds"] = json!(holds);
        out["lower"] = json!(bounds.lower);
        out["upper"] = json!(bounds.upper);
        out["value"] = json!(exact);
        out["certified"] = json!(answer.certified);
        match (answer.source, search) {
            (Source::Search, Some(((config, db, given), s))) => {
                add_search_fields(&mut out, s.nodes, s.elapsed, config, db, given);
                out["source"] = json!("search");
            }
            (source, _) => {
                out["nodes"] = json!(0);
                out["time_ms"] = json!(answer.elapsed.as_millis() as u64);
                out["source"] = json!(match source {
                    Source::End | Source::Seeds => "seeds",
                    other => other.as_str(),
                });
                if source == Source::Ledger {
                    out["books"] = json!(shown.books);
                }
                if source == Source::Levels {
                    out["db"] = super::db_choice::files_json(shown.levels);
                }
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
    let said = match (exact, holds) {
        (Some(value), _) => format!("{}: the value is {}", yes_no(holds), signed(value)),
        (None, true) => format!("yes: at least {}", signed(bounds.lower)),
        (None, false) => format!("no: at most {}", signed(bounds.upper)),
    };
    println!("value at least {}? {said}, stores included", signed(v));
    match (answer.source, search) {
        (Source::End, _) => {
            println!("settled by the end of the game (each side's houses to its store): no search")
        }
        (Source::Seeds, _) => println!(
            "settled by the seeds on the board (every margin lies in [{}, {}]): no search",
            signed(bounds.lower),
            signed(bounds.upper)
        ),
        (Source::Levels, _) => match shown.levels {
            Some(db) => println!(
                "settled by the endgame levels (levels 0..={} in {}): no search",
                db.max_level(),
                db.dir().display()
            ),
            None => println!("settled by the endgame levels: no search"),
        },
        (Source::Ledger, _) => {
            let certified = if answer.certified {
                ", certified"
            } else {
                ", not certified"
            };
            println!("settled by the proven bounds of the ledgers{certified}: {books} (no search)")
        }
        (Source::Search, Some(((config, db, given), s))) => {
            println!(
                "one null-window test: {}",
                search_text(s, config, given, false)
            );
            println!("{}", db.line());
        }
        (Source::Search, None) => println!("searched"),
    }
}

fn yes_no(holds: bool) -> &'static str {
    if holds { "yes" } else { "no" }
}
