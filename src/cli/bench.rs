//! `kalah bench`: a fixed suite solved on one thread, its node count a regression fingerprint.

use std::time::Instant;

use clap::Args;
use kalah::{Position, Rules, SolverConfig, Variant};
use serde_json::json;

use super::CliError;
use super::args::print_json;
use super::search::new_solver;

/// Solve a fixed suite of positions with one thread and print one line:
/// `N nodes, T ms, X nodes/s`. The node count is a regression fingerprint: it changes only
/// when the search changes.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Transposition table size in MiB, 1 to the machine's physical memory (part of the
    /// fingerprint).
    #[arg(
        long = "tt-mb",
        value_name = "MIB",
        default_value_t = 64,
        value_parser = super::args::mib()
    )]
    tt_mb: usize,
    /// Print JSON: {"nodes", "time_ms", "nodes_per_second", "values"}.
    #[arg(long)]
    json: bool,
}

/// The bench suite: (houses, seeds, rules).
const BENCH_SUITE: [(usize, u64, Rules); 6] = [
    (4, 4, Rules::Standard),
    (4, 4, Rules::EmptyCapture),
    (5, 3, Rules::Standard),
    (5, 3, Rules::EmptyCapture),
    (6, 3, Rules::Standard),
    (6, 3, Rules::EmptyCapture),
];

pub fn run(args: BenchArgs) -> Result<(), CliError> {
    let mut nodes = 0;
    let mut values = Vec::new();
    let started = Instant::now();
    for (m, n, rules) in BENCH_SUITE {
        let variant = Variant::new(m, n, rules).expect("bench variants are valid");
        let p = Position::<kalah::Narrow>::start(variant).expect("bench variants are narrow");
        let config = SolverConfig {
            threads: 1,
            tt_mib: args.tt_mb,
            ..SolverConfig::default()
        };
        let solver = new_solver(m, rules, config, None)?;
        let f = solver
            .exact(p.board(), &mut |_| {})
            .map_err(|e| CliError::failure(format!("cannot solve: {e}")))?;
        values.push(format!("Kalah({m},{n}) {rules} {f:+}"));
        nodes += solver.nodes();
    }
    let elapsed = started.elapsed();
    let rate = nodes as f64 / elapsed.as_secs_f64().max(1e-9);
    if args.json {
        print_json(&json!({
            "nodes": nodes,
            "time_ms": elapsed.as_millis() as u64,
            "nodes_per_second": rate.round() as u64,
            "values": values,
        }));
    } else {
        println!(
            "{nodes} nodes, {} ms, {:.0} nodes/s",
            elapsed.as_millis(),
            rate
        );
    }
    Ok(())
}
