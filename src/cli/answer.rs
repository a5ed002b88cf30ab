//! How an answer about a position ([`kalah::answer::Answer`]: `solve`, `analyze`, `query`) is
//! printed, as text or as JSON: its value or bounds, the moves, where they came from, whether
//! they are certified, and what it cost. The answer is the library's; this only shows it.

use std::time::Duration;

use kalah::answer::{Answer, MoveAnswer, NotDone, Searched, Source, Want};
use kalah::db::Tablebase;
use kalah::{Analysis, Lanes, Position, SolverConfig, Variant};
use serde_json::json;

pub use kalah::api::{add_bounds_fields, move_json};

use super::args::{header, print_json, side_text};
use super::books::{bounds_text, claim_json, claim_text, value_range};
use super::search::SearchDb;

/// What the printer says of the sources an answer came from.
pub struct Shown<'a> {
    /// The database files read, if any.
    pub levels: Option<&'a Tablebase>,
    /// The ledgers read whose facts answer (their names).
    pub books: &'a [String],
    /// The search, if one was set up: its settings, its databases, and whether --tt-mb gave the
    /// table.
    pub search: Option<(&'a SolverConfig, &'a SearchDb, bool)>,
    /// Why a search was not started, for people (the cost model's message), if it was not.
    pub not_searched: Option<String>,
    /// The command's error that follows the answer (a search it needed was refused), if any:
    /// in the JSON object too, so that `query -` prints one object a line.
    pub error: Option<&'a str>,
}

/// `writeln!` into a `String` (which cannot fail).
macro_rules! outln {
    ($text:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($text, $($arg)*);
    }};
}

/// Prints `answer` about `p` (the start of `variant` if given), asked `want`, as JSON or for
/// people: in full where it answers what was asked (or values every move), else the bounds
/// the ledgers prove and why nothing was searched.
pub fn print_answer<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    want: Want,
    answer: &Answer,
    shown: &Shown<'_>,
    json: bool,
) {
    if answer.contradicts_ledgers() {
        let b = answer.ledger_bounds.expect("contradicted bounds");
        eprintln!(
            "warning: the search's value {:+} is outside the bounds a ledger proves, [{}, {}]: a \
             ledger is wrong (kalah prove --check finds which fact)",
            answer.value.lower, b.lower, b.upper
        );
    }
    let Some(a) = answer.analysis().filter(|_| answer.answers(want)) else {
        return print_bounds(p, variant, answer, shown, json);
    };
    // A value the books answer with every move's is shown in full, as `query` shows it.
    let in_full = answer.source == Source::Ledger && answer.every_move_exact();
    match want {
        Want::Value if !in_full => print_value(p, variant, answer, shown, json),
        _ => {
            let all_moves = want == Want::EveryMove || want == Want::Value;
            print_full(p, variant, all_moves, &a, answer, shown, json)
        }
    }
}

/// The answer in full: the value, the best moves, each move's value (with `all_moves`), the
/// perfect line, where it came from.
fn print_full<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    all_moves: bool,
    a: &Analysis,
    answer: &Answer,
    shown: &Shown<'_>,
    json: bool,
) {
    if json {
        let mut out = analysis_json(p, variant, a);
        add_certified(&mut out, answer);
        add_source_fields(&mut out, answer, shown);
        if answer.source == Source::Search {
            if let Some(b) = answer.ledger_bounds {
                out["ledger_bounds"] = json!({"lower": b.lower, "upper": b.upper});
            }
        }
        if !answer.claims.is_empty() {
            out["claims"] = answer
                .claims
                .iter()
                .map(|c| claim_json(c, Some(a.value)))
                .collect();
        }
        print_json(&out);
        return;
    }
    // One write for the whole answer: `query -` answers thousands a second.
    let mut text = String::new();
    let pv: Vec<String> = a.pv.iter().map(|t| t.to_string()).collect();
    outln!(
        text,
        "{}, {} rules, {}",
        title(p, variant),
        p.rules(),
        side_text(a.to_move)
    );
    let verdict = match (a.to_move, a.value) {
        (None, v) => format!("game over: South's margin {v:+}"),
        (Some(side), v) if v > 0 => format!("{side} wins by {v}"),
        (Some(side), v) if v < 0 => format!("{side} loses by {}", -v),
        (Some(_), _) => "draw".to_owned(),
    };
    outln!(text, "value: {:+} ({verdict}), stores included", a.value);
    for c in &answer.claims {
        outln!(
            text,
            "{}: {}",
            claim_text(c, value_range(p)),
            if c.holds(a.value) {
                "agrees".to_owned()
            } else {
                let whose = match answer.source {
                    Source::Search => "the search's",
                    Source::Levels => "the levels'",
                    _ => "the checked facts'",
                };
                format!("WRONG (the value above is {whose})")
            }
        );
    }
    if !a.moves.is_empty() {
        let best: Vec<String> = a.best.iter().map(|m| m.to_string()).collect();
        outln!(text, "best moves: {}", best.join(" "));
        if all_moves {
            let values: Vec<String> = a
                .moves
                .iter()
                .map(|m| format!("{}:{:+}", m.mv, m.value))
                .collect();
            outln!(text, "move values: {}", values.join("  "));
        }
        let note = if answer.pv_complete {
            ""
        } else {
            " (as far as the books and the levels know it)"
        };
        outln!(text, "perfect line: {}{note}", pv.join(" "));
    }
    if let Some(line) = certified_line(answer) {
        outln!(text, "{line}");
    }
    outln!(text, "{}", source_text(answer, shown));
    print!("{text}");
}

/// The value alone (`--value-only`), as JSON or for people.
fn print_value<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    answer: &Answer,
    shown: &Shown<'_>,
    json: bool,
) {
    let value = answer.exact().expect("an exact value");
    if json {
        let mut out = header(p);
        add_source_fields(&mut out, answer, shown);
        add_variant_fields(&mut out, variant);
        out["value"] = json!(value);
        out["certified"] = json!(answer.certified);
        out["best"] = json!([]);
        out["moves"] = json!([]);
        out["pv"] = json!([]);
        print_json(&out);
        return;
    }
    match variant {
        Some(v) => println!(
            "Kalah({},{}), {} rules: value {value:+} for South, the first player",
            v.houses(),
            v.seeds(),
            p.rules()
        ),
        None => println!(
            "{p} ({} houses a side), {} rules: value {value:+} for {}, the side to move",
            p.houses_per_side(),
            p.rules(),
            p.to_move().map_or("nobody".into(), |s| s.to_string())
        ),
    }
    if let Some(line) = certified_line(answer) {
        println!("{line}");
    }
    println!("{}", source_text_short(answer, shown));
}

/// What the ledgers prove where the value or some move's is not exact (or nothing was
/// searched for what was asked): the value's bounds, each move's, the moves proven best and
/// those that may be, as text or JSON (`searched: false` and why, if not searched).
fn print_bounds<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    answer: &Answer,
    shown: &Shown<'_>,
    json: bool,
) {
    let bounds = answer.value;
    let (best, maybe) = (answer.best(), answer.maybe_best());
    let why = shown.not_searched.as_deref();
    if json {
        let mut out = header(p);
        out["variant"] = json!(variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds())));
        if let Some(v) = variant {
            out["seeds"] = v.seeds().into();
        }
        add_bounds_fields(&mut out, answer);
        out["moves"] = answer.moves.iter().map(move_json).collect();
        out["pv"] = json!(answer.pv.iter().map(|t| t.to_string()).collect::<Vec<_>>());
        out["pv_complete"] = json!(answer.pv_complete);
        add_ledger_fields(&mut out, shown.books, answer.elapsed);
        out["searched"] = false.into();
        out["not_searched"] = json!(why);
        if !answer.claims.is_empty() {
            out["claims"] = answer.claims.iter().map(|c| claim_json(c, None)).collect();
        }
        if let Some(error) = shown.error {
            out["error"] = error.into();
        }
        print_json(&out);
        return;
    }
    let mut text = String::new();
    outln!(
        text,
        "{}, {} rules, {}",
        title(p, variant),
        p.rules(),
        side_text(p.to_move())
    );
    let certified = if answer.certified {
        " and certified"
    } else {
        " (not certified)"
    };
    outln!(
        text,
        "value: {}, stores included, proven by the ledgers{certified}",
        bounds_text(bounds, value_range(p))
    );
    for m in &answer.moves {
        outln!(
            text,
            "  move {:>2}: {}{}",
            m.mv.house(),
            bounds_text(m.bounds, kalah::book::after_move(p, m.mv, value_range)),
            move_note(m)
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
        if !answer.pv.is_empty() {
            let pv: Vec<String> = answer.pv.iter().map(|t| t.to_string()).collect();
            let note = if answer.pv_complete {
                ""
            } else {
                " (as far as the ledgers and the levels know it)"
            };
            outln!(text, "perfect line: {}{note}", pv.join(" "));
        }
    }
    text += &ledger_line(shown.books, answer.elapsed);
    // Without the value, the error that follows says why nothing was searched.
    if let (true, Some(why)) = (bounds.is_exact(), why) {
        text += &format!("; not searched further: {why} --long searches it anyway.");
    }
    text.push('\n');
    print!("{text}");
}

/// After a move's bounds, for people: where they came from and whether they are certified.
fn move_note(m: &MoveAnswer) -> &'static str {
    match (m.source, m.certified) {
        (Source::End, _) => ", the game's end",
        (Source::Levels, _) => ", from the levels",
        (Source::Search, _) => ", searched",
        (Source::Seeds, _) => "",
        (Source::Ledger, true) if m.value().is_some() => ", certified",
        (Source::Ledger, true) => ", these bounds certified",
        (Source::Ledger, false) => ", not certified",
    }
}

/// Whether the ledgers answered any part of `answer`: then a line says what is certified.
fn ledgered(answer: &Answer) -> bool {
    answer.source == Source::Ledger || answer.moves.iter().any(|m| m.source == Source::Ledger)
}

/// What of the value and of each move is certified (see [`kalah::answer`]), for people, when
/// the ledgers answered part of it: `certified: the value and every move`, or the parts that
/// are and those that are not.
pub fn certified_line(answer: &Answer) -> Option<String> {
    if !ledgered(answer) {
        return None;
    }
    let all_moves = answer.moves.iter().all(|m| m.certified);
    if answer.certified && all_moves {
        return Some("certified: the value and every move".to_owned());
    }
    let houses = |pick: &dyn Fn(&MoveAnswer) -> bool| -> Vec<String> {
        answer
            .moves
            .iter()
            .filter(|m| pick(m))
            .map(|m| m.mv.to_string())
            .collect()
    };
    let part = |value: bool, moves: Vec<String>| -> Option<String> {
        let mut parts = Vec::new();
        if value {
            parts.push("the value".to_owned());
        }
        match moves.len() {
            0 => {}
            1 => parts.push(format!("move {}", moves[0])),
            _ => parts.push(format!("moves {}", moves.join(", "))),
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    };
    let yes = part(answer.certified, houses(&|m| m.certified));
    let levels = houses(&|m| m.source == Source::Levels);
    let no = part(
        !answer.certified,
        houses(&|m| !m.certified && m.source != Source::Levels),
    );
    let mut line = format!("certified: {}", yes.unwrap_or_else(|| "nothing".into()));
    if let Some(no) = no {
        line += &format!("; not certified: {no} (kalah prove --certify checks their facts)");
    }
    if !levels.is_empty() {
        line += &format!("; from the levels: {}", levels.join(", "));
    }
    Some(line)
}

/// `certified` for the value and for each move of `out["moves"]` (which name their `house`).
fn add_certified(out: &mut serde_json::Value, answer: &Answer) {
    out["certified"] = json!(answer.certified);
    if let Some(moves) = out["moves"].as_array_mut() {
        for m in moves {
            let house = m["house"].as_u64().unwrap_or(0) as usize;
            let found = answer.moves.iter().find(|k| k.mv.house() == house);
            m["certified"] = json!(found.is_some_and(|k| k.certified));
        }
    }
}

/// The fields that say where an answer came from and what it cost: `nodes`, `time_ms`,
/// `source`, and the search's settings, the levels read or the books.
fn add_source_fields(out: &mut serde_json::Value, answer: &Answer, shown: &Shown<'_>) {
    match (answer.source, shown.search, answer.searched) {
        (Source::Search, Some((config, db, given)), Some(s)) => {
            add_search_fields(out, s.nodes, s.elapsed, config, db, given);
            out["source"] = json!("search");
        }
        (Source::Levels, _, _) => {
            out["nodes"] = json!(0);
            out["time_ms"] = json!(answer.elapsed.as_millis() as u64);
            out["source"] = json!("database");
            out["db_max_seeds"] = json!(shown.levels.map(Tablebase::max_level));
            out["db"] = super::db_choice::files_json(shown.levels);
        }
        (Source::Ledger, _, _) => {
            add_ledger_fields(out, shown.books, answer.elapsed);
            out["pv_complete"] = json!(answer.pv_complete);
        }
        (source, _, _) => {
            out["nodes"] = json!(0);
            out["time_ms"] = json!(answer.elapsed.as_millis() as u64);
            out["source"] = json!(source.as_str());
        }
    }
}

/// Where a full answer came from and what it cost, for people (one line, or two for a
/// search: its statistics and the levels it probed).
fn source_text(answer: &Answer, shown: &Shown<'_>) -> String {
    match (answer.source, shown.search, answer.searched) {
        (Source::Search, Some((config, db, given)), Some(s)) => {
            format!("{}\n{}", search_text(s, config, given, true), db.line())
        }
        _ => source_text_short(answer, shown),
    }
}

/// [`source_text`] as `--value-only` writes it (a search's line without the rate).
fn source_text_short(answer: &Answer, shown: &Shown<'_>) -> String {
    match (answer.source, shown.search, answer.searched) {
        (Source::Search, Some((config, db, given)), Some(s)) => {
            format!("{}\n{}", search_text(s, config, given, false), db.line())
        }
        (Source::Levels, _, _) => match shown.levels {
            Some(db) => format!(
                "read from the database (levels 0..={} in {}) in {:.3} ms",
                db.max_level(),
                db.dir().display(),
                answer.elapsed.as_secs_f64() * 1e3
            ),
            None => "read from the database".to_owned(),
        },
        (Source::Ledger, _, _) => ledger_line(shown.books, answer.elapsed),
        (Source::End, _, _) => {
            "settled by the end of the game (each side's houses to its store): no search".into()
        }
        _ => "nothing searched".to_owned(),
    }
}

/// What a search cost and how it was set up, for people: `48631370 nodes in 13.908 s (3.5 M
/// nodes/s), 2 threads, 512 MiB table (for this board), mtdf` (the rate with `rate`).
pub fn search_text(s: Searched, config: &SolverConfig, given: bool, rate: bool) -> String {
    let rate = match rate {
        true => format!(
            " ({:.1} M nodes/s)",
            s.nodes as f64 / s.elapsed.as_secs_f64().max(1e-9) / 1e6
        ),
        false => String::new(),
    };
    format!(
        "{} nodes in {:.3} s{rate}, {} thread{}, {}, {}",
        s.nodes,
        s.elapsed.as_secs_f64(),
        config.threads,
        if config.threads == 1 { "" } else { "s" },
        table_text(config, given),
        algorithm_text(config)
    )
}

/// The fields of an answer read from the opening books `books` in `elapsed`: no nodes, the
/// time, `"source": "ledger"` and the books.
pub fn add_ledger_fields(out: &mut serde_json::Value, books: &[String], elapsed: Duration) {
    out["nodes"] = json!(0);
    out["time_ms"] = json!(elapsed.as_millis() as u64);
    out["source"] = json!("ledger");
    out["books"] = json!(books);
}

/// Where an answer read from the opening books `books` in `elapsed` came from, for people.
pub fn ledger_line(books: &[String], elapsed: Duration) -> String {
    format!(
        "read from the opening books ({}) in {:.3} ms",
        books.join(", "),
        elapsed.as_secs_f64() * 1e3
    )
}

/// What an answer is about, for people: `Kalah(6,4)` for the start of a variant, else the
/// position and its board size.
pub fn title<L: Lanes>(p: &Position<L>, variant: Option<Variant>) -> String {
    match variant {
        Some(v) => format!("Kalah({},{})", v.houses(), v.seeds()),
        None => format!("{p} ({} houses a side)", p.houses_per_side()),
    }
}

/// Adds `variant` (`Kalah(6,4)`) and its `seeds` a house to an answer about the start of
/// `variant`, if given (nothing otherwise).
pub fn add_variant_fields(out: &mut serde_json::Value, variant: Option<Variant>) {
    if let Some(v) = variant {
        out["variant"] = json!(format!("Kalah({},{})", v.houses(), v.seeds()));
        out["seeds"] = json!(v.seeds());
    }
}

/// The JSON of an analysis of `p` (of the start of `variant` if given): the [`header`], then
/// `variant`, `value`, `best`, `moves` (house order), `pv` and, with a variant, `seeds`.
pub fn analysis_json<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    a: &Analysis,
) -> serde_json::Value {
    let mut out = header(p);
    out["variant"] = json!(variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds())));
    out["value"] = json!(a.value);
    out["best"] = json!(a.best.iter().map(|m| m.house()).collect::<Vec<_>>());
    out["moves"] = a
        .moves
        .iter()
        .map(|m| json!({"house": m.mv.house(), "value": m.value}))
        .collect();
    out["pv"] = json!(a.pv.iter().map(|t| t.to_string()).collect::<Vec<_>>());
    if let Some(v) = variant {
        out["seeds"] = v.seeds().into();
    }
    out
}

/// The table size for people, and where it came from: `64 MiB table (--tt-mb)`, or `1 MiB
/// table (for this board)` when sized by the board and the machine
/// ([`kalah::search::auto_table_mib`]).
pub fn table_text(config: &SolverConfig, given: bool) -> String {
    let from = if given { "--tt-mb" } else { "for this board" };
    format!("{} MiB table ({from})", config.tt_mib)
}

/// The algorithm for people, with the iterative deepening when `--deepening` changed it:
/// `mtdf`, `mtdf, deepening to 18 plies` or `mtdf, no deepening`.
pub fn algorithm_text(config: &SolverConfig) -> String {
    let tuning = config.tuning;
    let changed = config.algorithm == kalah::Algorithm::Mtdf
        && tuning.deepening_max != SolverConfig::default().tuning.deepening_max;
    if !changed {
        config.algorithm.to_string()
    } else if tuning.deepening_max < tuning.deepening_step {
        // Not even the first pass fits.
        format!("{}, no deepening", config.algorithm)
    } else {
        format!(
            "{}, deepening to {} plies",
            config.algorithm, tuning.deepening_max
        )
    }
}

/// The search statistics and settings at the end of a solver's JSON answer.
pub fn add_search_fields(
    out: &mut serde_json::Value,
    nodes: u64,
    elapsed: Duration,
    config: &SolverConfig,
    db: &SearchDb,
    tt_given: bool,
) {
    out["nodes"] = json!(nodes);
    out["time_ms"] = json!(elapsed.as_millis() as u64);
    out["threads"] = json!(config.threads);
    out["tt_mb"] = json!(config.tt_mib);
    out["tt_mb_from"] = json!(if tt_given { "option" } else { "board" });
    out["algorithm"] = json!(config.algorithm.as_str());
    out["deepening"] = json!(config.tuning.deepening_max);
    let tablebase = db.tablebase.as_deref();
    out["db_max_seeds"] = json!(tablebase.map(Tablebase::max_level));
    out["db_in_memory"] = json!(db.built.is_some());
    out["db_build_ms"] = json!(db.built.map(|t| t.as_millis() as u64));
    out["db"] = super::db_choice::files_json(tablebase);
}

/// Why nothing (more) was searched, for people, if so: the cost model's message for a search
/// past the budget ([`super::search::cost_text`]).
pub fn not_searched<L: Lanes>(p: &Position<L>, answer: &Answer) -> Option<String> {
    match answer.not_done? {
        NotDone::Cost { cost, .. } => Some(super::search::cost_text(p, &cost)),
        NotDone::Seeds { seeds, limit } => Some(format!(
            "{seeds} seeds on the board, more than searched ({limit})."
        )),
        NotDone::OutOfTime => Some("the search ran out of its time.".into()),
        NotDone::Cancelled => Some("the search was cancelled.".into()),
        NotDone::NoSearch => Some("no search was asked.".into()),
    }
}
