//! The checks shipped with kalah (`data/proofs/*.checks.jsonl`, `data/books/*.checks.jsonl`),
//! built into the binary and trusted without a mark (`kalah::prove::shipped`): every one is
//! built in, reads, and vouches for the fact it was made of and for no other; and the facts
//! they certify are proven once more here, by a third path: no levels at all, one thread, an
//! empty table, each bound within a node budget. `cargo test` proves the cheapest few of each
//! file (within 2 M nodes a bound); `cargo test --test shipped_checks -- --ignored` every one
//! that fits 200 M nodes a bound (hours), and says how many did not.

use std::collections::BTreeSet;
use std::path::Path;

use kalah::prove::certificate::{Check, Checks, Verdict};
use kalah::prove::fact::{Bounds, Fact};
use kalah::prove::ledger::Ledger;
use kalah::prove::shipped::CHECKED;
use kalah::{Solver, SolverConfig, Wide};

/// A fact with the check that certifies it.
type Certified = (Fact<Wide>, Check);

/// The shipped ledgers with their checks, read: each fact with the check that certifies it.
fn certified() -> Vec<(&'static str, Vec<Certified>)> {
    CHECKED
        .iter()
        .map(|&(name, ledger_text, checks_text)| {
            let mut ledger = Ledger::<Wide>::new();
            ledger
                .add_text(Path::new(name), ledger_text)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut checks = Checks::with_key(None);
            for line in checks_text.lines() {
                checks.add(Check::from_line(line).unwrap_or_else(|e| panic!("{name}: {e}")));
            }
            let mut pairs = Vec::new();
            let mut seen = BTreeSet::new();
            for (fact, _) in ledger.facts() {
                if let Verdict::Holds(c) = checks.verdict(fact)
                    && seen.insert(c.digest.clone())
                {
                    pairs.push((fact.clone(), c.clone()));
                }
            }
            (name, pairs)
        })
        .collect()
}

#[test]
fn every_shipped_checks_file_is_built_in_and_vouches_for_its_own_facts_only() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut on_disk = BTreeSet::new();
    for dir in ["data/proofs", "data/books"] {
        for entry in std::fs::read_dir(here.join(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".checks.jsonl") {
                on_disk.insert(format!("{dir}/{stem}.jsonl"));
            }
        }
    }
    let built_in: BTreeSet<String> = CHECKED.iter().map(|(n, _, _)| n.to_string()).collect();
    assert_eq!(
        on_disk, built_in,
        "every checks file of data/ is in kalah::prove::shipped::CHECKED"
    );
    for (name, pairs) in certified() {
        let lines = CHECKED
            .iter()
            .find(|(n, _, _)| *n == name)
            .unwrap()
            .2
            .lines()
            .count();
        // Every check line but those of a fact checked twice certifies its fact.
        assert!(
            !pairs.is_empty() && pairs.len() * 10 >= lines * 9,
            "{name}: {} of {lines} checks certify a fact",
            pairs.len()
        );
        // The same check read with another fact of the same digest (a fact forged to collide)
        // vouches for nothing: the shipped check is bound to its fact's whole text.
        let (fact, check) = &pairs[0];
        let mut other = fact.clone();
        other.kalah = "forged".into();
        let mut checks = Checks::with_key(None);
        let mut forged = check.clone();
        forged.digest = kalah::prove::certificate::digest(&other);
        checks.add(forged);
        assert!(
            matches!(checks.verdict(&other), Verdict::Unchecked),
            "{name}: a shipped check vouches for another fact"
        );
        assert!(checks.claimed(&other));
    }
}

/// Proves `fact` again with `solver` (no levels), each bound within `budget` nodes: `Some(true)`
/// if it holds, `Some(false)` if not, `None` past the budget.
fn reprove(fact: &Fact<Wide>, solver: &Solver, budget: u64) -> Option<bool> {
    let board = fact.board();
    let claimed = fact.f_bounds();
    let widest = Bounds::widest(board.seeds(), fact.position.rules());
    if claimed.lower > widest.lower {
        let v = solver.test(board, claimed.lower, Some(budget)).unwrap()?;
        if v < claimed.lower {
            return Some(false);
        }
    }
    if claimed.upper < widest.upper {
        let v = solver
            .test(board, claimed.upper + 1, Some(budget))
            .unwrap()?;
        if v > claimed.upper {
            return Some(false);
        }
    }
    Some(true)
}

/// Proves again, with no levels, the facts of each shipped checks file, cheapest check first,
/// at most `per_file` of them (all if `None`), each bound within `budget` nodes; asserts that
/// none is wrong. Returns, for each file, how many were proven and how many ran past the
/// budget.
fn reprove_shipped(per_file: Option<usize>, budget: u64) -> Vec<(&'static str, usize, usize)> {
    let mut report = Vec::new();
    for (name, mut pairs) in certified() {
        pairs.sort_by_key(|(f, c)| (c.nodes, f.position.seeds_on_board()));
        let (houses, rules) = {
            let p = &pairs[0].0.position;
            (p.houses_per_side(), p.rules())
        };
        let solver = Solver::new(
            houses,
            rules,
            SolverConfig {
                threads: 1,
                tt_mib: 16,
                ..SolverConfig::default()
            },
        )
        .unwrap();
        let (mut proven, mut over) = (0, 0);
        for (fact, _) in pairs.iter().take(per_file.unwrap_or(usize::MAX)) {
            match reprove(fact, &solver, budget) {
                Some(true) => proven += 1,
                Some(false) => panic!("{name}: {} does not hold", fact.to_line()),
                None => over += 1,
            }
        }
        eprintln!(
            "{name}: {proven} of {} certified facts proven again without levels, {over} past {budget} nodes a bound",
            pairs.len()
        );
        report.push((name, proven, over));
    }
    report
}

/// The cheapest facts of each file (by what their checks took), three a file, each bound
/// within 2 M nodes with no levels: Kalah(6,6), (7,3), (7,4) and (8,3) have such facts; the
/// books' and the larger campaigns' need their levels (or hours: the ignored test below).
#[test]
fn the_cheapest_facts_of_the_shipped_checks_are_proven_again_without_levels() {
    let report = reprove_shipped(Some(3), 2_000_000);
    let files = report.iter().filter(|(_, proven, _)| *proven > 0).count();
    assert!(
        files >= 5,
        "only {files} files had a fact proven again: {report:?}"
    );
}

/// Every fact the shipped checks certify, each bound within 200 M nodes with no levels (hours
/// on two cores): run by hand after new checks are shipped.
#[test]
#[ignore]
fn every_shipped_fact_within_a_budget_is_proven_again_without_levels() {
    let report = reprove_shipped(None, 200_000_000);
    assert!(
        report.iter().all(|(_, proven, _)| *proven > 0),
        "{report:?}"
    );
}
