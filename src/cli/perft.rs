//! `kalah perft`: count sowing sequences, the check of the move generator.

use std::time::Instant;

use clap::Args;
use kalah::reference::RefPosition;
use kalah::{AnyPosition, Lanes, Position, Rules, Side, Variant, divide, perft, with_position};
use serde_json::json;

use super::CliError;
use super::args::{header, print_json, rules_parser, side_parser, side_text};

/// Count the sowing sequences of a given length (perft).
///
/// One ply is one sowing, whoever makes it (an extra turn is a ply of its own); a finished game
/// has no sowings. Count from the start of Kalah(M,N) with --houses and --seeds, or from a
/// POSITION.
#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Position to count from (instead of --houses/--seeds): a KGP board literal.
    #[arg(value_name = "POSITION", conflicts_with_all = ["houses", "seeds"], required_unless_present = "houses")]
    position: Option<String>,

    /// Houses a side, M (1 to 12), for the start position of Kalah(M,N).
    #[arg(
        long,
        short = 'm',
        requires = "seeds",
        value_parser = super::args::count::<usize>(super::args::HOUSES)
    )]
    houses: Option<usize>,

    /// Seeds a house at the start, N (1 to 32767, and 2·M·N at most 65535).
    #[arg(
        long,
        short = 'n',
        requires = "houses",
        value_parser = super::args::count::<u64>(super::args::SEEDS)
    )]
    seeds: Option<u64>,

    /// Plies (sowings) to count, 0 to 1000 (the count recurses this deep; games of the small
    /// variants end well within it, and on Kalah(6,4) each ply already multiplies the time by
    /// about 5: 12 plies take 2 s).
    #[arg(long, short = 'd', value_parser = super::args::count::<u32>(0..=1000))]
    depth: u32,

    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,

    /// Side to move in POSITION (default South).
    #[arg(long, value_name = "SIDE", value_parser = side_parser())]
    to_move: Option<Side>,

    /// Also print the count below each legal first move.
    #[arg(long)]
    divide: bool,

    /// Count with the slow, plain reference implementation instead of the packed board (a check).
    #[arg(long)]
    reference: bool,

    /// Print JSON: {"nodes": ..., "depth": ..., "rules": ..., ...}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: PerftArgs) -> Result<(), CliError> {
    let (pos, variant) = match (&args.position, args.houses, args.seeds) {
        (Some(text), _, _) => (
            super::args::parse_position(text, args.to_move, args.rules)?,
            None,
        ),
        (None, Some(m), Some(n)) => {
            if args.to_move.is_some() {
                return Err(CliError::input(
                    "--to-move applies to a POSITION; the start position has South to move",
                ));
            }
            let variant = Variant::new(m, n, args.rules)
                .map_err(|e| CliError::input(format!("invalid variant: {e}")))?;
            (AnyPosition::start(variant), Some(variant))
        }
        _ => {
            return Err(CliError::input(
                "give a POSITION or both --houses and --seeds",
            ));
        }
    };
    with_position!(pos, p => report(&p, variant, &args));
    Ok(())
}

fn report<L: Lanes>(p: &Position<L>, variant: Option<Variant>, args: &PerftArgs) {
    let started = Instant::now();
    let split: Vec<(usize, u64)> = if args.reference {
        let r = RefPosition::from_setup(&p.to_setup(), p.rules());
        if args.divide && args.depth > 0 {
            r.moves()
                .into_iter()
                .map(|h| {
                    let mut child = r.clone();
                    child.play(h);
                    (h, child.perft(args.depth - 1))
                })
                .collect()
        } else {
            vec![(0, r.perft(args.depth))]
        }
    } else if args.divide && args.depth > 0 {
        divide(p, args.depth)
            .into_iter()
            .map(|(mv, n)| (mv.house(), n))
            .collect()
    } else {
        vec![(0, perft(p, args.depth))]
    };
    let elapsed = started.elapsed();
    let nodes: u64 = split.iter().map(|&(_, n)| n).sum();
    let per_second = nodes as f64 / elapsed.as_secs_f64().max(1e-9);
    let divided = args.divide && args.depth > 0;
    let name = variant.map(|v| format!("Kalah({},{})", v.houses(), v.seeds()));
    let engine = if args.reference {
        "reference"
    } else {
        "packed"
    };
    if args.json {
        let mut out = header(p);
        out["variant"] = json!(name);
        out["depth"] = json!(args.depth);
        out["nodes"] = json!(nodes);
        out["time_ms"] = json!(elapsed.as_millis() as u64);
        out["nodes_per_second"] = json!(per_second.round() as u64);
        out["engine"] = json!(engine);
        if divided {
            out["divide"] = split
                .iter()
                .map(|&(h, n)| json!({"house": h, "nodes": n}))
                .collect();
        }
        print_json(&out);
    } else {
        let title = name.unwrap_or_else(|| format!("{} houses a side", p.houses_per_side()));
        println!(
            "{title}, {} rules: {p} ({})",
            p.rules(),
            side_text(p.to_move())
        );
        if divided {
            for (h, n) in &split {
                println!("  house {h:>2}: {n}");
            }
        }
        println!(
            "perft {}: {nodes} sowings in {:.3} s ({:.1} M sowings/s, {engine})",
            args.depth,
            elapsed.as_secs_f64(),
            per_second / 1e6
        );
    }
}
