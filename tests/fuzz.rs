//! Property tests of every parser and protocol reader, run with the normal `cargo test`: any
//! text (or bytes) gives a value or an error, never a panic; an error message is one line of
//! bounded length with no raw control characters, however long or hostile the input; and a
//! value written out parses back to itself wherever the type can be written out.
//!
//! The case counts keep the whole file near a second; `KALAH_FUZZ_SCALE=100 cargo test --test
//! fuzz` searches a hundred times longer. Grouped by parser. The command line's position parser (`parse_position`, private to the
//! binary) has its own property test in `src/cli/args.rs`; here it is covered through the
//! library calls it makes (`Setup`, then `AnyPosition::from_setup`).

use std::io::BufReader;
use std::time::{Duration, Instant};

use kalah::bots::kgp::{Argument, Command};
use kalah::bots::mankalah::{
    Agent, EngineBoard, Message, Next, TOTAL_SEEDS, TimePlan, Turn as Who,
};
use kalah::play::anytime::EngineConfig;
use kalah::play::learner::parse_openings;
use kalah::play::players::parse_duration;
use kalah::play::record::Record;
use kalah::play::{Action, Game, GameRules, PlayRules, PlayerSpec};
use kalah::text::{self, Line};
use kalah::{AnyPosition, Move, Rules, Setup, Side, Turn};
use proptest::prelude::*;

/// `n` cases, times `KALAH_FUZZ_SCALE` if set (to search longer than the normal test run).
fn cases(n: u32) -> ProptestConfig {
    let scale = std::env::var("KALAH_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(1);
    ProptestConfig::with_cases(n.saturating_mul(scale))
}

/// The longest error message accepted, in characters, whatever the input.
const MAX_MESSAGE: usize = 400;

/// Checks that `message` can be shown to a person as it is: one line, short, nothing a terminal
/// would obey (control characters, bidirectional overrides).
fn readable(message: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        message.chars().count() <= MAX_MESSAGE,
        "{} characters: {message:?}",
        message.chars().count()
    );
    prop_assert!(
        !message.chars().any(|c| c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')),
        "{message:?}"
    );
    Ok(())
}

/// Text that looks like the notation more often than arbitrary text does: digits, the
/// literal's punctuation, signs, words and a few hostile characters.
fn notation_like() -> impl Strategy<Value = String> {
    "[<>0-9,+\\- a-z\u{1b}\u{202e}\r\n:;\"@.]{0,60}"
}

/// Arbitrary text: short random strings of any characters, and text that looks like the
/// notation.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), notation_like()]
}

/// `text` made huge: a megabyte of one character in the middle of it.
fn huge(text: &str, filler: char) -> String {
    let mid = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    let mut out = String::with_capacity(text.len() + (1 << 20));
    out.push_str(&text[..mid]);
    out.extend(std::iter::repeat_n(filler, 1 << 20));
    out.push_str(&text[mid..]);
    out
}

/// Every parser on `input`: it must return, and every error it gives must be readable.
fn every_parser(input: &str) -> Result<(), TestCaseError> {
    match input.parse::<Setup>() {
        Ok(setup) => {
            for rules in [Rules::Standard, Rules::EmptyCapture] {
                if let Err(e) = AnyPosition::from_setup(&setup, rules) {
                    readable(&e.to_string())?;
                }
            }
        }
        Err(e) => readable(&e.to_string())?,
    }
    if let Err(e) = input.parse::<Move>() {
        readable(&e.to_string())?;
    }
    if let Err(e) = input.parse::<Turn>() {
        readable(&e.to_string())?;
    }
    if let Err(e) = input.parse::<Action>() {
        readable(&e)?;
    }
    if let Err(e) = input.parse::<PlayRules>() {
        readable(&e)?;
    }
    if let Err(e) = input.parse::<PlayerSpec>() {
        readable(&e.to_string())?;
    }
    if let Err(e) = parse_duration(input) {
        readable(&e)?;
    }
    if let Err(e) = Record::parse(input) {
        readable(&e.to_string())?;
    }
    if let Err(e) = parse_openings(input) {
        readable(&e.to_string())?;
    }
    if let Err(e) = input.parse::<Command>() {
        readable(&e.to_string())?;
    }
    if let Err(e) = Message::parse(input) {
        readable(&e)?;
    }
    if let Err(e) = EngineBoard::parse(input) {
        readable(&e)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(1000))]

    #[test]
    fn no_parser_panics_and_every_error_is_readable(input in any_text()) {
        every_parser(&input)?;
    }

    #[test]
    fn quoted_and_escaped_input_is_readable(input in any::<String>()) {
        readable(&text::quote(&input))?;
        readable(&text::escape(&input))?;
        let plain = !input.chars().any(|c| c.is_control() || c == '\'' || c == '\\');
        if plain && input.chars().count() <= text::QUOTE_CHARS && !input.contains(['\u{200b}', '\u{202e}', '\u{feff}']) {
            prop_assert_eq!(text::quote(&input), format!("'{input}'"));
        }
    }
}

proptest! {
    // A megabyte each: few cases.
    #![proptest_config(cases(12))]

    #[test]
    fn errors_stay_short_for_megabyte_inputs(
        input in notation_like(),
        filler in prop::sample::select(vec!['9', ',', 'x', ' ', '\u{1b}', '<', '-', ';', '\n']),
    ) {
        every_parser(&huge(&input, filler))?;
    }
}

// ---------------------------------------------------------------------------------------------
// The KGP board literal (`Setup`) and positions
// ---------------------------------------------------------------------------------------------

/// A setup with 1 to 12 houses, any numbers (also far too large), any side to move.
fn any_setup() -> impl Strategy<Value = Setup> {
    (1usize..=12)
        .prop_flat_map(|m| {
            let number = prop_oneof![0u64..20, any::<u64>()];
            (
                Just(m),
                [number.clone(), number.clone()],
                prop::collection::vec(number.clone(), m),
                prop::collection::vec(number, m),
                prop::option::of(prop_oneof![Just(Side::South), Just(Side::North)]),
            )
        })
        .prop_map(|(houses, stores, south, north, to_move)| Setup {
            houses,
            stores,
            south,
            north,
            to_move,
        })
}

proptest! {
    #![proptest_config(cases(400))]

    #[test]
    fn setups_round_trip_through_the_literal(setup in any_setup()) {
        let back: Setup = setup.to_string().parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
        // South to move is the default, written as nothing.
        let expected = Setup {
            to_move: setup.to_move.filter(|&s| s == Side::North),
            ..setup
        };
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn a_literal_with_spaces_signs_and_a_side_reads_as_written(
        setup in any_setup(),
        pad in "[ \t]{0,2}",
        plus in any::<bool>(),
    ) {
        let numbers: Vec<String> = [setup.houses as u64]
            .iter()
            .chain(&setup.stores)
            .chain(&setup.south)
            .chain(&setup.north)
            .map(|n| format!("{pad}{}{n}{pad}", if plus { "+" } else { "" }))
            .collect();
        let side = match setup.to_move {
            Some(Side::North) => " North",
            Some(Side::South) => " s",
            None => "",
        };
        let text = format!("{pad}<{}>{side}{pad}", numbers.join(","));
        let parsed: Setup = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(parsed, setup);
    }

    #[test]
    fn valid_positions_round_trip_and_invalid_ones_say_why(
        setup in any_setup(),
        rules in prop_oneof![Just(Rules::Standard), Just(Rules::EmptyCapture)],
    ) {
        match AnyPosition::from_setup(&setup, rules) {
            Ok(position) => {
                let again: Setup = position.to_string().parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
                let back = AnyPosition::from_setup(&again, rules)
                    .map_err(|e| TestCaseError::fail(format!("{position}: {e}")))?;
                prop_assert_eq!(back, position);
            }
            Err(e) => readable(&e.to_string())?,
        }
    }

    #[test]
    fn literals_with_hostile_sizes_are_refused_not_panicked_on(
        m in prop_oneof![Just(u64::MAX), Just(1u64 << 63), Just((1u64 << 62) + 1), 13u64..100_000],
        fields in 0usize..3000,
        value in prop_oneof![Just("18446744073709551615"), Just("-1"), Just("99999999999999999999999"), Just("1"), Just("")],
    ) {
        let text = format!("<{m}{}>", format!(",{value}").repeat(fields));
        let e = text.parse::<Setup>().expect_err("no such board");
        readable(&e.to_string())?;
    }

    #[test]
    fn seeds_summing_past_every_integer_are_refused(houses in 1usize..=12, big in (u64::MAX / 4)..=u64::MAX) {
        let setup = Setup {
            houses,
            stores: [big, big],
            south: vec![big; houses],
            north: vec![big; houses],
            to_move: None,
        };
        let back: Setup = setup.to_string().parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let e = AnyPosition::from_setup(&back, Rules::Standard).expect_err("too many seeds");
        readable(&e.to_string())?;
    }
}

// ---------------------------------------------------------------------------------------------
// Moves, turns, actions, rule sets
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(cases(300))]

    #[test]
    fn moves_and_turns_round_trip(houses in prop::collection::vec(1usize..=12, 1..20)) {
        let moves: Vec<Move> = houses.iter().map(|&h| Move::new(h).unwrap()).collect();
        for &mv in &moves {
            prop_assert_eq!(mv.to_string().parse::<Move>(), Ok(mv));
            prop_assert_eq!(mv.to_string().parse::<Action>(), Ok(Action::Sow(mv)));
        }
        let turn = Turn(moves);
        prop_assert_eq!(turn.to_string().parse::<Turn>(), Ok(turn));
    }

    #[test]
    fn houses_out_of_range_are_not_moves(house in prop_oneof![Just(0u64), 13u64..u64::MAX]) {
        let text = house.to_string();
        prop_assert!(text.parse::<Move>().is_err());
        prop_assert!(text.parse::<Action>().is_err());
        let turn = format!("1-{text}");
        prop_assert!(turn.parse::<Turn>().is_err());
    }

    #[test]
    fn actions_and_rule_sets_round_trip(swap in any::<bool>(), house in 1usize..=12, case in any::<bool>()) {
        let action = if swap { Action::Swap } else { Action::Sow(Move::new(house).unwrap()) };
        let text = if case { action.to_string().to_uppercase() } else { action.to_string() };
        prop_assert_eq!(text.parse::<Action>(), Ok(action));
        for rules in PlayRules::ALL {
            prop_assert_eq!(rules.to_string().parse::<PlayRules>(), Ok(rules));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Player specs and times
// ---------------------------------------------------------------------------------------------

fn any_spec() -> impl Strategy<Value = PlayerSpec> {
    prop_oneof![
        Just(PlayerSpec::Human),
        Just(PlayerSpec::Greedy),
        Just(PlayerSpec::Perfect),
        prop::option::of(any::<u64>()).prop_map(PlayerSpec::Random),
        (1u32..=30).prop_map(PlayerSpec::Minimax),
        (1u32..=30).prop_map(PlayerSpec::AlphaBeta),
        prop::option::of(".+").prop_map(|f| PlayerSpec::Learner(f.map(Into::into))),
        (1u64..=86_400_000, any::<bool>()).prop_map(|(ms, db)| PlayerSpec::Engine {
            time: Duration::from_millis(ms),
            db
        }),
    ]
}

proptest! {
    #![proptest_config(cases(300))]

    #[test]
    fn player_specs_round_trip(spec in any_spec()) {
        let text = spec.to_string();
        let back = text.parse::<PlayerSpec>().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back, spec);
    }

    #[test]
    fn specs_that_look_right_give_a_player_or_a_readable_error(
        name in prop::sample::select(vec!["human", "random", "greedy", "minimax", "alphabeta", "perfect", "learner", "engine", "god"]),
        arg in prop::option::of(prop_oneof![any::<String>(), "[0-9.smx+\\-e]{0,12}"]),
    ) {
        let text = match &arg {
            Some(a) => format!("{name}:{a}"),
            None => name.to_owned(),
        };
        if let Err(e) = text.parse::<PlayerSpec>() {
            readable(&e.to_string())?;
        }
    }

    #[test]
    fn times_round_trip_to_the_millisecond(ms in 1u64..=86_400_000, unit in 0..3) {
        let time = Duration::from_millis(ms);
        let text = match unit {
            0 => format!("{ms}ms"),
            1 => format!("{}s", time.as_secs_f64()),
            _ => format!("{}", time.as_secs_f64()),
        };
        prop_assert_eq!(parse_duration(&text), Ok(time));
    }

    #[test]
    fn times_out_of_range_are_refused(seconds in prop_oneof![Just(0.0f64), Just(0.0004), 86_400.001f64..1e300]) {
        let e = parse_duration(&format!("{seconds}s")).expect_err("out of range");
        readable(&e)?;
        for text in ["inf", "NaN", "-1", "1e3", "-0.5s", "", "s", "ms", "5 s"] {
            prop_assert!(parse_duration(text).is_err(), "{text}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Game records and learner files
// ---------------------------------------------------------------------------------------------

/// A game of `houses` x `seeds` under `rules` played with the legal actions picked by `picks`.
fn played(houses: usize, seeds: u32, rules: PlayRules, pie: bool, picks: &[u16]) -> Game {
    let mut game = Game::new(GameRules {
        houses,
        seeds,
        rules,
        pie,
    });
    for &pick in picks {
        let actions = game.legal_actions();
        if actions.is_empty() {
            break;
        }
        game.play(actions[pick as usize % actions.len()]).unwrap();
    }
    game
}

/// Lines that look like a record's: header lines, turn lines, comments, noise.
fn record_like() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("variant: Kalah(3,2)".to_owned()),
        Just("rules: standard".to_owned()),
        Just("pie: yes".to_owned()),
        "(variant|rules|pie|south|north|date|result|x): [ -~\u{1b}]{0,20}",
        "(south|north|east) [0-9swap\\-]{0,8}",
        "#[^\n]{0,10}",
        any::<String>(),
    ];
    prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(cases(200))]

    #[test]
    fn records_round_trip(
        houses in 1usize..=6,
        seeds in 1u32..=5,
        rules in prop::sample::select(PlayRules::ALL.to_vec()),
        pie in any::<bool>(),
        picks in prop::collection::vec(any::<u16>(), 0..80),
        south in "[a-z:0-9]{1,12}",
    ) {
        let game = played(houses, seeds, rules, pie, &picks);
        let record = Record::of(&game, &south, "random:3", Some("2026-11-23 10:00 UTC".into()));
        let back = Record::parse(&record.to_text()).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let replayed = back.replay().unwrap();
        prop_assert_eq!(replayed.state(), game.state());
        prop_assert_eq!(back, record);
    }

    #[test]
    fn records_with_any_player_names_read_back(
        south in any::<String>(),
        north in "\\PC*",
        picks in prop::collection::vec(any::<u16>(), 0..20),
    ) {
        // A learner's file name may hold line breaks and escapes: the record still reads back.
        let game = played(3, 2, PlayRules::ALL[0], false, &picks);
        let record = Record::of(&game, &south, &north, None);
        let back = Record::parse(&record.to_text()).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let replayed = back.replay().unwrap();
        prop_assert_eq!(replayed.state(), game.state());
    }

    #[test]
    fn record_like_text_gives_a_record_or_a_readable_error(text in record_like()) {
        match Record::parse(&text) {
            // Whatever parses replays: the parser checks every action.
            Ok(record) => prop_assert!(record.replay().is_ok()),
            Err(e) => readable(&e.to_string())?,
        }
    }

    #[test]
    fn learner_files_round_trip(
        games in prop::collection::vec((1usize..=6, 1u32..=4, any::<bool>(), prop::collection::vec(any::<u16>(), 0..8)), 0..6),
        noise in prop::collection::vec(prop_oneof![Just(String::new()), "#[^\n]{0,10}"], 0..3),
    ) {
        let mut text = noise.join("\n");
        text.push('\n');
        let mut expected = Vec::new();
        for (houses, seeds, pie, picks) in games {
            let game = played(houses, seeds, PlayRules::Kalah(Rules::Standard), pie, &picks);
            let actions: Vec<Action> = game.actions().iter().map(|&(_, a)| a).collect();
            let key = format!("Kalah({houses},{seeds}) standard{}", if pie { " pie" } else { "" });
            let words: Vec<String> = actions.iter().map(Action::to_string).collect();
            text += &format!("{key}: {}\n", words.join(" "));
            expected.push((key, actions));
        }
        prop_assert_eq!(parse_openings(&text), Ok(expected));
    }

    #[test]
    fn learner_like_text_gives_openings_or_a_readable_error(
        lines in prop::collection::vec(prop_oneof![
            "Kalah\\([0-9],[0-9]\\) [a-z]{0,8}: [0-9 swap]{0,20}",
            "[^\n]{0,30}",
        ], 0..8),
    ) {
        if let Err(e) = parse_openings(&lines.join("\n")) {
            readable(&e.to_string())?;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The KGP protocol: commands and their arguments
// ---------------------------------------------------------------------------------------------

fn any_argument() -> impl Strategy<Value = Argument> {
    prop_oneof![
        any::<i64>().prop_map(Argument::Integer),
        // Reals the protocol writes without an exponent.
        (-1_000_000_000_000i64..1_000_000_000_000).prop_map(|n| Argument::Real(n as f64 / 1000.0)),
        "[a-z:_][a-z0-9:_.\\-]{0,10}".prop_map(Argument::Word),
        "[^\\x00-\\x1f]{0,20}".prop_map(Argument::Text),
        prop::collection::vec(0u32..100, 0..20).prop_map(|n| {
            let n: Vec<String> = n.iter().map(u32::to_string).collect();
            Argument::Board(format!("<{}>", n.join(",")))
        }),
    ]
}

fn any_command() -> impl Strategy<Value = Command> {
    (
        prop::option::of(any::<u64>()),
        prop::option::of(any::<u64>()),
        "[a-z][a-z0-9]{0,8}",
        prop::collection::vec(any_argument(), 0..6),
    )
        .prop_map(|(id, reference, name, args)| Command {
            id,
            reference,
            name,
            args,
        })
}

proptest! {
    #![proptest_config(cases(400))]

    #[test]
    fn commands_round_trip(command in any_command()) {
        let text = command.to_string();
        let back = text.parse::<Command>().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back, command);
    }

    #[test]
    fn command_like_lines_give_a_command_or_a_readable_error(
        head in "[0-9@]{0,25}",
        name in "[a-z0-9\\-\u{1b}]{0,8}",
        rest in "[ <>,0-9\"\\\\a-z.+\\-\u{1b}\u{202e}]{0,40}",
    ) {
        let line = format!("{head} {name} {rest}");
        match line.parse::<Command>() {
            Ok(c) => prop_assert!(c.name.bytes().all(|b| b.is_ascii_alphanumeric())),
            Err(e) => readable(&e.to_string())?,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The ManKalah protocol
// ---------------------------------------------------------------------------------------------

/// A board of the engine's game: 98 seeds over 16 pits.
fn any_engine_board() -> impl Strategy<Value = EngineBoard> {
    prop::collection::vec(0u32..16, 16).prop_map(|weights| {
        // Deal the 98 seeds by the weights (the last pit takes what is left).
        let total: u32 = weights.iter().sum::<u32>().max(1);
        let mut pits: Vec<u32> = weights.iter().map(|w| w * TOTAL_SEEDS / total).collect();
        let dealt: u32 = pits.iter().sum();
        pits[15] += TOTAL_SEEDS - dealt;
        let mut board = EngineBoard {
            north: [0; 7],
            north_store: pits[7],
            south: [0; 7],
            south_store: pits[15],
        };
        board.north.copy_from_slice(&pits[..7]);
        board.south.copy_from_slice(&pits[8..15]);
        board
    })
}

fn any_message_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("START;South".to_owned()),
        Just("START;North".to_owned()),
        Just("END".to_owned()),
        (
            prop_oneof![
                (1u32..=7).prop_map(|h| h.to_string()),
                Just("SWAP".to_owned())
            ],
            any_engine_board(),
            prop::sample::select(vec!["YOU", "OPP", "END"]),
        )
            .prop_map(|(mv, board, turn)| format!("CHANGE;{mv};{board};{turn}")),
        "[A-Z;,0-9]{0,30}",
    ]
}

proptest! {
    #![proptest_config(cases(300))]

    #[test]
    fn engine_boards_and_messages_round_trip(
        board in any_engine_board(),
        house in 1usize..=7,
        swap in any::<bool>(),
        turn in prop::sample::select(vec![("YOU", Who::You), ("OPP", Who::Opp), ("END", Who::End)]),
    ) {
        prop_assert_eq!(EngineBoard::parse(&board.to_string()), Ok(board));
        let (mv, action) = if swap {
            ("SWAP".to_owned(), Action::Swap)
        } else {
            (house.to_string(), Action::Sow(Move::new(house).unwrap()))
        };
        let line = format!("CHANGE;{mv};{board};{}", turn.0);
        prop_assert_eq!(
            Message::parse(&line),
            Ok(Message::Change { action, board, turn: turn.1 })
        );
    }

    #[test]
    fn board_fields_with_hostile_numbers_are_refused(
        fields in prop::collection::vec(prop_oneof![
            Just("4294967295".to_owned()),
            Just("999999999".to_owned()),
            Just("99999999999999999999".to_owned()),
            Just("-1".to_owned()),
            Just("+7".to_owned()),
            Just(String::new()),
            "[0-9]{1,3}",
        ], 0..40),
    ) {
        let text = fields.join(",");
        if let Err(e) = EngineBoard::parse(&text) {
            readable(&e)?;
        }
    }
}

proptest! {
    // Each case makes an agent (a small table) and may think for a few milliseconds.
    #![proptest_config(cases(40))]

    #[test]
    fn the_agent_takes_any_sequence_of_messages_without_panicking(
        lines in prop::collection::vec(any_message_line(), 0..10),
    ) {
        let config = EngineConfig { db: None, exact_seeds: 10, threads: 1, tt_mib: 1 };
        let plan = TimePlan { budget: Duration::from_millis(20), ..TimePlan::default() };
        let mut agent = Agent::new(plan, config).unwrap();
        for line in &lines {
            match agent.receive(line) {
                Ok(Next::Respond) => {
                    let decision = agent.respond(Instant::now());
                    prop_assert!(decision.is_ok(), "{line}: {decision:?}");
                }
                Ok(Next::Wait) => {}
                Ok(Next::Stop) => break,
                Err(e) => readable(&e.to_string())?,
            }
            for note in agent.take_notes() {
                prop_assert!(!note.chars().any(char::is_control), "{note:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The line reader
// ---------------------------------------------------------------------------------------------

/// The lines of `input` as [`text::read_line`] must give them: split at `\n`, a `\r` before
/// it dropped, a last line without a line break kept.
fn model_lines(input: &[u8], max: usize) -> Vec<Line> {
    let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.is_empty() || input.ends_with(b"\n") {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|piece| {
            let piece = piece.strip_suffix(b"\r").unwrap_or(piece);
            if piece.len() > max {
                Line::TooLong(piece.len() as u64)
            } else {
                match String::from_utf8(piece.to_vec()) {
                    Ok(text) => Line::Text(text),
                    Err(e) => Line::NotUtf8(e.into_bytes()),
                }
            }
        })
        .collect()
}

/// Bytes that make lines of every kind: short, long, `\r\n`, invalid UTF-8.
fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(0xff)],
            0..40
        ),
        (0usize..200, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(cases(400))]

    #[test]
    fn the_line_reader_splits_as_the_model_does(
        input in line_bytes(),
        max in 0usize..60,
        capacity in 1usize..16,
    ) {
        let mut reader = BufReader::with_capacity(capacity, &input[..]);
        let mut lines = Vec::new();
        while let Some(line) = text::read_line(&mut reader, max).unwrap() {
            if let Err(e) = line.clone().into_text(max) {
                readable(&e)?;
            }
            lines.push(line);
        }
        prop_assert_eq!(lines, model_lines(&input, max));
    }

    #[test]
    fn the_cut_reader_agrees_on_short_lines_and_gives_up_on_long_ones(
        input in line_bytes(),
        max in 0usize..60,
        capacity in 1usize..16,
    ) {
        let mut reader = BufReader::with_capacity(capacity, &input[..]);
        let model = model_lines(&input, max);
        let mut read = 0;
        while let Some(line) = text::read_line_cut(&mut reader, max).unwrap() {
            match line {
                Line::TooLong(n) => {
                    prop_assert!(n as usize > max && n as usize <= max + 2, "{n}");
                    prop_assert!(matches!(model[read], Line::TooLong(_)));
                    // The cut reader stops here, as its callers do.
                    return Ok(());
                }
                line => prop_assert_eq!(&line, &model[read]),
            }
            read += 1;
        }
        prop_assert_eq!(read, model.len());
    }
}
