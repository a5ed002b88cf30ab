//! An answer about a position (`solve`, `analyze`, `query`): its analysis, where it came from
//! (a search, the database files, the opening books) and what it cost, printed as text or as
//! JSON.

use std::time::Duration;

use kalah::db::Tablebase;
use kalah::{Analysis, Lanes, Position, SolverConfig, Variant};
use serde_json::json;

use super::args::{header, print_json, side_text};
use super::search::SearchDb;

/// Where an analysis came from.
pub enum Source<'a> {
    /// The search, with these settings and databases (and whether --tt-mb gave the table).
    Search(&'a SolverConfig, &'a SearchDb, bool),
    /// The database files.
    Database(&'a Tablebase),
    /// The opening books (the ledgers read), and whether the perfect line reaches the end.
    Ledger(&'a [String], bool),
}

/// An analysis and what it cost.
pub struct Answer<'a> {
    pub analysis: &'a Analysis,
    pub elapsed: Duration,
    pub nodes: u64,
    pub source: Source<'a>,
    /// Bounds the ledgers proved on the value before it was searched.
    pub bounds: Option<kalah::prove::fact::Bounds>,
    /// What unchecked facts claimed of the value (never read as it).
    pub claims: Vec<kalah::book::Claimed>,
}

/// `writeln!` into a `String` (which cannot fail).
macro_rules! outln {
    ($text:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($text, $($arg)*);
    }};
}

/// Prints an analysis of `p`, as JSON or for people.
pub fn print_analysis<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    all_moves: bool,
    answer: &Answer<'_>,
    json: bool,
) {
    let (a, elapsed, nodes) = (answer.analysis, answer.elapsed, answer.nodes);
    if let Some(b) = answer
        .bounds
        .filter(|b| a.value < b.lower || a.value > b.upper)
    {
        eprintln!(
            "warning: the search's value {:+} is outside the bounds a ledger proves, [{}, {}]: a \
             ledger is wrong (kalah prove --check finds which fact)",
            a.value, b.lower, b.upper
        );
    }
    if json {
        let mut out = analysis_json(p, variant, a);
        match answer.source {
            Source::Search(config, db, given) => {
                add_search_fields(&mut out, nodes, elapsed, config, db, given);
                out["source"] = json!("search");
            }
            Source::Database(db) => {
                out["nodes"] = json!(0);
                out["time_ms"] = json!(elapsed.as_millis() as u64);
                out["source"] = json!("database");
                out["db_max_seeds"] = json!(db.max_level());
                out["db"] = super::db_choice::files_json(Some(db));
            }
            Source::Ledger(books, pv_complete) => {
                add_ledger_fields(&mut out, books, elapsed);
                out["pv_complete"] = json!(pv_complete);
            }
        }
        if let Some(b) = answer.bounds {
            out["ledger_bounds"] = json!({"lower": b.lower, "upper": b.upper});
        }
        if !answer.claims.is_empty() {
            out["claims"] = answer
                .claims
                .iter()
                .map(|c| super::books::claim_json(c, Some(a.value)))
                .collect();
        }
        print_json(&out);
        return;
    }
    // One write for the whole answer: `query -` answers thousands a second.
    let mut text = String::new();
    let pv: Vec<String> = a.pv.iter().map(|t| t.to_string()).collect();
    let title = title(p, variant);
    outln!(
        text,
        "{title}, {} rules, {}",
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
            super::books::claim_text(c, super::books::value_range(p)),
            if c.holds(a.value) {
                "agrees"
            } else {
                "WRONG (the value above is the search's)"
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
        let partial = matches!(answer.source, Source::Ledger(_, false));
        let note = if partial {
            " (as far as the books and the levels know it)"
        } else {
            ""
        };
        outln!(text, "perfect line: {}{note}", pv.join(" "));
    }
    match answer.source {
        Source::Search(config, db, given) => {
            let rate = nodes as f64 / elapsed.as_secs_f64().max(1e-9);
            outln!(
                text,
                "{nodes} nodes in {:.3} s ({:.1} M nodes/s), {} thread{}, {}, {}",
                elapsed.as_secs_f64(),
                rate / 1e6,
                config.threads,
                if config.threads == 1 { "" } else { "s" },
                table_text(config, given),
                algorithm_text(config)
            );
            outln!(text, "{}", db.line());
        }
        Source::Database(db) => outln!(
            text,
            "read from the database (levels 0..={} in {}) in {:.3} ms",
            db.max_level(),
            db.dir().display(),
            elapsed.as_secs_f64() * 1e3
        ),
        Source::Ledger(books, _) => outln!(text, "{}", ledger_line(books, elapsed)),
    }
    print!("{text}");
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
