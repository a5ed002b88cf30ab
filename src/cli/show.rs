//! `kalah show`: draw a position.

use clap::Args;
use kalah::play::{PlayRules, PlayState};
use kalah::{Lanes, Position, Side, render, with_position};
use serde_json::json;

use super::CliError;
use super::args::{PlayRulesArg, PositionArg, header, play_literal, print_json, side_json};

/// Draw a position as a board, with the stores, the side to move and the legal moves.
///
/// The top row is North's houses, numbered from North's view (house 1 on the right), the bottom
/// row South's (house 1 on the left). North's store is on the left, South's on the right.
/// Every rule set `kalah play` plays is drawn: the output names it.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: PlayRulesArg,
    /// Print JSON instead of the drawing.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ShowArgs) -> Result<(), CliError> {
    let rules = match args.rules.rules {
        PlayRules::Kalah(rules) => rules,
        play => return show_play(&args, play),
    };
    let pos = args.position.parse(rules)?;
    with_position!(pos, p => {
        if args.json {
            print_json(&to_json(&p));
        } else {
            println!("Kalah, {} houses a side, {} rules", p.houses_per_side(), p.rules());
            println!("{}", render(&p));
            let moves: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
            if !moves.is_empty() {
                println!("legal moves: {}", moves.join(" "));
            }
        }
    });
    Ok(())
}

/// `show` under a rule set only play knows (awari-basic, mankalah).
fn show_play(args: &ShowArgs, rules: PlayRules) -> Result<(), CliError> {
    let state = args.position.parse_play(rules)?;
    if args.json {
        print_json(&play_json(&state));
        return Ok(());
    }
    println!("{}", play_title(&state));
    println!("{}", rules_note(&state));
    println!("{}", state.render().trim_end());
    let moves: Vec<String> = state.legal_moves().iter().map(|m| m.to_string()).collect();
    if !moves.is_empty() {
        println!("legal moves: {}", moves.join(" "));
    }
    Ok(())
}

/// The JSON description of a position, shared by the commands that print one.
pub fn to_json<L: Lanes>(p: &Position<L>) -> serde_json::Value {
    let outcome = p.outcome().map(|o| outcome_json(o.stores));
    let mut out = header(p);
    out["stores"] = json!({"south": p.store(Side::South), "north": p.store(Side::North)});
    out["south"] = json!(p.houses(Side::South));
    out["north"] = json!(p.houses(Side::North));
    out["seeds_on_board"] = json!(p.seeds_on_board());
    out["finished"] = json!(p.is_finished());
    out["outcome"] = json!(outcome);
    out["legal_moves"] = json!(
        p.legal_moves()
            .iter()
            .map(|m| m.house())
            .collect::<Vec<_>>()
    );
    out
}

/// The JSON of a finished game's final stores, South's first.
fn outcome_json(stores: [u32; 2]) -> serde_json::Value {
    let [south, north] = stores;
    let winner = match south.cmp(&north) {
        std::cmp::Ordering::Greater => Some(Side::South),
        std::cmp::Ordering::Less => Some(Side::North),
        std::cmp::Ordering::Equal => None,
    };
    json!({
        "south": south,
        "north": north,
        "winner": side_json(winner),
        "south_margin": south as i64 - north as i64,
    })
}

/// The first fields of every JSON answer about a play state, as [`header`] writes them for a
/// position: houses, rules, position (KGP literal) and the side to move.
pub fn play_header(state: &PlayState) -> serde_json::Value {
    json!({
        "houses": state.houses_per_side(),
        "rules": state.rules().as_str(),
        "position": play_literal(state),
        "to_move": side_json(state.to_move()),
    })
}

/// [`to_json`] for a position under a play rule set: the same fields.
pub fn play_json(state: &PlayState) -> serde_json::Value {
    let mut out = play_header(state);
    out["stores"] = json!({"south": state.store(Side::South), "north": state.store(Side::North)});
    out["south"] = json!(state.houses(Side::South));
    out["north"] = json!(state.houses(Side::North));
    out["seeds_on_board"] = json!(state.seeds_on_board());
    out["finished"] = json!(state.is_over());
    out["outcome"] = json!(state.is_over().then(|| outcome_json(final_stores(state))));
    out["legal_moves"] = json!(
        state
            .legal_moves()
            .iter()
            .map(|m| m.house())
            .collect::<Vec<_>>()
    );
    out
}

/// The stores of a finished game, South's first: under Kalah rules (mankalah too) each side's
/// houses go to its store; under awari-basic the seeds left count for nobody.
fn final_stores(state: &PlayState) -> [u32; 2] {
    [Side::South, Side::North].map(|side| match state.rules() {
        PlayRules::AwariBasic => state.store(side),
        _ => state.store(side) + state.houses(side).iter().sum::<u32>(),
    })
}

/// The title of a play state's drawing: `Awari, 6 houses a side, awari-basic rules`.
pub fn play_title(state: &PlayState) -> String {
    let game = match state.rules() {
        PlayRules::AwariBasic => "Awari",
        _ => "Kalah",
    };
    format!(
        "{game}, {} houses a side, {} rules",
        state.houses_per_side(),
        state.rules()
    )
}

/// What the rule set of `state` does differently from standard Kalah, in one line that starts
/// with its name.
pub fn rules_note(state: &PlayState) -> &'static str {
    match state.rules() {
        PlayRules::AwariBasic => {
            "awari-basic: both homes are sown, one extra move a turn at most (taken here as the \
             turn's first move), captures on either side, seeds left at the end count for nobody"
        }
        PlayRules::ManKalah if state.first_sowing_passes() => {
            "mankalah: standard Kalah, but this first sowing of the game earns no extra turn"
        }
        PlayRules::ManKalah => {
            "mankalah: standard Kalah from here on (only South's first sowing of the game \
             differs)"
        }
        PlayRules::Kalah(_) => "standard or empty-capture Kalah",
    }
}
