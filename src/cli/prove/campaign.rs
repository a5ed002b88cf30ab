//! `kalah prove`: the campaign itself, one null-window test after another, each fact appended
//! to the ledger.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kalah::prove::fact::{Bounds, Fact};
use kalah::prove::{Campaign, Config, ProveError, Step};
use kalah::{Lanes, Position};
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::super::books::{bounds_text, value_range};
use super::super::human::human_count;
use super::{ProveArgs, campaign_solver, given_root, prove_error};

pub fn run(args: &ProveArgs) -> Result<(), CliError> {
    let root = given_root(args)?
        .ok_or_else(|| CliError::input("give the root: a position, or the start with -m M -n N"))?;
    kalah::with_position!(root, root => run_on(args, root))
}

/// The campaign of `root`, in the lanes that hold its boards.
fn run_on<L: Lanes>(args: &ProveArgs, root: Position<L>) -> Result<(), CliError> {
    let own = args.ledger.as_ref().expect("clap requires --ledger");
    let (solver, db) = campaign_solver(args, &root)?;
    let config = Config {
        budget: args.budget,
        share: args.worker,
        all_moves: args.all_moves,
        ..Config::default()
    };
    let mut campaign = Campaign::open(
        root,
        own,
        &args.read,
        &solver,
        db.as_deref(),
        config,
        args.guess,
    )
    .map_err(prove_error)?;
    let levels = match &db {
        Some(db) => super::super::db_choice::files_line(db),
        None => args.db.none_found(root.houses_per_side(), root.rules()),
    };
    if !args.json {
        eprintln!(
            "proving {root} ({} houses, {} rules); ledger {}; {} facts read; budget {} nodes a test; {levels}",
            root.houses_per_side(),
            root.rules(),
            own.display(),
            campaign.ledger().facts().len(),
            human_count(args.budget),
        );
    }
    // Ctrl-C stops the test in flight (its work is lost but for what --table-file keeps;
    // every fact before it is on disk).
    kalah::catch_interrupt();
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        let result = (|| -> Result<_, CliError> {
            let cancel = &solver;
            super::super::cancel_on_interrupt(scope, &done, move || cancel.cancel())?;
            // The table saved every --save-every minutes while the tests run.
            let solver = &solver;
            args.table.save_while(scope, &done, move || Some(solver))?;
            Ok(campaign_loop(args, &mut campaign, started))
        })();
        done.store(true, Ordering::Relaxed);
        result
    })?;
    // Whatever ended the campaign, the table keeps what its tests proved (a test stopped
    // midway stored only what it had finished).
    if let Some(line) = args.table.save(&solver) {
        eprintln!("{line}");
    }
    args.table.check_saved()?;
    match outcome {
        Err(ProveError::Solve(kalah::SolveError::Cancelled)) => {
            let kept = if args.table.period().is_some() {
                " (the table file keeps what it had searched)"
            } else {
                ""
            };
            eprintln!(
                "interrupted: the test in flight is dropped{kept}, every fact before it is in {}; the same command resumes",
                own.display()
            );
            let status = campaign.status().map_err(prove_error)?;
            super::status::print_status(&status, args.json, false, None);
            Err(CliError {
                message: "interrupted".into(),
                code: 130,
            })
        }
        Err(e) => Err(prove_error(e)),
        Ok(()) => {
            let status = campaign.status().map_err(prove_error)?;
            super::status::print_status(&status, args.json, false, None);
            Ok(())
        }
    }
}

fn campaign_loop<L: Lanes>(
    args: &ProveArgs,
    campaign: &mut Campaign<'_, L>,
    started: Instant,
) -> Result<(), ProveError> {
    let mut tests = 0u64;
    let mut idle_since: Option<Instant> = None;
    loop {
        if args.jobs.is_some_and(|n| tests >= n)
            || args.hours.is_some_and(|h| started.elapsed() >= h)
        {
            return Ok(());
        }
        match campaign.step()? {
            Step::Done => return Ok(()),
            Step::Idle => {
                let since = *idle_since.get_or_insert_with(Instant::now);
                if args.read.is_empty() {
                    // Nobody else can add the facts this worker waits for.
                    return Err(ProveError::Root(format!(
                        "every open leaf is another worker's (--worker {}/{}), and no other ledger is read (--read)",
                        args.worker.index, args.worker.count
                    )));
                }
                if since.elapsed() > Duration::from_secs(5) && since.elapsed().as_secs() % 60 == 5 {
                    eprintln!("waiting for the other workers' facts");
                }
                std::thread::sleep(Duration::from_secs(1));
                if kalah::interrupted() {
                    return Err(ProveError::Solve(kalah::SolveError::Cancelled));
                }
            }
            Step::Tested {
                fact,
                harvested,
                root,
            } => {
                idle_since = None;
                tests += 1;
                report_test(campaign, &fact, &harvested, root, tests, args.json);
            }
        }
    }
}

fn report_test<L: Lanes>(
    campaign: &Campaign<'_, L>,
    fact: &Fact<L>,
    harvested: &[Fact<L>],
    root: Bounds,
    n: u64,
    json: bool,
) {
    let kept: u64 = harvested.iter().map(|f| f.nodes).sum();
    let cpu_s = fact.cpu_s + harvested.iter().map(|f| f.cpu_s).sum::<f64>();
    if json {
        print_json(&json!({
            "test": n,
            "position": fact.position.to_string(),
            "seeds": fact.position.seeds_on_board(),
            "lower": fact.lower,
            "upper": fact.upper,
            "over_budget": fact.over_budget,
            "nodes": fact.nodes + kept,
            "harvested": {"facts": harvested.len(), "nodes": kept},
            "cpu_s": (cpu_s * 1000.0).round() / 1000.0,
            "root": super::status::bounds_json(root),
        }));
        return;
    }
    let answer = if fact.over_budget && harvested.is_empty() {
        "over budget: split into its moves".to_owned()
    } else if fact.over_budget {
        format!(
            "over budget: split into its moves, keeping {} subtrees it finished ({} nodes)",
            harvested.len(),
            human_count(kept)
        )
    } else {
        let b = Bounds {
            lower: fact.lower,
            upper: fact.upper,
        };
        bounds_text(b, value_range(&fact.position))
    };
    eprintln!(
        "test {n}: {} ({} seeds): {answer}; {} nodes, {:.1} s; root {}",
        fact.position,
        fact.position.seeds_on_board(),
        human_count(fact.nodes + kept),
        cpu_s,
        bounds_text(root, value_range(&campaign.root()))
    );
}
