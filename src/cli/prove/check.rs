//! `kalah prove --check`: a sample of a ledger's facts proven again, by another path.

use std::path::PathBuf;
use std::time::Instant;

use kalah::prove::fact::Fact;
use kalah::prove::ledger::Ledger;
use kalah::prove::{self, Recheck};
use kalah::{Algorithm, Lanes, Rules, Solver, SolverConfig};
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::{AnyLedger, ProveArgs, config_with, prove_error, read_any_ledgers};

pub fn run(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    match read_any_ledgers(path, args)? {
        AnyLedger::Narrow(ledger) => check_sample(args, ledger),
        AnyLedger::Wide(ledger) => check_sample(args, ledger),
    }
}

/// A sample of `ledger`'s facts proven again.
fn check_sample<L: Lanes>(args: &ProveArgs, ledger: Ledger<L>) -> Result<(), CliError> {
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let informative: Vec<usize> = (0..ledger.facts().len())
        .filter(|&i| ledger.facts()[i].0.is_informative())
        .collect();
    let want = (args.sample.unwrap_or(1) as usize).min(informative.len());
    // A draw without repeats: a partial Fisher-Yates shuffle.
    let mut rng = kalah::Rng::new(seed);
    let mut pool = informative;
    for i in 0..want {
        let j = i + rng.below((pool.len() - i) as u64) as usize;
        pool.swap(i, j);
    }
    pool.truncate(want);
    pool.sort_unstable();
    let mut solvers: Vec<((usize, Rules), Solver)> = Vec::new();
    let mut wrong = 0;
    let mut results = Vec::new();
    let started = Instant::now();
    let mut skipped = 0;
    for &i in &pool {
        let (fact, origin) = &ledger.facts()[i];
        if let Some(why) = alphabeta_too_long(args, fact) {
            skipped += 1;
            eprintln!("{origin}: not checked: {why}");
            continue;
        }
        let key = (fact.position.houses_per_side(), fact.position.rules());
        if !solvers.iter().any(|(k, _)| *k == key) {
            solvers.push((key, check_solver(args, key.0, key.1, fact)?));
        }
        let solver = &solvers.iter().find(|(k, _)| *k == key).expect("made").1;
        let verdict = prove::recheck(fact, solver).map_err(prove_error)?;
        let (ok, why) = match &verdict {
            Recheck::Wrong(why) => {
                wrong += 1;
                (false, Some(why.clone()))
            }
            _ => (true, None),
        };
        if args.json {
            results.push(
                json!({"line": origin.line, "file": origin.file.display().to_string(),
                "position": fact.position.to_string(), "holds": ok, "why": why}),
            );
        } else {
            match why {
                None => eprintln!(
                    "{origin}: holds ({} in [{}, {}])",
                    fact.position, fact.lower, fact.upper
                ),
                Some(why) => println!("{origin}: WRONG: {why}"),
            }
        }
    }
    let checked = pool.len() - skipped;
    if args.json {
        print_json(
            &json!({"checked": checked, "skipped": skipped, "wrong": wrong, "by": args.by,
            "seed": seed, "time_ms": started.elapsed().as_millis() as u64, "facts": results}),
        );
    } else {
        let not = if skipped > 0 {
            format!(" ({skipped} drawn but not checked: too large for --by alphabeta)")
        } else {
            String::new()
        };
        println!(
            "{checked} facts proven again by {} (seed {seed}): {} hold, {wrong} wrong, {:.1} s{not}",
            args.by,
            checked - wrong,
            started.elapsed().as_secs_f64()
        );
    }
    if wrong > 0 {
        return Err(CliError::failure(format!(
            "{wrong} of {checked} facts checked do not hold"
        )));
    }
    if skipped > 0 {
        return Err(CliError::failure(format!(
            "{skipped} of the facts drawn could not be checked by plain alpha-beta (too large)"
        )));
    }
    Ok(())
}

/// Why `fact` is not checked by plain alpha-beta (--by alphabeta: no table, no levels), if
/// the cost model puts that past an hour ([`kalah::search::cost::estimated_alphabeta_seconds`]).
pub fn alphabeta_too_long<L: Lanes>(args: &ProveArgs, fact: &Fact<L>) -> Option<String> {
    if args.by != "alphabeta" {
        return None;
    }
    let (houses, seeds) = (
        fact.position.houses_per_side(),
        fact.position.seeds_on_board(),
    );
    let rules = fact.position.rules();
    let seconds = kalah::search::cost::estimated_alphabeta_seconds(houses, seeds, rules);
    (seconds > 3600.0).then(|| {
        format!(
            "{seeds} seeds are too many for plain alpha-beta (about {} by the cost model); \
             --by lower-levels or no-db check it with the table",
            super::super::human::human_duration(std::time::Duration::from_secs_f64(
                seconds.min(1e12)
            ))
        )
    })
}

/// The levels `0..=top` of the database in `dir`, mapped (the other path of `lower-levels`).
pub fn levels_up_to(
    dir: &std::path::Path,
    houses: usize,
    rules: Rules,
    top: u32,
) -> Result<std::sync::Arc<kalah::db::Tablebase>, CliError> {
    let db =
        kalah::db::Tablebase::open_up_to(dir, houses, rules, kalah::db::Access::Map, Some(top))
            .map_err(|e| {
                CliError::failure(format!(
                    "cannot open the database in {}: {e}",
                    dir.display()
                ))
            })?;
    Ok(std::sync::Arc::new(db))
}

/// The solver of --check for facts of `houses` houses under `rules`, by the path --by names.
fn check_solver<L: Lanes>(
    args: &ProveArgs,
    houses: usize,
    rules: Rules,
    fact: &Fact<L>,
) -> Result<Solver, CliError> {
    if args.by == "alphabeta" {
        let default = SolverConfig::default();
        let config = SolverConfig {
            threads: args.threads.unwrap_or(default.threads),
            algorithm: Algorithm::AlphaBeta,
            ..default
        };
        return super::super::search::new_solver(houses, rules, config, None);
    }
    let db = if args.by == "lower-levels" {
        match args.db.open(houses, rules)? {
            Some(db) if db.max_level() >= 2 => {
                let top = db.max_level() - 2;
                let dir = db.dir().to_path_buf();
                Some(levels_up_to(&dir, houses, rules, top)?)
            }
            _ => None,
        }
    } else {
        None
    };
    let seeds = fact.position.seeds_on_board();
    let mut config = config_with(args, houses, rules, seeds, db.as_ref());
    if args.by == "serial" {
        config.threads = 1;
    }
    super::super::search::new_solver(houses, rules, config, db)
}
