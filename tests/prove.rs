//! Proof campaigns (`kalah::prove`, `kalah prove`): the value a campaign proves equals the
//! solver's, whatever the budget, the workers, the kills and the merges; a ledger that lies or
//! is damaged is caught.

mod cli_common;
mod temp_dir;

use std::path::{Path, PathBuf};
use std::time::Duration;

use kalah::prove::fact::Fact;
use kalah::prove::ledger::{Ledger, LedgerError, LedgerWriter};
use kalah::prove::{self, Campaign, Config, Recheck, Share, Status, Step};
use kalah::{Narrow, Position, Rules, Solver, SolverConfig, Variant};
use temp_dir::TempDir;

fn start(m: usize, n: u64, rules: Rules) -> Position<Narrow> {
    Position::start(Variant::new(m, n, rules).unwrap()).unwrap()
}

fn solver(m: usize, rules: Rules) -> Solver {
    solver_of(m, rules, 2)
}

/// A solver of `threads` threads (one: its node counts, and so which tests run over their
/// budget, do not depend on how the threads are scheduled).
fn solver_of(m: usize, rules: Rules, threads: usize) -> Solver {
    let config = SolverConfig {
        threads,
        tt_mib: 16,
        ..SolverConfig::default()
    };
    Solver::new(m, rules, config).unwrap()
}

/// The value the solver finds for `root`.
fn solved(root: &Position<Narrow>) -> i32 {
    let s = solver(root.houses_per_side(), root.rules());
    s.analyze(root, false, &mut |_| {}).unwrap().value
}

/// Runs a campaign of `root` to its end in `ledger`; returns the root's status.
fn campaign(root: Position<Narrow>, ledger: &Path, budget: u64, all_moves: bool) -> Status {
    campaign_on(root, ledger, budget, all_moves, 2)
}

/// [`campaign`] with a solver of `threads` threads.
fn campaign_on(
    root: Position<Narrow>,
    ledger: &Path,
    budget: u64,
    all_moves: bool,
    threads: usize,
) -> Status {
    let s = solver_of(root.houses_per_side(), root.rules(), threads);
    let config = Config {
        budget,
        all_moves,
        ..Config::default()
    };
    let mut c = Campaign::open(root, ledger, &[], &s, None, config, None).unwrap();
    for _ in 0..100_000 {
        match c.step().unwrap() {
            Step::Done => return c.status().unwrap(),
            Step::Tested { .. } => {}
            Step::Idle => panic!("one worker is never idle"),
        }
    }
    panic!("the campaign of {root} did not end");
}

#[test]
fn campaigns_prove_the_values_the_solver_finds() {
    let dir = TempDir::new("prove", "values");
    for rules in Rules::ALL {
        for (m, n) in [
            (4, 1),
            (4, 2),
            (4, 3),
            (4, 4),
            (5, 1),
            (5, 2),
            (5, 3),
            (5, 4),
            (6, 3),
        ] {
            let root = start(m, n, rules);
            let path = dir.0.join(format!("{m}-{n}-{rules}.jsonl"));
            // Budgets small enough that the root is split several levels deep; one thread, so
            // that whether a test runs over its budget does not depend on the scheduler.
            let status = campaign_on(root, &path, 20_000, false, 1);
            let value = solved(&root);
            assert!(
                status.value.is_exact(),
                "Kalah({m},{n}) {rules}: {status:?}"
            );
            assert_eq!(status.value.lower, value, "Kalah({m},{n}) {rules}");
            // The ledger alone gives the same answer.
            let mut ledger = Ledger::new();
            ledger.add_file(&path).unwrap();
            let again = Status::of(root, &ledger, None).unwrap();
            assert_eq!(again.value, status.value);
            // (Kalah(5,3) empty-capture, 30 seeds, now fits one budget after the first guess.)
            if 2 * m * n as usize >= 32 {
                assert!(
                    again.over_budget > 0,
                    "Kalah({m},{n}) {rules} was never split"
                );
            }
        }
    }
}

#[test]
fn every_first_move_gets_its_value() {
    let dir = TempDir::new("prove", "moves");
    for rules in Rules::ALL {
        let root = start(4, 3, rules);
        let status = campaign(root, &dir.0.join(format!("{rules}.jsonl")), 2_000, true);
        let s = solver(4, rules);
        let analysis = s.analyze(&root, true, &mut |_| {}).unwrap();
        assert_eq!(status.moves.len(), analysis.moves.len());
        for ((mv, bounds), expected) in status.moves.iter().zip(&analysis.moves) {
            assert_eq!(*mv, expected.mv);
            assert!(bounds.is_exact(), "{rules} move {}: {bounds:?}", mv.house());
            assert_eq!(bounds.lower, expected.value, "{rules} move {}", mv.house());
        }
    }
}

/// Once the value is proven, an `--all-moves` campaign first decides which moves are best (each
/// move that may be tested against the value), and only then makes the other moves' values exact:
/// a table of values needs the best moves, and a worse move's exact value can cost far more.
#[test]
fn all_moves_decides_the_best_moves_before_the_other_values() {
    let dir = TempDir::new("prove", "best-first");
    let mut exercised = 0;
    for rules in Rules::ALL {
        for (m, n) in [(4, 3), (5, 3), (6, 3), (5, 4)] {
            let root = start(m, n, rules);
            let path = dir.0.join(format!("{m}-{n}-{rules}.jsonl"));
            let s = solver_of(m, rules, 1);
            // A budget no test runs over: each test after the value's is of a first move's
            // position itself.
            let config = Config {
                budget: kalah::prove::fact::MAX_NODES,
                all_moves: true,
                ..Config::default()
            };
            let mut c = Campaign::open(root, &path, &[], &s, None, config, None).unwrap();
            let mut before = c.status().unwrap();
            let mut decided_first = false;
            for _ in 0..10_000 {
                let fact = match c.step().unwrap() {
                    Step::Done => break,
                    Step::Tested { fact, .. } => fact,
                    Step::Idle => panic!("one worker is never idle"),
                };
                if let Some((_, open)) = before.best_moves() {
                    let tested = root
                        .legal_moves()
                        .into_iter()
                        .find(|&mv| root.play_unchecked(mv).0.board() == fact.position.board())
                        .expect("a first move's position is tested");
                    let other_open = before
                        .moves
                        .iter()
                        .any(|(mv, b)| !b.is_exact() && !open.contains(mv));
                    if !open.is_empty() {
                        assert!(
                            open.contains(&tested),
                            "Kalah({m},{n}) {rules}: move {} tested while {open:?} were undecided",
                            tested.house()
                        );
                        decided_first |= other_open;
                    }
                }
                before = c.status().unwrap();
            }
            let analysis = s.analyze(&root, true, &mut |_| {}).unwrap();
            let (best, open) = before.best_moves().expect("the value is proven");
            assert!(open.is_empty(), "Kalah({m},{n}) {rules}: {open:?}");
            assert_eq!(best, analysis.best, "Kalah({m},{n}) {rules}");
            for ((_, b), expected) in before.moves.iter().zip(&analysis.moves) {
                assert_eq!(b.is_exact().then_some(b.lower), Some(expected.value));
            }
            exercised += usize::from(decided_first);
        }
    }
    // At least one start had a move to decide while a worse one's value was still open.
    assert!(exercised > 0);
}

#[test]
fn positions_with_stores_and_north_to_move_are_proven() {
    let dir = TempDir::new("prove", "stores");
    let setup: kalah::Setup = "<5,7,3,2,0,3,4,1,3,3,0,2,4> north".parse().unwrap();
    for rules in Rules::ALL {
        let root = Position::<Narrow>::from_setup(&setup, rules).unwrap();
        let status = campaign(root, &dir.0.join(format!("{rules}.jsonl")), 1_000, false);
        assert_eq!(status.value.lower, solved(&root), "{rules}");
        assert!(status.value.is_exact());
    }
}

/// Runs workers `0/n .. n-1/n` of a campaign of `root` side by side (threads), each with its
/// own ledger and reading the others'; returns their ledgers.
fn workers(root: Position<Narrow>, dir: &Path, n: u32, budget: u64) -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = (0..n)
        .map(|i| dir.join(format!("w{i}of{n}.jsonl")))
        .collect();
    std::thread::scope(|scope| {
        for i in 0..n {
            let paths = &paths;
            scope.spawn(move || {
                let s = solver(root.houses_per_side(), root.rules());
                let others: Vec<PathBuf> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| paths[j as usize].clone())
                    .collect();
                let config = Config {
                    budget,
                    share: Share { index: i, count: n },
                    ..Config::default()
                };
                let mut c =
                    Campaign::open(root, &paths[i as usize], &others, &s, None, config, None)
                        .unwrap();
                for _ in 0..1_000_000 {
                    match c.step().unwrap() {
                        Step::Done => return,
                        Step::Tested { .. } => {}
                        Step::Idle => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
                panic!("worker {i}/{n} did not end");
            });
        }
    });
    paths
}

#[test]
fn one_two_and_three_workers_prove_the_same_value_and_their_ledgers_merge() {
    let dir = TempDir::new("prove", "workers");
    let root = start(5, 3, Rules::Standard);
    let value = solved(&root);
    for n in 1..=3 {
        let sub = dir.0.join(format!("{n}"));
        std::fs::create_dir_all(&sub).unwrap();
        let paths = workers(root, &sub, n, 5_000);
        // Each worker tested leaves of its own share only (what a test that ran out of its
        // budget finished below its leaf, kept as facts, may be anywhere).
        for (i, path) in paths.iter().enumerate() {
            let mut own = Ledger::<Narrow>::new();
            own.add_file(path).unwrap();
            let share = Share {
                index: i as u32,
                count: n,
            };
            assert!(
                own.facts()
                    .iter()
                    .all(|(f, _)| f.within.is_some() || share.owns(f.board())),
                "worker {i}/{n} tested another's leaf"
            );
        }
        let merged = sub.join("merged.jsonl");
        let report = prove::merge(&paths, &merged).unwrap();
        assert!(report.added > 0);
        let mut ledger = Ledger::new();
        ledger.add_file(&merged).unwrap();
        let status = Status::of(root, &ledger, None).unwrap();
        assert_eq!(status.value.lower, value, "{n} workers");
        assert!(status.value.is_exact(), "{n} workers");
        // Merging again adds nothing.
        assert_eq!(prove::merge(&paths, &merged).unwrap().added, 0);
    }
}

/// A fact line that says the value is exactly `value`.
fn saying(line: &str, value: i32) -> String {
    let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["lower"] = value.into();
    v["upper"] = value.into();
    v.to_string()
}

#[test]
fn a_contradicting_fact_is_refused_naming_both_lines() {
    let dir = TempDir::new("prove", "conflict");
    let root = start(4, 3, Rules::Standard);
    let path = dir.0.join("ledger.jsonl");
    campaign(root, &path, 1_000, false);
    let text = std::fs::read_to_string(&path).unwrap();
    // A fact that contradicts an exact or upper bound of the same board, appended.
    let line = text
        .lines()
        .find(|l| {
            let f = Fact::<Narrow>::from_line(l).unwrap();
            !f.over_budget
                && f.f_bounds().upper
                    < kalah::prove::fact::Bounds::widest(f.board().seeds(), Rules::Standard).upper
        })
        .expect("an upper bound was proven");
    let fact = Fact::<Narrow>::from_line(line).unwrap();
    let liar = saying(line, fact.upper + 2);
    let bad = dir.0.join("bad.jsonl");
    std::fs::write(&bad, format!("{text}{liar}\n")).unwrap();
    let mut ledger = Ledger::<Narrow>::new();
    match ledger.add_file(&bad) {
        Err(e @ LedgerError::Conflict { .. }) => {
            let message = e.to_string();
            let total = text.lines().count() + 1;
            assert!(message.contains(&format!("bad.jsonl:{total}")), "{message}");
            assert!(message.contains("bad.jsonl:"), "{message}");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Merging it into a good ledger writes nothing.
    let before = std::fs::read(&path).unwrap();
    assert!(prove::merge(&[bad], &path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn check_catches_a_falsified_fact() {
    let dir = TempDir::new("prove", "check");
    let root = start(4, 3, Rules::Standard);
    let path = dir.0.join("ledger.jsonl");
    campaign(root, &path, 1_000, false);
    let mut ledger = Ledger::<Narrow>::new();
    ledger.add_file(&path).unwrap();
    let s = solver(4, Rules::Standard);
    let mut checked = 0;
    for (fact, _) in ledger.facts() {
        match prove::recheck(fact, &s).unwrap() {
            Recheck::Holds => checked += 1,
            Recheck::Empty => assert!(!fact.is_informative()),
            Recheck::Wrong(why) => panic!("a true fact failed: {why}"),
        }
        // Falsified: the bounds moved past the exact value.
        let exact = s.analyze(&fact.position, false, &mut |_| {}).unwrap().value;
        let mut lie = fact.clone();
        lie.lower = exact + 2;
        lie.upper = lie.upper.max(lie.lower);
        assert!(
            matches!(prove::recheck(&lie, &s).unwrap(), Recheck::Wrong(_)),
            "{}",
            lie.to_line()
        );
        let mut lie = fact.clone();
        lie.upper = exact - 2;
        lie.lower = lie.lower.min(lie.upper);
        assert!(matches!(
            prove::recheck(&lie, &s).unwrap(),
            Recheck::Wrong(_)
        ));
    }
    assert!(checked > 5);
    // The same through the command line, with plain alpha-beta as the other path.
    let text = std::fs::read_to_string(&path).unwrap();
    let out = cli_common::kalah(&[
        "prove",
        "--check",
        path.to_str().unwrap(),
        "--sample",
        "1000",
        "--by",
        "alphabeta",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| Fact::<Narrow>::from_line(l).unwrap().is_informative())
        .unwrap();
    let fact = Fact::<Narrow>::from_line(line).unwrap();
    let exact = s.analyze(&fact.position, false, &mut |_| {}).unwrap().value;
    let lie = dir.0.join("lie.jsonl");
    std::fs::write(&lie, format!("{}\n", saying(line, exact + 2))).unwrap();
    let out = cli_common::kalah(&["prove", "--check", lie.to_str().unwrap(), "--sample", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("lie.jsonl:1: WRONG"), "{stdout}");
}

#[test]
fn a_test_over_its_budget_keeps_the_subtrees_it_finished_and_the_next_takes_it_up() {
    let dir = TempDir::new("prove", "harvest");
    for rules in Rules::ALL {
        let root = start(5, 4, rules);
        let path = dir.0.join(format!("{rules}.jsonl"));
        // One thread: which tests run over their budget does not depend on the scheduler.
        let status = campaign_on(root, &path, 20_000, false, 1);
        assert_eq!(status.value.lower, solved(&root), "Kalah(5,4) {rules}");
        let mut ledger = Ledger::new();
        ledger.add_file(&path).unwrap();
        let facts: Vec<&Fact> = ledger.facts().iter().map(|(f, _)| f).collect();
        let over: u64 = facts
            .iter()
            .filter(|f| f.over_budget)
            .map(|f| f.nodes)
            .sum();
        let kept: u64 = facts
            .iter()
            .filter(|f| f.within.is_some())
            .map(|f| f.nodes)
            .sum();
        assert!(facts.iter().any(|f| f.over_budget), "{rules}: never split");
        // Most of what the tests over their budget searched was kept as facts.
        assert!(kept > 2 * over, "{rules}: kept {kept} nodes, lost {over}");
        // Every fact kept holds, proven again with a fresh table.
        let check = solver_of(5, rules, 1);
        let mut rechecked = 0;
        for f in facts.iter().filter(|f| f.within.is_some()).take(20) {
            assert_eq!(
                prove::recheck(f, &check).unwrap(),
                Recheck::Holds,
                "{}",
                f.to_line()
            );
            rechecked += 1;
        }
        assert!(rechecked > 5, "{rules}: {rechecked} facts kept");
        // A test that takes up another is one of its moves, tested right after it (the facts
        // kept from that test in between).
        let tests: Vec<&&Fact> = facts.iter().filter(|f| f.within.is_none()).collect();
        let mut taken_up = 0;
        for pair in tests.windows(2) {
            let Some(earlier) = &pair[1].continues else {
                continue;
            };
            assert!(pair[0].over_budget, "{}", pair[1].to_line());
            assert_eq!(&pair[0].position.to_string(), earlier);
            let moves: Vec<_> = pair[0]
                .position
                .legal_moves()
                .into_iter()
                .map(|mv| pair[0].position.play_unchecked(mv).0.board())
                .collect();
            assert!(moves.contains(&pair[1].board()), "{}", pair[1].to_line());
            taken_up += 1;
        }
        assert!(taken_up > 0, "{rules}: no test was taken up");
    }
}

#[test]
fn cut_or_garbled_lines_are_one_clear_error_and_a_torn_tail_is_cut() {
    let dir = TempDir::new("prove", "garbled");
    let root = start(4, 2, Rules::Standard);
    let path = dir.0.join("ledger.jsonl");
    campaign(root, &path, 1_000, false);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3);
    // A line cut short in the middle of the file, a garbled one, binary junk.
    let cut = format!(
        "{}\n{}\n{}\n",
        lines[0],
        &lines[1][..lines[1].len() / 2],
        lines[2]
    );
    let garbled = format!(
        "{}\n{}\n",
        lines[0],
        lines[1].replace("\"lower\"", "\"lowr\"")
    );
    let junk = format!("{}\n\u{0}\u{1}xx\n", lines[0]);
    for (name, content) in [("cut", cut), ("garbled", garbled), ("junk", junk)] {
        let p = dir.0.join(format!("{name}.jsonl"));
        std::fs::write(&p, content).unwrap();
        let mut ledger = Ledger::<Narrow>::new();
        let e = ledger.add_file(&p).unwrap_err();
        assert!(matches!(e, LedgerError::Garbled { .. }), "{name}: {e}");
        assert!(
            e.to_string().contains(&format!("{name}.jsonl:2")),
            "{name}: {e}"
        );
        let out = cli_common::kalah(&["prove", "--status", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(out.stdout.is_empty());
    }
    // A torn last line (a worker killed mid-write) is left unread, then cut by the next writer.
    let torn = dir.0.join("torn.jsonl");
    std::fs::write(&torn, format!("{}\n{}", lines[0], &lines[1][..20])).unwrap();
    let mut ledger = Ledger::<Narrow>::new();
    ledger.add_file(&torn).unwrap();
    assert_eq!(ledger.facts().len(), 1);
    assert_eq!(ledger.torn().len(), 1);
    let writer = LedgerWriter::open(&torn).unwrap();
    assert_eq!(
        std::fs::read_to_string(&torn).unwrap(),
        format!("{}\n", lines[0])
    );
    // One writer a file.
    assert!(matches!(
        LedgerWriter::open(&torn),
        Err(LedgerError::Busy(_))
    ));
    drop(writer);
}

#[test]
fn a_worker_killed_at_random_moments_resumes_to_the_same_value() {
    let dir = TempDir::new("prove", "killed");
    let path = dir.0.join("ledger.jsonl");
    let root = start(5, 4, Rules::Standard);
    let value = solved(&root);
    let mut rng = kalah::Rng::new(7);
    let mut finished = false;
    for round in 0..60 {
        let mut child = cli_common::command()
            .args([
                "prove", "-m", "5", "-n", "4", "--no-db", "--tt-mb", "16", "--budget", "20000",
            ])
            .arg("--ledger")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + rng.below(150)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            finished = true;
            break;
        }
        // Every kill leaves a ledger that reads.
        let mut ledger = Ledger::<Narrow>::new();
        ledger
            .add_file(&path)
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
    }
    // Then to the end, uninterrupted.
    if !finished {
        let out = cli_common::kalah(&[
            "prove",
            "-m",
            "5",
            "-n",
            "4",
            "--no-db",
            "--tt-mb",
            "16",
            "--budget",
            "20000",
            "--ledger",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let status = cli_common::json(&["prove", "--status", path.to_str().unwrap(), "--json"]);
    assert_eq!(status["value"]["exact"], value, "{status}");
    assert_eq!(status["position"], root.to_string());
}

/// The facts of a campaign of `root` (1000 nodes a test) run in `dir`: at least `least` of
/// them, to write into ledgers that are then replaced.
fn campaign_facts(dir: &Path, root: Position<Narrow>, least: usize) -> Vec<Fact> {
    let made = dir.join("made.jsonl");
    campaign(root, &made, 1_000, false);
    let text = std::fs::read_to_string(&made).unwrap();
    let facts: Vec<Fact> = text.lines().map(|l| Fact::from_line(l).unwrap()).collect();
    assert!(facts.len() >= least, "{text}");
    facts
}

#[test]
fn a_ledger_replaced_under_its_writer_loses_no_fact() {
    let dir = TempDir::new("prove", "replaced");
    let facts = campaign_facts(&dir.0, start(4, 2, Rules::Standard), 4);
    let path = dir.0.join("ledger.jsonl");
    let mut writer = LedgerWriter::open(&path).unwrap();
    writer.append(&facts[0]).unwrap();
    // Replaced as `git checkout` or `git stash` replace a file: another file renamed over it
    // (the writer's open file is then gone from the directory).
    let other = dir.0.join("other.jsonl");
    std::fs::write(&other, format!("{}\n", facts[1].to_line())).unwrap();
    std::fs::rename(&other, &path).unwrap();
    writer.append(&facts[2]).unwrap();
    let lines = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let now = lines(&path);
    for f in &facts[..3] {
        assert_eq!(
            now.iter().filter(|l| **l == f.to_line()).count(),
            1,
            "{now:?}"
        );
    }
    // Removed: made again, with every fact written.
    std::fs::remove_file(&path).unwrap();
    writer.append(&facts[3]).unwrap();
    let now = lines(&path);
    for f in &facts[..4] {
        assert!(now.contains(&f.to_line()), "{now:?}");
    }
    let mut ledger = Ledger::<Narrow>::new();
    ledger.add_file(&path).unwrap();
    assert_eq!(ledger.facts().len(), 4);
}

/// `kalah prove` of the start of Kalah(M,N), no levels, a 16 MiB table, one thread (node counts
/// that do not depend on scheduling), BUDGET nodes a test.
fn no_db_campaign<'a>(m: &'a str, n: &'a str, budget: &'a str) -> Vec<&'a str> {
    vec![
        "prove",
        "-m",
        m,
        "-n",
        n,
        "--no-db",
        "--tt-mb",
        "16",
        "--threads",
        "1",
        "--budget",
        budget,
    ]
}

#[test]
fn a_campaign_keeps_its_table_in_a_file_from_one_run_to_the_next() {
    let dir = TempDir::new("prove", "table-file");
    let ledger = dir.0.join("ledger.jsonl");
    let table = dir.0.join("table.ktt");
    let root = start(5, 3, Rules::Standard);
    let (l, t) = (ledger.to_str().unwrap(), table.to_str().unwrap());
    let args = move |jobs: Option<&'static str>| {
        let mut a = no_db_campaign("5", "3", "20000");
        a.extend(["--ledger", l, "--table-file", t]);
        if let Some(n) = jobs {
            a.extend(["--jobs", n]);
        }
        a
    };
    // Three tests, then stop: the table is saved at the end.
    let first = cli_common::kalah(&args(Some("3")));
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(stderr.contains("table saved to"), "{stderr}");
    assert!(table.exists());
    // The next run loads it and carries the campaign to the solver's value.
    let second = cli_common::kalah(&args(None));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(stderr.contains("table loaded from"), "{stderr}");
    let status = cli_common::json(&["prove", "--status", ledger.to_str().unwrap(), "--json"]);
    assert_eq!(status["value"]["exact"], solved(&root), "{status}");
    // A table of other houses is refused before any test; so is a table where none is kept.
    let other = cli_common::kalah(&[
        "prove",
        "-m",
        "4",
        "-n",
        "3",
        "--no-db",
        "--ledger",
        ledger.to_str().unwrap(),
        "--table-file",
        table.to_str().unwrap(),
    ]);
    assert_eq!(other.status.code(), Some(2), "{other:?}");
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(stderr.contains("--table-file"), "{stderr}");
    let status_with_table = cli_common::kalah(&[
        "prove",
        "--status",
        ledger.to_str().unwrap(),
        "--table-file",
        table.to_str().unwrap(),
    ]);
    assert_eq!(status_with_table.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&status_with_table.stderr);
    assert!(
        stderr.contains("--table-file keeps the table of a campaign"),
        "{stderr}"
    );
}

#[test]
fn a_campaign_stopped_mid_test_saves_its_table_first() {
    let dir = TempDir::new("prove", "table-term");
    let ledger = dir.0.join("ledger.jsonl");
    let table = dir.0.join("table.ktt");
    // One test of Kalah(6,4) with no levels and no budget to speak of: it runs for seconds.
    let child = cli_common::command()
        .args(no_db_campaign("6", "4", "1000000000000"))
        .arg("--ledger")
        .arg(&ledger)
        .arg("--table-file")
        .arg(&table)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    cli_common::terminate(&child);
    let out = cli_common::wait_within(child, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("table saved to"), "{stderr}");
    assert!(
        stderr.contains("the table file keeps what it had searched"),
        "{stderr}"
    );
    assert!(table.exists());
}

#[test]
fn status_says_when_nearly_every_recent_test_was_split() {
    let dir = TempDir::new("prove", "recent");
    let ledger = dir.0.join("ledger.jsonl");
    let l = ledger.to_str().unwrap();
    // Kalah(6,4) with no levels, 1000 nodes a test: nearly every test runs out and splits.
    let mut args = no_db_campaign("6", "4", "1000");
    args.extend(["--jobs", "12", "--ledger", l]);
    kalah_ok(&args);
    let status = cli_common::json(&["prove", "--status", l, "--json"]);
    assert_eq!(status["recent"]["tests"], 12, "{status}");
    let over = status["recent"]["over_budget"].as_u64().unwrap();
    assert_eq!(status["over_budget"], over, "{status}");
    let text = kalah_ok(&["prove", "--status", l]);
    let said = format!("of the last 12 tests, {over} ran out of their budget and were split");
    assert_eq!(text.contains(&said), over >= 11, "{text}");
}

/// A campaign that proved the value but not every first move's says which moves are left (an
/// `--all-moves` run goes on with them), not that nothing remains; once they are done, it does.
#[test]
fn status_names_the_first_moves_left_after_the_value() {
    let dir = TempDir::new("prove", "moves-left");
    let ledger = dir.0.join("ledger.jsonl");
    let l = ledger.to_str().unwrap();
    let mut args = no_db_campaign("4", "3", "1000000000");
    args.extend(["--ledger", l]);
    kalah_ok(&args);
    let status = cli_common::json(&["prove", "--status", l, "--json"]);
    assert!(status["value"]["exact"].is_i64(), "{status}");
    let open: Vec<String> = status["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["exact"].is_null())
        .map(|m| m["house"].to_string())
        .collect();
    assert!(!open.is_empty(), "{status}");
    let text = kalah_ok(&["prove", "--status", l]);
    assert!(!text.contains("nothing remains"), "{text}");
    let said = format!(
        "not yet the exact value of move{} {}",
        if open.len() == 1 { "" } else { "s" },
        open.join(", ")
    );
    assert!(text.contains(&said), "{text}");
    args.push("--all-moves");
    kalah_ok(&args);
    let text = kalah_ok(&["prove", "--status", l]);
    assert!(text.contains("proven: nothing remains"), "{text}");
    // And which first moves are best, decided.
    let status = cli_common::json(&["prove", "--status", l, "--json"]);
    let best: Vec<u64> = status["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["exact"] == status["value"]["exact"])
        .map(|m| m["house"].as_u64().unwrap())
        .collect();
    assert_eq!(
        status["best_moves"]["best"],
        serde_json::json!(best),
        "{status}"
    );
    assert_eq!(
        status["best_moves"]["undecided"],
        serde_json::json!([]),
        "{status}"
    );
    let houses: Vec<String> = best.iter().map(u64::to_string).collect();
    let line = format!(
        "best first moves: {} (every other move is proven worse)",
        houses.join(", ")
    );
    assert!(text.contains(&line), "{text}");
}

/// `kalah` with `args`, which must succeed: its stdout.
fn kalah_ok(args: &[&str]) -> String {
    let (code, out, err) = run_kalah(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

/// `kalah` with `args`, its exit code, stdout and stderr.
fn run_kalah(args: &[&str]) -> (Option<i32>, String, String) {
    let out = cli_common::kalah(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The standard 4-house levels 0..8, built in `dir`/db (the certificates' tests check the facts
/// of campaigns on them with the levels 0..6).
fn levels_of_4_houses(dir: &Path) -> PathBuf {
    let db = dir.join("db");
    kalah_ok(&[
        "db",
        "build",
        "--houses",
        "4",
        "--max-seeds",
        "8",
        "--dir",
        db.to_str().unwrap(),
    ]);
    db
}

#[test]
fn certify_proves_the_facts_under_the_bounds_again_and_names_a_falsified_one() {
    let dir = TempDir::new("prove", "certify");
    let db = levels_of_4_houses(&dir.0);
    let d = db.to_str().unwrap();
    let campaign_args = |ledger: &Path| -> Vec<String> {
        [
            "prove",
            "-m",
            "4",
            "-n",
            "4",
            "--db",
            d,
            "--tt-mb",
            "16",
            "--threads",
            "1",
            "--budget",
            "2000",
            "--ledger",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([ledger.to_str().unwrap().to_owned()])
        .collect()
    };
    let run_campaign = |ledger: &Path| {
        let args = campaign_args(ledger);
        run_kalah(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };

    // A true proof: every bound certified by the lower levels, and --status says so.
    let good = dir.0.join("good.jsonl");
    let (code, _, err) = run_campaign(&good);
    assert_eq!(code, Some(0), "{err}");
    let g = good.to_str().unwrap();
    // Before any check, what is left is priced at the campaign's nodes only; after one, at
    // those times what the checks so far took in their facts' nodes.
    let status_json = || {
        let (code, out, err) = run_kalah(&["prove", "--status", g, "--json"]);
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let (code, out, _) = run_kalah(&["prove", "--status", g]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("nodes in the campaign; a check usually takes more"),
        "{out}"
    );
    let v = status_json();
    let claims = v["certificate"]["claims"].as_array().unwrap();
    assert!(claims.iter().all(|c| c["check_nodes_estimate"].is_null()));
    // Certify runs of the good ledger, one thread, with `extra` arguments.
    let certify = |extra: &[&str]| {
        let mut args = vec!["prove", "--certify", g, "--db", d, "--threads", "1"];
        args.extend_from_slice(extra);
        run_kalah(&args)
    };
    let (code, out, err) = certify(&["--jobs", "1"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let check: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(dir.0.join("good.checks.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let line: usize = check["fact_at"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let fact: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&good)
            .unwrap()
            .lines()
            .nth(line - 1)
            .unwrap(),
    )
    .unwrap();
    let ratio = check["nodes"].as_f64().unwrap() / fact["nodes"].as_f64().unwrap();
    let (code, out, _) = run_kalah(&["prove", "--status", g]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains(&format!(
            ", which took {ratio:.1} times their facts' nodes):"
        )) && out.contains("to check)"),
        "{out}"
    );
    let v = status_json();
    let open: Vec<&serde_json::Value> = v["certificate"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["certified"] == false)
        .collect();
    assert!(!open.is_empty(), "one check certified every bound: {v}");
    for c in open {
        let left = c["nodes_left"].as_f64().unwrap();
        assert_eq!(
            c["check_nodes_estimate"].as_u64(),
            Some((left * ratio).round() as u64),
            "{c}"
        );
    }
    // --side lower: the lower bounds first, every one of them certified.
    let (code, out, err) = certify(&["--side", "lower"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let v = status_json();
    let claims = v["certificate"]["claims"].as_array().unwrap();
    assert!(claims.iter().any(|c| c["side"] == "lower"), "{v}");
    for c in claims.iter().filter(|c| c["side"] == "lower") {
        assert_eq!(c["certified"], true, "{c}");
    }
    let (code, _, err) = run_kalah(&["prove", "--status", g, "--side", "lower"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, out, err) = certify(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("value >= ") && out.contains("certified by lower-levels"),
        "{out}"
    );
    assert!(!out.contains("not certified"), "{out}");
    let checks = dir.0.join("good.checks.jsonl");
    let lines = std::fs::read_to_string(&checks).unwrap().lines().count();
    assert!(lines > 0);
    // Resumed: nothing left to check.
    let (code, out, _) = run_kalah(&["prove", "--certify", g, "--db", d, "--json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["checks_run"], 0, "{out}");
    assert!(
        v["claims"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["certified"] == true),
        "{out}"
    );
    let (code, out, _) = run_kalah(&["prove", "--status", g, "--json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let claims = v["certificate"]["claims"].as_array().unwrap();
    assert!(
        !claims.is_empty() && claims.iter().all(|c| c["certified"] == true),
        "{out}"
    );
    // Each bound's cost: its facts' nodes as the ledger has them, its checks' as the checks
    // file has them (every fact checked once here, so the checks' sum over all bounds is at
    // least the nodes of one bound's checks and at most those of the whole file).
    let file_nodes = |path: &Path| -> u64 {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["nodes"]
                    .as_u64()
                    .unwrap()
            })
            .sum()
    };
    let (ledger_nodes, check_nodes) = (file_nodes(&good), file_nodes(&checks));
    for c in claims {
        let cost = &c["cost"];
        let facts = cost["facts_nodes"].as_u64().unwrap();
        let checked = cost["checks_nodes"].as_u64().unwrap();
        assert!(facts > 0 && facts <= ledger_nodes, "{c}");
        assert!(checked > 0 && checked <= check_nodes, "{c}");
        assert!(cost["facts_cpu_s"].as_f64().unwrap() >= 0.0, "{c}");
        assert!(cost["checks_cpu_s"].as_f64().unwrap() > 0.0, "{c}");
    }

    // A lie about the position after the best first move, written before the campaign ran:
    // the campaign builds its proof on it, and certify finds it under the root's bound.
    let root = start(4, 4, Rules::Standard);
    let s = solver(4, Rules::Standard);
    let (mut best, mut best_value) = (None, i32::MIN);
    for mv in root.legal_moves() {
        let (child, _) = root.play(mv).unwrap();
        let v = s.analyze(&child, false, &mut |_| {}).unwrap().value;
        let for_root = if child.to_move() == root.to_move() {
            v
        } else {
            -v
        };
        if for_root > best_value {
            (best, best_value) = (Some((child, v, for_root != v)), for_root);
        }
    }
    let (child, v, passes) = best.unwrap();
    // The move looks 2 better than it is.
    let lie_value = if passes { v - 2 } else { v + 2 };
    let lie = Fact {
        position: child,
        lower: lie_value,
        upper: lie_value,
        nodes: 5000,
        cpu_s: 0.01,
        top: Some(8),
        kalah: "0.1.0".into(),
        root: Some(root.to_string()),
        budget: Some(2000),
        over_budget: false,
        within: None,
        continues: None,
        threads: None,
    };
    let bad = dir.0.join("bad.jsonl");
    std::fs::write(&bad, format!("{}\n", lie.to_line())).unwrap();
    let (code, _, err) = run_campaign(&bad);
    assert_eq!(code, Some(0), "{err}");
    let b = bad.to_str().unwrap();
    let (code, out, err) = run_kalah(&["prove", "--certify", b, "--db", d, "--threads", "1"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("bad.jsonl:1: WRONG"), "{err}");
    assert!(
        out.contains("FALSIFIED: it rests on ") && out.contains("bad.jsonl:1"),
        "{out}"
    );
    let (_, out, _) = run_kalah(&["prove", "--status", b]);
    assert!(out.contains("FALSIFIED"), "{out}");
}

/// Byte 14 of a table file: whose searches filled it (0: searches, 1: a certificate's checks);
/// byte 15: the checks' top level plus one.
fn table_origin(path: &Path) -> (u8, u8) {
    let bytes = std::fs::read(path).unwrap();
    (bytes[14], bytes[15])
}

#[test]
fn certify_keeps_its_own_table_file_and_never_loads_a_campaigns() {
    let dir = TempDir::new("prove", "certify-table");
    let db = levels_of_4_houses(&dir.0);
    let d = db.to_str().unwrap();
    let ledger = dir.0.join("k44.jsonl");
    let l = ledger.to_str().unwrap();
    let campaign_table = dir.0.join("campaign.ktt");
    let c = campaign_table.to_str().unwrap();
    let common = ["--db", d, "--tt-mb", "16", "--threads", "1"];
    let mut args = vec![
        "prove", "-m", "4", "-n", "4", "--budget", "2000", "--ledger", l,
    ];
    args.extend(["--table-file", c]);
    args.extend(common);
    kalah_ok(&args);
    assert_eq!(table_origin(&campaign_table), (0, 0));

    // A campaign's table may rest on the levels a check leaves out: refused.
    let certify = |table: &str, more: &[&str]| {
        let mut args = vec!["prove", "--certify", l, "--table-file", table];
        args.extend(common);
        args.extend(more);
        run_kalah(&args)
    };
    let (code, out, err) = certify(c, &[]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("filled by searches"), "{err}");
    assert!(
        !dir.0.join("k44.checks.jsonl").exists()
            || std::fs::read_to_string(dir.0.join("k44.checks.jsonl"))
                .unwrap()
                .is_empty()
    );

    // The checks' own file: written by a first run (the levels 0..6 of 0..8), loaded by the
    // next, which finishes the certificate.
    let checks_table = dir.0.join("checks.ktt");
    let t = checks_table.to_str().unwrap();
    let (code, out, err) = certify(t, &["--jobs", "1"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains("table saved to"), "{err}");
    assert_eq!(table_origin(&checks_table), (1, 7));
    let (code, out, err) = certify(t, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains("table loaded from"), "{err}");
    assert!(!out.contains("not certified"), "{out}");
    assert_eq!(table_origin(&checks_table), (1, 7));

    // --by no-db reads no level: a table of checks on levels does not serve it.
    let (code, _, err) = certify(t, &["--by", "no-db"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("on the levels 0..6"), "{err}");

    // A search may load the checks' table; saved again, it is a table of searches, which the
    // checks then refuse.
    let mut args = vec!["solve", "-m", "4", "-n", "2", "--table-file", t];
    args.extend(common);
    kalah_ok(&args);
    assert_eq!(table_origin(&checks_table), (0, 0));
    let (code, _, err) = certify(t, &[]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn a_flag_without_the_one_it_goes_with_is_refused_naming_both() {
    // Each of these once passed silently (exit 0): clap skips `requires` when the argument
    // required conflicts with one given (--status, --ledger, -m/-n).
    let cases: [(&[&str], &str); 8] = [
        (
            &["--status", "x.jsonl", "--side", "lower"],
            "--side goes with --certify",
        ),
        (
            &["--status", "x.jsonl", "--seed", "1"],
            "--seed goes with --check",
        ),
        (
            &["--status", "x.jsonl", "--sample", "3"],
            "--sample goes with --check",
        ),
        (&["--status", "x.jsonl", "--all"], "--all goes with --check"),
        (
            &["--ledger", "x.jsonl", "--sample", "3"],
            "--sample goes with --check",
        ),
        (
            &[
                "-m",
                "4",
                "-n",
                "3",
                "--ledger",
                "x.jsonl",
                "--to-move",
                "north",
            ],
            "--to-move goes with POSITION",
        ),
        (
            &["--status", "x.jsonl", "--list"],
            "--list goes with --book",
        ),
        (
            &["--status", "x.jsonl", "--book-levels", "3"],
            "--book-levels goes with --book",
        ),
    ];
    for (args, says) in cases {
        let mut all = vec!["prove"];
        all.extend(args);
        let (code, _, err) = run_kalah(&all);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_file_that_is_not_a_ledger_is_left_as_it_is() {
    let dir = TempDir::new("prove", "not-a-ledger");
    for (name, text) in [
        ("notes.txt", "precious notes"),
        ("two.txt", "first line\nsecond line"),
        ("json.txt", "{\"a\":1}\n"),
    ] {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let mut args = no_db_campaign("4", "3", "1000");
        args.extend(["--ledger", p, "--jobs", "1"]);
        let (code, _, err) = run_kalah(&args);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("is not a ledger"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{name}");
        // Nor is it written by a book or a merge; a failed merge leaves no file it made.
        let (code, _, _) = run_kalah(&[
            "prove", "-m", "4", "-n", "3", "--no-db", "--book", "0", "--ledger", p,
        ]);
        assert_ne!(code, Some(0));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{name}");
        let made = dir.0.join("made.jsonl");
        let (code, _, _) = run_kalah(&["prove", "--merge", p, "--ledger", made.to_str().unwrap()]);
        assert_ne!(code, Some(0));
        assert!(!made.exists(), "{name}: a failed merge left its output");
    }
    // A hard link to someone's file is not written through.
    #[cfg(unix)]
    {
        let victim = dir.0.join("victim.jsonl");
        std::fs::write(&victim, "").unwrap();
        let link = dir.0.join("link.jsonl");
        std::fs::hard_link(&victim, &link).unwrap();
        let mut args = no_db_campaign("4", "3", "1000");
        args.extend(["--ledger", link.to_str().unwrap(), "--jobs", "1"]);
        let (code, _, err) = run_kalah(&args);
        assert_ne!(code, Some(0));
        assert!(err.contains("hard link"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "");
    }
}

#[test]
fn check_all_records_every_fact_checked_resumes_and_names_a_wrong_one() {
    let dir = TempDir::new("prove", "check-all");
    let ledger = dir.0.join("book.jsonl");
    let l = ledger.to_str().unwrap();
    let (code, _, err) = run_kalah(&[
        "prove", "-m", "3", "-n", "2", "--no-db", "--book", "1", "--ledger", l,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let facts = std::fs::read_to_string(&ledger).unwrap().lines().count();
    assert!(facts >= 3, "{facts} facts");
    // --check needs --sample or --all.
    let (code, _, err) = run_kalah(&["prove", "--check", l]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--all"), "{err}");
    // No levels for --by lower-levels: refused, and no checks file is left behind.
    let (code, _, err) = run_kalah(&["prove", "--check", l, "--all"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(!dir.0.join("book.checks.jsonl").exists());
    // Two checks, then the rest: the second run resumes from the checks file.
    let check_all = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "prove",
            "--check",
            l,
            "--all",
            "--by",
            "alphabeta",
            "--json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = run_kalah(&args);
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str(out.lines().last().unwrap()).unwrap()
    };
    let end = check_all(&["--jobs", "2"]);
    assert_eq!(end["checks_run"], 2, "{end}");
    let end = check_all(&[]);
    assert_eq!(end["checks_run"].as_u64(), Some(facts as u64 - 2), "{end}");
    assert_eq!(end["unchecked"], 0, "{end}");
    let checks = dir.0.join("book.checks.jsonl");
    assert_eq!(
        std::fs::read_to_string(&checks).unwrap().lines().count(),
        facts
    );
    // Nothing left: nothing run.
    let (code, out, _) = run_kalah(&["prove", "--check", l, "--all", "--by", "alphabeta"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("0 facts proven again"), "{out}");
    // A fact changed is unchecked again, and found wrong: named, exit 1.
    let text = std::fs::read_to_string(&ledger).unwrap();
    let first = text.lines().next().unwrap();
    let mut fact: serde_json::Value = serde_json::from_str(first).unwrap();
    let v = fact["lower"].as_i64().unwrap();
    fact["lower"] = (v + 2).into();
    fact["upper"] = (v + 2).into();
    std::fs::write(&ledger, text.replacen(first, &fact.to_string(), 1)).unwrap();
    let (code, _, err) = run_kalah(&["prove", "--check", l, "--all", "--by", "alphabeta"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("book.jsonl:1"), "{err}");
}

#[test]
fn a_reader_of_a_replaced_ledger_loses_nothing_and_never_calls_it_damaged() {
    let dir = TempDir::new("prove", "reader-replaced");
    let facts = campaign_facts(&dir.0, start(4, 3, Rules::Standard), 7);
    let path = dir.0.join("w.jsonl");
    let mut writer = LedgerWriter::open(&path).unwrap();
    let mut ledger = Ledger::<Narrow>::new();
    ledger.add_file(&path).unwrap();
    writer.append_all(&facts[..3]).unwrap();
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 3);
    let line = |f: &Fact| format!("{}\n", f.to_line());
    // An older, shorter copy renamed over it (`git checkout`): the reader reads it whole and
    // keeps what it knew; the writer's next follow carries the lost lines back.
    let other = dir.0.join("other.jsonl");
    std::fs::write(&other, line(&facts[0])).unwrap();
    std::fs::rename(&other, &path).unwrap();
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 3);
    writer.follow().unwrap();
    let on_disk = std::fs::read_to_string(&path).unwrap();
    for f in &facts[..3] {
        assert_eq!(on_disk.matches(&line(f)).count(), 1, "{on_disk}");
    }
    // A longer one (the old lines and another worker's, as `git pull` leaves): the new fact is
    // read, none twice.
    std::fs::write(&other, format!("{on_disk}{}", line(&facts[3]))).unwrap();
    std::fs::rename(&other, &path).unwrap();
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 4);
    // Rewritten in place, longer, with the lines in another order: no line is misread.
    let shuffled: String = [&facts[3], &facts[4], &facts[1], &facts[0], &facts[2]]
        .iter()
        .map(|f| line(f))
        .collect();
    std::fs::write(&path, shuffled).unwrap();
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 5);
    // Removed: nothing to read, nothing forgotten; made again by the writer with every line.
    std::fs::remove_file(&path).unwrap();
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 5);
    writer.append(&facts[5]).unwrap();
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 6);
    // Cut short in place: no hole, the reader carries on.
    writer.follow().unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    ledger.refresh().unwrap();
    writer.append(&facts[6]).unwrap();
    let on_disk = std::fs::read(&path).unwrap();
    assert!(!on_disk.contains(&0), "a hole of zeros");
    ledger.refresh().unwrap();
    assert_eq!(ledger.facts().len(), 7);
}

#[test]
fn boards_of_more_than_8_houses_are_proven_and_certified_by_one_thread() {
    let dir = TempDir::new("prove", "wide");
    let path = dir.0.join("k92.jsonl");
    let l = path.to_str().unwrap();
    // Kalah(9,2) empty-capture: 18 houses, in wide lanes. A small budget splits it several
    // levels deep and keeps subtrees of the tests over it.
    let small = ["--budget", "20000", "--threads", "2", "--tt-mb", "16"];
    let mut args = vec!["prove", "-m", "9", "-n", "2", "--rules", "empty-capture"];
    args.extend(["--ledger", l]);
    args.extend(small);
    kalah_ok(&args);
    let solve = kalah_ok(&[
        "solve",
        "-m",
        "9",
        "-n",
        "2",
        "--rules",
        "empty-capture",
        "--json",
        "--tt-mb",
        "16",
    ]);
    let solved: serde_json::Value = serde_json::from_str(&solve).unwrap();
    let status: serde_json::Value =
        serde_json::from_str(&kalah_ok(&["prove", "--status", l, "--json"])).unwrap();
    assert_eq!(status["houses"], 9);
    assert_eq!(status["value"]["exact"], solved["value"], "{status}");
    // Every fact says it was proven on 2 threads; some were kept from tests over budget,
    // and they hold, proven again on one thread with a fresh table.
    let mut ledger = Ledger::<kalah::Wide>::new();
    ledger.add_file(&path).unwrap();
    let facts: Vec<&Fact<kalah::Wide>> = ledger.facts().iter().map(|(f, _)| f).collect();
    assert!(facts.iter().all(|f| f.threads == Some(2)));
    let kept: Vec<&&Fact<kalah::Wide>> = facts.iter().filter(|f| f.within.is_some()).collect();
    assert!(kept.len() > 5, "{} facts kept", kept.len());
    let check = Solver::new(
        9,
        Rules::EmptyCapture,
        SolverConfig {
            threads: 1,
            tt_mib: 16,
            ..SolverConfig::default()
        },
    )
    .unwrap();
    for f in kept.iter().take(20) {
        assert_eq!(prove::recheck(*f, &check).unwrap(), Recheck::Holds);
    }
    // No levels exist for 9 houses: lower-levels says so and names serial; no-db would
    // search the facts as they were searched; serial certifies every bound.
    let (code, _, err) = run_kalah(&["prove", "--certify", l]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("none for 9 houses") && err.contains("--by serial"),
        "{err}"
    );
    let (code, out, err) = run_kalah(&["prove", "--certify", l, "--by", "no-db"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no other path (--by serial"), "{err}");
    assert!(
        err.contains("more facts, each for one of the reasons above"),
        "{err}"
    );
    assert!(
        out.contains("not certified") && !out.contains(": certified"),
        "{out}"
    );
    let out = kalah_ok(&["prove", "--certify", l, "--by", "serial", "--json"]);
    let report: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let claims = report["claims"].as_array().unwrap();
    assert!(!claims.is_empty());
    for c in claims {
        assert_eq!(c["certified"], true, "{c}");
        assert_eq!(c["by"], serde_json::json!(["serial"]), "{c}");
    }
    // A campaign on one thread leaves serial no other path.
    let one = dir.0.join("k91.jsonl");
    let o = one.to_str().unwrap();
    kalah_ok(&[
        "prove",
        "-m",
        "9",
        "-n",
        "1",
        "--ledger",
        o,
        "--threads",
        "1",
    ]);
    let (code, out, err) = run_kalah(&["prove", "--certify", o, "--by", "serial"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("on 1 thread: --by serial would search it the same way"),
        "{err}"
    );
    assert!(!out.contains(": certified"), "{out}");
    // Books stay within the levels' 8 houses.
    let (code, _, err) = run_kalah(&["prove", "-m", "9", "-n", "1", "--book", "1", "--ledger", o]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("at most 8 houses a side"), "{err}");
}

/// `--status --leaves N` lists the open leaves of the campaign's next test, each with its test
/// as `analyze --at-least` asks it: the first is the leaf the campaign tests next (on one
/// thread with no levels, the search's order and the listing's agree at the start), each test
/// is answered by `analyze`, and a finished campaign has none left.
#[test]
fn status_lists_the_leaves_of_the_next_test() {
    let dir = TempDir::new("prove", "leaves");
    let ledger = dir.0.join("ledger.jsonl");
    let l = ledger.to_str().unwrap();
    // Kalah(5,3), 2000 nodes a test: the root is split into leaves within a few tests.
    let mut args = no_db_campaign("5", "3", "2000");
    args.extend(["--jobs", "3", "--ledger", l, "--guess", "6"]);
    kalah_ok(&args);
    let listed = cli_common::json(&[
        "prove", "--status", l, "--leaves", "4", "--guess", "6", "--json",
    ]);
    let leaves = listed["leaves"].as_array().unwrap();
    assert!(!leaves.is_empty() && leaves.len() <= 4, "{listed}");
    // The root and its rules are named: analyze must be given them with each leaf.
    assert_eq!(listed["root"], "<5,0,0,3,3,3,3,3,3,3,3,3,3>", "{listed}");
    let rules = listed["rules"].as_str().unwrap();
    assert_eq!(rules, "standard", "{listed}");
    for leaf in leaves {
        let position = leaf["position"].as_str().unwrap();
        let to_move = leaf["to_move"].as_str().unwrap();
        let at_least = leaf["at_least"].to_string();
        let answer = cli_common::json(&[
            "analyze",
            position,
            "--to-move",
            to_move,
            "--at-least",
            &at_least,
            "--rules",
            rules,
            "--no-db",
            "--no-book",
            "--json",
        ]);
        assert!(answer["holds"].is_boolean(), "{leaf}: {answer}");
    }
    let text = kalah_ok(&["prove", "--status", l, "--leaves", "1", "--guess", "6"]);
    assert!(
        text.contains("to move,") && text.contains("value >= "),
        "{text}"
    );
    // The campaign carried to its end leaves nothing to list.
    let mut all = no_db_campaign("5", "3", "1000000000");
    all.extend(["--ledger", l]);
    kalah_ok(&all);
    let text = kalah_ok(&["prove", "--status", l, "--leaves", "3"]);
    assert!(text.contains("no open leaf"), "{text}");
    // --leaves goes with --status.
    let (code, _, err) = run_kalah(&[
        "prove", "--leaves", "3", "--ledger", l, "-m", "5", "-n", "3",
    ]);
    assert_eq!(code, Some(2), "{err}");
}

/// Files refused for what they are get one exit code, 2 (bad input), wherever they are named:
/// a user's text file, a symbolic link, a FIFO or a directory as the checks file of
/// `--certify` or `--check --all`, or as a ledger; the file is left as it is.
#[test]
fn like_refusals_of_input_files_have_one_exit_code() {
    let dir = TempDir::new("prove", "refusals");
    let ledger = dir.0.join("book.jsonl");
    let l = ledger.to_str().unwrap();
    let (code, _, err) = run_kalah(&[
        "prove", "-m", "3", "-n", "2", "--no-db", "--book", "1", "--ledger", l,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let notes = dir.0.join("notes.txt");
    std::fs::write(&notes, "precious notes\n").unwrap();
    let mut refused: Vec<(&str, PathBuf)> = vec![("a text file", notes.clone())];
    refused.push(("a directory", dir.0.clone()));
    #[cfg(unix)]
    {
        let link = dir.0.join("link.checks.jsonl");
        std::os::unix::fs::symlink(&notes, &link).unwrap();
        refused.push(("a symbolic link", link));
        let fifo = dir.0.join("fifo.checks.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        refused.push(("a FIFO", fifo));
    }
    for (what, path) in &refused {
        let p = path.to_str().unwrap();
        for args in [
            vec!["prove", "--certify", l, "--by", "alphabeta", "--checks", p],
            vec![
                "prove",
                "--check",
                l,
                "--all",
                "--by",
                "alphabeta",
                "--checks",
                p,
            ],
            vec!["prove", "--status", l, "--checks", p],
            vec!["prove", "--status", p],
        ] {
            let (code, _, err) = run_kalah(&args);
            assert_eq!(code, Some(2), "{what}: {args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{what}: {args:?}: {err}");
        }
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "precious notes\n");
}
