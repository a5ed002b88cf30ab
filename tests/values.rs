//! The solved starts of `data/values/starts.jsonl` (Kalah(m,n), both rules, made by
//! `scripts/golden-values.sh`) against the values published for Kalah(6,4) and (6,5), against the
//! naive solver of the test suite, and against a new solve.
//!
//! The default run has the naive solver value every first move of the small starts
//! ([`NAIVE_QUICK`]) and solves again every start that the file's run solved in at most
//! [`QUICK_NODES`] nodes. `cargo test -- --ignored` adds the naive solver on [`NAIVE_SLOW`]
//! (about six minutes) and solves every start again (about 13: Kalah(5,6), (6,4) and the
//! two Kalah(6,5) take minutes).

mod cli_common;
mod common;

use std::collections::HashMap;

use cli_common::json;
use common::naive_value;
use kalah::reference::RefPosition;
use kalah::{Rules, Setup};
use serde_json::Value;

/// The default run solves again the starts solved in at most this many nodes.
const QUICK_NODES: u64 = 2_000_000;
/// The starts (m, n) the naive solver checks by default (its memo of whole positions grows
/// fast with the houses: at most 1.2 M positions here) ...
#[rustfmt::skip]
const NAIVE_QUICK: [(u64, u64); 22] = [
    (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6),
    (2, 1), (2, 2), (2, 3), (2, 4), (2, 5), (2, 6),
    (3, 1), (3, 2), (3, 3), (3, 4), (3, 5), (3, 6),
    (4, 1), (4, 2), (5, 1), (6, 1),
];
/// ... and the ones it adds with `--ignored` (5 to 39 M positions, 4 GB of memory at most,
/// about five minutes in all).
const NAIVE_SLOW: [(u64, u64); 3] = [(4, 3), (5, 2), (4, 4)];

/// Values of the start published by others: variant, rules, the first player's margin, source.
const PUBLISHED: [(&str, &str, i64, &str); 2] = [
    (
        "Kalah(6,4)",
        "empty-capture",
        10,
        "Irving, Donkers and Uiterwijk, Solving Kalah, ICGA Journal 23(3), 2000",
    ),
    (
        "Kalah(6,5)",
        "empty-capture",
        12,
        "Rawlings' 2015 analysis, in Wikipedia's Kalah article",
    ),
];

/// The solutions recorded in the golden file.
fn golden() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/values/starts.jsonl");
    let text = std::fs::read_to_string(path).expect("data/values/starts.jsonl is readable");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect()
}

/// An answer without what says whether its value and each move's are certified (a search's
/// never are; the recorded rows predate the field).
fn uncertified(mut answer: Value) -> Value {
    if let Some(map) = answer.as_object_mut() {
        map.remove("certified");
    }
    for m in answer["moves"].as_array_mut().into_iter().flatten() {
        if let Some(map) = m.as_object_mut() {
            map.remove("certified");
        }
    }
    answer
}

fn name(row: &Value) -> String {
    format!("{} {}", row["variant"], row["rules"])
}

/// Whether the row was solved value only (no move values, no line).
fn value_only(row: &Value) -> bool {
    row["moves"].as_array().is_some_and(Vec::is_empty)
}

/// Solves the row's start again as the script did and compares everything that does not depend
/// on the machine: value, optimal moves, every move's value and the perfect line.
fn check(row: &Value) {
    let houses = row["houses"].to_string();
    let seeds = row["seeds"].to_string();
    let rules = row["rules"].as_str().expect("rules");
    let mode = if value_only(row) {
        "--value-only"
    } else {
        "--all-moves"
    };
    // A search, as the script made it: not the opening books' answer.
    let args = [
        "solve",
        "--houses",
        &houses,
        "--seeds",
        &seeds,
        "--rules",
        rules,
        mode,
        "--json",
        "--no-book",
    ];
    let now = uncertified(json(&args));
    for field in [
        "variant", "rules", "position", "to_move", "value", "best", "moves", "pv",
    ] {
        assert_eq!(now[field], row[field], "{}: {field}", name(row));
    }
}

#[test]
fn the_golden_file_covers_the_published_values_and_agrees() {
    let rows = golden();
    for (variant, rules, value, source) in PUBLISHED {
        let row = rows
            .iter()
            .find(|r| r["variant"] == variant && r["rules"] == rules)
            .unwrap_or_else(|| panic!("{variant} {rules} is in the golden file"));
        assert_eq!(row["value"], value, "{variant} {rules} against {source}");
    }
}

/// A solve with every move's value (`--all-moves`): the best moves are exactly those whose
/// value is the position's, and no move is worth more.
fn assert_best_moves_are_worth_the_value(row: &Value) {
    let value = &row["value"];
    let moves = row["moves"].as_array().expect("moves");
    let best: Vec<&Value> = moves
        .iter()
        .filter(|m| &m["value"] == value)
        .map(|m| &m["house"])
        .collect();
    let recorded: Vec<&Value> = row["best"].as_array().expect("best").iter().collect();
    assert_eq!(best, recorded, "{}", name(row));
    assert!(
        moves.iter().all(|m| m["value"].as_i64() <= value.as_i64()),
        "{}",
        name(row)
    );
    // A move a campaign only bounded (scripts/big-values-ledger.py) is proven worse.
    for m in moves.iter().filter(|m| m["value"].is_null()) {
        let (lower, upper) = (m["lower"].as_i64(), m["upper"].as_i64());
        assert!(
            lower.is_some() && lower <= upper && upper < value.as_i64(),
            "{}: {m}",
            name(row)
        );
    }
}

#[test]
fn every_golden_row_is_consistent() {
    let rows = golden();
    assert!(rows.len() >= 60, "{} rows", rows.len());
    for row in &rows {
        assert_eq!(row["to_move"], "south", "{}", name(row));
        if value_only(row) {
            continue;
        }
        assert_best_moves_are_worth_the_value(row);
        assert!(
            !row["pv"].as_array().expect("pv").is_empty(),
            "{}",
            name(row)
        );
    }
}

/// The naive solver's value of every move of the row's start, as `(house, value)` for the
/// first player.
fn naive_moves(row: &Value) -> Vec<(u64, i64)> {
    let setup: Setup = row["position"].as_str().expect("position").parse().unwrap();
    let rules: Rules = row["rules"].as_str().expect("rules").parse().unwrap();
    let start = RefPosition::from_setup(&setup, rules);
    let mut memo = HashMap::new();
    start
        .moves()
        .into_iter()
        .map(|h| {
            let mut child = start.clone();
            child.play(h);
            let v = naive_value(&child, &mut memo);
            let v = if child.to_move == start.to_move {
                v
            } else {
                -v
            };
            (h as u64, i64::from(v))
        })
        .collect()
}

/// The golden rows of the starts `variants`, solved with every move, against the naive solver.
fn check_naive(variants: &[(u64, u64)]) {
    let rows = golden();
    for &(m, n) in variants {
        for rules in ["standard", "empty-capture"] {
            let row = rows
                .iter()
                .find(|r| r["houses"] == m && r["seeds"] == n && r["rules"] == rules)
                .unwrap_or_else(|| panic!("Kalah({m},{n}) {rules} is in the golden file"));
            let recorded: Vec<(u64, i64)> = row["moves"]
                .as_array()
                .expect("moves")
                .iter()
                .map(|m| (m["house"].as_u64().unwrap(), m["value"].as_i64().unwrap()))
                .collect();
            assert_eq!(naive_moves(row), recorded, "{}", name(row));
        }
    }
}

#[test]
fn small_golden_rows_match_the_naive_solver() {
    check_naive(&NAIVE_QUICK);
}

#[test]
#[ignore = "the naive solver on Kalah(4,3), (5,2) and (4,4): minutes, 4 GB"]
fn larger_golden_rows_match_the_naive_solver() {
    check_naive(&NAIVE_SLOW);
}

#[test]
fn small_starts_solve_as_recorded() {
    let rows = golden();
    let quick: Vec<&Value> = rows
        .iter()
        .filter(|r| r["nodes"].as_u64().expect("nodes") <= QUICK_NODES)
        .collect();
    assert!(quick.len() >= 40, "{} quick rows", quick.len());
    for row in quick {
        check(row);
    }
}

#[test]
#[ignore = "every start in the file: Kalah(5,6), (6,4) and (6,5) take minutes"]
fn every_start_solves_as_recorded() {
    for row in &golden() {
        check(row);
    }
}

/// The lines of docs/values.md between `<!-- NAME -->` and `<!-- /NAME -->` (a table that a
/// script writes from data/values).
fn values_md_section(name: &str) -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/values.md"))
        .expect("docs/values.md is readable");
    doc.split(&format!("<!-- {name} -->"))
        .nth(1)
        .and_then(|rest| rest.split(&format!("<!-- /{name} -->")).next())
        .unwrap_or_else(|| panic!("docs/values.md has the section {name}"))
        .to_owned()
}

/// The objects of `data/values/FILE`, one a line.
fn jsonl(file: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/values")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect()
}

/// A value and its best moves as the tables of docs/values.md write them: `+4 (6)`, `0 (7,8)`.
fn value_and_best(value: &Value, best: &Value) -> String {
    let v = value.as_i64().expect("a value");
    let best = best
        .as_array()
        .expect("best")
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join(",");
    format!("{} ({best})", signed(v))
}

/// A value with its sign as the tables write it: `+4`, `0`, `-6`.
fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// Every first move's value in `row` as the table of seven houses and more writes it: `1: -6
/// 2: +4`, with the bounds of a move a campaign only bounded: `4: [-46, -8]`, or `5: <= +2` when
/// the lower bound is the widest (every seed to the other side).
fn every_move(row: &Value) -> String {
    let seeds = 2 * row["houses"].as_i64().expect("houses") * row["seeds"].as_i64().expect("seeds");
    let signed = |v: &Value| signed(v.as_i64().expect("a value"));
    let text = |m: &Value| {
        if m["value"].is_null() && m["lower"].as_i64() <= Some(-seeds) {
            format!("<= {}", signed(&m["upper"]))
        } else if m["value"].is_null() {
            format!("[{}, {}]", signed(&m["lower"]), signed(&m["upper"]))
        } else {
            signed(&m["value"])
        }
    };
    row["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| format!("{}: {}", m["house"], text(m)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The run of the standard start that a ManKalah `row` was valued from: the same way, or for a
/// campaign's cell valued on other levels, its `start_way`.
fn start_of<'a>(starts: &'a [Value], row: &Value) -> &'a Value {
    let way = row.get("start_way").unwrap_or(&row["way"]);
    starts
        .iter()
        .find(|s| s["variant"] == row["variant"] && s["rules"] == "standard" && s["way"] == *way)
        .unwrap_or_else(|| panic!("{} {}: the start's run", row["variant"], way))
}

/// The runs of `data/values/big-starts.jsonl` (`scripts/big-values.sh`): the starts of seven
/// houses and more, each cell solved two ways (`way`: other levels, or none, or one thread).
fn big() -> Vec<Value> {
    jsonl("big-starts.jsonl")
}

/// The fields of a solve that do not depend on the way it was run.
const SAME_EVERY_WAY: [&str; 6] = ["variant", "rules", "position", "value", "best", "moves"];

#[test]
fn every_big_start_is_solved_two_ways_that_agree() {
    let rows = big();
    let mut cells: HashMap<String, Vec<&Value>> = HashMap::new();
    for row in &rows {
        cells.entry(name(row)).or_default().push(row);
    }
    // At least Kalah(7,1..2) and (8,1..2), both rules.
    assert!(cells.len() >= 8, "{} cells", cells.len());
    for (cell, runs) in &cells {
        assert!(runs.len() >= 2, "{cell}: solved one way only");
        let ways: std::collections::HashSet<&Value> = runs.iter().map(|r| &r["way"]).collect();
        assert_eq!(ways.len(), runs.len(), "{cell}: two runs the same way");
        for run in &runs[1..] {
            for field in SAME_EVERY_WAY {
                assert_eq!(
                    run[field], runs[0][field],
                    "{cell}: {field}, {} against {}",
                    run["way"], runs[0]["way"]
                );
            }
        }
        // Every first move valued, the best ones those worth the value.
        assert_best_moves_are_worth_the_value(runs[0]);
        assert_eq!(
            runs[0]["moves"].as_array().expect("moves").len() as u64,
            runs[0]["houses"].as_u64().unwrap(),
            "{cell}"
        );
    }
}

#[test]
fn the_quick_big_starts_solve_as_recorded() {
    let rows = big();
    let quick: Vec<&Value> = rows
        .iter()
        .filter(|r| r["nodes"].as_u64().expect("nodes") <= QUICK_NODES)
        // A campaign's rows (scripts/big-values-ledger.py) are checked from their ledgers.
        .filter(|r| r.get("ledger").is_none())
        // Levels built in memory in a second or less.
        .filter(|r| r["db_build_ms"].as_u64().unwrap_or(0) <= 1000)
        .collect();
    assert!(quick.len() >= 8, "{} quick runs", quick.len());
    for row in quick {
        let args: Vec<&str> = row["command"]
            .as_str()
            .expect("command")
            .split(' ')
            .skip(1)
            .collect();
        let now = uncertified(json(&args));
        for field in SAME_EVERY_WAY {
            assert_eq!(
                now[field],
                row[field],
                "{} {}: {field}",
                name(row),
                row["way"]
            );
        }
    }
}

#[test]
fn the_table_of_seven_houses_and_more_says_what_the_runs_found() {
    let table = values_md_section("big-starts");
    let rows = big();
    let mut seen = 0;
    for line in table.lines().filter(|l| l.starts_with("| Kalah(")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (variant, rules, value) = (cells[1], cells[2], cells[3]);
        let runs: Vec<&Value> = rows
            .iter()
            .filter(|r| r["variant"] == variant && r["rules"] == rules)
            .collect();
        assert!(runs.len() >= 2, "{line}: solved two ways");
        assert_eq!(
            value,
            value_and_best(&runs[0]["value"], &runs[0]["best"]),
            "{line}"
        );
        assert_eq!(cells[4], every_move(runs[0]), "{line}");
        seen += 1;
    }
    assert!(seen >= 8, "{seen} rows");
}

/// The rows of `data/values/mankalah-starts.jsonl` (`scripts/mankalah-values.py`): the starts of
/// `big()` under ManKalah's rules, one row a cell and way.
fn mankalah() -> Vec<Value> {
    jsonl("mankalah-starts.jsonl")
}

/// Each ManKalah row against the engine and the start's solve: every first sowing leaves the
/// position the rules engine reaches under `mankalah` rules (North to move, even after a sowing
/// into the store); a sowing that passes the turn under Kalah too is worth to North minus that
/// move's value in the start's solve of the same way, or (a move the solve only bounded) within
/// its bounds, narrowed by `--at-least` tests whose answers agree; and the values with and
/// without the pie rule are -min |w| and max -w over North's values w, the best sowings those
/// reaching them, with every w left bounded past them.
#[test]
fn every_mankalah_row_follows_from_its_sowings_and_the_start() {
    use kalah::Move;
    use kalah::play::{PlayRules, PlayState};
    let starts = big();
    let rows = mankalah();
    let mut cells: HashMap<String, Vec<&Value>> = HashMap::new();
    for row in &rows {
        let variant = row["variant"].as_str().expect("variant");
        cells.entry(variant.to_string()).or_default().push(row);
        let start = start_of(&starts, row);
        let m = row["houses"].as_u64().unwrap() as usize;
        let n = row["seeds"].as_u64().unwrap() as u32;
        let sowings = row["first_sowings"].as_array().expect("first_sowings");
        assert_eq!(sowings.len(), m, "{variant}: every first sowing");
        let mut w = Vec::new();
        let mut bounded = Vec::new();
        for (s, mv) in sowings
            .iter()
            .zip(start["moves"].as_array().expect("moves"))
        {
            let house = s["house"].as_u64().unwrap() as usize;
            assert_eq!(mv["house"], s["house"], "{variant}");
            let mut state = PlayState::start(m, n, PlayRules::ManKalah);
            let mut kalah_state = PlayState::start(m, n, PlayRules::Kalah(Rules::Standard));
            state.play(Move::new(house).expect("a house"));
            kalah_state.play(Move::new(house).expect("a house"));
            assert_eq!(
                state.to_setup().to_string(),
                format!("{} north", s["position"].as_str().expect("position")),
                "{variant}, house {house}"
            );
            let extra = kalah_state.to_move() == Some(kalah::Side::South);
            assert_eq!(s["kalah_extra_turn"], extra, "{variant}, house {house}");
            let north = s["north_value"].as_i64();
            let context = format!("{variant}, house {house}");
            let (lower, upper) = match north {
                Some(v) => (v, v),
                None => (
                    s["north_lower"].as_i64().unwrap(),
                    s["north_upper"].as_i64().unwrap(),
                ),
            };
            match (extra, mv["value"].as_i64()) {
                (true, _) => assert!(north.is_some(), "{context}: valued afresh"),
                (false, Some(v)) => assert_eq!(north, Some(-v), "{context}"),
                (false, None) => {
                    // Bounded by the start's solve, narrowed by tests that say so.
                    let start_lower = -mv["upper"].as_i64().unwrap();
                    let start_upper = -mv["lower"].as_i64().unwrap();
                    assert!(start_lower <= lower && upper <= start_upper, "{context}");
                    for t in s["tests"].as_array().expect("tests") {
                        let at_least = t["at_least"].as_i64().unwrap();
                        let holds = t["holds"].as_bool().unwrap();
                        let (l, u) = (t["lower"].as_i64().unwrap(), t["upper"].as_i64().unwrap());
                        assert_eq!(holds, l >= at_least, "{context}: {t}");
                        assert!(holds || u < at_least, "{context}: {t}");
                        assert!(l <= lower && upper <= u, "{context}: {t}");
                    }
                }
            }
            match north {
                Some(v) => w.push((house as u64, v)),
                None => bounded.push((lower, upper, context)),
            }
        }
        let pie = w.iter().map(|&(_, v)| -v.abs()).max().unwrap();
        let no_pie = w.iter().map(|&(_, v)| -v).max().unwrap();
        // A sowing left bounded is past the exact ones on both counts.
        for (lower, upper, context) in bounded {
            assert!(
                lower > -pie || upper < pie,
                "{context}: may tie the pie rule's best"
            );
            assert!(
                lower > -no_pie,
                "{context}: may tie the best without the pie rule"
            );
        }
        let houses = |f: &dyn Fn(i64) -> bool| -> Vec<u64> {
            w.iter().filter(|&&(_, v)| f(v)).map(|&(h, _)| h).collect()
        };
        assert_eq!(row["value_pie"], pie, "{variant}");
        assert_eq!(row["value_no_pie"], no_pie, "{variant}");
        assert_eq!(
            row["best_pie"],
            serde_json::json!(houses(&|v| -v.abs() == pie))
        );
        assert_eq!(
            row["best_no_pie"],
            serde_json::json!(houses(&|v| -v == no_pie))
        );
    }
    // Every standard cell of the starts, two ways that agree (a cell valued one way would not
    // be in the table: the_quick_mankalah_sowings_value_as_recorded_and_the_table_says_so).
    for start in starts.iter().filter(|s| s["rules"] == "standard") {
        let variant = start["variant"].as_str().expect("variant");
        let runs = cells.get(variant).map_or(0, Vec::len);
        assert!(runs >= 2, "{variant}: valued {runs} ways under ManKalah");
    }
    for (cell, runs) in &cells {
        for run in &runs[1..] {
            for field in ["value_pie", "best_pie", "value_no_pie", "best_no_pie"] {
                assert_eq!(run[field], runs[0][field], "{cell}: {field}");
            }
        }
    }
}

/// The quick sowings into the store valued again by the command recorded (levels built in a
/// second or none), and the table of other rule sets against the rows.
#[test]
fn the_quick_mankalah_sowings_value_as_recorded_and_the_table_says_so() {
    let starts = big();
    let rows = mankalah();
    let mut quick = 0;
    for row in &rows {
        // Not those that read levels built for minutes, or the levels on disk (a campaign's
        // cell), which a test does not have.
        let start = start_of(&starts, row);
        if start["db_build_ms"].as_u64().unwrap_or(0) > 1000 || start.get("ledger").is_some() {
            continue;
        }
        for s in row["first_sowings"].as_array().expect("first_sowings") {
            // The sowings into the store (the others were checked against the start's solve).
            let Some(command) = s["command"]
                .as_str()
                .filter(|_| s["kalah_extra_turn"] == true)
            else {
                continue;
            };
            if s["nodes"].as_u64().expect("nodes") > QUICK_NODES {
                continue;
            }
            let args: Vec<&str> = command
                .split(' ')
                .skip(1)
                .map(|a| a.trim_matches('\''))
                .collect();
            assert_eq!(json(&args)["value"], s["north_value"], "{command}");
            quick += 1;
        }
    }
    assert!(quick >= 5, "{quick} quick sowings");

    let table = values_md_section("rule-sets");
    let mut listed = Vec::new();
    for line in table.lines().filter(|l| l.starts_with("| Kalah(")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let valued: Vec<&Value> = rows.iter().filter(|r| r["variant"] == cells[1]).collect();
        if cells[2] == "—" {
            // A cell not valued under ManKalah two ways: its KGP winner only.
            assert!(valued.len() < 2, "{line}: valued two ways, but dashes");
            assert_eq!(cells[3..5], ["—", "—"], "{line}");
        } else {
            assert!(valued.len() >= 2, "{line}: valued one way only");
            let row = valued[0];
            assert_eq!(
                cells[2],
                value_and_best(&row["value_pie"], &row["best_pie"]),
                "{line}"
            );
            assert_eq!(
                cells[3],
                value_and_best(&row["value_no_pie"], &row["best_no_pie"]),
                "{line}"
            );
        }
        let start = starts
            .iter()
            .find(|s| s["variant"] == cells[1] && s["rules"] == "standard")
            .expect("the start");
        let v = start["value"].as_i64().unwrap();
        let winner = if v > 0 {
            "South wins"
        } else if v < 0 {
            "North wins"
        } else {
            "draw"
        };
        assert!(cells[5].starts_with(winner), "{line}");
        listed.push(cells[1].to_string());
    }
    // Every standard cell of the table of values, each once (each is solved two ways:
    // every_big_start_is_solved_two_ways_that_agree).
    let cells: Vec<&str> = starts
        .iter()
        .filter(|s| s["rules"] == "standard")
        .map(|s| s["variant"].as_str().expect("variant"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, cells, "the rows of the table of other rule sets");
    assert!(listed.len() >= 12, "{} rows", listed.len());
}

/// The campaigns of seven houses and more (`data/proofs/kalah-7-*.jsonl`, a third way beside
/// two solves, and `kalah-7-4-*.jsonl`, `kalah-8-3-standard.jsonl` and
/// `kalah-9-3-empty-capture.jsonl` and `kalah-12-2-empty-capture.jsonl`, the cell's way with its
/// certificate: `kalah prove --all-moves` on the levels on disk (none past 8 houses), every fact
/// under the bounds certified by other levels (by one thread past 8 houses), tests/book.rs)
/// prove the value and the first moves' values or bounds the table gives.
#[test]
fn the_campaigns_prove_what_the_table_says() {
    let starts = big();
    let mut seen = 0;
    for (ledger, variant, rules) in [
        (
            "data/proofs/kalah-7-3-standard.jsonl",
            "Kalah(7,3)",
            "standard",
        ),
        (
            "data/proofs/kalah-7-3-empty-capture.jsonl",
            "Kalah(7,3)",
            "empty-capture",
        ),
        (
            "data/proofs/kalah-7-4-standard.jsonl",
            "Kalah(7,4)",
            "standard",
        ),
        (
            "data/proofs/kalah-7-4-empty-capture.jsonl",
            "Kalah(7,4)",
            "empty-capture",
        ),
        (
            "data/proofs/kalah-8-3-standard.jsonl",
            "Kalah(8,3)",
            "standard",
        ),
        (
            "data/proofs/kalah-9-3-empty-capture.jsonl",
            "Kalah(9,3)",
            "empty-capture",
        ),
        (
            "data/proofs/kalah-12-2-empty-capture.jsonl",
            "Kalah(12,2)",
            "empty-capture",
        ),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(ledger);
        let status = json(&["prove", "--status", path.to_str().unwrap(), "--json"]);
        let start = starts
            .iter()
            .find(|s| s["variant"] == variant && s["rules"] == rules)
            .unwrap_or_else(|| panic!("{variant} {rules} in big-starts.jsonl"));
        assert_eq!(status["position"], start["position"], "{ledger}");
        assert_eq!(status["rules"], rules, "{ledger}");
        assert_eq!(status["value"]["exact"], start["value"], "{ledger}");
        let moves = status["moves"].as_array().expect("moves");
        let solved = start["moves"].as_array().expect("moves");
        assert_eq!(moves.len(), solved.len(), "{ledger}");
        for (m, s) in moves.iter().zip(solved) {
            assert_eq!(m["house"], s["house"], "{ledger}");
            assert_eq!(m["exact"], s["value"], "{ledger}, move {}", s["house"]);
            if s["value"].is_null() {
                // Bounded only: the bounds the table gives.
                assert_eq!(
                    (&m["lower"], &m["upper"]),
                    (&s["lower"], &s["upper"]),
                    "{ledger}, move {}",
                    s["house"]
                );
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 7);
}
