//! Plain-text game records: a small header, then one turn per line.
//!
//! ```text
//! # kalah game record
//! variant: Kalah(6,4)
//! rules: standard
//! pie: no
//! south: perfect
//! north: random:7
//! date: 2026-11-21 14:50 UTC
//! opening: 2
//! result: South 30, North 18: South wins by 12
//!
//! south 3-6
//! north 2
//! south 1
//! ```
//!
//! Header lines are `key: value`; `variant` and `rules` are required, the others optional
//! (`pie` defaults to `no`; `result` is informational: the moves decide; `opening: N` says
//! that the first N actions were a random opening made for both players, as `kalah match`
//! plays them, not a player's choice). Each field at most once. A turn line is the
//! side that moves and its sowings joined by `-` (extra turns); the pie rule's swap is a line
//! of its own, `north swap`, after which North (now the other player) moves again. Any split
//! of a turn over several lines is accepted, as long as each line names the side to move.
//! Blank lines and lines starting with `#` are ignored.

use std::fmt;

use crate::play::game::{Action, Game, GameRules};
use crate::play::state::PlayRules;
use crate::rules::{MAX_HOUSES, MAX_SEEDS, Side};
use crate::text::quote;

/// The largest record file read, in bytes: 4 MiB. A record takes about 9 bytes a turn, so
/// this is some 400 000 turns, far more than a game of any supported variant plays (measured
/// with random players: about 40 turns for Kalah(6,4), 1 000 for Kalah(12,100), 2 800 or 24 KB
/// for the largest, Kalah(12,2730)), and small enough that a hostile or mistaken file (a disk
/// image, zeros copied to disk) is refused before it is read.
pub const MAX_RECORD_BYTES: u64 = 4 << 20;

/// A game as written down.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Record {
    /// The variant.
    pub rules: GameRules,
    /// Who started as South (a player spec or a name).
    pub south: String,
    /// Who started as North.
    pub north: String,
    /// When it was played, if known.
    pub date: Option<String>,
    /// Every action in order.
    pub actions: Vec<Action>,
    /// How many of the first actions were a random opening, no player's choice (0: none).
    pub opening: usize,
}

/// A record that could not be read, with its line (1-based; 0 for the whole file). The message
/// shows the record's text quoted ([`crate::text::quote`]): one line of bounded length.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RecordError {
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for RecordError {}

impl Record {
    /// The record of `game` between `south` and `north` (the players that started there).
    pub fn of(game: &Game, south: &str, north: &str, date: Option<String>) -> Record {
        Record {
            rules: game.rules(),
            south: south.to_owned(),
            north: north.to_owned(),
            date,
            actions: game.actions().iter().map(|&(_, a)| a).collect(),
            opening: 0,
        }
    }

    /// Plays the actions from the start.
    pub fn replay(&self) -> Result<Game, RecordError> {
        let mut game = Game::new(self.rules);
        for (i, &action) in self.actions.iter().enumerate() {
            game.play(action).map_err(|e| RecordError {
                line: 0,
                message: format!("action {} ({action}): {e}", i + 1),
            })?;
        }
        Ok(game)
    }

    /// The text of the record (see the module docs). `game` must be this record replayed.
    pub fn to_text(&self) -> String {
        let mut out = String::from("# kalah game record\n");
        let r = self.rules;
        out += &format!("variant: Kalah({},{})\n", r.houses, r.seeds);
        out += &format!("rules: {}\n", r.rules);
        out += &format!("pie: {}\n", if r.pie { "yes" } else { "no" });
        out += &format!("south: {}\n", one_line(&self.south));
        out += &format!("north: {}\n", one_line(&self.north));
        if let Some(date) = &self.date {
            out += &format!("date: {}\n", one_line(date));
        }
        if self.opening > 0 {
            out += &format!("opening: {}\n", self.opening);
        }
        // Group the actions into turns by replaying them.
        let mut game = Game::new(self.rules);
        let mut lines: Vec<(Side, Vec<String>)> = Vec::new();
        let mut turn_open = false;
        for &action in &self.actions {
            let Some(side) = game.state().to_move() else {
                break;
            };
            let sown = game.play(action).ok().flatten();
            match lines.last_mut() {
                Some((s, turn)) if turn_open && *s == side && action != Action::Swap => {
                    turn.push(action.to_string())
                }
                _ => lines.push((side, vec![action.to_string()])),
            }
            turn_open = sown.is_some_and(|s| s.extra_turn);
        }
        match game.state().result() {
            Some(result) => out += &format!("result: {result}\n"),
            None => out += "result: unfinished\n",
        }
        out.push('\n');
        for (side, turn) in lines {
            out += &format!("{} {}\n", side.as_str(), turn.join("-"));
        }
        out
    }

    /// Parses a record and checks its moves (each line's side must be the side to move, each
    /// action legal).
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let err = |line: usize, message: String| RecordError { line, message };
        let mut variant = None;
        let mut rules = None;
        let mut pie = false;
        let mut south = String::from("?");
        let mut north = String::from("?");
        let mut date = None;
        let mut opening: Option<(usize, usize)> = None;
        let mut turns: Vec<(usize, Side, Vec<Action>)> = Vec::new();
        // The header fields met so far, each with its line.
        let mut seen: Vec<(String, usize)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((key, value)) = line.split_once(':') {
                let value = value.trim();
                // A field given twice would silently mean its last value: refused.
                let key = key.trim();
                if let Some(&first) = seen.iter().find(|(k, _)| *k == key).map(|(_, l)| l) {
                    return Err(err(
                        n,
                        format!(
                            "header field {} given twice (first on line {first})",
                            quote(key)
                        ),
                    ));
                }
                if seen.len() < 16 {
                    seen.push((key.to_owned(), n));
                }
                match key {
                    "variant" => variant = Some(parse_variant(value).map_err(|m| err(n, m))?),
                    "rules" => rules = Some(value.parse::<PlayRules>().map_err(|m| err(n, m))?),
                    "pie" => {
                        pie = match value {
                            "yes" => true,
                            "no" => false,
                            _ => {
                                return Err(err(
                                    n,
                                    format!("pie must be yes or no, not {}", quote(value)),
                                ));
                            }
                        }
                    }
                    "south" => south = value.to_owned(),
                    "north" => north = value.to_owned(),
                    "date" => date = Some(value.to_owned()),
                    "opening" => {
                        opening = Some((
                            n,
                            value.parse::<usize>().map_err(|_| {
                                err(
                                    n,
                                    format!(
                                        "opening must be a count of actions, not {}",
                                        quote(value)
                                    ),
                                )
                            })?,
                        ))
                    }
                    "result" => {}
                    other => {
                        return Err(err(n, format!("unknown header field {}", quote(other))));
                    }
                }
                continue;
            }
            let (side, moves) = line.split_once(char::is_whitespace).ok_or_else(|| {
                err(
                    n,
                    format!("expected 'south|north TURN', found {}", quote(line)),
                )
            })?;
            let side: Side = side
                .parse()
                .map_err(|_| err(n, format!("expected south or north, found {}", quote(side))))?;
            let actions = moves
                .trim()
                .split('-')
                .map(|a| a.parse::<Action>().map_err(|m| err(n, m)))
                .collect::<Result<Vec<_>, _>>()?;
            turns.push((n, side, actions));
        }
        let (houses, seeds) =
            variant.ok_or_else(|| err(0, "missing 'variant: Kalah(M,N)' line".into()))?;
        let rules = rules.ok_or_else(|| err(0, "missing 'rules:' line".into()))?;
        let game_rules = GameRules {
            houses,
            seeds,
            rules,
            pie,
        };
        let mut game = Game::new(game_rules);
        let mut actions = Vec::new();
        for (n, side, turn) in turns {
            for action in turn {
                match game.state().to_move() {
                    None => return Err(err(n, "the game is already over".into())),
                    Some(to_move) if to_move != side => {
                        return Err(err(n, format!("{to_move} is to move, not {side}")));
                    }
                    Some(_) => {}
                }
                game.play(action)
                    .map_err(|e| err(n, format!("{action}: {e}")))?;
                actions.push(action);
            }
        }
        let opening = match opening {
            Some((n, count)) if count > actions.len() => {
                return Err(err(
                    n,
                    format!(
                        "opening: {count} actions, but the game has {}",
                        actions.len()
                    ),
                ));
            }
            Some((_, count)) => count,
            None => 0,
        };
        Ok(Record {
            rules: game_rules,
            south,
            north,
            date,
            actions,
            opening,
        })
    }
}

fn parse_variant(value: &str) -> Result<(usize, u32), String> {
    let bad = || format!("expected Kalah(M,N), found {}", quote(value));
    let inner = value
        .strip_prefix("Kalah(")
        .and_then(|v| v.strip_suffix(')'))
        .ok_or_else(bad)?;
    let (m, n) = inner.split_once(',').ok_or_else(bad)?;
    let m: usize = m.trim().parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if !(1..=MAX_HOUSES).contains(&m)
        || n == 0
        || 2 * m as u64 * u64::from(n) > u64::from(MAX_SEEDS)
    {
        return Err(format!(
            "{} is outside the supported variants",
            quote(value)
        ));
    }
    Ok((m, n))
}

/// Today's date and time in UTC, `YYYY-MM-DD HH:MM UTC`, from the system clock.
pub fn now_utc() -> String {
    let t = UtcTime::now();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute
    )
}

/// A moment of the system clock in UTC, broken into calendar fields.
#[derive(Clone, Copy, Debug)]
pub struct UtcTime {
    /// Year.
    pub year: i64,
    /// Month, 1-12.
    pub month: u32,
    /// Day of the month, 1-31.
    pub day: u32,
    /// Hour, 0-23.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Millisecond.
    pub milli: u32,
}

impl UtcTime {
    /// Now, from the system clock (the epoch if the clock is before it).
    pub fn now() -> UtcTime {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = since.as_secs();
        let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month: month as u32,
            day: day as u32,
            hour: (rest / 3600) as u32,
            minute: (rest / 60 % 60) as u32,
            second: (rest % 60) as u32,
            milli: since.subsec_millis(),
        }
    }
}

/// ISO 8601 to the millisecond: `2024-05-01T12:00:00.123Z`.
impl std::fmt::Display for UtcTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.milli
        )
    }
}

/// `text` on one line of a record: control characters (a line break in a learner's file name,
/// say) written as escapes, so that the record always reads back.
fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped = c.is_control().then(|| c.escape_default());
            escaped
                .into_iter()
                .flatten()
                .chain((!c.is_control()).then_some(c))
        })
        .collect()
}
