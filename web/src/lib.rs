//! # kalah-web: the static explorer's WebAssembly module
//!
//! The explorer of `kalah serve` asks `api/v1/start?...` and `api/v1/position?...`; the static
//! explorer (`scripts/build-web.sh`, docs/web.md) asks this module the same questions in a Web
//! Worker and gets the same bodies ([`kalah_core::api`]), answered by [`kalah_core::answer`]
//! from the same sources as `kalah query`: the opening books and ledgers built into the core,
//! then a search of one thread within the page's budget. No level files: a browser has none.
//!
//! The interface is plain C exports over the module's linear memory, so that the page needs
//! no generated glue (web/static/worker.js is the whole of it):
//!
//! 1. `kalah_request(len) -> ptr`: room for a request of `len` bytes, which the page writes
//!    (UTF-8: the API's path and query, `api/v1/start?houses=6&seeds=4`);
//! 2. `kalah_answer(len, budget_ms) -> reply_len`: answers it within `budget_ms`;
//! 3. `kalah_reply() -> ptr`: the reply, `reply_len` bytes of JSON,
//!    `{"status": 200, "body": {...}}`, where status and body are those of the HTTP API.
//!
//! The module imports one function, `kalah.now_ms`: the page's `performance.now()`
//! ([`kalah_core::clock`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use kalah_core::answer::{self, AnswerError, Budget, OnSolver, Sources, Want};
use kalah_core::api::{self, MODEL_SLACK};
use kalah_core::book::{Book, game_of};
use kalah_core::clock::Instant;
use kalah_core::{AnyPosition, Lanes, Position, Rules, Solver, SolverConfig, Variant};
use serde_json::{Value, json};

/// The longest budget the page may give a search (as `kalah serve --budget`).
pub const MAX_BUDGET: Duration = Duration::from_secs(60);

/// The transposition table of the page's search, MiB (the browser's memory is the page's).
pub const TT_MIB: usize = 64;

/// The reply to `request` (the API's path and query) within `budget`, as the JSON text the
/// page reads: `{"status": ..., "body": ...}`.
pub fn respond(request: &str, budget: Duration) -> String {
    let arrived = Instant::now();
    let budget = budget.min(MAX_BUDGET);
    let (path, query) = request.split_once('?').unwrap_or((request, ""));
    let (status, mut body) = match path {
        "api/v1/start" => match api::start_query(Some(query)) {
            Ok(variant) => answer_for(&AnyPosition::start(variant), Some(variant), budget),
            Err(f) => (f.status, f.body),
        },
        "api/v1/position" => match api::position_query(Some(query)) {
            Ok(pos) => answer_for(&pos, None, budget),
            Err(f) => (f.status, f.body),
        },
        _ => (
            404,
            json!({"error": "no such question: the page asks api/v1/position and api/v1/start"}),
        ),
    };
    let elapsed = arrived.elapsed();
    body["time_ms"] = json!(elapsed.as_millis() as u64);
    body["time_us"] = json!(elapsed.as_micros() as u64);
    body["cached"] = json!(false);
    json!({"status": status, "body": body}).to_string()
}

/// The status and body of the answer for `pos` (the start of `variant` if given).
fn answer_for(pos: &AnyPosition, variant: Option<Variant>, budget: Duration) -> (u16, Value) {
    kalah_core::with_position!(pos, p => answer_position(p, variant, budget))
}

fn answer_position<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    budget: Duration,
) -> (u16, Value) {
    let failure = |message: String| (500, json!({"error": message}));
    let book = match book_of(game_of(p)) {
        Ok(book) => book,
        Err(e) => return failure(format!("cannot read the opening books: {e}")),
    };
    let solver = match solver_for(p.houses_per_side(), p.rules()) {
        Ok(solver) => solver,
        Err(e) => return failure(format!("cannot search: {e}")),
    };
    let sources = Sources {
        levels: None,
        ledgers: Some(&book),
    };
    let limits = Budget {
        model_seconds: Some(budget.as_secs_f64() * MODEL_SLACK),
        deadline: Some(Instant::now() + budget),
        max_seeds: None,
    };
    let mut search = OnSolver::quiet(&solver);
    match answer::answer(p, &sources, Want::EveryMove, &limits, Some(&mut search)) {
        Ok(a) => {
            let how = format!(
                "this page searches a position for at most {} (the budget at the top of the \
                 page raises it, up to 60 s)",
                api::seconds_text(budget)
            );
            api::reply(p, variant, &a, None, budget, &how)
        }
        Err(AnswerError::Levels(e)) => failure(format!("cannot read the database: {e}")),
        Err(AnswerError::Ledgers(e)) => {
            failure(format!("cannot answer from the opening books: {e}"))
        }
        Err(AnswerError::Search(e)) => failure(format!("cannot search: {e}")),
        Err(AnswerError::Searcher(never)) => match never {},
    }
}

thread_local! {
    /// The books read so far, one for each game (houses, rules, seeds in all): a game's
    /// ledgers are read the first time one of its positions is asked.
    static BOOKS: RefCell<HashMap<(usize, Rules, u32), Rc<Book>>> = RefCell::default();
    /// The solver of the last board size and rules searched: its table still holds the last
    /// searches, so a walk through a game gets faster.
    static SOLVER: RefCell<Option<(usize, Rules, Rc<Solver>)>> = const { RefCell::new(None) };
}

/// The shipped books and ledgers of `game`.
fn book_of(game: (usize, Rules, u32)) -> Result<Rc<Book>, kalah_core::prove::ledger::LedgerError> {
    if let Some(book) = BOOKS.with_borrow(|books| books.get(&game).cloned()) {
        return Ok(book);
    }
    let book = Rc::new(Book::open(true, Some(game), None)?);
    BOOKS.with_borrow_mut(|books| books.insert(game, book.clone()));
    Ok(book)
}

/// A solver of one thread for `houses` and `rules`, kept for the next search.
fn solver_for(houses: usize, rules: Rules) -> Result<Rc<Solver>, kalah_core::SolveError> {
    let kept = SOLVER.with_borrow(|s| {
        s.as_ref()
            .filter(|(h, r, _)| *h == houses && *r == rules)
            .map(|(_, _, solver)| solver.clone())
    });
    if let Some(solver) = kept {
        return Ok(solver);
    }
    // The old table goes before the new one is allocated.
    SOLVER.with_borrow_mut(|s| *s = None);
    let config = SolverConfig {
        threads: 1,
        tt_mib: TT_MIB,
        ..SolverConfig::default()
    };
    let solver = Rc::new(Solver::new(houses, rules, config)?);
    SOLVER.with_borrow_mut(|s| *s = Some((houses, rules, solver.clone())));
    Ok(solver)
}

thread_local! {
    /// The request the page writes, and the last reply.
    static REQUEST: RefCell<Vec<u8>> = RefCell::default();
    static REPLY: RefCell<String> = RefCell::default();
}

/// Room for a request of `len` bytes: where the page writes it.
#[unsafe(no_mangle)]
pub extern "C" fn kalah_request(len: usize) -> *mut u8 {
    REQUEST.with_borrow_mut(|r| {
        r.clear();
        r.resize(len, 0);
        r.as_mut_ptr()
    })
}

/// Answers the request written (its first `len` bytes) within `budget_ms` milliseconds; the
/// length of the reply ([`kalah_reply`]).
#[unsafe(no_mangle)]
pub extern "C" fn kalah_answer(len: usize, budget_ms: f64) -> usize {
    let request =
        REQUEST.with_borrow(|r| String::from_utf8_lossy(&r[..len.min(r.len())]).into_owned());
    let budget = Duration::from_secs_f64((budget_ms / 1000.0).clamp(0.0, MAX_BUDGET.as_secs_f64()));
    let reply = respond(&request, budget);
    REPLY.with_borrow_mut(|r| {
        *r = reply;
        r.len()
    })
}

/// The last reply: [`kalah_answer`]'s length of UTF-8 JSON.
#[unsafe(no_mangle)]
pub extern "C" fn kalah_reply() -> *const u8 {
    REPLY.with_borrow(|r| r.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(request: &str) -> Value {
        serde_json::from_str(&respond(request, Duration::from_secs(5))).unwrap()
    }

    #[test]
    fn kalah_6_4_start_is_plus_8_from_the_book_with_every_move() {
        let r = reply("api/v1/start?houses=6&seeds=4");
        assert_eq!(r["status"], 200, "{r}");
        assert_eq!(r["body"]["value"], 8);
        let moves = r["body"]["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 6);
        assert!(moves.iter().all(|m| m["value"].is_i64()), "{r}");
    }

    #[test]
    fn kalah_6_6_start_is_plus_4_certified() {
        let r = reply("api/v1/start?houses=6&seeds=6");
        assert_eq!(r["status"], 200, "{r}");
        assert_eq!(r["body"]["value"], 4);
        assert_eq!(r["body"]["certified"], true);
    }

    #[test]
    fn a_small_position_is_searched() {
        let r = reply("api/v1/position?position=%3C4%2C0%2C0%2C3%2C3%2C3%2C3%2C3%2C3%2C3%2C3%3E");
        assert_eq!(r["status"], 200, "{r}");
        assert_eq!(r["body"]["source"], "search");
        assert!(r["body"]["value"].is_i64());
    }

    #[test]
    fn a_wrong_literal_is_refused_naming_the_field() {
        let r = reply("api/v1/position?position=%3C4%2C0%2C0%3E");
        assert_eq!(r["status"], 400);
        assert_eq!(r["body"]["field"], "position");
    }
}
