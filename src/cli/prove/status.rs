//! `kalah prove --status`: where a campaign stands, read from its ledgers.

use std::path::{Path, PathBuf};

use kalah::prove::certificate::{self, Certificate};
use kalah::prove::fact::Bounds;
use kalah::prove::ledger::Ledger;
use kalah::prove::{self, Status};
use kalah::{AnyPosition, Lanes, Position};
use serde_json::json;

use super::super::CliError;
use super::super::args::{parse_position, print_json};
use super::super::books::{bounds_text, signed, value_range};
use super::super::human::{human_count, human_seconds};
use super::{ProveArgs, ledger_root, prove_error, read_ledgers};

pub fn run(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    kalah::with_position!(ledger_root(args, path)?, root => run_on(args, path, root))
}

fn run_on<L: Lanes>(args: &ProveArgs, path: &PathBuf, root: Position<L>) -> Result<(), CliError> {
    let ledger = read_ledgers(path, args)?;
    if let Some(n) = args.leaves {
        let leaves = prove::next_leaves(root, &ledger, args.guess, args.all_moves, n as usize)
            .map_err(prove_error)?;
        print_leaves(root, &leaves, args.json);
        return Ok(());
    }
    let status = Status::of(root, &ledger, args.guess).map_err(prove_error)?;
    let cert = certified(args, path, root, &ledger)?;
    print_status(&status, args.json, args.guess.is_none(), Some(&cert));
    Ok(())
}

/// What the checks say of each bound, for people and as JSON.
pub struct Certified {
    lines: Vec<String>,
    json: serde_json::Value,
}

/// The certificate of `root`'s bounds by the checks beside `path` (or --checks) and
/// --read-checks.
fn certified<L: Lanes>(
    args: &ProveArgs,
    path: &Path,
    root: Position<L>,
    ledger: &Ledger<L>,
) -> Result<Certified, CliError> {
    let own = args
        .checks
        .clone()
        .unwrap_or_else(|| certificate::checks_path(path));
    let checks = super::certify::read_checks(&own, &args.read_checks, None)?;
    let cert = Certificate::of(root, ledger, &checks).map_err(prove_error)?;
    let ratio = checks.cost_ratio(ledger);
    let files: Vec<String> = std::iter::once(&own)
        .chain(&args.read_checks)
        .map(|p| p.display().to_string())
        .collect();
    let mut lines = vec![format!(
        "certificate ({} checks read from {}{}):",
        checks.len(),
        files.join(", "),
        super::certify::ratio_text(ratio)
    )];
    if cert.claims.is_empty() {
        lines.push("  no bound rests on a fact (the sowings and seeds alone prove them): nothing to certify".into());
    }
    for c in &cert.claims {
        lines.push(format!(
            "  {}",
            super::certify::claim_text(c, ledger, ratio)
        ));
    }
    let claimed = cert
        .to_check(ledger, None)
        .into_iter()
        .filter(|&i| checks.claimed(&ledger.facts()[i].0))
        .count();
    if claimed > 0 {
        lines.push(format!(
            "  ({claimed} of the facts not certified have checks this installation did not write: \
             claims until proven again here)"
        ));
    }
    if cert.claims.iter().any(|c| !c.is_certified()) {
        lines.push(format!(
            "  (kalah prove --certify {} proves the facts left again)",
            path.display()
        ));
    }
    let json = json!({
        "checks": checks.len(),
        "files": files,
        "claims": cert.claims.iter().map(|c| super::certify::claim_json(c, ledger, &checks, ratio)).collect::<Vec<_>>(),
    });
    Ok(Certified { lines, json })
}

/// The root most facts of `ledger` name, as a position.
pub(super) fn root_named<L: Lanes>(ledger: &Ledger<L>) -> Result<AnyPosition, CliError> {
    let (fact, origin) = prove::root_of(ledger).ok_or_else(|| {
        CliError::input("the ledger names no root: give the position (or -m and -n)")
    })?;
    let literal = fact
        .root
        .as_deref()
        .expect("root_of names a fact with a root");
    let root = parse_position(literal, None, fact.position.rules())?;
    let seeds = kalah::with_position!(&root, p => p.seeds_on_board());
    if seeds > 255 {
        return Err(CliError::input(format!(
            "{origin}: the root {literal} is too large for kalah prove"
        )));
    }
    Ok(root)
}

pub fn bounds_json(b: Bounds) -> serde_json::Value {
    json!({"lower": b.lower, "upper": b.upper, "exact": b.is_exact().then_some(b.lower)})
}

/// `from_lower`: the next test was worked out with no guess (from the lower bound), as
/// `--status` without `--guess` does: said, since a campaign tests against its own guess.
/// With `cert`, what the checks say of each bound too.
pub fn print_status<L: Lanes>(
    s: &Status<L>,
    json: bool,
    from_lower: bool,
    cert: Option<&Certified>,
) {
    let root = &s.root;
    let widest = value_range(root);
    if json {
        print_json(&json!({
            "houses": root.houses_per_side(),
            "rules": root.rules().as_str(),
            "position": root.to_string(),
            "to_move": super::super::args::side_json(root.to_move()),
            "value": bounds_json(s.value),
            "moves": s.moves.iter().map(|(mv, b)| {
                let mut v = bounds_json(*b);
                v["house"] = json!(mv.house());
                v
            }).collect::<Vec<_>>(),
            "best_moves": s.best_moves().map(|(best, open)| json!({
                "best": best.iter().map(|m| m.house()).collect::<Vec<_>>(),
                "undecided": open.iter().map(|m| m.house()).collect::<Vec<_>>(),
            })),
            "facts": s.facts,
            "over_budget": s.over_budget,
            "harvested": s.harvested,
            "nodes": s.nodes,
            "cpu_s": (s.cpu_s * 10.0).round() / 10.0,
            "tree": s.tree,
            "test": s.beta.map(|b| json!({"beta": b, "open_leaves": s.open_leaves,
                "proof": (!prove::is_infinite(s.proof)).then_some(s.proof),
                "disproof": (!prove::is_infinite(s.disproof)).then_some(s.disproof)})),
            "recent": {"tests": s.recent, "over_budget": s.recent_over},
            "torn": s.torn.iter().map(|(p, n)| json!({"file": p.display().to_string(), "bytes": n})).collect::<Vec<_>>(),
            "certificate": cert.map(|c| c.json.clone()),
        }));
        return;
    }
    let side = root.to_move().map_or("?".to_owned(), |s| s.to_string());
    println!(
        "{root} ({} houses a side), {} rules, {side} to move",
        root.houses_per_side(),
        root.rules()
    );
    println!(
        "value: {} for {side}, stores included",
        bounds_text(s.value, widest)
    );
    for (mv, b) in &s.moves {
        println!("  move {:>2}: {}", mv.house(), bounds_text(*b, widest));
    }
    if let Some((best, open)) = s.best_moves() {
        if open.is_empty() {
            println!(
                "best first moves: {} (every other move is proven worse)",
                houses(&best)
            );
        } else {
            println!(
                "best first moves: {}; {} may be best too (`--all-moves` decides that first)",
                if best.is_empty() {
                    "none proven yet".to_owned()
                } else {
                    houses(&best)
                },
                houses(&open)
            );
        }
    }
    let tests = s.facts - s.harvested;
    let mean = if tests > 0 {
        s.cpu_s / tests as f64
    } else {
        0.0
    };
    let kept = if s.harvested > 0 {
        format!(
            ", {} kept from the tests over budget (subtrees they finished)",
            s.harvested
        )
    } else {
        String::new()
    };
    println!(
        "{} facts ({} over budget, split{kept}), {} nodes, {} of CPU ({:.1} s a test); {} positions in the tree",
        s.facts,
        s.over_budget,
        human_count(s.nodes),
        human_seconds(s.cpu_s),
        mean,
        s.tree
    );
    match s.beta {
        None => {
            let open: Vec<kalah::Move> = s
                .moves
                .iter()
                .filter(|(_, b)| !b.is_exact())
                .map(|&(mv, _)| mv)
                .collect();
            if open.is_empty() {
                println!("proven: nothing remains");
            } else {
                // The value is; the moves are an --all-moves campaign's work, not done.
                println!(
                    "proven: the value; not yet the exact value of move{} {} (`--all-moves` goes on with them)",
                    if open.len() == 1 { "" } else { "s" },
                    houses(&open)
                );
            }
        }
        Some(beta) => {
            let number = |n: u64| {
                if prove::is_infinite(n) {
                    "never".to_owned()
                } else {
                    n.to_string()
                }
            };
            println!(
                "next{}: is the value >= {}? {} open leaves; at least {} more answers prove it, {} disprove it (if no leaf is split); at {:.1} s a test, the open leaves alone take {}",
                if from_lower {
                    " (from the lower bound; the campaign tests against its own guess, --guess G \
                     shows another)"
                } else {
                    ""
                },
                signed(beta),
                s.open_leaves,
                number(s.proof),
                number(s.disproof),
                mean,
                human_seconds(mean * s.open_leaves as f64)
            );
        }
    }
    // Nearly every recent test split: the estimate above only shrinks if answers come.
    if s.beta.is_some() && s.recent >= 10 && s.recent_over * 10 >= s.recent * 9 {
        println!(
            "of the last {} tests, {} ran out of their budget and were split: at this budget the tree grows faster than answers close it (a larger --budget splits less; each test then takes longer)",
            s.recent, s.recent_over
        );
    }
    for (path, bytes) in &s.torn {
        println!(
            "note: {} ends in a torn line of {bytes} bytes (a worker killed mid-write, or writing now); it is not read",
            path.display()
        );
    }
    for line in cert.iter().flat_map(|c| &c.lines) {
        println!("{line}");
    }
}

/// Moves as their houses, for people: `5, 8`.
fn houses(moves: &[kalah::Move]) -> String {
    let h: Vec<String> = moves.iter().map(|m| m.house().to_string()).collect();
    h.join(", ")
}

/// The open leaves of the next test (see `--leaves`), each with its test as `analyze
/// --at-least` asks it: value (stores included) at least f's threshold plus the stores. The
/// JSON names the root and its rules, which `analyze` must be given with each leaf.
fn print_leaves<L: Lanes>(root: Position<L>, leaves: &[(Position<L>, i32)], json: bool) {
    let at_least = |leaf: &Position<L>, t: i32| t + leaf.store_difference();
    if json {
        print_json(&json!({
            "root": root.to_string(),
            "rules": root.rules().as_str(),
            "leaves": leaves.iter().map(|(leaf, t)| json!({
                "position": leaf.to_string(),
                "to_move": super::super::args::side_json(leaf.to_move()),
                "seeds": leaf.board().seeds(),
                "at_least": at_least(leaf, *t),
            })).collect::<Vec<_>>(),
        }));
        return;
    }
    if leaves.is_empty() {
        println!("no open leaf: the campaign has nothing left to test");
    }
    for (leaf, t) in leaves {
        let side = leaf.to_move().map_or("?".to_owned(), |s| s.to_string());
        println!(
            "{leaf}  {side} to move, {} seeds: value >= {}?",
            leaf.board().seeds(),
            signed(at_least(leaf, *t))
        );
    }
}
