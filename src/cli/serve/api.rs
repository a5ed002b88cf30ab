//! The answers of `kalah serve`: `/api/v1/position`, `/api/v1/start` and the explorer page.
//!
//! A position the databases hold is read from them at once, on the connection's task. Any
//! other is searched (probing the databases) in one of a few search slots, each a [`Solver`]
//! kept from one request to the next (its table still holds the last searches: a walk through
//! a game gets faster), on a blocking thread, until a deadline: past it the answer is a 422,
//! and the slot is free again.
//!
//! ```text
//! query ──parse──► 400 {"error": "<field>: ..."}
//!   │
//!   ├─ database holds it ──► 200 {..., "source": "database"}
//!   ├─ an opening book proves it ──► 200 {..., "source": "ledger"}
//!   └─ else: a free slot within the budget? ── no ──► 503 {"reason": "busy"}
//!              └─ search until the deadline ──► 200 {..., "source": "search"}
//!                                           └──► 422 {"reason": "budget"}
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use kalah::book::Book;
use kalah::db::Tablebase;
use kalah::{Analysis, AnyPosition, Lanes, Position, Rules, Side, SolveError, Solver, Variant};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::super::answer::analysis_json;
use super::super::args::parse_position_given;

/// The longest query string taken, in bytes (a 12-house literal needs about 200).
pub const MAX_QUERY: usize = 2048;

/// The explorer: one page, its script and style inline.
const EXPLORER: &str = include_str!("explorer.html");

/// What answers need: the databases, the search slots and their settings.
pub struct Api {
    /// The databases, by houses and rules.
    databases: HashMap<(usize, Rules), Arc<Tablebase>>,
    /// The opening books and ledgers, every variant.
    book: Book,
    /// Time for one search, from the request's arrival.
    budget: Duration,
    /// Settings of each slot's solver.
    threads: usize,
    tt_mib: usize,
    /// The search slots (a permit of `free` is a right to lock one that is not in use).
    slots: Vec<Mutex<Option<Slot>>>,
    free: Arc<Semaphore>,
}

/// A solver kept between searches, for one board size and rules.
struct Slot {
    houses: usize,
    rules: Rules,
    solver: Solver,
}

/// Settings of the search slots.
pub struct SearchSettings {
    /// Time for a search, from the request's arrival.
    pub budget: Duration,
    /// Searches at once.
    pub slots: usize,
    /// Threads of each search.
    pub threads: usize,
    /// Transposition table of each slot, MiB.
    pub tt_mib: usize,
}

impl Api {
    /// The API over `databases`, searching with `settings`.
    pub fn new(databases: Vec<Arc<Tablebase>>, book: Book, settings: SearchSettings) -> Api {
        Api {
            databases: databases
                .into_iter()
                .map(|db| ((db.houses(), db.rules()), db))
                .collect(),
            book,
            budget: settings.budget,
            threads: settings.threads,
            tt_mib: settings.tt_mib,
            slots: (0..settings.slots).map(|_| Mutex::new(None)).collect(),
            free: Arc::new(Semaphore::new(settings.slots)),
        }
    }

    /// The databases served, by board size then rules.
    pub fn databases(&self) -> Vec<&Tablebase> {
        let mut dbs: Vec<&Tablebase> = self.databases.values().map(|db| &**db).collect();
        dbs.sort_by_key(|db| (db.houses(), db.rules().as_str()));
        dbs
    }

    /// The opening books read.
    pub fn book(&self) -> &Book {
        &self.book
    }

    /// The time for one search.
    pub fn budget(&self) -> Duration {
        self.budget
    }
}

/// The routes: the explorer at `/`, the API under `/api/v1/`.
pub fn router(api: Arc<Api>) -> Router {
    Router::new()
        .route("/", get(explorer))
        .route("/api/v1/position", get(position))
        .route("/api/v1/start", get(start))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(api)
}

/// A failed request: its status and JSON body.
#[derive(Debug)]
pub struct Failure {
    status: StatusCode,
    body: Value,
}

impl Failure {
    /// Bad input, naming the field (400).
    fn field(field: &str, why: impl std::fmt::Display) -> Failure {
        Failure {
            status: StatusCode::BAD_REQUEST,
            body: json!({"error": format!("{field}: {why}"), "field": field}),
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.body.to_string()).into_response();
        let headers = response.headers_mut();
        api_headers(headers);
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// The headers of every API answer: JSON, readable by pages of any origin (the values are
/// public, and no request carries credentials).
fn api_headers(headers: &mut axum::http::HeaderMap) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
}

async fn explorer() -> Response {
    let mut response = EXPLORER.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The page's script and style are inline; it talks to this server only.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

async fn not_found() -> Failure {
    Failure {
        status: StatusCode::NOT_FOUND,
        body: json!({"error": "no such page: the API is /api/v1/position and /api/v1/start, \
                               the explorer /"}),
    }
}

/// Any method but GET and HEAD on a page that exists: 405, saying so, with `Allow`.
async fn not_allowed() -> Response {
    let mut response = Failure {
        status: StatusCode::METHOD_NOT_ALLOWED,
        body: json!({"error": "only GET and HEAD are answered: the API and the explorer are \
                               read-only"}),
    }
    .into_response();
    response.headers_mut().insert(
        axum::http::header::ALLOW,
        axum::http::HeaderValue::from_static("GET, HEAD"),
    );
    response
}

/// `?position=LITERAL&rules=R&to_move=SIDE`.
async fn position(State(api): State<Arc<Api>>, RawQuery(query): RawQuery) -> Response {
    let arrived = Instant::now();
    let asked = fields(query.as_deref(), &["position", "rules", "to_move"]).and_then(|f| {
        let rules = rules(&f)?;
        let to_move = match f.get("to_move") {
            None => None,
            Some(text) => Some(
                text.parse::<Side>()
                    .map_err(|e| Failure::field("to_move", e))?,
            ),
        };
        let text = f.get("position").ok_or_else(|| {
            Failure::field(
                "position",
                "missing (a KGP literal, e.g. <4,0,0,4,4,4,4,4,4,4,4>)",
            )
        })?;
        let pos = parse_position_given(text, to_move, "to_move", rules)
            .map_err(|e| Failure::field("position", e.message))?;
        Ok(pos)
    });
    match asked {
        Ok(pos) => answer(api, pos, None, arrived).await,
        Err(failure) => failure.into_response(),
    }
}

/// `?houses=M&seeds=N&rules=R`.
async fn start(State(api): State<Arc<Api>>, RawQuery(query): RawQuery) -> Response {
    let arrived = Instant::now();
    let asked = fields(query.as_deref(), &["houses", "seeds", "rules"]).and_then(|f| {
        let rules = rules(&f)?;
        let number = |field: &str, example: &str| -> Result<u64, Failure> {
            let text = f.get(field).ok_or_else(|| {
                Failure::field(field, format!("missing (e.g. {field}={example})"))
            })?;
            text.parse::<u64>().map_err(|_| {
                Failure::field(
                    field,
                    format!("expected a whole number, got {}", kalah::text::quote(text)),
                )
            })
        };
        let houses = number("houses", "6")?;
        let seeds = number("seeds", "4")?;
        let houses = usize::try_from(houses).unwrap_or(usize::MAX);
        let variant = Variant::new(houses, seeds, rules).map_err(|e| {
            let field = match e {
                kalah::VariantError::HousesOutOfRange(_) => "houses",
                _ => "seeds",
            };
            Failure::field(field, e)
        })?;
        Ok(variant)
    });
    match asked {
        Ok(variant) => answer(api, AnyPosition::start(variant), Some(variant), arrived).await,
        Err(failure) => failure.into_response(),
    }
}

/// The query's fields: each at most once, each one of `known`.
fn fields(query: Option<&str>, known: &[&str]) -> Result<HashMap<String, String>, Failure> {
    let query = query.unwrap_or("");
    if query.len() > MAX_QUERY {
        return Err(Failure::field(
            "query",
            format!("{} bytes, more than the {MAX_QUERY} taken", query.len()),
        ));
    }
    let mut fields = HashMap::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if !known.contains(&name.as_ref()) {
            return Err(Failure::field(
                &kalah::text::escape_within(&name, 40),
                format!("unknown parameter (known: {})", known.join(", ")),
            ));
        }
        if fields
            .insert(name.to_string(), value.into_owned())
            .is_some()
        {
            return Err(Failure::field(&name, "given twice"));
        }
    }
    Ok(fields)
}

/// `rules`, `standard` when not given.
fn rules(fields: &HashMap<String, String>) -> Result<Rules, Failure> {
    match fields.get("rules") {
        None => Ok(Rules::Standard),
        Some(text) => text.parse().map_err(|_| {
            Failure::field(
                "rules",
                format!(
                    "{} is not one of: standard, empty-capture",
                    kalah::text::quote(text)
                ),
            )
        }),
    }
}

/// The answer for `pos`: from the databases if they hold it, else searched in a slot.
async fn answer(
    api: Arc<Api>,
    pos: AnyPosition,
    variant: Option<Variant>,
    arrived: Instant,
) -> Response {
    let houses = kalah::with_position!(&pos, p => p.houses_per_side());
    let rules = kalah::with_position!(&pos, p => p.rules());
    let db = api.databases.get(&(houses, rules)).cloned();
    if let Some(db) = &db {
        let found = kalah::with_position!(&pos, p => db.analyze(p));
        match found {
            Ok(Some(a)) => {
                let source = Source::Database;
                return done(&pos, variant, &a, source, Some(db), arrived);
            }
            Ok(None) => {}
            Err(e) => return server_error(format!("cannot read the database: {e}")),
        }
    }
    match kalah::with_position!(&pos, p => api.book.analyze(p, db.as_deref())) {
        Ok(Some(found)) => {
            let source = Source::Ledger(found.pv_complete);
            return done(
                &pos,
                variant,
                &found.analysis,
                source,
                db.as_deref(),
                arrived,
            );
        }
        Ok(None) => {}
        Err(e) => return server_error(format!("cannot answer from the opening books: {e}")),
    }
    // A slot within the budget, else busy.
    let deadline = arrived + api.budget;
    let permit =
        match tokio::time::timeout_at(deadline.into(), api.free.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                return Failure {
                status: StatusCode::SERVICE_UNAVAILABLE,
                body: json!({
                    "error": "every search slot stayed busy for the whole time budget: try \
                              again later",
                    "reason": "busy",
                    "budget_ms": api.budget.as_millis() as u64,
                    "board": kalah::with_position!(&pos, p => unsolved(p, variant, db.as_deref())),
                }),
            }
            .into_response();
            }
        };
    let searched = {
        let api = api.clone();
        let db = db.clone();
        tokio::task::spawn_blocking(move || {
            // What the ledgers bound (a proof tree grown from their facts) and claim: off the
            // request threads, within the request's budget.
            let bounds = kalah::with_position!(&pos, p => api.book.bounds(p));
            let claims = kalah::with_position!(&pos, p => api.book.claims(p));
            let result = search(&api, &pos, db, deadline);
            drop(permit);
            (result, bounds, claims)
        })
    };
    let (searched, bounds, claims) = match searched.await {
        Ok((result, bounds, claims)) => (Ok(result), bounds, claims),
        Err(e) => (Err(e), None, Vec::new()),
    };
    match searched {
        Ok(Ok((a, nodes))) => {
            let source = Source::Search(nodes);
            done(&pos, variant, &a, source, db.as_deref(), arrived)
        }
        Ok(Err(SolveError::OutOfTime)) => {
            let mut body = json!({
                "error": format!(
                    "beyond the databases, and its search did not finish within the {} ms \
                     budget",
                    api.budget.as_millis()
                ),
                "reason": "budget",
                "budget_ms": api.budget.as_millis() as u64,
                "board": kalah::with_position!(&pos, p => unsolved(p, variant, db.as_deref())),
            });
            // What the ledgers prove is still worth showing.
            if let Some(b) = bounds {
                body["ledger_bounds"] = json!({"lower": b.lower, "upper": b.upper});
            }
            // What unchecked facts claim, marked as such: never a value.
            if !claims.is_empty() {
                body["claims"] = claims
                    .iter()
                    .map(|c| crate::cli::books::claim_json(c, None))
                    .collect();
            }
            Failure {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                body,
            }
            .into_response()
        }
        Ok(Err(e)) => server_error(format!("cannot search: {e}")),
        Err(e) => server_error(format!("the search failed: {e}")),
    }
}

/// Searches `pos` in a free slot (the caller holds a permit) until `deadline`: its analysis
/// with every move's value, and the nodes searched.
fn search(
    api: &Api,
    pos: &AnyPosition,
    db: Option<Arc<Tablebase>>,
    deadline: Instant,
) -> Result<(Analysis, u64), SolveError> {
    let houses = kalah::with_position!(pos, p => p.houses_per_side());
    let rules = kalah::with_position!(pos, p => p.rules());
    let serves = |slot: &Option<Slot>| {
        slot.as_ref()
            .is_some_and(|s| s.houses == houses && s.rules == rules)
    };
    // A permit means a slot is free: prefer one already searching this board size.
    let mut guards: Vec<_> = api.slots.iter().filter_map(|s| s.try_lock().ok()).collect();
    let at = guards.iter().position(|g| serves(g)).unwrap_or(0);
    let Some(mut guard) = (at < guards.len()).then(|| guards.swap_remove(at)) else {
        return Err(SolveError::Threads("no search slot free".into()));
    };
    drop(guards);
    if !serves(&guard) {
        *guard = None;
        let config = kalah::SolverConfig {
            threads: api.threads,
            tt_mib: api.tt_mib,
            ..kalah::SolverConfig::default()
        };
        let solver = Solver::new(houses, rules, config)?;
        let solver = match db {
            Some(db) => solver.with_tablebase(db)?,
            None => solver,
        };
        *guard = Some(Slot {
            houses,
            rules,
            solver,
        });
    }
    let solver = &guard.as_ref().expect("just made").solver;
    solver.set_deadline(Some(deadline));
    let before = solver.nodes();
    let result = kalah::with_position!(pos, p => solver.analyze(p, true, &mut |_| {}));
    solver.set_deadline(None);
    result.map(|a| (a, solver.nodes() - before))
}

/// Where an answer came from.
enum Source {
    Database,
    /// The opening books; whether the perfect line reaches the end of the game.
    Ledger(bool),
    /// A search of this many nodes.
    Search(u64),
}

/// The 200 answer: the analysis (moves best first, each with the position it leads to), its
/// source and time.
fn done(
    pos: &AnyPosition,
    variant: Option<Variant>,
    a: &Analysis,
    source: Source,
    db: Option<&Tablebase>,
    arrived: Instant,
) -> Response {
    let mut out = kalah::with_position!(pos, p => body(p, variant, a));
    let elapsed = arrived.elapsed();
    out["source"] = json!(match source {
        Source::Database => "database",
        Source::Ledger(_) => "ledger",
        Source::Search(_) => "search",
    });
    out["nodes"] = json!(match source {
        Source::Database | Source::Ledger(_) => 0,
        Source::Search(nodes) => nodes,
    });
    if let Source::Ledger(complete) = source {
        out["pv_complete"] = json!(complete);
    }
    out["time_ms"] = json!(elapsed.as_millis() as u64);
    out["time_us"] = json!(elapsed.as_micros() as u64);
    out["db_max_seeds"] = json!(db.map(Tablebase::max_level));
    // Straight into bytes: `to_string` makes the same bytes through `fmt`, a piece at a time,
    // at a few per cent more of the server's time under load (docs/serve-load.md).
    let json = serde_json::to_vec(&out).expect("a JSON value with string keys serializes");
    let mut response = json.into_response();
    let headers = response.headers_mut();
    api_headers(headers);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The position of a request that got no value (422, 503), as a 200 answer shows it but with
/// no value: `value` null, each legal move (house order) with `after` and `extra_turn` and a
/// null `value`, no best move, no perfect line, and `db_max_seeds`, the top level read for
/// its board and rules (`db`). The explorer draws the board from it.
fn unsolved<L: Lanes>(p: &Position<L>, variant: Option<Variant>, db: Option<&Tablebase>) -> Value {
    let mut out = super::super::args::header(p);
    out["db_max_seeds"] = json!(db.map(Tablebase::max_level));
    out["variant"] = json!(variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds())));
    if let Some(v) = variant {
        out["seeds"] = v.seeds().into();
    }
    out["value"] = Value::Null;
    out["best"] = json!([]);
    out["pv"] = json!([]);
    out["moves"] = p
        .legal_moves()
        .into_iter()
        .map(|mv| {
            let (after, sowing) = p.play_unchecked(mv);
            json!({
                "house": mv.house(),
                "value": null,
                "after": after.to_string(),
                "extra_turn": sowing.extra_turn,
            })
        })
        .collect();
    out
}

/// The JSON of `analyze --json` for `a`, its moves best first (value, then house), each with
/// `after` (the position it leads to) and `extra_turn`.
fn body<L: Lanes>(p: &Position<L>, variant: Option<Variant>, a: &Analysis) -> Value {
    let mut out = analysis_json(p, variant, a);
    let mut moves = a.moves.clone();
    moves.sort_by_key(|m| (-m.value, m.mv.house()));
    out["moves"] = moves
        .iter()
        .map(|m| {
            let (after, sowing) = p.play_unchecked(m.mv);
            json!({
                "house": m.mv.house(),
                "value": m.value,
                "after": after.to_string(),
                "extra_turn": sowing.extra_turn,
            })
        })
        .collect();
    out
}

fn server_error(message: String) -> Response {
    Failure {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        body: json!({"error": message}),
    }
    .into_response()
}
