//! `kalah moves`: every legal move and what it does.

use clap::Args;
use kalah::{Side, with_position};
use serde_json::json;

use super::CliError;
use super::args::{PositionArg, RulesArg, header, print_json, side_json, side_text};

/// List every legal move with the position it leads to and what it does: an extra turn (the
/// last seed lands in the mover's store), a capture (seeds taken, the last one included), or
/// the end of the game (a side is empty and the houses are swept into the stores).
#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: RulesArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: MovesArgs) -> Result<(), CliError> {
    let pos = args.position.parse(args.rules.rules)?;
    with_position!(pos, p => {
        let rows: Vec<_> = p
            .legal_moves()
            .into_iter()
            .map(|mv| {
                let seeds = p.houses(p.to_move().expect("legal moves exist"))[mv.index()];
                let (child, sowing) = p.play_unchecked(mv);
                (mv, seeds, child, sowing)
            })
            .collect();
        if args.json {
            let moves: Vec<_> = rows
                .iter()
                .map(|(mv, seeds, child, s)| {
                    json!({
                        "house": mv.house(),
                        "seeds": seeds,
                        "extra_turn": s.extra_turn,
                        "captured": s.captured,
                        "game_over": s.game_over,
                        "position": child.to_string(),
                        "to_move": side_json(child.to_move()),
                        "stores": {"south": child.store(Side::South), "north": child.store(Side::North)},
                    })
                })
                .collect();
            let mut out = header(&p);
            out["moves"] = json!(moves);
            print_json(&out);
        } else {
            println!(
                "{} ({} houses a side, {} rules), {}",
                p, p.houses_per_side(), p.rules(), side_text(p.to_move())
            );
            if rows.is_empty() {
                println!("no legal moves: the game is over");
            }
            for (mv, seeds, child, s) in &rows {
                let mut what = Vec::new();
                if s.extra_turn {
                    what.push("extra turn".to_owned());
                }
                if s.captured > 0 {
                    what.push(format!("captures {}", s.captured));
                }
                if s.game_over {
                    what.push("ends the game".to_owned());
                }
                let what = if what.is_empty() { "-".to_owned() } else { what.join(", ") };
                let seeds = format!("{seeds} seed{}", if *seeds == 1 { "" } else { "s" });
                println!(
                    "house {:>2}  {seeds:<9} {what:<26} -> {child}  ({})",
                    mv.house(),
                    side_text(child.to_move())
                );
            }
        }
    });
    Ok(())
}
