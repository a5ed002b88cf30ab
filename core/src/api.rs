//! The answer to a position as JSON, the explorer's language: the bodies of `kalah serve`'s
//! `/api/v1/position` and `/api/v1/start`, and the same bodies from the static explorer's
//! WebAssembly module (web/), so that both pages read one format and say the same things.
//!
//! Everything here is made from [`crate::answer`]'s [`Answer`]; the front ends only carry it
//! (HTTP, or a Web Worker's messages). A body is one of:
//!
//! - 200: the position (`houses`, `rules`, `position`, `to_move`, `variant` and `seeds` of a
//!   start), `value` (null unless exact), `lower`, `upper`, `certified`, `best`, `maybe_best`,
//!   each legal move best first ([`move_json`] and `after`), `pv`, `source`, `nodes`,
//!   `budget_ms`, `db_max_seeds`, and `not_searched` where a search was skipped;
//! - 422: `error`, `reason` (`cost`: the cost model puts the search past [`MODEL_SLACK`]
//!   budgets; `budget`: it did not finish within one), `budget_ms`, `board` (the 200 body
//!   without a value), `not_searched`, `ledger_bounds` and `claims` where known;
//! - 400: `error` (`<field>: why`) and `field`, for a query that asks nothing valid.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::answer::{Answer, MoveAnswer, NotDone, Source};
use crate::book::Claimed;
use crate::db::Tablebase;
use crate::{AnyPosition, Lanes, Position, Rules, Side, Variant, VariantError};

/// The longest query string taken, in bytes (a 12-house literal needs about 200).
pub const MAX_QUERY: usize = 2048;

/// How many times the budget a search may take by the cost model and still be started: the
/// model is off by ten either way, so a search it puts past ten budgets would not finish in
/// one.
pub const MODEL_SLACK: f64 = 10.0;

/// A query that asks nothing valid: its status and JSON body.
#[derive(Debug)]
pub struct Failure {
    /// The HTTP status (400 for bad input).
    pub status: u16,
    /// `{"error": ..., "field": ...}`.
    pub body: Value,
}

impl Failure {
    /// Bad input, naming the field (400).
    pub fn field(field: &str, why: impl std::fmt::Display) -> Failure {
        Failure {
            status: 400,
            body: json!({"error": format!("{field}: {why}"), "field": field}),
        }
    }
}

/// The position asked by `?position=LITERAL&rules=R&to_move=SIDE`.
pub fn position_query(query: Option<&str>) -> Result<AnyPosition, Failure> {
    let f = fields(query, &["position", "rules", "to_move"])?;
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
    crate::notation::parse_position(text, to_move, "to_move", rules)
        .map_err(|e| Failure::field("position", e))
}

/// The game asked by `?houses=M&seeds=N&rules=R`.
pub fn start_query(query: Option<&str>) -> Result<Variant, Failure> {
    let f = fields(query, &["houses", "seeds", "rules"])?;
    let rules = rules(&f)?;
    let number = |field: &str, example: &str| -> Result<u64, Failure> {
        let text = f
            .get(field)
            .ok_or_else(|| Failure::field(field, format!("missing (e.g. {field}={example})")))?;
        text.parse::<u64>().map_err(|_| {
            Failure::field(
                field,
                format!("expected a whole number, got {}", crate::text::quote(text)),
            )
        })
    };
    let houses = number("houses", "6")?;
    let seeds = number("seeds", "4")?;
    let houses = usize::try_from(houses).unwrap_or(usize::MAX);
    Variant::new(houses, seeds, rules).map_err(|e| {
        let field = match e {
            VariantError::HousesOutOfRange(_) => "houses",
            _ => "seeds",
        };
        Failure::field(field, e)
    })
}

/// The query's fields: each at most once, each one of `known`, the query at most
/// [`MAX_QUERY`] bytes.
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
                &crate::text::escape_within(&name, 40),
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
                    crate::text::quote(text)
                ),
            )
        }),
    }
}

/// The status and body of an answer: 200 with the value, every move's value or bounds (best
/// first) and what was not done; 422 without the value (the search past the budget, or not
/// started: the cost model puts it past [`MODEL_SLACK`] budgets), the board and its bounds.
/// `how` tells a person how to raise `budget` (the front end's own control).
pub fn reply<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    a: &Answer,
    db: Option<&Tablebase>,
    budget: Duration,
    how: &str,
) -> (u16, Value) {
    let mut out = board_json(p, variant, Some(a), db);
    out["source"] = json!(a.source.as_str());
    out["nodes"] = json!(a.searched.map_or(0, |s| s.nodes));
    out["budget_ms"] = json!(budget.as_millis() as u64);
    if a.source == Source::Ledger {
        out["pv_complete"] = json!(a.pv_complete);
    }
    let why = not_searched(a, budget, how);
    if let Some(why) = &why {
        out["not_searched"] = why.clone();
    }
    if a.exact().is_some() {
        return (200, out);
    }
    let budget_ms = budget.as_millis();
    let (reason, error) = match a.not_done {
        Some(NotDone::Cost { .. }) => (
            "cost",
            format!(
                "beyond the databases, and the cost model puts its search past {MODEL_SLACK} \
                 times the {budget_ms} ms budget: not searched"
            ),
        ),
        _ => (
            "budget",
            format!(
                "beyond the databases, and its search did not finish within the {budget_ms} ms \
                 budget"
            ),
        ),
    };
    let mut body = json!({
        "error": error,
        "reason": reason,
        "budget_ms": budget_ms as u64,
        "board": out,
    });
    if let Some(why) = why {
        body["not_searched"] = why;
    }
    // What the ledgers prove is still worth showing.
    if let Some(b) = a.ledger_bounds {
        body["ledger_bounds"] = json!({"lower": b.lower, "upper": b.upper});
    }
    // What unchecked facts claim, marked as such: never a value.
    if !a.claims.is_empty() {
        body["claims"] = a.claims.iter().map(|c| claim_json(c, None)).collect();
    }
    (422, body)
}

/// Why a search was not done (or not finished), as JSON: `reason` (`cost`, `budget`),
/// `estimated_seconds` and `estimated_nodes` (the cost model's figure, for `cost`),
/// `budget_ms`, and `how` to raise the budget.
fn not_searched(a: &Answer, budget: Duration, how: &str) -> Option<Value> {
    let budget_ms = budget.as_millis() as u64;
    match a.not_done? {
        NotDone::Cost { cost, .. } => Some(json!({
            "reason": "cost",
            "estimated_seconds": cost.seconds.min(1e15).round() as u64,
            "estimated_nodes": cost.nodes.min(1e18).round() as u64,
            "budget_ms": budget_ms,
            "how": how,
        })),
        NotDone::OutOfTime => Some(json!({
            "reason": "budget",
            "budget_ms": budget_ms,
            "how": how,
        })),
        _ => None,
    }
}

/// `1 s`, `0.1 s`, `60 s`.
pub fn seconds_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// The position as an answer shows it: the header, `variant` and `seeds` of a start, the value
/// (null unless exact) with its `lower`, `upper` and `certified`, `best` and `maybe_best`, each
/// legal move best first (`house`, `value` or null, `lower`, `upper`, `source`, `certified`,
/// `after`, `extra_turn`), the perfect line as far as known, and `db_max_seeds`, the top level
/// read for its board and rules (null for none). `answer` `None`: nothing known, every move's
/// `value` null.
pub fn board_json<L: Lanes>(
    p: &Position<L>,
    variant: Option<Variant>,
    answer: Option<&Answer>,
    db: Option<&Tablebase>,
) -> Value {
    let mut out = header(p);
    out["db_max_seeds"] = json!(db.map(Tablebase::max_level));
    out["variant"] = json!(variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds())));
    if let Some(v) = variant {
        out["seeds"] = v.seeds().into();
    }
    let Some(a) = answer else {
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
        return out;
    };
    add_bounds_fields(&mut out, a);
    let mut moves = a.moves.clone();
    moves.sort_by_key(|m| (-m.bounds.upper, -m.bounds.lower, m.mv.house()));
    out["moves"] = moves
        .iter()
        .map(|m| {
            let mut json = move_json(m);
            json["after"] = json!(p.play_unchecked(m.mv).0.to_string());
            json
        })
        .collect();
    out["pv"] = json!(a.pv.iter().map(|t| t.to_string()).collect::<Vec<_>>());
    out
}

/// The fields every JSON answer about a position starts with: `houses`, `rules`, `position`
/// (its KGP literal) and `to_move`.
pub fn header<L: Lanes>(p: &Position<L>) -> Value {
    json!({
        "houses": p.houses_per_side(),
        "rules": p.rules().as_str(),
        "position": p.to_string(),
        "to_move": side_json(p.to_move()),
    })
}

/// `"south"`, `"north"` or JSON null.
pub fn side_json(side: Option<Side>) -> Value {
    side.map_or(Value::Null, |s| s.as_str().into())
}

/// The value of `answer` as JSON: `value` (null unless exact), `lower`, `upper`, `certified`,
/// and the moves proven `best` and those that may be (`maybe_best`).
pub fn add_bounds_fields(out: &mut Value, answer: &Answer) {
    out["value"] = json!(answer.exact());
    out["lower"] = answer.value.lower.into();
    out["upper"] = answer.value.upper.into();
    out["certified"] = json!(answer.certified);
    out["best"] = answer.best().iter().map(|m| m.house()).collect();
    out["maybe_best"] = answer.maybe_best().iter().map(|m| m.house()).collect();
}

/// A move as JSON: `house`, `value` (null unless exact), `lower`, `upper`, `source`,
/// `certified`, `extra_turn`.
pub fn move_json(m: &MoveAnswer) -> Value {
    json!({
        "house": m.mv.house(),
        "value": m.value(),
        "lower": m.bounds.lower,
        "upper": m.bounds.upper,
        "source": m.source.as_str(),
        "certified": m.certified,
        "extra_turn": m.extra_turn,
    })
}

/// A claim as JSON, and whether `value` (if known) agrees with it.
pub fn claim_json(c: &Claimed, value: Option<i32>) -> Value {
    json!({
        "at": c.at.to_string(),
        "lower": c.bounds.lower,
        "upper": c.bounds.upper,
        "checked": false,
        "holds": value.map(|v| c.holds(v)),
        "disagrees_with": c.disputed_by.as_ref().map(|by| by.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_query_names_the_bad_field() {
        let e = start_query(Some("houses=6&seeds=x")).unwrap_err();
        assert_eq!(e.status, 400);
        assert_eq!(e.body["field"], "seeds");
        let e = start_query(Some("houses=6&seeds=4&colour=red")).unwrap_err();
        assert!(
            e.body["error"]
                .as_str()
                .unwrap()
                .contains("unknown parameter")
        );
        assert_eq!(
            start_query(Some("houses=6&seeds=4")).unwrap(),
            Variant::new(6, 4, Rules::Standard).unwrap()
        );
    }

    #[test]
    fn position_query_refuses_a_wrong_literal_saying_why() {
        let e = position_query(Some("position=%3C4%2C0%2C0%2C4%3E")).unwrap_err();
        assert_eq!(e.body["field"], "position");
        let text = e.body["error"].as_str().unwrap();
        assert!(text.starts_with("position: invalid position"), "{text}");
    }
}
