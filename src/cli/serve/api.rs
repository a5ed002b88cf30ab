//! The answers of `kalah serve`: `/api/v1/position`, `/api/v1/start` and the explorer page.
//!
//! Every answer is [`kalah::answer`]'s, on a blocking thread: the databases, the ledgers
//! (their bounds and certificates), then a search in one of a few search slots, each a
//! [`Solver`] kept from one request to the next (its table still holds the last searches: a
//! walk through a game gets faster), until a deadline: past it the answer has no value, and the
//! slot is free again. A search the cost model puts past ten budgets is not started. The
//! answers given lately are kept ([`Cache`]): a position asked again is not searched again.
//!
//! ```text
//! query ──parse──► 400 {"error": "<field>: ..."}
//!   │
//!   ├─ answered lately ──► the same answer, "cached": true
//!   ├─ database holds it ──► 200 {..., "source": "database"}
//!   ├─ the ledgers settle its value ──► 200 {..., "source": "ledger", moves' bounds}
//!   ├─ the cost model puts its search past ten budgets ──► 422 {"reason": "cost"}
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
use kalah::answer::{Answer, AnswerError, Budget, SearchWork, Searcher, Sources, Want};
use kalah::api::{MODEL_SLACK, board_json};
use kalah::book::Book;
use kalah::db::Tablebase;
use kalah::{AnyPosition, Lanes, Position, Rules, Solver, Variant};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

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
    /// The answers given lately.
    cache: Cache,
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
            cache: Cache::default(),
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

impl From<kalah::api::Failure> for Failure {
    fn from(f: kalah::api::Failure) -> Failure {
        Failure {
            status: status(f.status),
            body: f.body,
        }
    }
}

/// The status code `code` (one of those of [`kalah::api`]).
fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
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
    match kalah::api::position_query(query.as_deref()) {
        Ok(pos) => answer(api, pos, None, arrived).await,
        Err(failure) => Failure::from(failure).into_response(),
    }
}

/// `?houses=M&seeds=N&rules=R`.
async fn start(State(api): State<Arc<Api>>, RawQuery(query): RawQuery) -> Response {
    let arrived = Instant::now();
    match kalah::api::start_query(query.as_deref()) {
        Ok(variant) => answer(api, AnyPosition::start(variant), Some(variant), arrived).await,
        Err(failure) => Failure::from(failure).into_response(),
    }
}

/// The answer for `pos` ([`kalah::answer`]): from the cache if asked lately, else from the
/// databases, the ledgers and a search in a slot within the budget, on a blocking thread.
async fn answer(
    api: Arc<Api>,
    pos: AnyPosition,
    variant: Option<Variant>,
    arrived: Instant,
) -> Response {
    let rules = kalah::with_position!(&pos, p => p.rules());
    let key = (pos.to_string(), rules);
    if let Some((status, body)) = api.cache.get(&key) {
        return respond(status, (*body).clone(), arrived, true);
    }
    let task = {
        let api = api.clone();
        tokio::task::spawn_blocking(move || answered(&api, &pos, variant, arrived))
    };
    let (status, body, keep) = match task.await {
        Ok(answered) => answered,
        Err(e) => return server_error(format!("the search failed: {e}")),
    };
    if keep {
        api.cache.put(key, status, Arc::new(body.clone()));
    }
    respond(status, body, arrived, false)
}

/// The status and body of the answer for `pos` (the start of `variant` if given), and
/// whether to keep it in the cache (not a busy server's or a failure's).
fn answered(
    api: &Api,
    pos: &AnyPosition,
    variant: Option<Variant>,
    arrived: Instant,
) -> (StatusCode, Value, bool) {
    let houses = kalah::with_position!(pos, p => p.houses_per_side());
    let rules = kalah::with_position!(pos, p => p.rules());
    let db = api.databases.get(&(houses, rules)).cloned();
    let sources = Sources {
        levels: db.as_deref(),
        ledgers: Some(&api.book),
    };
    let deadline = arrived + api.budget;
    let budget = Budget {
        model_seconds: Some(api.budget.as_secs_f64() * MODEL_SLACK),
        deadline: Some(deadline),
        max_seeds: None,
    };
    let mut search = SlotSearch {
        api,
        houses,
        rules,
        db: db.clone(),
        deadline,
        known: None,
    };
    let want = Want::EveryMove;
    let result =
        kalah::with_position!(pos, p => answer_with(p, &sources, want, &budget, &mut search));
    let failure = |message: String| {
        let body = json!({"error": message});
        (StatusCode::INTERNAL_SERVER_ERROR, body, false)
    };
    match result {
        Ok(a) => kalah::with_position!(pos, p => {
            let (status, body) = reply(p, variant, &a, db.as_deref(), api);
            (status, body, true)
        }),
        Err(AnswerError::Searcher(Busy)) => {
            let known = search.known.take();
            let mut board = kalah::with_position!(pos, p => board_json(p, variant, known.as_ref(), db.as_deref()));
            board["value"] = Value::Null;
            let body = json!({
                "error": "every search slot stayed busy for the whole time budget: try again \
                          later",
                "reason": "busy",
                "budget_ms": api.budget.as_millis() as u64,
                "board": board,
            });
            (StatusCode::SERVICE_UNAVAILABLE, body, false)
        }
        Err(AnswerError::Levels(e)) => failure(format!("cannot read the database: {e}")),
        Err(AnswerError::Ledgers(e)) => {
            failure(format!("cannot answer from the opening books: {e}"))
        }
        Err(AnswerError::Search(e)) => failure(format!("cannot search: {e}")),
    }
}

/// [`kalah::answer::answer`] with the slots' search.
fn answer_with<L: Lanes>(
    p: &Position<L>,
    sources: &Sources<'_>,
    want: Want,
    budget: &Budget,
    search: &mut SlotSearch<'_>,
) -> Result<Answer, AnswerError<Busy>> {
    kalah::answer::answer(p, sources, want, budget, Some(search))
}

/// No search slot came free within the budget.
#[derive(Debug)]
struct Busy;

/// The search of a request: a free slot taken within the deadline, its solver (made for this
/// board size and rules if the slot's is not) searching until the deadline.
struct SlotSearch<'a> {
    api: &'a Api,
    houses: usize,
    rules: Rules,
    db: Option<Arc<Tablebase>>,
    deadline: Instant,
    /// What the other sources said, kept for the answer of a busy server.
    known: Option<Answer>,
}

impl Searcher for SlotSearch<'_> {
    type Error = Busy;

    fn config(&self) -> kalah::SolverConfig {
        kalah::SolverConfig {
            threads: self.api.threads,
            tt_mib: self.api.tt_mib,
            ..kalah::SolverConfig::default()
        }
    }

    fn levels_top(&self) -> Option<u32> {
        self.db.as_ref().map(|db| db.max_level())
    }

    fn search(&mut self, known: &Answer, work: &mut SearchWork<'_>) -> Result<(), Busy> {
        self.known = Some(known.clone());
        let api = self.api;
        // A slot within the budget, else busy (this is a blocking thread of the runtime).
        let acquire =
            tokio::time::timeout_at(self.deadline.into(), api.free.clone().acquire_owned());
        let Ok(Ok(permit)) = tokio::runtime::Handle::current().block_on(acquire) else {
            return Err(Busy);
        };
        let (houses, rules) = (self.houses, self.rules);
        let serves = |slot: &Option<Slot>| {
            slot.as_ref()
                .is_some_and(|s| s.houses == houses && s.rules == rules)
        };
        // A permit means a slot is free: prefer one already searching this board size.
        let mut guards: Vec<_> = api.slots.iter().filter_map(|s| s.try_lock().ok()).collect();
        let at = guards.iter().position(|g| serves(g)).unwrap_or(0);
        let Some(mut guard) = (at < guards.len()).then(|| guards.swap_remove(at)) else {
            return Err(Busy);
        };
        drop(guards);
        if !serves(&guard) {
            *guard = None;
            let solver = Solver::new(houses, rules, self.config());
            let solver = match (solver, self.db.clone()) {
                (Ok(solver), Some(db)) => solver.with_tablebase(db),
                (solver, _) => solver,
            };
            // A solver that cannot be made: the work is not run, and the answer says so.
            let Ok(solver) = solver else {
                return Ok(());
            };
            *guard = Some(Slot {
                houses,
                rules,
                solver,
            });
        }
        let solver = &guard.as_ref().expect("just made").solver;
        work(solver, &mut |_| {});
        drop(permit);
        Ok(())
    }
}

/// The status and body of an answer ([`kalah::api::reply`]), with how to raise this server's
/// budget.
fn reply<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    a: &Answer,
    db: Option<&Tablebase>,
    api: &Api,
) -> (StatusCode, Value) {
    let how = format!(
        "this server searches a position for at most {} (kalah serve --budget S raises it, \
         up to 60 s)",
        kalah::api::seconds_text(api.budget)
    );
    let (code, body) = kalah::api::reply(p, variant, a, db, api.budget, &how);
    (status(code), body)
}

/// The response: `body` with the time since the request `arrived` and whether it came from
/// the cache, as JSON.
fn respond(status: StatusCode, mut body: Value, arrived: Instant, cached: bool) -> Response {
    let elapsed = arrived.elapsed();
    body["time_ms"] = json!(elapsed.as_millis() as u64);
    body["time_us"] = json!(elapsed.as_micros() as u64);
    body["cached"] = json!(cached);
    // Straight into bytes: `to_string` makes the same bytes through `fmt`, a piece at a time,
    // at a few per cent more of the server's time under load (docs/serve-load.md).
    let json = serde_json::to_vec(&body).expect("a JSON value with string keys serializes");
    let mut response = (status, json).into_response();
    let headers = response.headers_mut();
    api_headers(headers);
    let cache = if status == StatusCode::OK {
        "no-cache"
    } else {
        "no-store"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}

/// The answers given lately, by position and rules: a position asked again is answered from
/// here, not searched again. At most [`CACHE_ANSWERS`] answers and [`CACHE_BYTES`] of their
/// JSON; the oldest goes first.
#[derive(Default)]
pub struct Cache {
    inner: Mutex<CacheInner>,
}

#[derive(Default)]
struct CacheInner {
    answers: HashMap<(String, Rules), (StatusCode, Arc<Value>, usize)>,
    order: std::collections::VecDeque<(String, Rules)>,
    /// The bytes of the JSON of the answers kept.
    bytes: usize,
}

/// The most answers the cache keeps (a few KiB each).
pub const CACHE_ANSWERS: usize = 4096;

/// The most bytes of answers (their JSON) the cache keeps: 32 MiB, whatever the answers hold.
pub const CACHE_BYTES: usize = 32 << 20;

impl Cache {
    fn get(&self, key: &(String, Rules)) -> Option<(StatusCode, Arc<Value>)> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .answers
            .get(key)
            .map(|(status, body, _)| (*status, body.clone()))
    }

    fn put(&self, key: (String, Rules), status: StatusCode, body: Arc<Value>) {
        let size = key.0.len() + body.to_string().len();
        if size > CACHE_BYTES {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.bytes += size;
        match inner.answers.insert(key.clone(), (status, body, size)) {
            Some((_, _, before)) => inner.bytes -= before,
            None => inner.order.push_back(key),
        }
        while inner.order.len() > CACHE_ANSWERS || inner.bytes > CACHE_BYTES {
            let Some(old) = inner.order.pop_front() else {
                break;
            };
            if let Some((_, _, size)) = inner.answers.remove(&old) {
                inner.bytes -= size;
            }
        }
    }
}

fn server_error(message: String) -> Response {
    Failure {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        body: json!({"error": message}),
    }
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_stays_within_its_bytes_and_its_count() {
        let cache = Cache::default();
        let big = Arc::new(json!({"pv": "x".repeat(1 << 20)}));
        for i in 0..100 {
            cache.put(
                (format!("<{i}>"), Rules::Standard),
                StatusCode::OK,
                big.clone(),
            );
            let inner = cache.inner.lock().unwrap();
            assert!(inner.bytes <= CACHE_BYTES, "{} bytes", inner.bytes);
            assert_eq!(inner.answers.len(), inner.order.len());
        }
        // The newest is kept, the oldest went first.
        assert!(cache.get(&("<99>".into(), Rules::Standard)).is_some());
        assert!(cache.get(&("<0>".into(), Rules::Standard)).is_none());
        let small = Arc::new(json!({"value": 1}));
        for i in 0..2 * CACHE_ANSWERS {
            cache.put(
                (format!("[{i}]"), Rules::Standard),
                StatusCode::OK,
                small.clone(),
            );
        }
        let inner = cache.inner.lock().unwrap();
        assert_eq!(inner.answers.len(), CACHE_ANSWERS);
        let bytes: usize = inner.answers.values().map(|(_, _, b)| b).sum();
        assert_eq!(inner.bytes, bytes);
    }
}
