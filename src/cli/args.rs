//! Arguments shared by the commands that take a position, and their conversion.

use std::ops::RangeInclusive;
use std::time::Duration;

use clap::Args;
use clap::builder::{RangedU64ValueParser, TypedValueParser};
use kalah::play::{PlayRules, PlayState, PlayerSpec};
use kalah::{AnyPosition, Rules, Side};

use super::CliError;

pub use kalah::api::{header, side_json};

/// Parses a rule-set name for clap (so the help lists the choices).
pub fn rules_parser() -> impl clap::builder::TypedValueParser<Value = Rules> {
    clap::builder::PossibleValuesParser::new(Rules::ALL.map(Rules::as_str))
        .map(|s| s.parse::<Rules>().expect("listed rules parse"))
}

/// Parses a play rule-set name for clap (so the help lists the choices): the Kalah rules and
/// the rule sets only play knows ([`PlayRules::ALL`]).
pub fn play_rules_parser() -> impl clap::builder::TypedValueParser<Value = PlayRules> {
    clap::builder::PossibleValuesParser::new(PlayRules::ALL.map(PlayRules::as_str))
        .map(|s| s.parse::<PlayRules>().expect("listed rules parse"))
}

/// Parses a side name for clap.
pub fn side_parser() -> impl clap::builder::TypedValueParser<Value = Side> {
    clap::builder::PossibleValuesParser::new(["south", "north"])
        .map(|s| s.parse::<Side>().expect("listed sides parse"))
}

// Every numeric option is bounded here, by clap, with its range in its help: a value out of
// range is a one-line usage error (exit code 2) before any work starts. Each range says why.

/// The cores this process may use (at least 1).
fn cores() -> usize {
    kalah::cores()
}

/// The most worker threads an option accepts: four a core, and at least 64. The solver and the
/// builders keep every thread busy, so threads beyond the cores only share them; tens of
/// thousands of threads stall the whole machine. Four a core leaves room to measure
/// oversubscription, and 64 lets a script written for a bigger machine run on a small one.
pub fn max_threads() -> usize {
    cores().saturating_mul(4).max(64)
}

/// Parses a thread count for clap: 1 to [`max_threads`]. The bound is worked out only when a
/// value is parsed: clap builds every command's parsers on every run, and asking the OS for
/// the cores costs a dozen system calls.
pub fn threads() -> impl TypedValueParser<Value = usize> {
    |s: &str| whole_number(s, 1, max_threads() as u64).map(|n| n as usize)
}

/// The deepest iteration of the iterative deepening before an exact search, in plies
/// (`--deepening`): 0 (none) to 60 (deeper passes stop at the deepening's node budget anyway).
pub fn deepening() -> impl TypedValueParser<Value = u8> {
    |s: &str| whole_number(s, 0, 60).map(|n| n as u8)
}

/// `text` as a whole number in `min..=max`, or the error clap shows after the option's name.
fn whole_number(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let n: u64 = text
        .parse()
        .map_err(|_| format!("expected a whole number in {min}..={max}"))?;
    if !(min..=max).contains(&n) {
        return Err(format!("{n} is not in {min}..={max}"));
    }
    Ok(n)
}

/// The threads asked for with --threads, or all cores.
pub fn threads_or_all(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(cores)
}

/// The largest table an option accepts, in MiB ([`kalah::search::max_table_mib`]).
pub fn max_mib() -> usize {
    kalah::search::max_table_mib()
}

/// Parses a table size in MiB for clap: 1 to [`max_mib`] (a table of 0 MiB, one bucket, would
/// make a solve run for ever); the bound is worked out only when a value is parsed.
pub fn mib() -> impl TypedValueParser<Value = usize> {
    |s: &str| whole_number(s, 1, max_mib() as u64).map(|n| n as usize)
}

/// Houses a side: 1 to [`kalah::MAX_HOUSES`], the widest board the engine plays.
pub const HOUSES: RangeInclusive<u64> = 1..=kalah::MAX_HOUSES as u64;
/// Seeds a house at the start: 1 to half of [`kalah::MAX_SEEDS`] (Kalah(1,N) holds 2·N seeds;
/// the variant then checks 2·M·N against [`kalah::MAX_SEEDS`]).
pub const SEEDS: RangeInclusive<u64> = 1..=kalah::MAX_SEEDS as u64 / 2;
/// Seeds on a board searched exactly for a hint or a replay: 0 to 64. The exact solver takes
/// minutes on boards of 60 seeds (Kalah(6,5)) even with databases: above 64 a hint or a
/// replay would never end.
pub const EXACT_SEEDS: RangeInclusive<u64> = 0..=64;

/// Parses a whole number in `range` for clap (the error names the range).
pub fn count<T>(range: RangeInclusive<u64>) -> RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
    <T as TryFrom<u64>>::Error: std::error::Error + Send + Sync + 'static,
{
    RangedU64ValueParser::<T>::new().range(range)
}

/// Parses `--max-level K` for clap: a level, 0 to [`kalah::db::MAX_LEVEL`].
pub fn max_level() -> RangedU64ValueParser<u32> {
    count::<u32>(0..=u64::from(kalah::db::MAX_LEVEL))
}

/// Parses a time in seconds for clap: a decimal number from `min` to `max` (NaN, infinities,
/// negative numbers and anything out of range are refused before any conversion).
pub fn seconds(min: f64, max: f64) -> impl TypedValueParser<Value = Duration> {
    move |s: &str| time_in(s, "seconds", 1.0, min, max)
}

/// Parses a time in minutes for clap, as [`seconds`] does.
pub fn minutes(min: f64, max: f64) -> impl TypedValueParser<Value = Duration> {
    move |s: &str| time_in(s, "minutes", 60.0, min, max)
}

/// Parses a time in hours for clap, as [`seconds`] does.
pub fn hours(min: f64, max: f64) -> impl TypedValueParser<Value = Duration> {
    move |s: &str| time_in(s, "hours", 3600.0, min, max)
}

/// `text` as a time of `scale` seconds a unit, checked against `min..=max` units.
fn time_in(text: &str, unit: &str, scale: f64, min: f64, max: f64) -> Result<Duration, String> {
    let out_of_range = || format!("expected a number of {unit} in {min}..={max}");
    let value: f64 = text.trim().parse().map_err(|_| out_of_range())?;
    // Also false for NaN.
    if !(min..=max).contains(&value) {
        return Err(out_of_range());
    }
    Duration::try_from_secs_f64(value * scale).map_err(|_| out_of_range())
}

/// Parses a player spec for clap (see [`PlayerSpec`]): the text as given, once it parses, so
/// that a bad spec, or a number in it out of range, is a usage error.
pub fn player_spec() -> impl TypedValueParser<Value = String> {
    |s: &str| {
        s.parse::<PlayerSpec>()
            .map(|_| s.to_owned())
            .map_err(|e| e.to_string())
    }
}

/// The capture rule.
#[derive(Args, Debug, Clone)]
pub struct RulesArg {
    /// Capture rule: `standard` captures only when the opposite house holds seeds;
    /// `empty-capture` also banks a lone last seed opposite an empty house.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    pub rules: Rules,
}

/// The rule set of a position that is only drawn and sown, never solved: every rule set `kalah
/// play` plays.
#[derive(Args, Debug, Clone)]
pub struct PlayRulesArg {
    /// Rule set: `standard` captures only when the opposite house holds seeds;
    /// `empty-capture` also banks a lone last seed opposite an empty house; `awari-basic` (the
    /// 1973 BASIC game: both homes sown, one extra move a turn at most, taking it to be the
    /// turn's first move, captures on either side, seeds left at the end count for nobody);
    /// `mankalah` (standard, but South's first sowing from the start earns no extra turn).
    #[arg(long, default_value = "standard", value_parser = play_rules_parser())]
    pub rules: PlayRules,
}

/// A position given on the command line.
#[derive(Args, Debug, Clone)]
pub struct PositionArg {
    /// The position: a KGP board literal, e.g. '<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>', optionally
    /// followed by the side to move ('<...> north'). The angle brackets may be left out.
    #[arg(value_name = "POSITION")]
    pub position: String,

    /// Side to move (default South). Must agree with a side written after the literal.
    #[arg(long, value_name = "SIDE", value_parser = side_parser())]
    pub to_move: Option<Side>,
}

impl PositionArg {
    /// The validated position under `rules`.
    pub fn parse(&self, rules: Rules) -> Result<AnyPosition, CliError> {
        parse_position(&self.position, self.to_move, rules)
    }

    /// The position as a play state under `rules` (checked as a Kalah position is: the board
    /// is the same under every rule set). Under `mankalah` the start position is the start of
    /// a game (its first sowing earns no extra turn); under `awari-basic` the side to move is
    /// taken to be making its turn's first move.
    pub fn parse_play(&self, rules: PlayRules) -> Result<PlayState, CliError> {
        let pos = self.parse(rules.kalah().unwrap_or_default())?;
        let setup = kalah::with_position!(pos, p => p.to_setup());
        Ok(PlayState::from_setup(&setup, rules))
    }
}

/// Parses `text` (with `to_move` from `--to-move`) into a validated position under `rules`.
/// The error is one line that shows `text` quoted ([`kalah::text::quote`]).
pub fn parse_position(
    text: &str,
    to_move: Option<Side>,
    rules: Rules,
) -> Result<AnyPosition, CliError> {
    parse_position_given(text, to_move, "--to-move", rules)
}

/// [`parse_position`], with `to_move` given by the option or field named `given` (the name
/// that an error about a disagreement shows): [`kalah::notation::parse_position`].
pub fn parse_position_given(
    text: &str,
    to_move: Option<Side>,
    given: &str,
    rules: Rules,
) -> Result<AnyPosition, CliError> {
    kalah::notation::parse_position(text, to_move, given, rules).map_err(CliError::input)
}

/// The KGP literal of a play state (` north` after it when North is to move), as the other
/// commands write positions.
pub fn play_literal(state: &PlayState) -> String {
    AnyPosition::from_setup(&state.to_setup(), Rules::Standard)
        .map_or_else(|_| "?".to_owned(), |p| p.to_string())
}

/// Who is to move, for human output.
pub fn side_text(side: Option<Side>) -> String {
    side.map_or("game over".to_owned(), |s| format!("{s} to move"))
}

/// Prints a JSON value on one line.
pub fn print_json(value: &serde_json::Value) {
    println!("{value}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Whatever is typed: a position or one line of bounded length, nothing a terminal
        /// would obey (the rest of the parsers: tests/fuzz.rs).
        #[test]
        fn any_text_is_a_position_or_a_readable_error(
            text in prop_oneof![any::<String>(), "[<>0-9, a-z\u{1b}\n-]{0,40}"],
            to_move in prop::option::of(prop_oneof![Just(Side::South), Just(Side::North)]),
        ) {
            match parse_position(&text, to_move, Rules::Standard) {
                Ok(position) => {
                    let again = parse_position(&position.to_string(), None, Rules::Standard);
                    prop_assert_eq!(again.ok(), Some(position));
                }
                Err(e) => {
                    prop_assert_eq!(e.code, 2);
                    prop_assert!(e.message.chars().count() <= 400, "{}", e.message);
                    prop_assert!(!e.message.chars().any(char::is_control), "{}", e.message);
                }
            }
        }
    }

    #[test]
    fn a_megabyte_position_is_one_short_line() {
        for filler in ["9", ",", "\u{1b}", "<"] {
            let text = format!("<6,0,0,{}>", filler.repeat(1 << 20));
            let e = parse_position(&text, None, Rules::Standard).unwrap_err();
            assert!(e.message.len() < 400, "{}", e.message);
            assert!(!e.message.contains('\u{1b}'), "{}", e.message);
        }
        // The bare list of numbers, brackets left out.
        let p = parse_position("2,0,0,1,1,1,1 north", None, Rules::Standard).unwrap();
        assert_eq!(p.to_string(), "<2,0,0,1,1,1,1> north");
    }
}
