//! A fact of a proof: bounds on the exact value of one position, and what proving them cost.
//!
//! One fact is one line of a ledger (see [`crate::prove::ledger`]), a JSON object:
//!
//! ```text
//! {"fact":1,"houses":6,"rules":"standard","position":"<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>",
//!  "lower":2,"upper":72,"nodes":81234567,"cpu_s":41.2,
//!  "levels":{"top":32,"rules":"standard"},"kalah":"0.1.0",
//!  "root":"<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>","budget":100000000,"over_budget":false}
//! ```
//!
//! - `fact`: the format's version, 1.
//! - `houses`, `rules`, `position`: the position (a KGP literal, ` north` after it when North is
//!   to move) and its capture rule.
//! - `lower`, `upper`: lower <= value <= upper, where the value is the final store difference
//!   for the side to move under perfect play, stores included (as everywhere in kalah). Equal
//!   when the value is exact. A bound that says nothing is the widest the seeds allow.
//! - `nodes`, `cpu_s`: the search nodes and the CPU seconds (all threads) the fact cost.
//! - `levels`: the endgame levels the search read (`top`: null for none).
//! - `kalah`: the version that proved it. `root`: the campaign it was proven for (information
//!   only: a fact holds whatever the root).
//! - `budget`, `over_budget`: the node budget of the test; `over_budget: true` when the test
//!   ran out of it, so the bounds are the widest and the position was split into its moves
//!   instead (see [`crate::prove::tree`]).
//! - `within` (only when present): the position of a test that ran out of its budget, in
//!   which this fact's position was searched to the end: a subtree the test finished, kept
//!   (see [`crate::search::harvest`]). Its `nodes` are that subtree's; the test's own fact
//!   counts the rest.
//! - `threads` (only when present): the search threads that proved it (facts written before
//!   kalah recorded them have none). A check by one thread (`--by serial`) is another path
//!   only for a fact of more.
//! - `continues` (only when present): the position of the test this one took up (a test of
//!   the same worker, just before, that ran out of its budget while its search was in this
//!   position, one of its moves): the table kept what that search had done here, and this
//!   test went on from there.
//!
//! Facts depend on nothing but the position: not on the order of the lines, the machine or the
//! worker. Two facts about the same board (the houses; the stores only shift the value) hold
//! together exactly when their bounds, less the stores, overlap.

use std::fmt;

use serde_json::{Value, json};

use crate::board::Board;
use crate::lanes::{Lanes, Narrow};
use crate::position::{Position, Setup};
use crate::rules::Rules;
use crate::search::negamax::f_bounds;

/// The longest ledger line read, in bytes: a fact is about 300.
pub const MAX_LINE: usize = 4096;

/// The version of the fact format written.
pub const FORMAT: u64 = 1;

/// The most search nodes a line may say a fact or a check cost, or a test's budget (2^53,
/// exact as a JSON number: some 100 days of a search at 10^9 nodes a second; a campaign's
/// budget is at most 10^15). A line that says more is damage: every sum of them stays far
/// within a u64 (and saturates past it, whatever the files hold).
pub const MAX_NODES: u64 = 1 << 53;

/// The most CPU seconds a line may say (10^10: three centuries of one core, years of a
/// thousand).
pub const MAX_CPU_S: f64 = 1e10;

/// The sum of node counts, saturating: whatever the files hold, a total stays a count.
pub fn sum_nodes(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

/// `v` as a count of nodes, if it is one within [`MAX_NODES`].
pub(crate) fn nodes_of(v: &Value) -> Option<u64> {
    v.as_u64().filter(|&n| n <= MAX_NODES)
}

/// `v` as CPU seconds, if it is a number of them within [`MAX_CPU_S`].
pub(crate) fn cpu_s_of(v: &Value) -> Option<f64> {
    v.as_f64()
        .filter(|s| s.is_finite() && (0.0..=MAX_CPU_S).contains(s))
}

/// Bounds on f, the future store difference of a board for its side to move (the value less
/// the stores): `lower <= f <= upper`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Bounds {
    /// f >= lower.
    pub lower: i32,
    /// f <= upper.
    pub upper: i32,
}

impl Bounds {
    /// The widest bounds of a board with `seeds` seeds under `rules` (what the seeds allow).
    pub fn widest(seeds: u32, rules: Rules) -> Bounds {
        let (lower, upper) = f_bounds(seeds, rules);
        Bounds { lower, upper }
    }

    /// The exact value `f`.
    pub fn exact(f: i32) -> Bounds {
        Bounds { lower: f, upper: f }
    }

    /// The same bounds for the other side: each negated, lower and upper swapped.
    pub fn negated(self) -> Bounds {
        Bounds {
            lower: -self.upper,
            upper: -self.lower,
        }
    }

    /// Whether the value is known.
    pub fn is_exact(self) -> bool {
        self.lower == self.upper
    }

    /// Both bounds, kept to f's parity (f has the parity of the seeds on the board), and
    /// within what `seeds` seeds allow.
    pub fn fitted(self, seeds: u32, rules: Rules) -> Bounds {
        let widest = Bounds::widest(seeds, rules);
        let parity = (seeds % 2) as i32;
        let mut lower = self.lower.max(widest.lower);
        let mut upper = self.upper.min(widest.upper);
        if (lower - parity).rem_euclid(2) != 0 {
            lower += 1;
        }
        if (upper - parity).rem_euclid(2) != 0 {
            upper -= 1;
        }
        Bounds { lower, upper }
    }

    /// Both sets of bounds at once, if they overlap.
    pub fn meet(self, other: Bounds) -> Option<Bounds> {
        let b = Bounds {
            lower: self.lower.max(other.lower),
            upper: self.upper.min(other.upper),
        };
        (b.lower <= b.upper).then_some(b)
    }
}

/// One fact: bounds on the value of a position, and its cost (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Fact<L: Lanes = Narrow> {
    /// The position, with its stores and side to move.
    pub position: Position<L>,
    /// lower <= value (stores included, for the side to move).
    pub lower: i32,
    /// value <= upper.
    pub upper: i32,
    /// Search nodes spent.
    pub nodes: u64,
    /// CPU seconds spent (all threads).
    pub cpu_s: f64,
    /// Top level of the endgame databases read, if any.
    pub top: Option<u32>,
    /// The kalah version that proved it.
    pub kalah: String,
    /// The root of the campaign it was proven for, as a literal.
    pub root: Option<String>,
    /// The node budget of the test, if it had one.
    pub budget: Option<u64>,
    /// The test ran out of its budget (the bounds are then the widest).
    pub over_budget: bool,
    /// The position of the test (one that ran out of its budget) inside which this fact was
    /// proven, if it was harvested from one.
    pub within: Option<String>,
    /// The test this one took up, if any: the position of a test of the same worker, just
    /// before, that ran out of its budget while its search was in this fact's position (one
    /// of its moves), whose work there the table kept for this test.
    pub continues: Option<String>,
    /// The search threads that proved it, if recorded.
    pub threads: Option<u32>,
}

impl<L: Lanes> Fact<L> {
    /// The bounds on f (the value less the store difference), fitted to f's parity and range.
    pub fn f_bounds(&self) -> Bounds {
        let stores = self.position.store_difference();
        let board = self.position.board();
        Bounds {
            lower: self.lower - stores,
            upper: self.upper - stores,
        }
        .fitted(board.seeds(), self.position.rules())
    }

    /// The board the fact is about.
    pub fn board(&self) -> Board<L> {
        self.position.board()
    }

    /// Whether the bounds say more than the seeds alone.
    pub fn is_informative(&self) -> bool {
        let board = self.board();
        let widest = Bounds::widest(board.seeds(), self.position.rules());
        let f = self.f_bounds();
        !board.is_finished() && (f.lower > widest.lower || f.upper < widest.upper)
    }

    /// The JSON line (without its newline).
    pub fn to_line(&self) -> String {
        let mut line = json!({
            "fact": FORMAT,
            "houses": self.position.houses_per_side(),
            "rules": self.position.rules().as_str(),
            "position": self.position.to_string(),
            "lower": self.lower,
            "upper": self.upper,
            "nodes": self.nodes,
            "cpu_s": (self.cpu_s * 1000.0).round() / 1000.0,
            "levels": {"top": self.top, "rules": self.position.rules().as_str()},
            "kalah": self.kalah,
            "root": self.root,
            "budget": self.budget,
            "over_budget": self.over_budget,
        });
        if let Some(within) = &self.within {
            line["within"] = json!(within);
        }
        if let Some(test) = &self.continues {
            line["continues"] = json!(test);
        }
        if let Some(threads) = self.threads {
            line["threads"] = json!(threads);
        }
        line.to_string()
    }

    /// Reads one ledger line; the error says what is wrong with it.
    pub fn from_line(line: &str) -> Result<Fact<L>, FactError> {
        if line.len() > MAX_LINE {
            return Err(FactError(format!(
                "a line of {} bytes (at most {MAX_LINE})",
                line.len()
            )));
        }
        let value: Value =
            serde_json::from_str(line).map_err(|e| FactError(format!("not a JSON object: {e}")))?;
        let Value::Object(map) = value else {
            return Err(FactError("not a JSON object".into()));
        };
        let field = |name: &str| {
            map.get(name)
                .ok_or_else(|| FactError(format!("no field `{name}`")))
        };
        let int = |name: &str| -> Result<i64, FactError> {
            field(name)?
                .as_i64()
                .ok_or_else(|| FactError(format!("`{name}` is not an integer")))
        };
        let text = |name: &str| -> Result<&str, FactError> {
            field(name)?
                .as_str()
                .ok_or_else(|| FactError(format!("`{name}` is not a string")))
        };
        let format = int("fact")?;
        if format != FORMAT as i64 {
            return Err(FactError(format!(
                "fact format {format}: this kalah reads format {FORMAT}"
            )));
        }
        let rules: Rules = text("rules")?
            .parse()
            .map_err(|e| FactError(format!("`rules`: {e}")))?;
        let literal = text("position")?;
        let setup: Setup = literal
            .parse()
            .map_err(|e| FactError(format!("`position`: {e}")))?;
        let position = Position::<L>::from_setup(&setup, rules)
            .map_err(|e| FactError(format!("`position`: {e}")))?;
        let houses = int("houses")?;
        if houses != position.houses_per_side() as i64 {
            return Err(FactError(format!(
                "`houses` is {houses} but the position has {}",
                position.houses_per_side()
            )));
        }
        let bound = |name: &str| -> Result<i32, FactError> {
            i32::try_from(int(name)?)
                .ok()
                .filter(|v| v.unsigned_abs() <= crate::rules::MAX_SEEDS)
                .ok_or_else(|| FactError(format!("`{name}` is out of range")))
        };
        let (lower, upper) = (bound("lower")?, bound("upper")?);
        if lower > upper {
            return Err(FactError(format!(
                "`lower` {lower} is above `upper` {upper}"
            )));
        }
        let nodes = nodes_of(field("nodes")?)
            .ok_or_else(|| FactError(format!("`nodes` is not a count of at most {MAX_NODES}")))?;
        let cpu_s = cpu_s_of(field("cpu_s")?).ok_or_else(|| {
            FactError(format!(
                "`cpu_s` is not a number of seconds from 0 to {MAX_CPU_S:e}"
            ))
        })?;
        let levels = field("levels")?;
        match levels.get("rules").map(Value::as_str) {
            Some(Some(r)) if r == rules.as_str() => {}
            None => {}
            _ => {
                return Err(FactError(format!(
                    "`levels.rules` is not the position's rules, {rules}"
                )));
            }
        }
        let top = match levels.get("top") {
            Some(Value::Null) | None => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|k| u32::try_from(k).ok())
                    .filter(|&k| k <= crate::db::MAX_LEVEL)
                    .ok_or_else(|| FactError("`levels.top` is not a level".into()))?,
            ),
        };
        let optional_text = |name: &str| match map.get(name) {
            Some(Value::String(s)) if s.len() <= 200 => Ok(Some(s.clone())),
            Some(Value::Null) | None => Ok(None),
            Some(_) => Err(FactError(format!("`{name}` is not a short string"))),
        };
        let kalah = optional_text("kalah")?.unwrap_or_default();
        let root = optional_text("root")?;
        let within = optional_text("within")?;
        let budget = match map.get("budget") {
            Some(Value::Null) | None => None,
            Some(v) => Some(nodes_of(v).ok_or_else(|| {
                FactError(format!("`budget` is not a count of at most {MAX_NODES}"))
            })?),
        };
        let continues = optional_text("continues")?;
        let threads = match map.get("threads") {
            Some(Value::Null) | None => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|t| u32::try_from(t).ok())
                    .filter(|&t| (1..=4096).contains(&t))
                    .ok_or_else(|| FactError("`threads` is not a count of threads".into()))?,
            ),
        };
        let over_budget = match map.get("over_budget") {
            Some(Value::Bool(b)) => *b,
            None => false,
            Some(_) => return Err(FactError("`over_budget` is not true or false".into())),
        };
        Ok(Fact {
            position,
            lower,
            upper,
            nodes,
            cpu_s,
            top,
            kalah,
            root,
            budget,
            over_budget,
            within,
            continues,
            threads,
        })
    }
}

/// What is wrong with a ledger line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactError(pub String);

impl fmt::Display for FactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FactError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact() -> Fact {
        let setup: Setup = "<4,3,1,0,2,1,3,1,0,2,2> north".parse().unwrap();
        Fact {
            position: Position::from_setup(&setup, Rules::Standard).unwrap(),
            lower: -4,
            upper: 6,
            nodes: 1234,
            cpu_s: 0.25,
            top: Some(8),
            kalah: "0.1.0".into(),
            root: Some("<4,0,0,3,3,3,3,3,3,3,3>".into()),
            budget: Some(10_000),
            over_budget: false,
            within: None,
            continues: None,
            threads: Some(2),
        }
    }

    #[test]
    fn a_fact_reads_back_as_written() {
        let f = fact();
        assert_eq!(Fact::<Narrow>::from_line(&f.to_line()).unwrap(), f);
        // North to move with stores 3 (South) and 1 (North): f = value - (1 - 3), kept odd (11
        // seeds on the board).
        assert_eq!(
            f.f_bounds(),
            Bounds {
                lower: -1,
                upper: 7
            }
        );
    }

    #[test]
    fn cut_or_garbled_lines_are_errors() {
        let line = fact().to_line();
        for cut in [1, 10, line.len() / 2, line.len() - 1] {
            assert!(
                Fact::<Narrow>::from_line(&line[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        for (from, to) in [
            ("\"lower\":-4", "\"lower\":7"),
            ("\"fact\":1", "\"fact\":2"),
            ("\"houses\":4", "\"houses\":5"),
            ("\"rules\":\"standard\"", "\"rules\":\"awari\""),
            ("\"nodes\":1234", "\"nodes\":-1"),
            ("\"nodes\":1234", "\"nodes\":9007199254740993"),
            ("\"cpu_s\":0.25", "\"cpu_s\":1e20"),
            ("\"cpu_s\":0.25", "\"cpu_s\":-0.5"),
            ("\"budget\":10000", "\"budget\":18446744073709551615"),
            ("\"top\":8", "\"top\":4294967295"),
            ("<4,3,1,", "<4,3,"),
        ] {
            let bad = line.replacen(from, to, 1);
            assert_ne!(bad, line);
            assert!(Fact::<Narrow>::from_line(&bad).is_err(), "{bad}");
        }
        assert!(Fact::<Narrow>::from_line(&"x".repeat(MAX_LINE + 1)).is_err());
    }

    #[test]
    fn bounds_keep_the_parity_of_the_seeds() {
        // 5 seeds: f is odd and within [-5, 5].
        let b = Bounds {
            lower: -8,
            upper: 4,
        };
        assert_eq!(
            b.fitted(5, Rules::Standard),
            Bounds {
                lower: -5,
                upper: 3
            }
        );
        assert_eq!(Bounds::exact(2).meet(Bounds::exact(4)), None);
    }
}
