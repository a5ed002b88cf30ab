//! `kalah prove`: a proof campaign kept in a ledger, its status, its check and its merge.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use kalah::prove::fact::{Bounds, Fact};
use kalah::prove::ledger::Ledger;
use kalah::prove::{self, Campaign, Config, ProveError, Recheck, Share, Status, Step};
use kalah::{Algorithm, AnyPosition, Narrow, Position, Rules, Side, Solver, SolverConfig, Variant};
use serde_json::json;

use super::CliError;
use super::args::{parse_position, print_json, rules_parser, side_parser};
use super::books::{bounds_text, signed, value_range};
use super::db_choice::DbChoice;
use super::human::{human_count, human_duration};

/// Prove the exact value of a position by a campaign that no stopped machine can set back.
///
/// The root (POSITION, or the start of Kalah(M,N)) is split into positions below it, best
/// first (proof-number search); each open leaf gets one null-window test of the value the root
/// needs, within --budget nodes, and a leaf over its budget is split into its moves instead of
/// being tried again. Every answer is a fact (bounds on one position's value, its nodes and
/// CPU time, the levels used), appended to the ledger --ledger FILE (JSON lines) and synced
/// before the next test. Killed at any moment, a campaign loses at most its test in flight: the
/// same command resumes from the ledger, here or on another machine.
///
/// Many workers: give each its own ledger and --worker I/N (a disjoint share of the open
/// leaves), and let each read the others' with --read; merge the ledgers afterwards (--merge,
/// or plain concatenation). Values are final store differences for the side to move, stores
/// included.
///
/// Examples:
///   kalah prove -m 6 -n 5 --ledger k65.jsonl          # a campaign, to the end
///   kalah prove -m 6 -n 6 --ledger k66.jsonl --hours 2 # two hours of it, then stop
///   kalah prove --status k66.jsonl                      # where it stands
///   kalah prove --check k66.jsonl --sample 20           # 20 facts proven again, another way
///   kalah prove --merge a.jsonl b.jsonl --ledger all.jsonl
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ProveArgs {
    /// The root: a KGP board literal (South to move unless `north` follows) [default: the start
    /// of --houses and --seeds]. With --status, the root named by most facts.
    #[arg(value_name = "POSITION", conflicts_with_all = ["houses", "seeds", "merge"])]
    position: Option<String>,

    /// Side to move in POSITION (default South).
    #[arg(long, value_name = "SIDE", value_parser = side_parser(), requires = "position")]
    to_move: Option<Side>,

    /// Houses a side of the start to prove, M (1 to 8).
    #[arg(long, short = 'm', value_parser = clap::value_parser!(u64).range(1..=8), requires = "seeds")]
    houses: Option<u64>,

    /// Seeds a house at the start, N (2·M·N at most 255).
    #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..=127), requires = "houses")]
    seeds: Option<u64>,

    /// Capture rule: `standard` or `empty-capture`.
    #[arg(long, default_value = "standard", value_parser = rules_parser())]
    rules: Rules,

    /// The ledger this worker appends its facts to (made if missing). With --merge, the ledger
    /// the others are merged into.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["status", "check"])]
    ledger: Option<PathBuf>,

    /// Other ledgers to read too (other workers'), again before each test; up to 1024.
    #[arg(long, value_name = "FILE", num_args = 1.., action = clap::ArgAction::Append)]
    read: Vec<PathBuf>,

    /// Search nodes a test may take before its leaf is split into its moves instead (1000 to
    /// 10^15). Larger budgets split less and waste more on a leaf that is then split.
    #[arg(long, value_name = "NODES", default_value_t = 100_000_000, value_parser = clap::value_parser!(u64).range(1000..=1_000_000_000_000_000))]
    budget: u64,

    /// This worker's share of the open leaves, I of N (0 <= I < N <= 4096): workers with the
    /// same N and different I never test the same leaf.
    #[arg(long, value_name = "I/N", value_parser = parse_share, default_value = "0/1")]
    worker: Share,

    /// After the root's value, prove the exact value of each first move too.
    #[arg(long)]
    all_moves: bool,

    /// The first guess of the root's value (stores included) [default: a shallow search's].
    /// Only the order of the tests depends on it.
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-255..=255))]
    guess: Option<i32>,

    /// Stop after this many tests (1 to 10^9) [default: when the value is proven].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    jobs: Option<u64>,

    /// Start no test after this many hours (0.001 to 10000); the test in flight finishes.
    #[arg(long, value_name = "HOURS", value_parser = super::args::hours(0.001, 10_000.0))]
    hours: Option<Duration>,

    /// Worker threads, 1 to 64 (4 a core above 16 cores) [default: all cores].
    #[arg(long, value_name = "T", value_parser = super::args::threads())]
    threads: Option<usize>,

    /// Transposition table size in MiB [default: as `solve` sizes it for the root]. The table
    /// stays warm from one test to the next.
    #[arg(long = "tt-mb", value_name = "MIB", value_parser = super::args::mib())]
    tt_mb: Option<usize>,

    #[command(flatten)]
    db: DbChoice,

    /// Where the campaign of LEDGER stands: the root's bounds, each first move's, the facts,
    /// the CPU spent, the open leaves. Reads --read too; writes nothing.
    #[arg(long, value_name = "LEDGER", conflicts_with_all = ["check", "merge", "ledger"])]
    status: Option<PathBuf>,

    /// Prove facts of LEDGER again by another path (see --by) and report any that fails.
    #[arg(long, value_name = "LEDGER", requires = "sample", conflicts_with_all = ["merge", "ledger"])]
    check: Option<PathBuf>,

    /// With --check: how many facts, drawn at random (1 to 10^6).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    sample: Option<u64>,

    /// With --check: the other path. `lower-levels`: the database's levels up to two below
    /// its top (none if it has fewer than 3); `no-db`: no database; `alphabeta`: plain
    /// alpha-beta, no table, no database (small positions only).
    #[arg(long, value_name = "PATH", default_value = "lower-levels", value_parser = ["lower-levels", "no-db", "alphabeta"], requires = "check")]
    by: String,

    /// With --check: the seed of the draw [default: from the clock; printed].
    #[arg(long, value_name = "SEED", requires = "check")]
    seed: Option<u64>,

    /// Merge these ledgers into --ledger: every fact not there yet, after checking them all
    /// against each other (a contradiction writes nothing). Up to 1024 files.
    #[arg(long, value_name = "FILE", num_args = 1.., requires = "ledger")]
    merge: Vec<PathBuf>,

    /// Write an opening book instead of running a campaign: every board DEPTH sowings or
    /// fewer below the root (0 to 16; extra turns count), solved exactly, each appended to
    /// --ledger as an exact fact; boards the levels hold are left out. Resumes from the
    /// ledger. `query`, `analyze` and `serve` answer at once from a book in the database home
    /// (see docs/proofs.md#opening-books).
    #[arg(long, value_name = "DEPTH", value_parser = clap::value_parser!(u32).range(0..=16), requires = "ledger", conflicts_with_all = ["status", "check", "merge", "all_moves", "jobs", "guess"])]
    book: Option<u32>,

    /// With --book: solve nothing, print the book's boards instead, one position a line
    /// followed by its depth (`<...> 3`; with --json, `{"position":..., "depth":...}`), the
    /// deepest last: to see a book's size, or to measure the search at its frontier
    /// (scripts/book-frontier.py).
    #[arg(long, requires = "book")]
    list: bool,

    /// With --book: the levels the book's readers will have, 0..=K [default: the levels
    /// read]. Boards of K seeds or fewer are left out of the book (the readers' levels hold
    /// them), those above are booked even when the levels read hold them: a book for readers
    /// of the levels 0..24 can be solved faster with the levels 0..32.
    #[arg(long, value_name = "K", requires = "book", value_parser = super::args::max_level())]
    book_levels: Option<u32>,

    /// Print JSON: one object a test and one at the end (see docs/commands.md).
    #[arg(long)]
    json: bool,
}

/// The most ledgers read at once.
const MAX_FILES: usize = 1024;

fn parse_share(s: &str) -> Result<Share, String> {
    let bad = || "expected I/N with 0 <= I < N <= 4096, e.g. 0/2".to_owned();
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let index: u32 = i.trim().parse().map_err(|_| bad())?;
    let count: u32 = n.trim().parse().map_err(|_| bad())?;
    if count == 0 || count > 4096 || index >= count {
        return Err(bad());
    }
    Ok(Share { index, count })
}

pub fn run(args: ProveArgs) -> Result<(), CliError> {
    if args.read.len() > MAX_FILES || args.merge.len() > MAX_FILES {
        return Err(CliError::input(format!(
            "at most {MAX_FILES} ledgers at once"
        )));
    }
    if !args.merge.is_empty() {
        return run_merge(&args);
    }
    if let Some(path) = &args.status {
        return run_status(&args, path);
    }
    if let Some(path) = &args.check {
        return run_check(&args, path);
    }
    if let Some(depth) = args.book {
        return run_book(&args, depth);
    }
    run_campaign(&args)
}

/// `kalah prove --book DEPTH`: the book of the root to DEPTH, each board not yet exact in the
/// ledgers solved and appended ([`kalah::book::make`]), with a progress bar.
fn run_book(args: &ProveArgs, depth: u32) -> Result<(), CliError> {
    use kalah::book::{self, BookError};
    use kalah::prove::ledger::LedgerWriter;
    let own = args.ledger.as_ref().expect("clap requires --ledger");
    let Some(root) = given_root(args)? else {
        return Err(CliError::input(
            "give the root: a position, or the start with -m M -n N",
        ));
    };
    if args.list {
        let top = match args.book_levels {
            Some(k) => Some(k),
            None => args
                .db
                .open(root.houses_per_side(), root.rules())?
                .map(|db| db.max_level()),
        };
        for (p, d) in book::positions_to(&root, depth, top) {
            if args.json {
                print_json(&json!({"position": p.to_string(), "depth": d}));
            } else {
                println!("{p} {d}");
            }
        }
        return Ok(());
    }
    let (solver, db) = campaign_solver(args, &root)?;
    let mut writer = LedgerWriter::open(own).map_err(ledger_error)?;
    let mut ledger = Ledger::new();
    for path in std::iter::once(own).chain(&args.read) {
        ledger.add_file(path).map_err(ledger_error)?;
    }
    let levels = match &db {
        Some(db) => super::db_choice::files_line(db),
        None => args.db.none_found(root.houses_per_side(), root.rules()),
    };
    let top = args.book_levels.or(db.as_ref().map(|db| db.max_level()));
    let boards = book::positions_to(&root, depth, top);
    let total = boards.len();
    if !args.json {
        eprintln!(
            "book of {root} ({} houses, {} rules) to {depth} sowings: {total} boards; ledger {}; \
             {levels}",
            root.houses_per_side(),
            root.rules(),
            own.display(),
        );
    }
    kalah::catch_interrupt();
    let indicator = super::progress::Indicator::bar("book", total as u64, "boards");
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let made = std::thread::scope(|scope| {
        cancel_on_interrupt(scope, &done, &solver);
        let made = book::make(
            &root,
            &boards,
            &solver,
            db.as_deref(),
            &mut ledger,
            &mut writer,
            &mut |p| indicator.set_done(p.done as u64),
        );
        done.store(true, Ordering::Relaxed);
        made
    });
    indicator.finish();
    let made = match made {
        Ok(made) => made,
        Err(BookError::Solve(kalah::SolveError::Cancelled)) => {
            eprintln!(
                "interrupted: the board in flight is dropped, every one before it is in {}; the \
                 same command resumes",
                own.display()
            );
            return Err(CliError {
                message: "interrupted".into(),
                code: 130,
            });
        }
        Err(BookError::Ledger(e)) => return Err(ledger_error(e)),
        Err(e) => return Err(CliError::failure(format!("cannot write the book: {e}"))),
    };
    let elapsed = started.elapsed().as_secs_f64();
    if args.json {
        print_json(&json!({
            "ledger": own.display().to_string(),
            "position": root.to_string(),
            "houses": root.houses_per_side(),
            "rules": root.rules().as_str(),
            "depth": depth,
            "boards": made.boards,
            "known": made.known,
            "solved": made.solved,
            "derived": made.derived,
            "nodes": made.nodes,
            "time_ms": (elapsed * 1000.0) as u64,
        }));
    } else {
        println!(
            "book of {root} ({} houses, {} rules) to {depth} sowings in {}: {} boards, {} known \
             before, {} added now ({} searched, {} from their moves' values; {} nodes, \
             {elapsed:.1} s)",
            root.houses_per_side(),
            root.rules(),
            own.display(),
            made.boards,
            made.known,
            made.solved,
            made.solved - made.derived,
            made.derived,
            human_count(made.nodes),
        );
    }
    Ok(())
}

/// Watches for Ctrl-C or SIGTERM (after [`kalah::catch_interrupt`]) on a thread of `scope`
/// until `done`, and cancels `solver`'s search when one comes.
fn cancel_on_interrupt<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    done: &'scope AtomicBool,
    solver: &'scope Solver,
) {
    scope.spawn(move || {
        while !done.load(Ordering::Relaxed) {
            if kalah::interrupted() {
                solver.cancel();
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
}

/// The root given on the command line, if any.
fn given_root(args: &ProveArgs) -> Result<Option<Position<Narrow>>, CliError> {
    let any = match (&args.position, args.houses, args.seeds) {
        (Some(text), _, _) => parse_position(text, args.to_move, args.rules)?,
        (None, Some(m), Some(n)) => {
            let variant = Variant::new(m as usize, n, args.rules)
                .map_err(|e| CliError::input(format!("{e}")))?;
            AnyPosition::start(variant)
        }
        _ => return Ok(None),
    };
    match any {
        AnyPosition::Narrow(p) if p.seeds_on_board() <= 255 => Ok(Some(p)),
        _ => Err(CliError::input(
            "kalah prove takes positions of at most 8 houses a side and 255 seeds",
        )),
    }
}

/// The ledgers named (the first one, then --read), read and checked against each other.
fn read_ledgers(first: &PathBuf, args: &ProveArgs) -> Result<Ledger, CliError> {
    let mut ledger = Ledger::new();
    for path in std::iter::once(first).chain(&args.read) {
        if let Some(what) = kalah::files::not_regular(path) {
            return Err(CliError::input(format!(
                "{}: it is {what}, not a ledger file",
                path.display()
            )));
        }
        if !path.exists() {
            return Err(CliError::input(format!(
                "{}: no such ledger",
                path.display()
            )));
        }
        ledger.add_file(path).map_err(ledger_error)?;
    }
    Ok(ledger)
}

fn ledger_error(e: kalah::prove::ledger::LedgerError) -> CliError {
    use kalah::prove::ledger::LedgerError;
    match e {
        LedgerError::Io { .. } => CliError::failure(format!("ledger: {e}")),
        LedgerError::Busy(_) => CliError {
            message: format!("ledger: {e}"),
            code: 2,
        },
        _ => CliError::input(format!("ledger: {e}")),
    }
}

fn prove_error(e: ProveError) -> CliError {
    match e {
        ProveError::Ledger(e) => ledger_error(e),
        ProveError::Root(why) => CliError::input(why),
        ProveError::Tree(e) => CliError::input(format!("ledger: {e}")),
        ProveError::Solve(e) => CliError::failure(format!("cannot test: {e}")),
    }
}

fn run_merge(args: &ProveArgs) -> Result<(), CliError> {
    let into = args.ledger.as_ref().expect("clap requires --ledger");
    for path in &args.merge {
        if !path.is_file() {
            return Err(CliError::input(format!(
                "--merge {}: not a ledger file",
                path.display()
            )));
        }
    }
    let merged = prove::merge(&args.merge, into).map_err(prove_error)?;
    if args.json {
        print_json(&json!({
            "ledger": into.display().to_string(),
            "added": merged.added,
            "already": merged.already,
        }));
    } else {
        println!(
            "{}: {} facts added, {} already there; no contradiction",
            into.display(),
            merged.added,
            merged.already
        );
    }
    Ok(())
}

fn run_status(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    let ledger = read_ledgers(path, args)?;
    let root = match given_root(args)? {
        Some(root) => root,
        None => root_named(&ledger)?,
    };
    let status = Status::of(root, &ledger, args.guess).map_err(prove_error)?;
    print_status(&status, args.json, args.guess.is_none());
    Ok(())
}

/// The root most facts of `ledger` name, as a position.
fn root_named(ledger: &Ledger) -> Result<Position<Narrow>, CliError> {
    let (fact, origin) = prove::root_of(ledger).ok_or_else(|| {
        CliError::input("the ledger names no root: give the position (or -m and -n)")
    })?;
    let literal = fact
        .root
        .as_deref()
        .expect("root_of names a fact with a root");
    match parse_position(literal, None, fact.position.rules())? {
        AnyPosition::Narrow(p) => Ok(p),
        AnyPosition::Wide(_) => Err(CliError::input(format!(
            "{origin}: the root {literal} is too large for kalah prove"
        ))),
    }
}

fn bounds_json(b: Bounds) -> serde_json::Value {
    json!({"lower": b.lower, "upper": b.upper, "exact": b.is_exact().then_some(b.lower)})
}

/// `from_lower`: the next test was worked out with no guess (from the lower bound), as
/// `--status` without `--guess` does: said, since a campaign tests against its own guess.
fn print_status(s: &Status, json: bool, from_lower: bool) {
    let root = &s.root;
    let widest = value_range(root);
    if json {
        print_json(&json!({
            "houses": root.houses_per_side(),
            "rules": root.rules().as_str(),
            "position": root.to_string(),
            "to_move": super::args::side_json(root.to_move()),
            "value": bounds_json(s.value),
            "moves": s.moves.iter().map(|(mv, b)| {
                let mut v = bounds_json(*b);
                v["house"] = json!(mv.house());
                v
            }).collect::<Vec<_>>(),
            "facts": s.facts,
            "over_budget": s.over_budget,
            "nodes": s.nodes,
            "cpu_s": (s.cpu_s * 10.0).round() / 10.0,
            "tree": s.tree,
            "test": s.beta.map(|b| json!({"beta": b, "open_leaves": s.open_leaves,
                "proof": (!prove::is_infinite(s.proof)).then_some(s.proof),
                "disproof": (!prove::is_infinite(s.disproof)).then_some(s.disproof)})),
            "torn": s.torn.iter().map(|(p, n)| json!({"file": p.display().to_string(), "bytes": n})).collect::<Vec<_>>(),
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
    let mean = if s.facts > 0 {
        s.cpu_s / s.facts as f64
    } else {
        0.0
    };
    println!(
        "{} facts ({} over budget, split), {} nodes, {} of CPU ({:.1} s a test); {} positions in the tree",
        s.facts,
        s.over_budget,
        human_count(s.nodes),
        human_duration(Duration::from_secs_f64(s.cpu_s)),
        mean,
        s.tree
    );
    match s.beta {
        None => println!("proven: nothing remains"),
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
                human_duration(Duration::from_secs_f64(mean * s.open_leaves as f64))
            );
        }
    }
    for (path, bytes) in &s.torn {
        println!(
            "note: {} ends in a torn line of {bytes} bytes (a worker killed mid-write, or writing now); it is not read",
            path.display()
        );
    }
}

/// The solver and databases of a campaign on `root`.
fn campaign_solver(
    args: &ProveArgs,
    root: &Position<Narrow>,
) -> Result<(Solver, Option<std::sync::Arc<kalah::db::Tablebase>>), CliError> {
    let (houses, rules) = (root.houses_per_side(), root.rules());
    let db = args.db.open(houses, rules)?;
    let solver = solver_with(args, houses, rules, root.seeds_on_board(), db.clone())?;
    Ok((solver, db))
}

fn run_campaign(args: &ProveArgs) -> Result<(), CliError> {
    let own = args.ledger.as_ref().expect("clap requires --ledger");
    let root = match given_root(args)? {
        Some(root) => root,
        None => {
            return Err(CliError::input(
                "give the root: a position, or the start with -m M -n N",
            ));
        }
    };
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
        Some(db) => super::db_choice::files_line(db),
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
    // Ctrl-C stops the test in flight (its work is lost; every fact before it is on disk).
    kalah::catch_interrupt();
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        cancel_on_interrupt(scope, &done, &solver);
        let result = campaign_loop(args, &mut campaign, started);
        done.store(true, Ordering::Relaxed);
        result
    });
    match outcome {
        Err(ProveError::Solve(kalah::SolveError::Cancelled)) => {
            eprintln!(
                "interrupted: the test in flight is dropped, every fact before it is in {}; the same command resumes",
                own.display()
            );
            let status = campaign.status().map_err(prove_error)?;
            print_status(&status, args.json, false);
            Err(CliError {
                message: "interrupted".into(),
                code: 130,
            })
        }
        Err(e) => Err(prove_error(e)),
        Ok(()) => {
            let status = campaign.status().map_err(prove_error)?;
            print_status(&status, args.json, false);
            Ok(())
        }
    }
}

fn campaign_loop(
    args: &ProveArgs,
    campaign: &mut Campaign<'_>,
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
            Step::Tested(fact) => {
                idle_since = None;
                tests += 1;
                report_test(campaign, &fact, tests, args.json)?;
            }
        }
    }
}

fn report_test(campaign: &Campaign<'_>, fact: &Fact, n: u64, json: bool) -> Result<(), ProveError> {
    let status = campaign.status()?;
    if json {
        print_json(&json!({
            "test": n,
            "position": fact.position.to_string(),
            "seeds": fact.position.seeds_on_board(),
            "lower": fact.lower,
            "upper": fact.upper,
            "over_budget": fact.over_budget,
            "nodes": fact.nodes,
            "cpu_s": (fact.cpu_s * 1000.0).round() / 1000.0,
            "root": bounds_json(status.value),
        }));
        return Ok(());
    }
    let answer = if fact.over_budget {
        "over budget: split into its moves".to_owned()
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
        human_count(fact.nodes),
        fact.cpu_s,
        bounds_text(status.value, value_range(&status.root))
    );
    Ok(())
}

fn run_check(args: &ProveArgs, path: &PathBuf) -> Result<(), CliError> {
    let ledger = read_ledgers(path, args)?;
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
    for &i in &pool {
        let (fact, origin) = &ledger.facts()[i];
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
    if args.json {
        print_json(
            &json!({"checked": pool.len(), "wrong": wrong, "by": args.by, "seed": seed,
            "time_ms": started.elapsed().as_millis() as u64, "facts": results}),
        );
    } else {
        println!(
            "{} facts proven again by {} (seed {seed}): {} hold, {wrong} wrong, {:.1} s",
            pool.len(),
            args.by,
            pool.len() - wrong,
            started.elapsed().as_secs_f64()
        );
    }
    if wrong > 0 {
        return Err(CliError::failure(format!(
            "{wrong} of {} facts checked do not hold",
            pool.len()
        )));
    }
    Ok(())
}

/// The solver of --check for facts of `houses` houses under `rules`, by the path --by names.
fn check_solver(
    args: &ProveArgs,
    houses: usize,
    rules: Rules,
    fact: &Fact,
) -> Result<Solver, CliError> {
    if args.by == "alphabeta" {
        let default = SolverConfig::default();
        let config = SolverConfig {
            threads: args.threads.unwrap_or(default.threads),
            algorithm: Algorithm::AlphaBeta,
            ..default
        };
        return super::search::new_solver(houses, rules, config, None);
    }
    let db = if args.by == "lower-levels" {
        match args.db.open(houses, rules)? {
            Some(db) if db.max_level() >= 2 => {
                let top = db.max_level() - 2;
                let dir = db.dir().to_path_buf();
                Some(std::sync::Arc::new(
                    kalah::db::Tablebase::open_up_to(
                        &dir,
                        houses,
                        rules,
                        kalah::db::Access::Map,
                        Some(top),
                    )
                    .map_err(|e| {
                        CliError::failure(format!(
                            "cannot open the database in {}: {e}",
                            dir.display()
                        ))
                    })?,
                ))
            }
            _ => None,
        }
    } else {
        None
    };
    solver_with(args, houses, rules, fact.position.seeds_on_board(), db)
}

/// An MTD(f) solver for boards of `houses` houses under `rules` probing `db`, with --threads
/// and --tt-mb, or a table sized as `solve` sizes it for `seeds` seeds.
fn solver_with(
    args: &ProveArgs,
    houses: usize,
    rules: Rules,
    seeds: u32,
    db: Option<std::sync::Arc<kalah::db::Tablebase>>,
) -> Result<Solver, CliError> {
    let default = SolverConfig::default();
    let top = db.as_ref().map(|d| d.max_level());
    let config = SolverConfig {
        threads: args.threads.unwrap_or(default.threads),
        tt_mib: args
            .tt_mb
            .unwrap_or_else(|| kalah::search::auto_table_mib(houses, seeds, top)),
        ..default
    };
    super::search::new_solver(houses, rules, config, db)
}
