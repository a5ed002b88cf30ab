//! `kalah show`: draw a position.

use clap::Args;
use kalah::{Lanes, Position, Side, render, with_position};
use serde_json::json;

use super::CliError;
use super::args::{PositionArg, RulesArg, header, print_json, side_json};

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
    let pos = args.position.parse(args.rules.rules)?;
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
