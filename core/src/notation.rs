//! Text forms: the KGP board literal (with the side to move) and move / turn notation.
//!
//! ```text
//! position := literal [ws side]          side := south | north | s | n   (any case)
//! literal  := "<" m "," south_store "," north_store "," s_1 .. s_m "," n_1 .. n_m ">"
//! turn     := house ("-" house)*         e.g. 3-6: house 3 ends in the store, then house 6
//! ```
//!
//! Rows are in their owner's sowing order: `s_1` is South's house 1 (far from South's store),
//! `n_1` is North's house 1, which faces `s_m`. Without a side, South is to move. Whitespace
//! around numbers is allowed. The side may also be given apart (the CLI's `--to-move`).

use std::fmt;
use std::str::FromStr;

use crate::position::{AnyPosition, Move, Setup};
use crate::rules::{MAX_HOUSES, MIN_HOUSES, Rules, Side};
use crate::text::quote;

/// Why a text is not a position. The texts it holds are the user's, as typed; its message
/// shows them quoted ([`crate::text::quote`]: escaped, cut), so it is one line of bounded
/// length whatever the input.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum NotationError {
    /// Nothing but whitespace.
    Empty,
    /// The text does not start with `<`.
    MissingOpen,
    /// No closing `>`.
    MissingClose,
    /// A field is empty (`<6,,0,...>`).
    EmptyField(String),
    /// A field is not a whole number.
    NotANumber(String, String),
    /// A field is negative.
    Negative(String, String),
    /// A field is too large to be a seed count.
    TooLarge(String, String),
    /// The count of numbers does not match m.
    WrongCount {
        /// m, the first number.
        houses: usize,
        /// 2m + 3.
        expected: usize,
        /// Numbers found.
        found: usize,
    },
    /// m is out of range, so the numbers cannot be split into rows.
    HousesOutOfRange(u64),
    /// What follows the literal is not a side.
    BadSide(String),
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::Empty => write!(
                f,
                "empty position (expected <m,south_store,north_store,s_1..s_m,n_1..n_m>)"
            ),
            NotationError::MissingOpen => write!(
                f,
                "a position starts with '<' (expected <m,south_store,north_store,s_1..s_m,n_1..n_m>)"
            ),
            NotationError::MissingClose => write!(f, "missing closing '>'"),
            NotationError::EmptyField(field) => write!(f, "{field} is empty"),
            NotationError::NotANumber(field, text) => {
                write!(f, "{field} is {}, not a whole number", quote(text))
            }
            NotationError::Negative(field, text) => {
                write!(f, "{field} is negative ({})", quote(text))
            }
            NotationError::TooLarge(field, text) => {
                write!(f, "{field} is too large ({})", quote(text))
            }
            NotationError::WrongCount {
                houses,
                expected,
                found,
            } => write!(
                f,
                "expected {expected} numbers for {houses} houses a side (m, 2 stores, 2×{houses} houses), found {found}"
            ),
            NotationError::HousesOutOfRange(m) => write!(
                f,
                "{m} houses a side is out of range (supported: {MIN_HOUSES} to {MAX_HOUSES})"
            ),
            NotationError::BadSide(text) => write!(
                f,
                "{} after the board is not a side to move (expected south or north)",
                quote(text)
            ),
        }
    }
}

impl std::error::Error for NotationError {}

/// The name of field `index` (0-based) of a literal with `m` houses a side, for messages.
fn field_name(index: usize, m: Option<usize>) -> String {
    match (index, m) {
        (0, _) => "m (the first number)".to_owned(),
        (1, _) => "South's store".to_owned(),
        (2, _) => "North's store".to_owned(),
        (i, Some(m)) if i < 3 + m => format!("South's house {}", i - 2),
        (i, Some(m)) if i < 3 + 2 * m => format!("North's house {}", i - 2 - m),
        (i, _) => format!("number {}", i + 1),
    }
}

fn parse_field(text: &str, index: usize, m: Option<usize>) -> Result<u64, NotationError> {
    let name = || field_name(index, m);
    if text.is_empty() {
        return Err(NotationError::EmptyField(name()));
    }
    let digits = text.strip_prefix('+').unwrap_or(text);
    if let Some(rest) = text.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            return if rest.bytes().all(|b| b == b'0') {
                Ok(0)
            } else {
                Err(NotationError::Negative(name(), text.to_owned()))
            };
        }
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NotationError::NotANumber(name(), text.to_owned()));
    }
    digits
        .parse::<u64>()
        .map_err(|_| NotationError::TooLarge(name(), text.to_owned()))
}

impl FromStr for Setup {
    type Err = NotationError;

    fn from_str(text: &str) -> Result<Setup, NotationError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(NotationError::Empty);
        }
        let inner = text.strip_prefix('<').ok_or(NotationError::MissingOpen)?;
        let (inner, rest) = inner.split_once('>').ok_or(NotationError::MissingClose)?;
        let rest = rest.trim();
        let to_move = if rest.is_empty() {
            None
        } else {
            Some(
                rest.parse::<Side>()
                    .map_err(|_| NotationError::BadSide(rest.to_owned()))?,
            )
        };

        let fields: Vec<&str> = inner.split(',').map(str::trim).collect();
        let houses = parse_field(fields[0], 0, None)?;
        let m = usize::try_from(houses)
            .ok()
            .filter(|m| (MIN_HOUSES..=MAX_HOUSES).contains(m));
        let numbers = fields
            .iter()
            .enumerate()
            .map(|(i, f)| parse_field(f, i, m))
            .collect::<Result<Vec<u64>, _>>()?;
        let Some(m) = m else {
            return Err(NotationError::HousesOutOfRange(houses));
        };
        if numbers.len() != 2 * m + 3 {
            return Err(NotationError::WrongCount {
                houses: m,
                expected: 2 * m + 3,
                found: numbers.len(),
            });
        }
        Ok(Setup {
            houses: m,
            stores: [numbers[1], numbers[2]],
            south: numbers[3..3 + m].to_vec(),
            north: numbers[3 + m..].to_vec(),
            to_move,
        })
    }
}

impl fmt::Display for Setup {
    /// The KGP literal, then ` north` if North is to move (South is the default).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{},{},{}", self.houses, self.stores[0], self.stores[1])?;
        for s in self.south.iter().chain(&self.north) {
            write!(f, ",{s}")?;
        }
        f.write_str(">")?;
        if self.to_move == Some(Side::North) {
            f.write_str(" north")?;
        }
        Ok(())
    }
}

/// Why a text is not a move or a turn: the text, as typed (its message shows it quoted).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseMoveError(pub String);

impl fmt::Display for ParseMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not a move (expected house numbers 1 to {MAX_HOUSES} joined by '-', e.g. 3-6)",
            quote(&self.0)
        )
    }
}

impl std::error::Error for ParseMoveError {}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.house())
    }
}

impl FromStr for Move {
    type Err = ParseMoveError;

    fn from_str(s: &str) -> Result<Move, ParseMoveError> {
        let t = s.trim();
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseMoveError(s.to_owned()));
        }
        t.parse::<usize>()
            .ok()
            .and_then(Move::new)
            .ok_or_else(|| ParseMoveError(s.to_owned()))
    }
}

/// A whole turn: one sowing, then one more for each extra turn earned (`3-6`).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Turn(pub Vec<Move>);

impl fmt::Display for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, mv) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("-")?;
            }
            write!(f, "{mv}")?;
        }
        Ok(())
    }
}

impl FromStr for Turn {
    type Err = ParseMoveError;

    fn from_str(s: &str) -> Result<Turn, ParseMoveError> {
        s.split('-')
            .map(|part| {
                part.parse::<Move>()
                    .map_err(|_| ParseMoveError(s.to_owned()))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Turn)
    }
}

/// Parses `text`, a position as a person types it, into a validated position under `rules`:
/// a KGP literal, or its bare list of numbers (the brackets need quoting in every shell), with
/// `to_move` given apart by the option or field named `given` (the name an error about a
/// disagreement shows). The error is one line that shows `text` quoted, and says what to fix
/// (numbers separated by spaces: use commas).
pub fn parse_position(
    text: &str,
    to_move: Option<Side>,
    given: &str,
    rules: Rules,
) -> Result<AnyPosition, String> {
    let trimmed = text.trim();
    // Allow the bare list of numbers: the brackets need quoting in every shell.
    let literal = if !trimmed.contains('<') && !trimmed.contains('>') && !trimmed.is_empty() {
        match trimmed.split_once(char::is_whitespace) {
            Some((numbers, side)) => format!("<{numbers}> {side}"),
            None => format!("<{trimmed}>"),
        }
    } else {
        trimmed.to_owned()
    };
    let bad = |why: String| format!("invalid position {}: {why}", quote(text));
    let mut setup: Setup = literal.parse().map_err(|e| {
        // Numbers separated by spaces, not commas: say so rather than "not a side to move".
        let words: Vec<&str> = trimmed
            .split_whitespace()
            .map(|w| w.trim_matches(['<', '>']))
            .filter(|w| !w.is_empty())
            .collect();
        let digits = |w: &&str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
        let side = words
            .last()
            .filter(|w| w.parse::<Side>().is_ok())
            .map(|w| format!(" {w}"));
        let count = words.len() - usize::from(side.is_some());
        let numbers = !trimmed.contains(',') && count >= 4 && words[..count].iter().all(digits);
        if numbers {
            bad(format!(
                "separate the numbers with commas, not spaces: '<{}>{}'",
                words[..count].join(","),
                side.unwrap_or_default()
            ))
        } else {
            bad(format!("{e}"))
        }
    })?;
    match (setup.to_move, to_move) {
        (Some(a), Some(b)) if a != b => {
            return Err(bad(format!(
                "the literal says {a} to move but {given} says {b}"
            )));
        }
        (None, Some(b)) => setup.to_move = Some(b),
        _ => {}
    }
    AnyPosition::from_setup(&setup, rules).map_err(|e| bad(format!("{e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kalah_6_4_start() {
        let setup: Setup = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>".parse().unwrap();
        assert_eq!(setup.houses, 6);
        assert_eq!(setup.south, vec![4; 6]);
        assert_eq!(setup.to_move, None);
        assert_eq!(setup.to_string(), "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>");
    }

    #[test]
    fn side_suffix_and_spaces() {
        let setup: Setup = " < 2, 1, 0, 3, 0, 0, 2 >  North ".parse().unwrap();
        assert_eq!(setup.to_move, Some(Side::North));
        assert_eq!(setup.to_string(), "<2,1,0,3,0,0,2> north");
    }

    #[test]
    fn each_defect_is_named() {
        let err = |s: &str| s.parse::<Setup>().unwrap_err().to_string();
        assert!(err("").contains("empty"));
        assert!(err("6,0,0>").contains("starts with '<'"));
        assert!(err("<1,0,0,1,1").contains("closing"));
        assert!(err("<2,0,0,1,x,1,1>").contains("South's house 2 is 'x'"));
        assert!(err("<2,0,0,1,1,1,-1>").contains("North's house 2 is negative"));
        assert!(err("<2,0,0,1,1,1,99999999999999999999999>").contains("too large"));
        assert!(err("<2,0,0,1,1,1>").contains("expected 7 numbers for 2 houses"));
        assert!(err("<13,0,0,1>").contains("out of range"));
        assert!(err("<0,0,0>").contains("out of range"));
        assert!(err("<1,0,0,1,1> east").contains("not a side"));
        assert!(err("<1,,0,1,1>").contains("South's store is empty"));
    }

    #[test]
    fn turns_round_trip() {
        let turn: Turn = "3-6-1".parse().unwrap();
        assert_eq!(turn.0.len(), 3);
        assert_eq!(turn.to_string(), "3-6-1");
        assert!("3--6".parse::<Turn>().is_err());
        assert!("0".parse::<Turn>().is_err());
        assert!("13".parse::<Turn>().is_err());
        assert!("".parse::<Turn>().is_err());
    }
}
