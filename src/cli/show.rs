//! `kalah show`: draw a position.

use clap::Args;
use kalah::{Lanes, Position, Side, render, with_position};
use serde_json::json;

use super::CliError;
use super::args::{PositionArg, RulesArg, print_json, side_json};

/// Draw a position as a board, with the stores, the side to move and the legal moves.
///
/// The top row is North's houses, numbered from North's view (house 1 on the right), the bottom
/// row South's (house 1 on the left). North's store is on the left, South's on the right.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: RulesArg,
    /// Print JSON instead of the drawing.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ShowArgs) -> Result<(), CliError> {
    let pos = super::args::parse_position(
        &args.position.position,
        args.position.to_move,
        args.rules.rules,
    )?;
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

/// The JSON description of a position, shared by the commands that print one.
pub fn to_json<L: Lanes>(p: &Position<L>) -> serde_json::Value {
    let outcome = p.outcome().map(|o| {
        json!({
            "south": o.stores[0],
            "north": o.stores[1],
            "winner": side_json(o.winner()),
            "south_margin": o.margin(Side::South),
        })
    });
    json!({
        "houses": p.houses_per_side(),
        "rules": p.rules().as_str(),
        "position": p.to_string(),
        "to_move": side_json(p.to_move()),
        "stores": {"south": p.store(Side::South), "north": p.store(Side::North)},
        "south": p.houses(Side::South),
        "north": p.houses(Side::North),
        "seeds_on_board": p.seeds_on_board(),
        "finished": p.is_finished(),
        "outcome": outcome,
        "legal_moves": p.legal_moves().iter().map(|m| m.house()).collect::<Vec<_>>(),
    })
}
