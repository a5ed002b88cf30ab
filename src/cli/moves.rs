//! `kalah moves`: every legal move and what it does.

use clap::Args;
use kalah::play::PlayRules;
use kalah::{Move, Side, with_position};
use serde_json::json;

use super::CliError;
use super::args::{
    PlayRulesArg, PositionArg, header, play_literal, print_json, side_json, side_text,
};
use super::show::{play_header, rules_note};

/// List every legal move with the position it leads to and what it does: an extra turn (the
/// last seed lands in the mover's store), a capture (seeds taken, the last one included), or
/// the end of the game (a side is empty; under Kalah rules the houses are swept into the
/// stores). Every rule set `kalah play` plays is known: the output names it.
#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    position: PositionArg,
    #[command(flatten)]
    rules: PlayRulesArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// One legal move and what it does.
struct Row {
    mv: Move,
    /// Seeds in the house sown.
    seeds: u32,
    extra_turn: bool,
    captured: u32,
    game_over: bool,
    /// The position after the move (KGP literal).
    position: String,
    to_move: Option<Side>,
    /// South's store, North's store.
    stores: [u32; 2],
}

pub fn run(args: MovesArgs) -> Result<(), CliError> {
    let rules = match args.rules.rules {
        PlayRules::Kalah(rules) => rules,
        play => return moves_play(&args, play),
    };
    let pos = args.position.parse(rules)?;
    with_position!(pos, p => {
        let rows: Vec<Row> = p
            .legal_moves()
            .into_iter()
            .map(|mv| {
                let seeds = p.houses(p.to_move().expect("legal moves exist"))[mv.index()];
                let (child, s) = p.play_unchecked(mv);
                Row {
                    mv,
                    seeds,
                    extra_turn: s.extra_turn,
                    captured: s.captured,
                    game_over: s.game_over,
                    position: child.to_string(),
                    to_move: child.to_move(),
                    stores: [child.store(Side::South), child.store(Side::North)],
                }
            })
            .collect();
        if args.json {
            let mut out = header(&p);
            out["moves"] = rows_json(&rows);
            print_json(&out);
        } else {
            println!(
                "{} ({} houses a side, {} rules), {}",
                p, p.houses_per_side(), p.rules(), side_text(p.to_move())
            );
            print_rows(&rows, "extra turn");
        }
    });
    Ok(())
}

/// `moves` under a rule set only play knows (awari-basic, mankalah).
fn moves_play(args: &MovesArgs, rules: PlayRules) -> Result<(), CliError> {
    let state = args.position.parse_play(rules)?;
    let rows: Vec<Row> = state
        .legal_moves()
        .into_iter()
        .map(|mv| {
            let seeds = state.houses(state.to_move().expect("legal moves exist"))[mv.index()];
            let mut child = state;
            let s = child.play(mv);
            Row {
                mv,
                seeds,
                extra_turn: s.extra_turn,
                captured: s.captured,
                game_over: s.game_over,
                position: play_literal(&child),
                to_move: child.to_move(),
                stores: [child.store(Side::South), child.store(Side::North)],
            }
        })
        .collect();
    if args.json {
        let mut out = play_header(&state);
        out["moves"] = rows_json(&rows);
        print_json(&out);
        return Ok(());
    }
    println!(
        "{} ({} houses a side, {rules} rules), {}",
        play_literal(&state),
        state.houses_per_side(),
        side_text(state.to_move())
    );
    println!("{}", rules_note(&state));
    let extra = match rules {
        PlayRules::AwariBasic => "extra move",
        _ => "extra turn",
    };
    print_rows(&rows, extra);
    Ok(())
}

/// The moves as JSON.
fn rows_json(rows: &[Row]) -> serde_json::Value {
    rows.iter()
        .map(|r| {
            json!({
                "house": r.mv.house(),
                "seeds": r.seeds,
                "extra_turn": r.extra_turn,
                "captured": r.captured,
                "game_over": r.game_over,
                "position": r.position,
                "to_move": side_json(r.to_move),
                "stores": {"south": r.stores[0], "north": r.stores[1]},
            })
        })
        .collect()
}

/// The moves as a table, one a line; `extra` names an extra turn.
fn print_rows(rows: &[Row], extra: &str) {
    if rows.is_empty() {
        println!("no legal moves: the game is over");
    }
    for r in rows {
        let mut what = Vec::new();
        if r.extra_turn {
            what.push(extra.to_owned());
        }
        if r.captured > 0 {
            what.push(format!("captures {}", r.captured));
        }
        if r.game_over {
            what.push("ends the game".to_owned());
        }
        let what = if what.is_empty() {
            "-".to_owned()
        } else {
            what.join(", ")
        };
        let seeds = format!("{} seed{}", r.seeds, if r.seeds == 1 { "" } else { "s" });
        println!(
            "house {:>2}  {seeds:<9} {what:<26} -> {}  ({})",
            r.mv.house(),
            r.position,
            side_text(r.to_move)
        );
    }
}
