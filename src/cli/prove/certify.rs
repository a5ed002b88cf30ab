//! `kalah prove --certify`: the facts a campaign's bounds rest on, proven again by another
//! path, each check appended to a checks file that resumes and shares out as ledgers do.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kalah::prove::certificate::{self, Certificate, Check, Checks, Claim, Verdict};
use kalah::prove::fact::{Fact, sum_nodes};
use kalah::prove::key::Key;
use kalah::prove::ledger::{Ledger, LedgerWriter};
use kalah::prove::{self, Recheck};
use kalah::search::table_file::TableOrigin;
use kalah::{Algorithm, Lanes, Position, Rules, Solver, SolverConfig};
use serde_json::json;

use super::super::CliError;
use super::super::args::print_json;
use super::super::human::{human_count, human_duration};
use super::super::search::{new_solver, with_table_file};
use super::super::threads::spawn_scoped;
use super::{
    AnyLedger, ProveArgs, config_with, ledger_error, ledger_root, prove_error, read_any_ledgers,
    read_ledgers,
};

/// The most solvers (one a set of levels) kept at once: each holds a table.
const SOLVERS: usize = 2;

pub fn run(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    leaving_no_empty_file(&checks_file(args, path), || certify(args, path))
}

/// The checks file of `path`: --checks, else beside it.
fn checks_file(args: &ProveArgs, path: &Path) -> PathBuf {
    args.checks
        .clone()
        .unwrap_or_else(|| certificate::checks_path(path))
}

/// Runs `work`; if it fails and `file` was not there before it and is empty after it, removes
/// it: a failed command leaves no file it made.
fn leaving_no_empty_file(
    file: &Path,
    work: impl FnOnce() -> Result<(), CliError>,
) -> Result<(), CliError> {
    let existed = file.symlink_metadata().is_ok();
    let result = work();
    if result.is_err()
        && !existed
        && std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.len() == 0)
    {
        let _ = std::fs::remove_file(file);
    }
    result
}

fn certify(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    kalah::with_position!(ledger_root(args, path)?, root => certify_root(args, path, root))
}

/// [`certify`] of `root`, in the lanes that hold its boards.
fn certify_root<L: Lanes>(
    args: &ProveArgs,
    path: &PathBuf,
    root: Position<L>,
) -> Result<(), CliError> {
    let mut ledger = read_ledgers(path, args)?;
    let own = checks_file(args, path);
    let mut writer = LedgerWriter::open(&own).map_err(ledger_error)?;
    let key = installation_key(&own)?;
    let mut checks = read_checks(&own, &args.read_checks, Some(&key))?;
    let mut paths = Paths::new(args, root.houses_per_side(), root.rules())?;
    paths.keep_table(args)?;
    let solvers: Mutex<Vec<(SolverKey, Arc<Solver>)>> = Mutex::new(Vec::new());
    kalah::catch_interrupt();
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let kept = |solvers: &Mutex<Vec<(SolverKey, Arc<Solver>)>>| {
        let key = paths.table_key()?;
        let list = solvers.lock().expect("not poisoned");
        list.iter().find(|(k, _)| *k == key).map(|(_, s)| s.clone())
    };
    let outcome = std::thread::scope(|scope| {
        let (solvers, done) = (&solvers, &done);
        let r = (|| {
            spawn_scoped(scope, "interrupt", move || watch_interrupt(solvers, done))?;
            // The table of --table-file saved every --save-every minutes while the checks run.
            let kept = &kept;
            args.table.save_while(scope, done, move || kept(solvers))?;
            certify_loop(
                args,
                root,
                &mut ledger,
                &mut checks,
                &mut writer,
                &key,
                &paths,
                solvers,
                started,
            )
        })();
        done.store(true, Ordering::Relaxed);
        r
    });
    // However the checks ended, the table keeps what they proved (a check stopped midway
    // stored only what it had finished).
    if let Some(line) = kept(&solvers).and_then(|s| args.table.save(&s)) {
        eprintln!("{line}");
    }
    args.table.check_saved()?;
    let (done_checks, wrong) = match outcome {
        Ok(x) => x,
        Err(e) if is_cancelled(&e) => {
            eprintln!(
                "interrupted: the check in flight is dropped, every check before it is in {}; the same command resumes",
                own.display()
            );
            return Err(interrupted());
        }
        Err(e) => return Err(e),
    };
    checks.reread().map_err(ledger_error)?;
    let cert = Certificate::of(root, &ledger, &checks).map_err(prove_error)?;
    report(
        &root,
        &cert,
        &ledger,
        &checks,
        done_checks,
        args.json,
        started,
    );
    if !wrong.is_empty() || !cert.wrong().is_empty() {
        let mut named: Vec<String> = wrong;
        for i in cert.wrong() {
            let at = ledger.facts()[i].1.to_string();
            if !named.contains(&at) {
                named.push(at);
            }
        }
        return Err(CliError::failure(format!(
            "a fact under the bounds does not hold: {}",
            named.join(", ")
        )));
    }
    Ok(())
}

/// The error of a certification stopped by Ctrl-C or SIGTERM (exit code 130).
fn interrupted() -> CliError {
    CliError {
        message: "interrupted".into(),
        code: 130,
    }
}

fn is_cancelled(e: &CliError) -> bool {
    e.code == 130
}

/// This installation's key, made now if it has none yet: the checks it writes to `checks`
/// carry its mark ([`kalah::prove::key`]). Refused if it lies in the directory of `checks`.
fn installation_key(checks: &Path) -> Result<Key, CliError> {
    Key::of_installation_or_make()
        .and_then(|key| key.check_apart_from(checks).map(|()| key))
        .map_err(|e| CliError::failure(e.to_string()))
}

/// The checks of `own` and of `others` (each a regular file, or not there yet); their marks
/// verified with `key`, else with this installation's key as read.
pub(super) fn read_checks(
    own: &Path,
    others: &[PathBuf],
    key: Option<&Key>,
) -> Result<Checks, CliError> {
    let mut checks = match key {
        Some(key) => Checks::with_key(Some(key.clone())),
        None => Checks::new(),
    };
    for path in std::iter::once(&own.to_path_buf()).chain(others) {
        if let Some(what) = kalah::files::not_regular(path) {
            return Err(CliError::input(format!(
                "{}: it is {what}, not a checks file",
                path.display()
            )));
        }
        checks.add_file(path).map_err(ledger_error)?;
    }
    Ok(checks)
}

/// How each fact is proven again: the path --by names and the levels it reads.
struct Paths {
    by: String,
    /// The database's top level, for `lower-levels`.
    db_top: Option<u32>,
    /// With --table-file: the top level (or none) of the checks whose solver keeps it.
    table_top: Option<Option<u32>>,
    db_dir: Option<PathBuf>,
    houses: usize,
    rules: Rules,
}

impl Paths {
    fn new(args: &ProveArgs, houses: usize, rules: Rules) -> Result<Paths, CliError> {
        let (db_top, db_dir) = if args.by == "lower-levels" {
            match args.db.open(houses, rules)? {
                Some(db) => (Some(db.max_level()), Some(db.dir().to_path_buf())),
                None => {
                    return Err(CliError::input(if houses > kalah::db::MAX_DB_HOUSES {
                        format!(
                            "--by lower-levels checks with the levels below the database's top, and there are none for {houses} houses (--by serial checks without them)"
                        )
                    } else {
                        "--by lower-levels checks with the levels below the database's top, and there is no database here (--db DIR, or --by no-db / serial / alphabeta)".to_owned()
                    }));
                }
            }
        } else {
            (None, None)
        };
        Ok(Paths {
            by: args.by.clone(),
            db_top,
            table_top: None,
            db_dir,
            houses,
            rules,
        })
    }

    /// With --table-file, the checks on the levels they read most (two below the database's
    /// top, or none with `no-db`) keep their table in it; the file, if there, must be a table
    /// that such checks filled, never a campaign's ([`kalah::search::table_file::TableOrigin`]).
    fn keep_table(&mut self, args: &ProveArgs) -> Result<(), CliError> {
        if args.table.table_file.is_none() {
            return Ok(());
        }
        let top = self.db_top.and_then(|t| t.checked_sub(2));
        // Checked now, before any check runs; the solver that keeps the file fits it again.
        let mut config = SolverConfig::default();
        let user = TableOrigin::Checks { top };
        args.table
            .fit(&mut config, self.houses, self.rules, args.tt_mb, user)?;
        self.table_top = Some(top);
        Ok(())
    }

    /// The key of the solver that keeps --table-file, if there is one.
    fn table_key(&self) -> Option<SolverKey> {
        Some((self.houses, self.rules, self.table_top?))
    }

    /// The levels a check of `fact` reads: for `lower-levels`, two below the database's top
    /// and two below the fact's own seeds (so that no fact is a lookup of the levels that may
    /// have made it), and never the fact's own top; else none. `Err`: no other path for it.
    fn top_for<L: Lanes>(&self, args: &ProveArgs, fact: &Fact<L>) -> Result<Option<u32>, String> {
        if let Some(why) = super::check::alphabeta_too_long(args, fact) {
            return Err(why);
        }
        let top = match (self.by.as_str(), self.db_top) {
            ("lower-levels", Some(t)) => {
                let seeds = fact.position.seeds_on_board();
                let mut top = t.min(seeds).checked_sub(2);
                if top.is_some() && top == fact.top {
                    top = top.and_then(|t| t.checked_sub(1));
                }
                top
            }
            _ => None,
        };
        if !certificate::another_path(&self.by, top, fact) {
            if self.by == "serial" {
                return Err(format!(
                    "it was proven without levels on {}: --by serial would search it the same way (no other path)",
                    fact.threads
                        .map_or("threads not recorded".to_owned(), |t| format!("{t} thread"))
                ));
            }
            return Err(format!(
                "it was proven {} levels, as --by {} would check it: no other path (--by serial for facts proven on more threads, alphabeta for small positions, or lower-levels with levels)",
                if fact.top.is_some() {
                    "with the same"
                } else {
                    "without"
                },
                self.by
            ));
        }
        Ok(top)
    }
}

/// Checks the facts the bounds rest on until they are all certified, one is found wrong, or
/// --jobs / --hours stop it. Returns the checks run and the facts found wrong (as file:line).
#[allow(clippy::too_many_arguments)]
fn certify_loop<L: Lanes>(
    args: &ProveArgs,
    root: Position<L>,
    ledger: &mut Ledger<L>,
    checks: &mut Checks,
    writer: &mut LedgerWriter,
    key: &Key,
    paths: &Paths,
    solvers: &Mutex<Vec<(SolverKey, Arc<Solver>)>>,
    started: Instant,
) -> Result<(u64, Vec<String>), CliError> {
    let mut ran = 0u64;
    let mut tried: HashSet<String> = HashSet::new();
    let mut no_path: Vec<String> = Vec::new();
    loop {
        ledger.refresh().map_err(ledger_error)?;
        checks.reread().map_err(ledger_error)?;
        let cert = Certificate::of(root, ledger, checks).map_err(prove_error)?;
        if !cert.wrong().is_empty() {
            return Ok((ran, Vec::new()));
        }
        let todo: Vec<usize> = cert
            .to_check(
                ledger,
                args.side.as_deref().map(|s| match s {
                    "lower" => certificate::Side::Lower,
                    _ => certificate::Side::Upper,
                }),
            )
            .into_iter()
            .filter(|&i| {
                let fact = &ledger.facts()[i].0;
                args.worker.owns(fact.board()) && !tried.contains(&certificate::digest(fact))
            })
            .collect();
        if todo.is_empty() {
            break;
        }
        if !args.json && ran == 0 {
            let nodes = sum_nodes(todo.iter().map(|&i| ledger.facts()[i].0.nodes));
            eprintln!(
                "certifying {root}: {} facts to check by {} ({})",
                todo.len(),
                paths.by,
                check_cost(nodes, checks.cost_ratio(ledger))
            );
            say_claimed(checks, todo.iter().map(|&i| &ledger.facts()[i].0));
        }
        for (k, &i) in todo.iter().enumerate() {
            if args.jobs.is_some_and(|j| ran >= j)
                || args.hours.is_some_and(|h| started.elapsed() >= h)
            {
                return Ok((ran, Vec::new()));
            }
            if kalah::interrupted() {
                return Err(interrupted());
            }
            let (fact, origin) = ledger.facts()[i].clone();
            tried.insert(certificate::digest(&fact));
            let Some(check) = check_one(args, paths, &fact, &origin, solvers, &mut no_path)? else {
                continue;
            };
            ran += 1;
            let check = record(args, writer, key, ran, check, &fact, todo.len() - k - 1)?;
            let holds = check.holds;
            checks.add(check);
            if !holds {
                // The bounds are worked out again without it: the report names what fell.
                return Ok((ran, vec![origin.to_string()]));
            }
        }
    }
    say_not_checked(&no_path);
    Ok((ran, Vec::new()))
}

/// Proves `fact` (read at `origin`) again by the path of `paths`: its check, or `None` (the
/// reason pushed on `no_path`) when there is no other path for it.
fn check_one<L: Lanes>(
    args: &ProveArgs,
    paths: &Paths,
    fact: &Fact<L>,
    origin: &kalah::prove::ledger::Origin,
    solvers: &Mutex<Vec<(SolverKey, Arc<Solver>)>>,
    no_path: &mut Vec<String>,
) -> Result<Option<Check>, CliError> {
    let top = match paths.top_for(args, fact) {
        Ok(top) => top,
        Err(why) => {
            no_path.push(format!("{origin}: {why}"));
            return Ok(None);
        }
    };
    let solver = solver_for(args, paths, top, fact, solvers)?;
    let (nodes0, cpu0) = (solver.nodes(), kalah::cpu_time());
    let verdict = match prove::recheck(fact, &solver) {
        Ok(v) => v,
        Err(kalah::prove::ProveError::Solve(kalah::SolveError::Cancelled)) => {
            return Err(interrupted());
        }
        Err(e) => return Err(prove_error(e)),
    };
    let cpu_s = match (cpu0, kalah::cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a).as_secs_f64(),
        _ => 0.0,
    };
    let (holds, why) = match verdict {
        Recheck::Wrong(why) => (false, Some(why)),
        _ => (true, None),
    };
    Ok(Some(Check {
        digest: certificate::digest(fact),
        position: fact.position.to_string(),
        rules: fact.position.rules(),
        lower: fact.lower,
        upper: fact.upper,
        by: paths.by.clone(),
        top,
        holds,
        why,
        nodes: solver.nodes() - nodes0,
        cpu_s,
        fact_at: origin.to_string(),
        mark: None,
    }))
}

/// Says how many of `facts` (to be checked) have checks that this installation did not write:
/// they are proven again here, as any fact not checked yet.
fn say_claimed<'a, L: Lanes + 'a>(checks: &Checks, facts: impl Iterator<Item = &'a Fact<L>>) {
    let n = facts.filter(|f| checks.claimed(f)).count();
    if n > 0 {
        eprintln!(
            "{n} of them have checks this installation did not write (made on another machine, \
             before checks were marked, or forged): claims, proven again here"
        );
    }
}

/// The facts left unchecked for want of another path, with why: the first few, then how
/// many more (a campaign's facts are many, and mostly left out for one reason).
fn say_not_checked(no_path: &[String]) {
    const SHOWN: usize = 5;
    for line in no_path.iter().take(SHOWN) {
        eprintln!("not checked: {line}");
    }
    if no_path.len() > SHOWN {
        eprintln!(
            "not checked: {} more facts, each for one of the reasons above",
            no_path.len() - SHOWN
        );
    }
}

/// Appends `check`, the `ran`th, of `fact`, marked by `key`, to the checks file and says so
/// ([`say_check`]); returns it marked, as it reads back.
fn record<L: Lanes>(
    args: &ProveArgs,
    writer: &mut LedgerWriter,
    key: &Key,
    ran: u64,
    check: Check,
    fact: &Fact<L>,
    left: usize,
) -> Result<Check, CliError> {
    let (check, line) = check.marked(key, &fact.to_line());
    writer.append_lines(&[line]).map_err(ledger_error)?;
    say_check(args, ran, &check, left);
    Ok(check)
}

/// The line (or JSON object) of the `ran`th check, `left` more to run.
fn say_check(args: &ProveArgs, ran: u64, check: &Check, left: usize) {
    if args.json {
        print_json(&json!({
            "check": ran, "fact_at": check.fact_at, "position": check.position,
            "lower": check.lower, "upper": check.upper, "holds": check.holds, "why": check.why,
            "by": check.by, "top": check.top, "nodes": check.nodes, "cpu_s": check.cpu_s,
        }));
        return;
    }
    let levels = check
        .top
        .map_or("no levels".to_owned(), |t| format!("levels 0..{t}"));
    match &check.why {
        None => eprintln!(
            "check {ran}: {}: holds ({} in [{:+}, {:+}]) by {} ({levels}); {} nodes, {:.1} s; {left} left",
            check.fact_at,
            check.position,
            check.lower,
            check.upper,
            check.by,
            human_count(check.nodes),
            check.cpu_s,
        ),
        Some(why) => eprintln!("check {ran}: {}: WRONG: {why}", check.fact_at),
    }
}

/// `kalah prove --check LEDGER --all`: every fact of LEDGER that claims something and no
/// check by another path has proven again, proven again (--by), each check appended to the
/// checks file beside it: what lets its facts answer in `query`, `analyze` and `serve`
/// ([`kalah::book`]). Resumes from the checks; --worker, --jobs and --hours share it out and
/// stop it; a fact found wrong is named and the exit code is 1.
pub fn check_all(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    leaving_no_empty_file(&checks_file(args, path), || check_every_fact(args, path))
}

fn check_every_fact(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    match read_any_ledgers(path, args)? {
        AnyLedger::Narrow(ledger) => check_every_fact_in(args, path, ledger),
        AnyLedger::Wide(ledger) => check_every_fact_in(args, path, ledger),
    }
}

/// [`check_every_fact`] of `ledger` (read from `path` and --read).
fn check_every_fact_in<L: Lanes>(
    args: &ProveArgs,
    path: &Path,
    ledger: Ledger<L>,
) -> Result<(), CliError> {
    let own = checks_file(args, path);
    let mut writer = LedgerWriter::open(&own).map_err(ledger_error)?;
    let key = installation_key(&own)?;
    let checks = read_checks(&own, &args.read_checks, Some(&key))?;
    let mut seen: HashSet<String> = HashSet::new();
    let mut todo: Vec<usize> = Vec::new();
    let (mut informative, mut certified, mut wrong_before) = (0usize, 0usize, Vec::new());
    for (i, (fact, origin)) in ledger.facts().iter().enumerate() {
        if !fact.is_informative() {
            continue;
        }
        informative += 1;
        match checks.verdict(fact) {
            certificate::Verdict::Holds(_) => certified += 1,
            certificate::Verdict::Wrong(_) => wrong_before.push(origin.to_string()),
            certificate::Verdict::Unchecked => {
                if args.worker.owns(fact.board()) && seen.insert(certificate::digest(fact)) {
                    todo.push(i);
                }
            }
        }
    }
    if !args.json {
        let nodes = sum_nodes(todo.iter().map(|&i| ledger.facts()[i].0.nodes));
        eprintln!(
            "{}: {informative} facts claim a value, {certified} proven again by another path; {} to check by {} (they took {} nodes)",
            path.display(),
            todo.len(),
            args.by,
            human_count(nodes)
        );
        say_claimed(&checks, todo.iter().map(|&i| &ledger.facts()[i].0));
    }
    let mut paths: Vec<Paths> = Vec::new();
    let solvers: Mutex<Vec<(SolverKey, Arc<Solver>)>> = Mutex::new(Vec::new());
    let mut no_path: Vec<String> = Vec::new();
    let mut wrong: Vec<String> = wrong_before;
    let (mut ran, mut held) = (0u64, 0u64);
    let started = Instant::now();
    kalah::catch_interrupt();
    let done = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        let (solvers, done) = (&solvers, &done);
        let r = (|| {
            spawn_scoped(scope, "interrupt", move || watch_interrupt(solvers, done))?;
            for (k, &i) in todo.iter().enumerate() {
                if args.jobs.is_some_and(|j| ran >= j)
                    || args.hours.is_some_and(|h| started.elapsed() >= h)
                    || kalah::interrupted()
                {
                    break;
                }
                let (fact, origin) = &ledger.facts()[i];
                let game = (fact.position.houses_per_side(), fact.position.rules());
                let p = match paths.iter().position(|p| (p.houses, p.rules) == game) {
                    Some(p) => p,
                    None => {
                        paths.push(Paths::new(args, game.0, game.1)?);
                        paths.len() - 1
                    }
                };
                let Some(check) = check_one(args, &paths[p], fact, origin, solvers, &mut no_path)?
                else {
                    continue;
                };
                ran += 1;
                let check = record(
                    args,
                    &mut writer,
                    &key,
                    ran,
                    check,
                    fact,
                    todo.len() - k - 1,
                )?;
                if check.holds {
                    held += 1;
                } else {
                    wrong.push(check.fact_at.clone());
                }
            }
            Ok(())
        })();
        done.store(true, Ordering::Relaxed);
        r
    });
    match outcome {
        Err(e) if is_cancelled(&e) => {}
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    say_not_checked(&no_path);
    let left = informative - certified - held as usize - wrong.len();
    if args.json {
        print_json(&json!({
            "ledger": path.display().to_string(),
            "checks_file": own.display().to_string(),
            "by": args.by,
            "checks_run": ran,
            "facts": informative,
            "checked": certified + held as usize,
            "unchecked": left,
            "wrong": wrong,
            "no_other_path": no_path.len(),
            "time_ms": started.elapsed().as_millis() as u64,
        }));
    } else {
        println!(
            "{}: {ran} facts proven again by {} in {} ({held} hold, {} wrong); of its {informative} facts, {} are checked, {} wrong, {left} unchecked",
            path.display(),
            args.by,
            human_duration(started.elapsed()),
            ran - held,
            certified + held as usize,
            wrong.len(),
        );
    }
    if kalah::interrupted() {
        eprintln!(
            "interrupted: every check finished is in {}; the same command resumes",
            own.display()
        );
        return Err(interrupted());
    }
    if !wrong.is_empty() {
        return Err(CliError::failure(format!(
            "facts that do not hold: {}",
            wrong.join(", ")
        )));
    }
    Ok(())
}

/// Cancels every solver of `solvers` at Ctrl-C or SIGTERM, until `done`.
fn watch_interrupt(solvers: &Mutex<Vec<(SolverKey, Arc<Solver>)>>, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if kalah::interrupted() {
            for (_, s) in solvers.lock().expect("not poisoned").iter() {
                s.cancel();
            }
            break;
        }
    }
}

/// What a solver of checks is kept by: the board size, the rules and the top level read.
type SolverKey = (usize, Rules, Option<u32>);

/// The solver of a check that reads the levels 0..`top` (or none), made on first use; at most
/// [`SOLVERS`] are kept.
fn solver_for<L: Lanes>(
    args: &ProveArgs,
    paths: &Paths,
    top: Option<u32>,
    fact: &Fact<L>,
    solvers: &Mutex<Vec<(SolverKey, Arc<Solver>)>>,
) -> Result<Arc<Solver>, CliError> {
    if let Some((_, s)) = solvers
        .lock()
        .expect("not poisoned")
        .iter()
        .find(|(k, _)| *k == (paths.houses, paths.rules, top))
    {
        return Ok(s.clone());
    }
    let (houses, rules) = (paths.houses, paths.rules);
    let solver = if paths.by == "alphabeta" {
        let default = SolverConfig::default();
        let config = SolverConfig {
            threads: args.threads.unwrap_or(default.threads),
            algorithm: Algorithm::AlphaBeta,
            ..default
        };
        super::super::search::new_solver(houses, rules, config, None)?
    } else {
        let db = match (top, &paths.db_dir) {
            (Some(top), Some(dir)) => Some(super::check::levels_up_to(dir, houses, rules, top)?),
            _ => None,
        };
        let keeps_file = paths.table_top == Some(top);
        let mut config = config_with(
            args,
            houses,
            rules,
            fact.position.seeds_on_board(),
            db.as_ref(),
        );
        if paths.by == "serial" {
            config.threads = 1;
        }
        if keeps_file {
            let user = TableOrigin::Checks { top };
            args.table
                .fit(&mut config, houses, rules, args.tt_mb, user)?;
        }
        let solver = new_solver(houses, rules, config, db)?.for_checks(top);
        if keeps_file {
            with_table_file(solver, &args.table)?
        } else {
            solver
        }
    };
    let solver = Arc::new(solver);
    let mut list = solvers.lock().expect("not poisoned");
    if list.len() >= SOLVERS {
        // The solver that keeps --table-file stays, to be saved at the end.
        if let Some(i) = list.iter().position(|(k, _)| Some(*k) != paths.table_key()) {
            list.remove(i);
        }
    }
    list.push(((paths.houses, paths.rules, top), solver.clone()));
    Ok(solver)
}

/// A claim's line for people: "value >= +2: certified by lower-levels (14 facts)". `ratio`
/// is [`Checks::cost_ratio`]: what a check has cost so far, in its fact's nodes.
pub fn claim_text<L: Lanes>(c: &Claim, ledger: &Ledger<L>, ratio: Option<f64>) -> String {
    let n = c.facts.len();
    let facts = if n == 1 {
        "1 fact".to_owned()
    } else {
        format!("{n} facts")
    };
    if !c.wrong.is_empty() {
        let named: Vec<String> = c
            .wrong
            .iter()
            .map(|&i| ledger.facts()[i].1.to_string())
            .collect();
        return format!(
            "{c}: FALSIFIED: it rests on {}, found wrong",
            named.join(", ")
        );
    }
    if c.is_certified() {
        return format!("{c}: certified by {} ({facts})", c.by.join(" and "));
    }
    let left = nodes_left(c, ledger);
    format!(
        "{c}: not certified: {} of its {facts} checked ({} left: {})",
        n - c.unchecked.len(),
        c.unchecked.len(),
        check_cost(left, ratio)
    )
}

/// The nodes the campaign took to prove the facts `c` rests on that are not certified yet.
fn nodes_left<L: Lanes>(c: &Claim, ledger: &Ledger<L>) -> u64 {
    sum_nodes(c.unchecked.iter().map(|&i| ledger.facts()[i].0.nodes))
}

/// What checking facts that took the campaign `nodes` may cost: those nodes times `ratio`
/// (what checks have cost so far, [`Checks::cost_ratio`]), once there is one.
fn check_estimate(nodes: u64, ratio: Option<f64>) -> Option<u64> {
    ratio.map(|r| (nodes as f64 * r).round() as u64)
}

/// [`check_estimate`] for people, beside the campaign's nodes.
fn check_cost(nodes: u64, ratio: Option<f64>) -> String {
    match check_estimate(nodes, ratio) {
        Some(estimate) => format!(
            "{} nodes in the campaign, about {} to check",
            human_count(nodes),
            human_count(estimate)
        ),
        None => format!(
            "{} nodes in the campaign; a check usually takes more: it starts from a colder table and goes another way",
            human_count(nodes)
        ),
    }
}

/// What the checks so far took, for people: ", which took 6.0 times their facts' nodes".
pub fn ratio_text(ratio: Option<f64>) -> String {
    ratio.map_or(String::new(), |r| {
        format!(", which took {r:.1} times their facts' nodes")
    })
}

/// A claim as JSON.
pub fn claim_json<L: Lanes>(
    c: &Claim,
    ledger: &Ledger<L>,
    checks: &Checks,
    ratio: Option<f64>,
) -> serde_json::Value {
    let left = nodes_left(c, ledger);
    // What the bound cost: the facts it rests on (their campaign's nodes and CPU), and the
    // checks that certified them.
    let facts = c.facts.iter().map(|&i| &ledger.facts()[i].0);
    let checked = facts.clone().filter_map(|f| match checks.verdict(f) {
        Verdict::Holds(check) => Some(check),
        _ => None,
    });
    json!({
        "move": c.mv.map(|m| m.house()),
        "side": if c.side == certificate::Side::Lower { "lower" } else { "upper" },
        "value": c.value,
        "facts": c.facts.len(),
        "unchecked": c.unchecked.len(),
        "nodes_left": left,
        "check_nodes_estimate": check_estimate(left, ratio),
        "wrong": c.wrong.iter().map(|&i| ledger.facts()[i].1.to_string()).collect::<Vec<_>>(),
        "certified": c.is_certified(),
        "by": c.by,
        "cost": {
            "facts_nodes": sum_nodes(facts.clone().map(|f| f.nodes)),
            "facts_cpu_s": facts.map(|f| f.cpu_s).sum::<f64>(),
            "checks_nodes": sum_nodes(checked.clone().map(|c| c.nodes)),
            "checks_cpu_s": checked.map(|c| c.cpu_s).sum::<f64>(),
        },
    })
}

fn report<L: Lanes>(
    root: &Position<L>,
    cert: &Certificate,
    ledger: &Ledger<L>,
    checks: &Checks,
    ran: u64,
    json: bool,
    started: Instant,
) {
    let ratio = checks.cost_ratio(ledger);
    if json {
        print_json(&json!({
            "position": root.to_string(),
            "houses": root.houses_per_side(),
            "rules": root.rules().as_str(),
            "checks_run": ran,
            "checks": checks.len(),
            "time_ms": started.elapsed().as_millis() as u64,
            "claims": cert.claims.iter().map(|c| claim_json(c, ledger, checks, ratio)).collect::<Vec<_>>(),
        }));
        return;
    }
    println!(
        "{root} ({} houses a side), {} rules: {ran} checks run in {} ({} in all{})",
        root.houses_per_side(),
        root.rules(),
        human_duration(started.elapsed()),
        checks.len(),
        ratio_text(ratio)
    );
    if cert.claims.is_empty() {
        println!(
            "no bound rests on a fact (the sowings and seeds alone prove them): nothing to certify"
        );
    }
    for c in &cert.claims {
        println!("  {}", claim_text(c, ledger, ratio));
    }
}
